"""FSRS-6: constants, properties (hypothesis), the forward pass and bad input."""

from __future__ import annotations

import json
import math
import pickle

import fsrs.scheduler
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.models.fsrs6 import (
    D_MAX,
    D_MIN,
    DEFAULT_WEIGHTS,
    FSRS6,
    LOWER_BOUNDS,
    S_MAX,
    S_MIN,
    UPPER_BOUNDS,
    FSRS6Trace,
)

LOW, HIGH = np.array(LOWER_BOUNDS), np.array(UPPER_BOUNDS)

# a model: the defaults, or a random weight vector inside the bounds (drawn from a seed)
models = st.one_of(
    st.just(FSRS6()),
    st.integers(0, 2**32 - 1).map(
        lambda seed: FSRS6(tuple(np.random.default_rng(seed).uniform(LOW, HIGH)))
    ),
)
stabilities = st.floats(S_MIN, S_MAX)
difficulties = st.floats(D_MIN, D_MAX)
days = st.floats(0, 1e5)
grades = st.integers(1, 4)


# ----------------------------------------------------------------------------- constants, params
def test_constants_equal_py_fsrs() -> None:
    assert DEFAULT_WEIGHTS == fsrs.scheduler.DEFAULT_PARAMETERS
    assert LOWER_BOUNDS == fsrs.scheduler.LOWER_BOUNDS_PARAMETERS
    assert UPPER_BOUNDS == fsrs.scheduler.UPPER_BOUNDS_PARAMETERS
    assert S_MIN == fsrs.scheduler.STABILITY_MIN
    assert (D_MIN, D_MAX) == (fsrs.scheduler.MIN_DIFFICULTY, fsrs.scheduler.MAX_DIFFICULTY)
    assert S_MAX == 36500.0


def test_decay_and_factor() -> None:
    model = FSRS6()
    assert model.decay == -DEFAULT_WEIGHTS[20]
    assert model.factor == pytest.approx(0.9 ** (1 / model.decay) - 1, rel=1e-15)
    scheduler = fsrs.Scheduler()
    assert (model.decay, model.factor) == (scheduler._DECAY, scheduler._FACTOR)


def test_dict_json_pickle_round_trip_and_equality() -> None:
    weights = tuple(np.random.default_rng(1).uniform(LOW, HIGH))
    model = FSRS6(weights)
    assert FSRS6.from_dict(json.loads(json.dumps(model.to_dict()))) == model
    assert pickle.loads(pickle.dumps(model)) == model
    assert FSRS6.from_dict(fsrs.Scheduler(parameters=weights).to_dict()) == model
    assert hash(FSRS6()) == hash(FSRS6(list(DEFAULT_WEIGHTS))) and FSRS6() != model
    with pytest.raises(AttributeError):
        model.weights = DEFAULT_WEIGHTS  # type: ignore[misc]


# ----------------------------------------------------------------------------- properties
@given(models, days, stabilities)
def test_retrievability_in_unit_interval(model: FSRS6, t: float, s: float) -> None:
    r = model.retrievability(elapsed_days=t, stability=s)
    assert 0 < r <= 1


@given(models, st.floats(0, 1000), st.floats(0.01, 1000), st.floats(0.01, S_MAX))
def test_retrievability_falls_with_time(model: FSRS6, t: float, dt: float, s: float) -> None:
    assert model.retrievability(elapsed_days=t + dt, stability=s) < model.retrievability(
        elapsed_days=t, stability=s
    )


@given(models, stabilities)
def test_retrievability_is_ninety_percent_at_stability(model: FSRS6, s: float) -> None:
    assert model.retrievability(elapsed_days=s, stability=s) == pytest.approx(0.9, abs=1e-12)
    assert model.retrievability(elapsed_days=0.0, stability=s) == 1.0


@given(models, stabilities, st.floats(0.01, 0.99))
def test_interval_inverts_retrievability(model: FSRS6, s: float, r: float) -> None:
    assert model.interval(stability=s, desired_retention=0.9) == pytest.approx(s, rel=1e-12)
    assert model.retrievability(
        elapsed_days=model.interval(stability=s, desired_retention=r), stability=s
    ) == pytest.approx(r, rel=1e-9)


@given(models, stabilities, difficulties, days, st.integers(2, 4))
def test_stability_grows_on_success(model: FSRS6, s: float, d: float, t: float, g: int) -> None:
    # t >= 1: factor 1 + positive * (w15 | 1 | w16) >= 1; same day: max(..., 1) >= 1
    assert model.review(stability=s, difficulty=d, elapsed_days=t, grade=g)[0] >= s


@given(models, stabilities, difficulties, st.floats(1, 1e5))
def test_lapse_does_not_raise_stability(model: FSRS6, s: float, d: float, t: float) -> None:
    assert model.review(stability=s, difficulty=d, elapsed_days=t, grade=1)[0] <= s


@given(models, stabilities, difficulties, days, grades)
def test_state_stays_in_bounds(model: FSRS6, s: float, d: float, t: float, g: int) -> None:
    s2, d2 = model.review(stability=s, difficulty=d, elapsed_days=t, grade=g)
    assert S_MIN <= s2 <= S_MAX
    assert D_MIN <= d2 <= D_MAX
    assert D_MIN <= model.initial_difficulty(g) <= D_MAX


@given(models, difficulties)
def test_difficulty_moves_against_the_grade(model: FSRS6, d: float) -> None:
    again, hard, good, easy = (
        model.review(stability=1.0, difficulty=d, elapsed_days=1.0, grade=g)[1]
        for g in (1, 2, 3, 4)
    )
    assert again >= hard >= good >= easy


def test_review_of_new_card_is_initial_state() -> None:
    model = FSRS6()
    s, d = model.review(
        stability=np.full(4, np.nan),
        difficulty=np.full(4, np.nan),
        elapsed_days=np.nan,
        grade=[1, 2, 3, 4],
    )
    np.testing.assert_array_equal(s, DEFAULT_WEIGHTS[:4])
    np.testing.assert_array_equal(d, model.initial_difficulty([1, 2, 3, 4]))
    # new and known cards in one call
    s, d = model.review(
        stability=[np.nan, 5.0], difficulty=[np.nan, 5.0], elapsed_days=[0.0, 3.0], grade=3
    )
    assert s[0] == DEFAULT_WEIGHTS[2] and (s[1], d[1]) == model.review(
        stability=5.0, difficulty=5.0, elapsed_days=3.0, grade=3
    )


def test_scalars_in_scalars_out_and_broadcasting() -> None:
    model = FSRS6()
    assert isinstance(model.retrievability(elapsed_days=1, stability=2), float)
    s, d = model.review(stability=2.0, difficulty=5.0, elapsed_days=3.0, grade=3)
    assert isinstance(s, float) and isinstance(d, float)
    out = model.retrievability(elapsed_days=np.arange(6).reshape(2, 3), stability=2.0)
    assert out.shape == (2, 3)
    assert model.review(
        stability=np.ones((2, 1)), difficulty=5.0, elapsed_days=[0.0, 1.0, 2.0], grade=3
    )[0].shape == (2, 3)


def test_accepts_py_fsrs_ratings_and_float_grades() -> None:
    model = FSRS6()
    ratings = [fsrs.Rating.Again, fsrs.Rating.Hard, fsrs.Rating.Good, fsrs.Rating.Easy]
    np.testing.assert_array_equal(model.initial_stability(ratings), DEFAULT_WEIGHTS[:4])
    np.testing.assert_array_equal(
        model.initial_difficulty([1.0, 4.0]), model.initial_difficulty([1, 4])
    )
    trace = model.forward(grades=np.array([[3.0, 1.0, 0.0]]), elapsed_days=[[np.nan, 5.0, np.nan]])
    assert trace.grades.tolist() == [[3, 1, 0]]


def test_same_day_branch_below_one_day() -> None:
    model = FSRS6()
    w = DEFAULT_WEIGHTS
    s = 3.0
    same_day = s * max(math.exp(w[17] * (3 - 3 + w[18])) * s ** -w[19], 1.0)
    assert model.review(stability=s, difficulty=5.0, elapsed_days=0.99, grade=3)[
        0
    ] == pytest.approx(same_day, rel=1e-12)
    assert model.review(stability=s, difficulty=5.0, elapsed_days=1.0, grade=3)[0] != pytest.approx(
        same_day, rel=1e-6
    )


# ----------------------------------------------------------------------------- forward pass
@st.composite
def histories(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n_cards = draw(st.integers(1, 6))
    n_reviews = draw(st.integers(1, 8))
    lengths = draw(st.lists(st.integers(0, n_reviews), min_size=n_cards, max_size=n_cards))
    g = np.array(
        draw(st.lists(grades, min_size=n_cards * n_reviews, max_size=n_cards * n_reviews))
    ).reshape(n_cards, n_reviews)
    t = np.array(
        draw(
            st.lists(
                st.sampled_from([0.0, 0.3, 1.0, 2.0, 7.5, 40.0, 800.0]),
                min_size=g.size,
                max_size=g.size,
            )
        )
    )
    t = t.reshape(g.shape)
    g[np.arange(n_reviews)[None, :] >= np.array(lengths)[:, None]] = 0
    return g, t


@given(models, histories())
def test_forward_equals_review_one_step_at_a_time(
    model: FSRS6, history: tuple[np.ndarray, np.ndarray]
) -> None:
    g, t = history
    trace = model.forward(grades=g, elapsed_days=t)
    assert isinstance(trace, FSRS6Trace) and trace.stability.shape == g.shape
    for card in range(g.shape[0]):
        s = d = np.nan
        for i in range(g.shape[1]):
            if g[card, i] == 0:
                assert np.isnan(trace.retrievability[card, i])
                np.testing.assert_equal(trace.stability[card, i], s)
                np.testing.assert_equal(trace.difficulty[card, i], d)
                continue
            if i == 0:
                assert np.isnan(trace.retrievability[card, i])
            else:
                assert trace.retrievability[card, i] == pytest.approx(
                    model.retrievability(elapsed_days=t[card, i], stability=s), rel=1e-12
                )
            s, d = model.review(
                stability=s, difficulty=d, elapsed_days=t[card, i], grade=g[card, i]
            )
            assert trace.stability[card, i] == pytest.approx(s, rel=1e-12)
            assert trace.difficulty[card, i] == pytest.approx(d, rel=1e-12)


def test_forward_padding_nan() -> None:
    g = np.array([[3, 3, 1, 0], [4, 0, 0, 0], [0, 0, 0, 0]])
    t = np.array([[np.nan, 2.0, 10.0, np.nan], [np.nan, np.nan, -1.0, 5.0], [np.nan] * 4])
    trace = FSRS6().forward(grades=g, elapsed_days=t)
    assert np.isnan(trace.stability[2]).all() and np.isnan(trace.retrievability).sum() == 10
    assert (trace.stability[1] == DEFAULT_WEIGHTS[3]).all()


def test_forward_empty_and_single_review() -> None:
    model = FSRS6()
    assert model.forward(
        grades=np.zeros((0, 3), int), elapsed_days=np.zeros((0, 3))
    ).stability.shape == (0, 3)
    trace = model.forward(grades=[[1], [2]], elapsed_days=[[0.0], [0.0]])
    np.testing.assert_array_equal(trace.stability[:, 0], DEFAULT_WEIGHTS[:2])


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("weights", "match"),
    [
        (DEFAULT_WEIGHTS[:19], r"expected 21 weights .* got 19"),
        (DEFAULT_WEIGHTS + (0.1,), r"expected 21 weights .* got 22"),
        (
            DEFAULT_WEIGHTS[:5] + (4.5,) + DEFAULT_WEIGHTS[6:],
            r"weights\[5\] = 4.5 is out of bounds \[0.001, 4.0\]",
        ),
        (DEFAULT_WEIGHTS[:20] + (0.05,), r"weights\[20\] = 0.05 is out of bounds \[0.1, 0.8\]"),
        (
            DEFAULT_WEIGHTS[:3] + (float("nan"),) + DEFAULT_WEIGHTS[4:],
            r"weights\[3\] = nan is not finite",
        ),
        (
            DEFAULT_WEIGHTS[:8] + (float("inf"),) + DEFAULT_WEIGHTS[9:],
            r"weights\[8\] = inf is not finite",
        ),
    ],
)
def test_bad_weights_named(weights: tuple[float, ...], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        FSRS6(weights)


def test_bad_weight_types() -> None:
    with pytest.raises(TypeError, match="sequence of 21"):
        FSRS6(3.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"weights\[0\] must be a number"):
        FSRS6(("x",) + DEFAULT_WEIGHTS[1:])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'weights'"):
        FSRS6.from_dict({"w": list(DEFAULT_WEIGHTS)})


def test_all_out_of_bounds_weights_listed() -> None:
    bad = list(DEFAULT_WEIGHTS)
    bad[0], bad[16] = -1.0, 0.5
    with pytest.raises(ValueError, match=r"(?s)weights\[0\] = -1.0 .*weights\[16\] = 0.5"):
        FSRS6(bad)


nan = float("nan")


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda m: m.retrievability(elapsed_days=-1.0, stability=5.0), "negative elapsed time"),
        (lambda m: m.retrievability(elapsed_days=nan, stability=5.0), "elapsed_days contains NaN"),
        (lambda m: m.retrievability(elapsed_days=1.0, stability=0.0), "stability must be > 0"),
        (lambda m: m.retrievability(elapsed_days=1.0, stability=-2.0), "stability must be > 0"),
        (lambda m: m.retrievability(elapsed_days=1.0, stability=nan), "stability contains NaN"),
        (
            lambda m: m.retrievability(elapsed_days=1.0, stability=float("inf")),
            "stability must be finite",
        ),
        (
            lambda m: m.retrievability(elapsed_days="soon", stability=1.0),
            "elapsed_days must be numeric",
        ),
        (lambda m: m.initial_stability(0), r"grade must be in 1..4, got 0"),
        (lambda m: m.initial_stability(5), r"grade must be in 1..4, got 5"),
        (lambda m: m.initial_difficulty(2.5), r"grade must be integers 1..4, got 2.5"),
        (lambda m: m.initial_difficulty(nan), "grade contains NaN"),
        (lambda m: m.initial_difficulty(True), "grade must be integers"),
        (
            lambda m: m.review(stability=5.0, difficulty=5.0, elapsed_days=1.0, grade=[3, 7]),
            "got 7",
        ),
        (
            lambda m: m.review(stability=5.0, difficulty=11.0, elapsed_days=1.0, grade=3),
            r"difficulty must lie in \[1.0, 10.0\]",
        ),
        (
            lambda m: m.review(stability=5.0, difficulty=5.0, elapsed_days=-0.5, grade=3),
            "negative elapsed time",
        ),
        (lambda m: m.review(stability=5.0, difficulty=5.0, elapsed_days=1.0, grade=0), "got 0"),
        (
            lambda m: m.review(stability=5.0, difficulty=nan, elapsed_days=1.0, grade=3),
            "difficulty contains NaN",
        ),
        (
            lambda m: m.review(stability=5.0, difficulty=5.0, elapsed_days=nan, grade=3),
            "elapsed_days contains NaN",
        ),
        (
            lambda m: m.review(stability=0.0, difficulty=5.0, elapsed_days=1.0, grade=3),
            "stability must be > 0",
        ),
        (lambda m: m.review(stability=5.0, difficulty=5.0, elapsed_days=1.0, grade=4.5), "got 4.5"),
        (
            lambda m: m.interval(stability=5.0, desired_retention=1.0),
            r"desired_retention must lie in \(0, 1\)",
        ),
        (
            lambda m: m.interval(stability=5.0, desired_retention=0.0),
            r"desired_retention must lie in \(0, 1\)",
        ),
        (
            lambda m: m.interval(stability=5.0, desired_retention=nan),
            "desired_retention contains NaN",
        ),
        (lambda m: m.interval(stability=-5.0, desired_retention=0.9), "stability must be > 0"),
        (
            lambda m: m.forward(grades=[[3, 0, 3]], elapsed_days=[[0.0, 1.0, 1.0]]),
            r"padding \(0\) may only follow",
        ),
        (lambda m: m.forward(grades=[[3, 5]], elapsed_days=[[0.0, 1.0]]), "got 5"),
        (lambda m: m.forward(grades=[[3, 3]], elapsed_days=[[0.0, -1.0]]), "negative elapsed time"),
        (
            lambda m: m.forward(grades=[[3, 3]], elapsed_days=[[0.0, nan]]),
            "elapsed_days contains NaN at a review",
        ),
        (lambda m: m.forward(grades=[[3, 3]], elapsed_days=[[0.0, 1.0, 2.0]]), "shape"),
        (lambda m: m.forward(grades=[3, 3], elapsed_days=[0.0, 1.0]), "must be 2-D"),
    ],
)
def test_bad_input_raises_named_value_error(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call(FSRS6())
