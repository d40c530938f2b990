"""FSRS7Fitter on a seeded simulated log: it improves on the default weights, returns self, is
scored by the shared protocol, and rejects bad input."""

from __future__ import annotations

import numpy as np
import pytest

from memlab.fit import FSRS7Fitter, evaluate_fsrs6, time_split
from memlab.fit.data import histories
from memlab.fit.fsrs6 import score_fsrs6
from memlab.fit.fsrs7 import _losses
from memlab.fit.recovery import simulate_reviews
from memlab.models.fsrs6 import DEFAULT_WEIGHTS as W6
from memlab.models.fsrs7 import DEFAULT_WEIGHTS, FSRS7, LOWER_BOUNDS, UPPER_BOUNDS, clip_weights


@pytest.fixture(scope="module")
def log():
    """Cards forgotten faster than FSRS-7's defaults expect (FSRS-6 with a third of the default
    initial stabilities), scheduled at 70 % retention: the default weights are miscalibrated."""
    weights = [w * 0.3 for w in W6[:4]] + [*W6[4:8], 1.2, *W6[9:]]
    return simulate_reviews(
        tuple(weights), n_cards=400, reviews_per_card=6, desired_retention=0.7, seed=1
    ).frame


@pytest.fixture(scope="module")
def fitted(log):
    test = time_split(log, 0.2)
    return FSRS7Fitter(max_iter=40).fit(log, ~test), test


def test_fit_improves_on_default_weights(log, fitted) -> None:
    fitter, test = fitted
    default_train = score_fsrs6(FSRS7(), log, ~test)
    default_test = score_fsrs6(FSRS7(), log, test)
    assert fitter.loss_ == pytest.approx(fitter.score(log, ~test)["log_loss"], rel=1e-9)
    assert fitter.loss_ < default_train["log_loss"] - 0.01
    assert fitter.score(log, test)["log_loss"] < default_test["log_loss"] - 0.01
    assert len(fitter.weights_) == 34 and fitter.n_train_ == default_train["n"]
    low, high = np.array(LOWER_BOUNDS), np.array(UPPER_BOUNDS)
    assert ((low <= fitter.weights_) & (fitter.weights_ <= high)).all()
    np.testing.assert_array_equal(clip_weights(fitter.weights_), fitter.weights_)


def test_fit_returns_self_and_predicts(log) -> None:
    fitter = FSRS7Fitter(max_iter=2)
    assert fitter.fit(log) is fitter
    p = fitter.predict(log)
    assert p.shape == (len(log),)
    assert np.isnan(p[log["review"].to_numpy() == 0]).all()
    assert "FSRS7Fitter(" in repr(fitter)


def test_batched_losses_equal_single_runs(log) -> None:
    """The batched pass behind the finite differences gives each weight vector's own loss."""
    h = histories(log)
    scored = h.scoreable().astype(float)
    y = (h.grades >= 2).astype(float)
    t = np.where(h.grades > 0, np.nan_to_num(h.elapsed_days), 0.0)
    rng = np.random.default_rng(0)
    w = clip_weights(np.vstack([DEFAULT_WEIGHTS, rng.uniform(LOWER_BOUNDS, UPPER_BOUNDS)]))
    together = _losses(w, h.grades, t, y, scored)
    for k, weights in enumerate(w):
        alone = _losses(weights[None], h.grades, t, y, scored)[0]
        assert together[k] == pytest.approx(alone, rel=1e-12)
        mean = score_fsrs6(FSRS7(tuple(weights)), log)["log_loss"]
        assert alone / scored.sum() == pytest.approx(mean, rel=1e-9)


def test_scored_by_the_shared_protocol(log) -> None:
    result = evaluate_fsrs6(log, "memlab", fitter=FSRS7Fitter(max_iter=5))
    assert result.metrics["n"] == int(
        ((log["review"] > 0) & (log["elapsed_days"] >= 1) & time_split(log, 0.2)).sum()
    )
    assert len(result.folds[0]["weights"]) == 34


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"l2": -1.0}, "l2"),
        ({"recency": "x"}, "recency"),
        ({"max_iter": 0}, "max_iter"),
    ],
)
def test_bad_parameters(log, params, message) -> None:
    with pytest.raises(ValueError, match=message):
        FSRS7Fitter(**params).fit(log)


def test_bad_input(log) -> None:
    with pytest.raises(ValueError, match="mask"):
        FSRS7Fitter().fit(log, np.ones(3, dtype=bool))
    first_only = log[log["review"] == 0]
    with pytest.raises(ValueError, match="no scoreable reviews"):
        FSRS7Fitter().fit(first_only)
    with pytest.raises(ValueError, match="not fitted"):
        FSRS7Fitter().predict(log)
    with pytest.raises(ValueError, match="missing column"):
        FSRS7Fitter().fit(log.drop(columns="grade"))


def test_compare_models_knows_fsrs7_by_name(log) -> None:
    from memlab.fit import compare_models

    table = compare_models(log, models=["fsrs7", "avg"])
    models = set(table.index.get_level_values("model"))
    assert models == {"fsrs7", "avg"}
    test = table.xs("test", level="split")
    assert np.isfinite(test["log_loss"]).all() and (test["n"] > 0).all()
