"""The field's models on hand-worked values, and SM-2 against the supermemo2 package."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memlab.models.field import (
    ACTR,
    DASH,
    HLR,
    SM2,
    dash_counts,
    moving_average,
    prior_counts,
)


def test_prior_counts_exclude_the_current_review() -> None:
    successes, failures = prior_counts([[3, 1, 4, 2, 0]])
    np.testing.assert_array_equal(successes, [[0, 1, 1, 2, 3]])
    np.testing.assert_array_equal(failures, [[0, 0, 1, 1, 1]])


def test_hlr_by_hand() -> None:
    # weights 1, -1, bias 1. Review 2: one success before -> log2 h = 1 + 1 = 2, h = 4 days,
    # t = 2: p = 2 ** -0.5. Review 3: a success and a failure -> log2 h = 1 - 1 + 1, h = 2,
    # t = 4: p = 2 ** -2.
    p = HLR(w_success=1.0, w_failure=-1.0, bias=1.0).recall(
        grades=[[3, 1, 3]], elapsed_days=[[np.nan, 2, 4]]
    )
    assert np.isnan(p[0, 0])
    np.testing.assert_allclose(p[0, 1:], [2**-0.5, 0.25], rtol=1e-12)


def test_actr_by_hand() -> None:
    # time_scale 1/86400 makes a trace's age its days (at least 1); reviews at days 0, 1, 4.
    model = ACTR(
        decay_intercept=0.5, decay_scale=0.1, noise=1.0, threshold=0.0, time_scale=1 / 86400
    )
    m = model.activation(grades=[[3, 3, 3]], elapsed_days=[[np.nan, 1, 3]])
    # review 2: the first trace (decay a = 0.5, m_0 = -inf) is a day old: ln(1 ** -0.5) = 0.
    assert m[0, 1] == pytest.approx(0.0, abs=1e-12)
    # review 3: trace 0 is 4 days old (decay 0.5), trace 1 is 3 days old with decay
    # c e ** m_1 + a = 0.1 + 0.5 = 0.6.
    assert m[0, 2] == pytest.approx(math.log(4**-0.5 + 3**-0.6), rel=1e-12)
    p = model.recall(grades=[[3, 3, 3]], elapsed_days=[[np.nan, 1, 3]])
    # p = 1 / (1 + exp((tau - m) / s))
    np.testing.assert_allclose(p[0, 1:], [0.5, 1 / (1 + math.exp(-m[0, 2]))], rtol=1e-12)
    assert np.isnan(p[0, 0])


def test_actr_grades_do_not_enter() -> None:
    t = [[np.nan, 2, 5, 1]]
    np.testing.assert_array_equal(
        ACTR().recall(grades=[[3, 3, 3, 3]], elapsed_days=t),
        ACTR().recall(grades=[[1, 1, 4, 1]], elapsed_days=t),
    )


def test_dash_counts_by_hand() -> None:
    # reviews at days 0, 1, 6, 36 with grades Good, Again, Good, Good
    counts = dash_counts([[3, 1, 3, 3]], [[np.nan, 1, 5, 30]])[0]
    # windows (1, 7, 30, inf) days, [n, c] each
    np.testing.assert_array_equal(counts[1], [1, 1, 1, 1, 1, 1, 1, 1])
    np.testing.assert_array_equal(counts[2], [0, 0, 2, 1, 2, 1, 2, 1])
    np.testing.assert_array_equal(counts[3], [0, 0, 0, 0, 1, 1, 3, 2])


def test_dash_recall_by_hand() -> None:
    # weights 1, bias 0 at review 4: z = ln 2 + ln 2 + ln 4 + ln 3 = ln 48, p = 48 / 49
    p = DASH(weights=(1.0,) * 8, bias=0.0).recall(
        grades=[[3, 1, 3, 3]], elapsed_days=[[np.nan, 1, 5, 30]]
    )
    assert p[0, 3] == pytest.approx(48 / 49, rel=1e-12)


def test_dash_needs_eight_weights() -> None:
    with pytest.raises(ValueError, match="8 weights"):
        DASH(weights=(1.0, 2.0))


@pytest.mark.parametrize(
    ("model", "kwargs", "name"),
    [
        (HLR, {"bias": float("nan")}, "HLR"),
        (DASH, {"weights": (float("nan"),) * 8}, "DASH"),
        (DASH, {"bias": float("inf")}, "DASH"),
        (ACTR, {"decay_intercept": float("nan")}, "ACTR"),
        (ACTR, {"threshold": float("-inf")}, "ACTR"),
        (ACTR, {"noise": 0.0}, "ACTR.noise"),
        (ACTR, {"time_scale": -1.0}, "ACTR.time_scale"),
        (SM2, {"initial_ease": -1.0}, "SM2.initial_ease"),
        (SM2, {"max_interval": 0.0}, "SM2.max_interval"),
    ],
)
def test_invalid_parameters_are_refused_by_name(model: type, kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        model(**kwargs)


def test_sm2_by_hand() -> None:
    intervals, ease, reps = SM2().schedule([[3, 3, 3, 3], [4, 1, 3, 0], [3, 3, 3, 2]])
    # Good (q = 4) keeps EF 2.5: 1, 6, round(15.01), round(37.51)
    np.testing.assert_array_equal(intervals[0], [1, 6, 15, 38])
    # Easy: EF 2.6; Again: EF 2.6 + 0.1 - 3 (0.08 + 0.06) = 2.28, back to 1 day and 0 reps
    np.testing.assert_allclose(ease[1, :3], [2.6, 2.28, 2.28])
    np.testing.assert_array_equal(reps[1, :3], [1, 0, 1])
    assert np.isnan(intervals[1, 3])
    # Hard (q = 3) after 1, 6, 15: 15 * 2.5 = 37.5 -> 38, then EF 2.5 - 0.14
    assert intervals[2, 3] == 38 and ease[2, 3] == pytest.approx(2.36)


def test_sm2_recall_reads_the_previous_interval_as_90_percent() -> None:
    p = SM2().recall(grades=[[3, 3, 3]], elapsed_days=[[np.nan, 1, 12]])
    np.testing.assert_allclose(p[0, 1:], [0.9, 0.9**2])


@given(st.lists(st.integers(1, 4), min_size=1, max_size=12))
@example([4] * 12)  # Easy every time: past the 36,500-day cap
def test_sm2_agrees_with_supermemo2(grades: list[int]) -> None:
    """supermemo2 3.0.1 runs the same SM-2 but rounds I * EF up (ceil) where the srs-benchmark
    rounds it (round(I * EF + 0.01)) and caps it at 36,500 days: fed memlab's previous interval,
    it gives the same ease, repetitions and interval, up to that rounding and cap."""
    sm2 = pytest.importorskip("supermemo2")
    intervals, ease, reps = SM2().schedule([grades])
    their_ease, their_reps, previous = 2.5, 0, 0
    for i, grade in enumerate(grades):
        theirs = sm2.review(grade + 1, their_ease, previous, their_reps, "2024-01-01 00:00:00")
        their_ease, their_reps = theirs["easiness"], theirs["repetitions"]
        assert ease[0, i] == pytest.approx(their_ease, abs=1e-12)
        assert reps[0, i] == their_reps
        if theirs["interval"] != intervals[0, i]:
            x = previous * ease[0, i - 1]
            # memlab (as the srs-benchmark) also caps intervals at 36,500 days; supermemo2 does not
            expected = min(round(x + 0.01), 36500)
            assert theirs["interval"] == math.ceil(x) and intervals[0, i] == expected
        previous = int(intervals[0, i])


def test_moving_average_by_hand() -> None:
    # p0 = sigmoid(1.2); x1 = 1.2 + 0.3 (1 - p0); p1 = sigmoid(x1)
    p0 = 1 / (1 + math.exp(-1.2))
    x1 = 1.2 + 0.3 * (1 - p0)
    np.testing.assert_allclose(moving_average([1, 0]), [p0, 1 / (1 + math.exp(-x1))], rtol=1e-12)
    with pytest.raises(ValueError, match="0/1"):
        moving_average([1, 2])


@given(
    st.lists(st.tuples(st.integers(1, 4), st.integers(1, 400)), min_size=2, max_size=10),
)
def test_recalls_are_probabilities(reviews: list[tuple[int, int]]) -> None:
    grades = [[g for g, _ in reviews]]
    elapsed = [[np.nan] + [float(t) for _, t in reviews[1:]]]
    for model in (HLR(), ACTR(), DASH(), SM2()):
        p = model.recall(grades=grades, elapsed_days=elapsed)
        assert np.isnan(p[0, 0])
        assert ((p[0, 1:] >= 0) & (p[0, 1:] <= 1)).all(), type(model).__name__


def test_longer_waits_lower_recall() -> None:
    short = [[np.nan, 1.0, 3.0]]
    long = [[np.nan, 1.0, 30.0]]
    for model in (HLR(), ACTR(), SM2()):
        assert (
            model.recall(grades=[[3, 3, 3]], elapsed_days=long)[0, 2]
            < model.recall(grades=[[3, 3, 3]], elapsed_days=short)[0, 2]
        )


@pytest.mark.parametrize(
    ("grades", "elapsed", "message"),
    [
        ([[3, 5]], [[np.nan, 1]], "in 0..4"),
        ([[3, 3]], [[np.nan, -1]], ">= 0"),
        ([[3, 3]], [[np.nan, 1, 2]], "differs from grades shape"),
        ([[3, 3]], [[np.nan, np.nan]], "NaN at a review"),
        ([[3, 2.5]], [[np.nan, 1]], "integers 0..4, got 2.5"),
        ([[3, 0, 3]], [[np.nan, 1, 1]], "padding"),
        ([["a", 3]], [[np.nan, 1]], "integers 0..4"),
        ([[3, 3]], [["x", 1]], "elapsed_days must be numeric"),
    ],
)
def test_bad_histories_raise(grades, elapsed, message: str) -> None:
    for model in (HLR(), ACTR(), DASH(), SM2()):
        with pytest.raises(ValueError, match=message):
            model.recall(grades=grades, elapsed_days=elapsed)
