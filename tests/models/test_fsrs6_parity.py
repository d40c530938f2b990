"""Parity of memlab.models.fsrs6 with py-fsrs 6.3.2 (``fsrs.Scheduler``, no fuzzing).

Random review histories with explicit UTC review datetimes: all four grades, same-day
reviews minutes or hours apart, gaps straddling 24 h, long gaps of hundreds of days; the
default weights and several random weight vectors inside the bounds. py-fsrs counts elapsed
time in whole 24-hour periods, so memlab gets ``elapsed_days(times, "24h")``.

py-fsrs clamps S only from below; memlab also caps it at S_MAX = 36500 days. The unvalidated
kernel with ``s_max=inf`` must agree with py-fsrs everywhere; the public forward pass must agree
wherever py-fsrs stays at or below S_MAX, and read exactly S_MAX where py-fsrs first exceeds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from fsrs import Card, Rating, Scheduler

from memlab.models.days import elapsed_days
from memlab.models.fsrs6 import FSRS6, LOWER_BOUNDS, S_MAX, UPPER_BOUNDS

N_HISTORIES = 1000  # per weight vector
MAX_REVIEWS = 12
RTOL = 1e-9
ATOL = 1e-9


def _weight_vectors(rng: np.random.Generator) -> list[tuple[float, ...]]:
    low, high = np.array(LOWER_BOUNDS), np.array(UPPER_BOUNDS)
    vectors = [None] + [tuple(rng.uniform(low, high)) for _ in range(3)]
    # one with the bounds themselves where it matters least, to reach the edges of the box
    edge = np.where(rng.random(21) < 0.5, low, high)
    edge[20] = rng.uniform(low[20], high[20])
    vectors.append(tuple(edge))
    return [FSRS6(v).weights for v in vectors]


def _gap(rng: np.random.Generator) -> timedelta:
    kind = rng.integers(5)
    if kind == 0:  # same day, minutes apart
        return timedelta(minutes=float(rng.uniform(1, 600)))
    if kind == 1:  # around the 24 h boundary
        return timedelta(hours=float(rng.uniform(20, 50)))
    if kind == 2:  # days
        return timedelta(days=float(rng.uniform(1, 30)))
    if kind == 3:  # weeks to months
        return timedelta(days=float(rng.uniform(30, 120)))
    return timedelta(days=float(rng.uniform(100, 1000)))  # long gaps


def _histories(rng: np.random.Generator, n: int) -> list[tuple[list[int], list[datetime]]]:
    out = []
    start0 = datetime(2020, 1, 1, tzinfo=UTC)
    for _ in range(n):
        length = int(rng.integers(1, MAX_REVIEWS + 1))
        grades = [int(g) for g in rng.choice([1, 2, 3, 4], size=length, p=[0.2, 0.15, 0.5, 0.15])]
        times = [start0 + timedelta(seconds=float(rng.uniform(0, 5 * 365 * 86400)))]
        for _ in range(length - 1):
            times.append(times[-1] + _gap(rng))
        out.append((grades, times))
    return out


@dataclass
class Reference:
    """py-fsrs states along each history (NaN-padded arrays, shape (n, MAX_REVIEWS))."""

    weights: tuple[float, ...]
    grades: np.ndarray
    elapsed: np.ndarray
    stability: np.ndarray
    difficulty: np.ndarray
    retrievability: np.ndarray  # before each review (NaN at the first)


def _reference(
    weights: tuple[float, ...], histories: list[tuple[list[int], list[datetime]]]
) -> Reference:
    scheduler = Scheduler(parameters=weights, enable_fuzzing=False)
    n = len(histories)
    s = np.full((n, MAX_REVIEWS), np.nan)
    d = np.full((n, MAX_REVIEWS), np.nan)
    r = np.full((n, MAX_REVIEWS), np.nan)
    g2 = np.zeros((n, MAX_REVIEWS), dtype=np.intp)
    t2 = np.full((n, MAX_REVIEWS), np.nan)
    for card_index, (card_grades, times) in enumerate(histories):
        card = Card(card_id=card_index + 1)
        for i, (grade, when) in enumerate(zip(card_grades, times, strict=True)):
            if i > 0:
                r[card_index, i] = scheduler.get_card_retrievability(card, when)
            card, _ = scheduler.review_card(card, Rating(grade), when)
            s[card_index, i] = card.stability
            d[card_index, i] = card.difficulty
        g2[card_index, : len(card_grades)] = card_grades
        t2[card_index, : len(card_grades)] = elapsed_days(times, "24h")
    return Reference(weights, g2, t2, s, d, r)


@pytest.fixture(scope="module")
def references() -> list[Reference]:
    rng = np.random.default_rng(6_3_2)
    return [_reference(w, _histories(rng, N_HISTORIES)) for w in _weight_vectors(rng)]


def _assert_state(ref: Reference, s, d, r, mask) -> None:
    np.testing.assert_allclose(s[mask], ref.stability[mask], rtol=RTOL, atol=0)
    np.testing.assert_allclose(d[mask], ref.difficulty[mask], rtol=0, atol=ATOL)
    has_r = mask & ~np.isnan(ref.retrievability)
    np.testing.assert_allclose(r[has_r], ref.retrievability[has_r], rtol=0, atol=ATOL)
    assert np.array_equal(np.isnan(r), np.isnan(ref.retrievability))


def test_parity_histories_cover_the_cases(references: list[Reference]) -> None:
    total = sum(len(ref.grades) for ref in references)
    assert total >= 1000
    for ref in references:
        real = ref.grades > 0
        later = real.copy()
        later[:, 0] = False
        assert set(np.unique(ref.grades[real])) == {1, 2, 3, 4}
        assert (ref.elapsed[later] == 0).sum() > 100  # same-day reviews
        assert (ref.elapsed[later] >= 100).sum() > 100  # long gaps
        lengths = real.sum(axis=1)
        assert lengths.min() == 1 and lengths.max() == MAX_REVIEWS


def test_parity_forward_uncapped_kernel(references: list[Reference]) -> None:
    """The kernel without the S_MAX cap is py-fsrs, on every review of every history."""
    for ref in references:
        model = FSRS6(ref.weights)
        real = ref.grades > 0
        t = np.where(real & ~np.isnan(ref.elapsed), ref.elapsed, 0.0)
        trace = model._forward(ref.grades, t, s_max=np.inf)
        _assert_state(ref, trace.stability, trace.difficulty, trace.retrievability, real)


def test_parity_forward_public(references: list[Reference]) -> None:
    """The public forward pass equals py-fsrs up to py-fsrs's first S > S_MAX, then reads S_MAX."""
    n_capped = 0
    for ref in references:
        trace = FSRS6(ref.weights).forward(grades=ref.grades, elapsed_days=ref.elapsed)
        real = ref.grades > 0
        over = np.nan_to_num(ref.stability) > S_MAX
        capped = over.any(axis=1)
        n_capped += int(capped.sum())
        before_cap = real & (np.cumsum(over, axis=1) == 0)
        _assert_state(ref, trace.stability, trace.difficulty, trace.retrievability, before_cap)
        first = over & (np.cumsum(over, axis=1) == 1)
        assert np.all(trace.stability[first] == S_MAX)
        # difficulty does not depend on S: it agrees on every review, capped or not
        np.testing.assert_allclose(trace.difficulty[real], ref.difficulty[real], rtol=0, atol=ATOL)
        # padding: R NaN, state carried forward
        rows, cols = np.nonzero(~real)
        last = real.sum(axis=1)[rows] - 1
        assert np.isnan(trace.retrievability[rows, cols]).all()
        np.testing.assert_array_equal(trace.stability[rows, cols], trace.stability[rows, last])
    assert n_capped > 0  # the random weights do reach the cap, so the check above ran


def test_parity_single_step_review(references: list[Reference]) -> None:
    """FSRS6.review and retrievability, fed py-fsrs's previous state, give py-fsrs's next state."""
    for ref in references:
        model = FSRS6(ref.weights)
        prev_s = np.concatenate(
            [np.full((len(ref.grades), 1), np.nan), ref.stability[:, :-1]], axis=1
        )
        prev_d = np.concatenate(
            [np.full((len(ref.grades), 1), np.nan), ref.difficulty[:, :-1]], axis=1
        )
        real = (ref.grades > 0) & (np.isnan(prev_s) | (prev_s <= S_MAX))
        s, d = model.review(
            stability=prev_s[real],
            difficulty=prev_d[real],
            elapsed_days=np.nan_to_num(ref.elapsed[real]),
            grade=ref.grades[real],
        )
        np.testing.assert_allclose(s, np.minimum(ref.stability[real], S_MAX), rtol=RTOL, atol=0)
        np.testing.assert_allclose(d, ref.difficulty[real], rtol=0, atol=ATOL)
        later = real & ~np.isnan(prev_s)
        r = model.retrievability(elapsed_days=ref.elapsed[later], stability=prev_s[later])
        np.testing.assert_allclose(r, ref.retrievability[later], rtol=0, atol=ATOL)


def test_parity_equations_on_a_grid() -> None:
    """Each equation, through FSRS6.review, against its py-fsrs private method on a grid."""
    rng = np.random.default_rng(7)
    low, high = np.array(LOWER_BOUNDS), np.array(UPPER_BOUNDS)
    for weights in [None, *(tuple(rng.uniform(low, high)) for _ in range(3))]:
        model = FSRS6(weights)
        scheduler = Scheduler(parameters=model.weights, enable_fuzzing=False)
        s = rng.uniform(0.01, 5000, 200)
        d = rng.uniform(1, 10, 200)
        r = rng.uniform(0.05, 1, 200)
        g = rng.integers(1, 5, 200)
        t = model.interval(
            stability=s, desired_retention=r
        )  # the elapsed days at which R(t, S) = r
        expected_s = [
            scheduler._next_stability(
                difficulty=di, stability=si, retrievability=ri, rating=Rating(int(gi))
            )
            for si, di, ri, gi in zip(s, d, r, g, strict=True)
        ]
        long_term = t >= 1
        np.testing.assert_allclose(
            model.review(stability=s, difficulty=d, elapsed_days=np.maximum(t, 1.0), grade=g)[0][
                long_term
            ],
            np.minimum(expected_s, S_MAX)[long_term],
            rtol=RTOL,
        )
        short = [
            scheduler._short_term_stability(stability=si, rating=Rating(int(gi)))
            for si, gi in zip(s, g, strict=True)
        ]
        np.testing.assert_allclose(
            model.review(stability=s, difficulty=d, elapsed_days=0.5, grade=g)[0], short, rtol=RTOL
        )
        nd = [
            scheduler._next_difficulty(difficulty=di, rating=Rating(int(gi)))
            for di, gi in zip(d, g, strict=True)
        ]
        np.testing.assert_allclose(
            model.review(stability=s, difficulty=d, elapsed_days=1.0, grade=g)[1],
            nd,
            rtol=0,
            atol=ATOL,
        )
        for grade in (1, 2, 3, 4):
            assert model.initial_stability(grade) == pytest.approx(
                scheduler._initial_stability(rating=Rating(grade)), rel=RTOL
            )
            expected = scheduler._initial_difficulty(rating=Rating(grade), clamp=True)
            assert model.initial_difficulty(grade) == pytest.approx(expected, rel=RTOL)
        scheduler90 = Scheduler(
            parameters=model.weights, enable_fuzzing=False, maximum_interval=10**9
        )
        whole = np.array([scheduler90._next_interval(stability=si) for si in s])
        np.testing.assert_array_equal(
            np.maximum(np.round(model.interval(stability=s, desired_retention=0.9)), 1), whole
        )
