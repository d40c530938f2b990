from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.fit.metrics import auc, calibration_table, log_loss, review_features, rmse_bins, score


def test_log_loss_known_value() -> None:
    assert log_loss([1, 0], [0.8, 0.4]) == pytest.approx(-(np.log(0.8) + np.log(0.6)) / 2)
    assert np.isnan(log_loss([], []))
    with pytest.raises(ValueError):
        log_loss([1, 2], [0.5, 0.5])
    with pytest.raises(ValueError):
        log_loss([1], [1.5])


@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 10)), min_size=2, max_size=40))
def test_auc_equals_pair_count(pairs: list[tuple[int, int]]) -> None:
    y = np.array([a for a, _ in pairs], dtype=float)
    p = np.array([b for _, b in pairs], dtype=float) / 10
    pos, neg = p[y == 1], p[y == 0]
    if len(pos) == 0 or len(neg) == 0:
        assert np.isnan(auc(y, p))
        return
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    assert auc(y, p) == pytest.approx(wins / (len(pos) * len(neg)))


def test_rmse_bins_by_hand() -> None:
    # two bins by interval: t in [1, 3.62) and t in [3.62, 13.1)
    y = np.array([1, 0, 1, 1])
    p = np.array([0.9, 0.7, 0.6, 0.8])
    t = np.array([1.0, 2.0, 5.0, 10.0])
    i = np.full(4, 2.0)
    lapses = np.zeros(4)
    expected = np.sqrt((2 * (0.5 - 0.8) ** 2 + 2 * (1.0 - 0.7) ** 2) / 4)
    assert rmse_bins(y, p, t, i, lapses) == pytest.approx(expected)
    # lapses 1 and 0 fall in different bins
    lapses2 = np.array([0.0, 1.0, 0.0, 0.0])
    expected2 = np.sqrt(((1 - 0.9) ** 2 + (0 - 0.7) ** 2 + 2 * (1.0 - 0.7) ** 2) / 4)
    assert rmse_bins(y, p, t, i, lapses2) == pytest.approx(expected2)


def test_review_features_and_score() -> None:
    grades = np.array([[3, 1, 1, 3, 0], [1, 1, 3, 0, 0]])
    elapsed = np.array([[np.nan, 2, 0, 5, np.nan], [np.nan, 3, 1, np.nan, np.nan]])
    features = review_features(grades, elapsed)
    assert features["review_number"][0].tolist() == [1, 2, 3, 4, 5]
    # the same-day Again (t=0) and the first-review Again are not lapses
    assert features["lapses"].tolist() == [[0, 0, 1, 1, 1], [0, 0, 1, 1, 1]]
    mask = np.array([[False, True, False, True, False], [False, True, True, False, False]])
    p = np.full(grades.shape, 0.7)
    result = score(grades, elapsed, p, mask)
    assert result["n"] == 4
    assert result["log_loss"] == pytest.approx(log_loss([0, 1, 0, 1], [0.7] * 4))


def test_calibration_table() -> None:
    rng = np.random.default_rng(3)
    p = rng.random(5000)
    y = (rng.random(5000) < p).astype(float)
    table = calibration_table(y, p, bins=5)
    assert table["n"].sum() == 5000 and len(table) == 5
    assert np.allclose(table["predicted"], table["observed"], atol=0.05)
