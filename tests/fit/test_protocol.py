"""The srs-benchmark evaluation protocol (outlier filter, time-series folds, Anki days)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fit_helpers import josh_log

from memlab.fit import load_reviews, time_split
from memlab.fit.compare import evaluate_fsrs6
from memlab.fit.fsrs6 import score_fsrs6
from memlab.fit.protocol import (
    _outlier_cells,
    benchmark_frame,
    benchmark_rows,
    time_series_folds,
)
from memlab.models.fsrs6 import DEFAULT_WEIGHTS, FSRS6


def test_time_series_folds_as_scikit_learn_describes_them() -> None:
    # TimeSeriesSplit(n_splits=5) on 20 rows: test blocks of 20 // 6 = 3 rows, the first train
    # block takes the remainder (5 rows): tests [5, 8), [8, 11), ... [17, 20)
    assert time_series_folds(20, 5) == [(5, 8), (8, 11), (11, 14), (14, 17), (17, 20)]
    assert time_series_folds(12, 5) == [(2, 4), (4, 6), (6, 8), (8, 10), (10, 12)]
    with pytest.raises(ValueError, match="too few"):
        time_series_folds(5, 5)
    with pytest.raises(ValueError, match="n_splits"):
        time_series_folds(100, 1)


def test_outlier_rule_by_hand() -> None:
    # 100 first long-term reviews of one first grade: limit max(5, 20) = 20. Cells by count:
    # t=30 (1), t=9 (2), t=8 (3), t=7 (4), t=6 (5), t=2 (10), t=1 (75).
    # fewest first: 1 + 2 + 3 + 4 + 5 = 15 < 20 dropped; t=2 would reach 25 >= 20 and has 10 >= 6
    # reviews and t <= 100: kept; t=1 kept.
    t = np.repeat([30, 9, 8, 7, 6, 2, 1], [1, 2, 3, 4, 5, 10, 75]).astype(float)
    assert _outlier_cells(3, t) == {30.0, 9.0, 8.0, 7.0, 6.0}
    # past the limit a cell is still dropped when it is small (< 6) or long (> 100 days)
    t2 = np.concatenate([np.full(30, 1.0), np.full(25, 150.0), np.full(3, 4.0), np.full(60, 2.0)])
    dropped = _outlier_cells(3, t2)
    assert dropped == {4.0, 150.0}  # 3 < 20 dropped; then 150 (25 reviews, > 100 days) dropped
    assert _outlier_cells(4, t2) == {4.0}  # Easy first: the long limit is 365 days


def test_benchmark_rows_drop_whole_cards() -> None:
    # 25 cards whose first long-term review is at 1 day, one card at 200 days: that card goes
    rows = []
    for card in range(26):
        gap = 200 if card == 25 else 1
        rows += [(card, 3, np.nan, 0), (card, 3, gap, 1), (card, 3, 0, 2), (card, 1, 5, 3)]
    frame = pd.DataFrame(rows, columns=["card_id", "grade", "elapsed_days", "review"])
    frame = frame.sort_values(["review", "card_id"], kind="stable").reset_index(drop=True)
    frame["order"] = np.arange(len(frame))
    kept = benchmark_rows(frame)
    gone = frame["card_id"].to_numpy() == 25
    assert not kept.history[gone].any() and kept.history[~gone].all()
    # scored: long-term reviews (t >= 1) of the kept cards; the same-day review builds state only
    assert kept.scored.tolist() == ((~gone) & (frame["elapsed_days"].fillna(0) >= 1)).tolist()
    assert kept.counts["outlier_cards"] == 1 and kept.counts["rows_of_outlier_cards"] == 4


def test_memlab_protocol_is_the_time_split() -> None:
    data = load_reviews(josh_log())
    result = evaluate_fsrs6(data, "memlab", weights=DEFAULT_WEIGHTS)
    frame = data.frame
    assert result.metrics == score_fsrs6(FSRS6(DEFAULT_WEIGHTS), frame, time_split(frame, 0.2))
    assert result.metrics["rmse_bins"] == pytest.approx(0.07405, abs=1e-4)


def test_benchmark_protocol_on_josh() -> None:
    data = load_reviews(josh_log())
    frame = benchmark_frame(data)
    assert not np.allclose(
        frame["elapsed_days"].fillna(-1), data.frame["elapsed_days"].fillna(-1)
    )  # Anki calendar days, not 24-hour periods
    kept = benchmark_rows(frame)
    result = evaluate_fsrs6(data, "srs-benchmark", weights=DEFAULT_WEIGHTS)
    folds = time_series_folds(kept.counts["scored"], 5)
    # the pooled test rows are the last five sixths of the kept scored rows
    assert result.metrics["n"] == folds[-1][1] - folds[0][0]
    assert [f["test"]["n"] for f in result.folds] == [b - a for a, b in folds]
    assert kept.counts["outlier_cards"] > 0
    assert 0 < result.metrics["rmse_bins"] < 0.2 and 0.3 < result.metrics["log_loss"] < 0.6
    with pytest.raises(ValueError, match="protocol"):
        evaluate_fsrs6(data, "k-fold")


def test_benchmark_protocol_reloads_with_the_load_options(tmp_path) -> None:
    # a py-fsrs log loaded with invalid_grades="drop" is reloaded in Anki days the same way,
    # instead of failing on the row the user asked to drop
    table = pd.read_csv(josh_log())
    table.loc[5, "review_rating"] = 7
    path = tmp_path / "log.csv"
    table.to_csv(path, index=False)
    data = load_reviews(path, invalid_grades="drop")
    frame = benchmark_frame(data)
    assert len(frame) == len(data.frame) == len(table) - 1
    result = evaluate_fsrs6(data, "srs-benchmark", weights=DEFAULT_WEIGHTS)
    assert result.metrics["n"] > 0


def test_benchmark_frame_applies_a_timezone_to_a_log_already_in_anki_days() -> None:
    # the day rollover moves with the time zone: a log loaded in UTC Anki days is reloaded in the
    # zone asked for rather than scored in UTC days
    tokyo = load_reviews(josh_log(), convention="anki", timezone="Asia/Tokyo").frame
    for data in (load_reviews(josh_log(), convention="anki"), load_reviews(josh_log())):
        frame = benchmark_frame(data, timezone="Asia/Tokyo")
        assert frame["elapsed_days"].equals(tokyo["elapsed_days"])
