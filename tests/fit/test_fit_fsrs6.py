from __future__ import annotations

import numpy as np
import pytest
from fit_helpers import josh_log
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import check_grad

from memlab.fit.data import load_reviews, time_split
from memlab.fit.fsrs6 import FSRS6Fitter, _penalty, predict_fsrs6, score_fsrs6
from memlab.models.fsrs6 import DEFAULT_WEIGHTS, FSRS6, LOWER_BOUNDS, UPPER_BOUNDS


@pytest.fixture(scope="module")
def josh():
    return load_reviews(josh_log())


def test_default_weights_reproduce_reference(josh) -> None:
    """DESIGN.md: default weights score 0.4515 on the last 20 % (validates split and scoring)."""
    test = time_split(josh.frame, 0.2)
    result = score_fsrs6(FSRS6(), josh.frame, test)
    assert result["log_loss"] == pytest.approx(0.4515, abs=5e-5)
    assert result["n"] == 1337


def test_fit_beats_default_and_pyfsrs_on_josh(josh) -> None:
    test = time_split(josh.frame, 0.2)
    fitter = FSRS6Fitter().fit(josh.frame, ~test)
    result = fitter.score(josh.frame, test)
    assert result["log_loss"] < 0.4515  # default weights
    assert result["log_loss"] < 0.4550  # py-fsrs Optimizer
    low, high = np.array(LOWER_BOUNDS), np.array(UPPER_BOUNDS)
    assert ((np.array(fitter.weights_) >= low) & (np.array(fitter.weights_) <= high)).all()
    assert fitter.loss_ < score_fsrs6(FSRS6(), josh.frame, ~test)["log_loss"]
    p = fitter.predict(josh.frame)
    assert np.isnan(p[josh.frame["review"].to_numpy() == 0]).all()
    assert np.array_equal(p, predict_fsrs6(fitter.model_, josh.frame), equal_nan=True)


def test_fitter_validation(small_log) -> None:
    with pytest.raises(ValueError, match="l2"):
        FSRS6Fitter(l2=-1).fit(small_log)
    with pytest.raises(ValueError, match="not fitted"):
        FSRS6Fitter().predict(small_log)
    single = load_reviews(small_log).frame.query("review == 0")
    with pytest.raises(ValueError, match="no scoreable"):
        FSRS6Fitter().fit(single)
    bad = [
        ({"l2": float("inf")}, "l2 must be a finite number"),
        ({"recency": float("inf")}, "recency must be a finite number"),
        ({"tol": float("nan")}, "tol must be a finite number"),
        ({"tol": "x"}, "tol must be a finite number"),
        ({"min_init_reviews": 2.5}, "min_init_reviews must be an int >= 1"),
        ({"min_init_reviews": 0}, "min_init_reviews must be an int >= 1"),
    ]
    for options, words in bad:
        with pytest.raises(ValueError, match=words):
            FSRS6Fitter(**options).fit(small_log)


def test_l2_pulls_toward_defaults(small_log) -> None:
    loose = FSRS6Fitter(init="default").fit(small_log)
    tight = FSRS6Fitter(init="default", l2=100.0).fit(small_log)
    default = np.array(DEFAULT_WEIGHTS)
    assert (
        np.abs(np.array(tight.weights_) - default).sum()
        < np.abs(np.array(loose.weights_) - default).sum()
    )


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), l2=st.floats(1e-4, 100.0))
def test_penalty_gradient_and_curvature_are_exact(seed: int, l2: float) -> None:
    low, high = np.array(LOWER_BOUNDS), np.array(UPPER_BOUNDS)
    w = np.random.default_rng(seed).uniform(low, high)
    value, grad, curv = _penalty(w, l2)
    assert value == pytest.approx(l2 * float((((w - DEFAULT_WEIGHTS) / (high - low)) ** 2).sum()))
    assert check_grad(lambda v: _penalty(v, l2)[0], lambda v: _penalty(v, l2)[1], w) < 1e-6 * max(
        1.0, float(np.abs(grad).max())
    )
    for k in range(len(w)):  # the Hessian is the diagonal the solver adds to the Fisher matrix
        error = check_grad(
            lambda v, k=k: _penalty(v, l2)[1][k],
            lambda v, k=k: np.eye(len(w))[k] * _penalty(v, l2)[2],
            w,
        )
        assert error < 1e-6 * max(1.0, curv[k])


def test_strong_penalty_holds_the_defaults(small_log) -> None:
    # each weight within a thousandth of its bounds' span of the default (the pull's own scale)
    default, span = np.array(DEFAULT_WEIGHTS), np.array(UPPER_BOUNDS) - np.array(LOWER_BOUNDS)
    loose = FSRS6Fitter(init="default", l2=0.0).fit(small_log)
    assert np.abs(np.array(loose.weights_) - default).max() > 0.01
    held = FSRS6Fitter(init="default", l2=1e6).fit(small_log)
    assert np.abs((np.array(held.weights_) - default) / span).max() < 1e-3


def test_auto_l2_chooses_by_inner_validation(josh) -> None:
    test = time_split(josh.frame, 0.2)
    fitter = FSRS6Fitter(l2="auto").fit(josh.frame, ~test)
    assert set(fitter.l2_scores_) <= {0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3}
    assert fitter.l2_ == min(fitter.l2_scores_, key=fitter.l2_scores_.get)
    assert fitter.score(josh.frame, test)["log_loss"] < 0.4515


def test_recency_weighting(josh) -> None:
    test = time_split(josh.frame, 0.2)
    plain = FSRS6Fitter().fit(josh.frame, ~test)  # the default: all reviews weigh the same
    recent = FSRS6Fitter(recency=2.0).fit(josh.frame, ~test)
    assert plain.recency == 0.0
    # weighting later reviews more moves the fit away from the unweighted optimum: its
    # (unweighted) training loss is higher, and it predicts the later, held-out reviews better
    assert recent.loss_ > plain.loss_
    assert recent.score(josh.frame, test)["log_loss"] < plain.score(josh.frame, test)["log_loss"]
    with pytest.raises(ValueError, match="recency"):
        FSRS6Fitter(recency=-1).fit(josh.frame)


def test_outlier_cards_left_out_of_the_fit(josh) -> None:
    from memlab.fit.protocol import benchmark_rows

    test = time_split(josh.frame, 0.2)
    frame = josh.frame
    fitted = FSRS6Fitter(filter_outliers=True).fit(frame, ~test)
    train_rows = frame[~test].reset_index(drop=True)
    expected = benchmark_rows(train_rows, max_seq_len=1 << 30).counts["outlier_cards"]
    assert fitted.outlier_cards_ == expected > 0
    plain = FSRS6Fitter().fit(frame, ~test)  # the default keeps them
    assert plain.outlier_cards_ == 0 and plain.n_train_ > fitted.n_train_
    with pytest.raises(ValueError, match="filter_outliers"):
        FSRS6Fitter(filter_outliers="yes").fit(frame)


def test_tiny_log_keeps_its_reviews(small_log) -> None:
    # every first-grade group is below the rule's 20-review floor: nothing is left out
    fitted = FSRS6Fitter(filter_outliers=True).fit(small_log)
    assert fitted.outlier_cards_ == 0 and fitted.n_train_ > 0
