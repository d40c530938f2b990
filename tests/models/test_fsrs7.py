"""FSRS-7: hand-worked equations, the published reference progression, properties, bad input.

No released package implements FSRS-7 (fsrs-rs-python 0.9.3 and py-fsrs 6.3.2 take 21 weights;
ts-fsrs 5.4.2 on npm has no FSRS-7), so agreement is checked against the state progression that
the specification's repository (ts-fsrs ``models/fsrs-7/algorithm.spec.ts``) publishes for the
default weights, where fsrs-rs c9562d6 and srs-benchmark b4b0254 agree to four decimals.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.models.fsrs7 import (
    DEFAULT_WEIGHTS,
    EPS,
    FSRS7,
    LOWER_BOUNDS,
    S_MAX,
    S_MIN,
    UPPER_BOUNDS,
    clip_weights,
)

W = DEFAULT_WEIGHTS
models = st.one_of(
    st.just(FSRS7()),
    st.integers(0, 2**32 - 1).map(
        lambda seed: FSRS7(
            clip_weights(np.random.default_rng(seed).uniform(LOWER_BOUNDS, UPPER_BOUNDS))
        )
    ),
)
stabilities = st.floats(S_MIN, S_MAX)
difficulties = st.floats(1.0, 10.0)


def state(s: float, sf: float, d: float) -> dict[str, float]:
    return {"stability": s, "stability_fast": sf, "difficulty": d}


# ----------------------------------------------------------------------------- hand-worked
def test_initial_state_by_hand() -> None:
    s, sf, d = FSRS7().initial_state([1, 2, 3, 4])
    np.testing.assert_allclose(s, W[:4])
    np.testing.assert_allclose(sf, [0.8 * x for x in W[:4]])
    # D0(3) = w4 - e^(2 w5) + 1 = 6.1686 - e^1.2914 + 1 = 3.53072; D0(4) < 1 is clamped
    np.testing.assert_allclose(d[2], 3.530724, atol=1e-6)
    assert d[0] == pytest.approx(6.1686) and d[3] == 1.0


def test_retrievability_by_hand() -> None:
    """At D = 5 and t = S = Sf = 1 the slow curve reads w26 and the fast curve w25 (their
    factors are defined so), and the mixture weights are w27 and w28."""
    r = FSRS7().retrievability(elapsed_days=1.0, **state(1.0, 1.0, 5.0))
    expected = (W[27] * W[25] + W[28] * W[26]) / (W[27] + W[28]) * (1 - 2 * EPS) + EPS
    assert r == pytest.approx(expected, rel=1e-12)  # 0.82874...
    assert FSRS7().retrievability(elapsed_days=0.0, **state(3.0, 2.0, 7.0)) == pytest.approx(
        1 - EPS
    )


def test_again_by_hand() -> None:
    """Again at t = S = Sf = 1, D = 5: both traces take their lapse value, the fast one capped
    at 0.8 of the new slow one; D moves up by w6 (2)(R + 0.1) damped, then reverts 1 %."""
    r = (W[27] * W[25] + W[28] * W[26]) / (W[27] + W[28]) * (1 - 2 * EPS) + EPS
    s_new = min(1.0, W[10] * (2 ** W[11] - 1) * math.exp((1 - r) * W[12]))  # 0.41640
    sf_new = min(1.0, W[18] * (2 ** W[19] - 1) * math.exp((1 - W[25]) * W[20]))  # 0.12120
    d0_easy = W[4] - math.exp(3 * W[5]) + 1
    d_new = 0.01 * d0_easy + 0.99 * (5 + 5 * (2 * W[6] * (r + 0.1)) / 9)  # 8.7125
    s, sf, d = FSRS7().next_state(elapsed_days=1.0, grade=1, **state(1.0, 1.0, 5.0))
    assert (s, sf, d) == pytest.approx((s_new, min(sf_new, 0.8 * s_new), d_new), rel=1e-12)
    assert sf == pytest.approx(0.12120, abs=5e-5) and s == pytest.approx(0.41640, abs=5e-5)


def test_success_by_hand() -> None:
    """Hard at t = S = Sf = 1, D = 5: U = x (1 + e^(w[k]-1.5) (11-D) x^-w[k+1] (e^((1-q) w[k+2])
    - 1) w[k+6]), larger than the lapse value here."""
    r = (W[27] * W[25] + W[28] * W[26]) / (W[27] + W[28]) * (1 - 2 * EPS) + EPS
    s_new = 1 + math.exp(W[7] - 1.5) * 6 * (math.exp((1 - r) * W[9]) - 1) * W[13]
    sf_new = 1 + math.exp(W[15] - 1.5) * 6 * (math.exp((1 - W[25]) * W[17]) - 1) * W[21]
    d_new = 0.01 * (W[4] - math.exp(3 * W[5]) + 1) + 0.99 * (5 + 5 * W[6] / 9)
    s, sf, d = FSRS7().next_state(elapsed_days=1.0, grade=2, **state(1.0, 1.0, 5.0))
    assert (s, sf, d) == pytest.approx((s_new, sf_new, d_new), rel=1e-12)


def test_published_progression() -> None:
    """Again, then Good at 0, 1, 3, 8 and 21 days (ts-fsrs algorithm.spec.ts, 4 decimals)."""
    trace = FSRS7().forward(grades=[[1, 3, 3, 3, 3, 3]], elapsed_days=[[np.nan, 0, 1, 3, 8, 21]])
    np.testing.assert_allclose(
        trace.difficulty[0], [6.1686, 6.1092, 6.0504, 5.9922, 5.9346, 5.8775], atol=5e-5
    )
    np.testing.assert_allclose(
        trace.stability[0], [0.1104, 0.1104, 0.9169, 3.5338, 10.186, 25.9857], atol=5e-5
    )
    np.testing.assert_allclose(
        trace.stability_fast[0], [0.0883, 0.0883, 44.4442, 193.5973, 407.6265, 700.5589], atol=5e-5
    )


# ----------------------------------------------------------------------------- properties
@settings(max_examples=60, deadline=None)
@given(models, stabilities, stabilities, difficulties, st.floats(0, 1e4), st.floats(0, 1e4))
def test_retrievability_decreases_in_time(model, s, sf, d, t1, t2) -> None:
    lo, hi = sorted((t1, t2))
    r_lo, r_hi = model.retrievability(elapsed_days=[lo, hi], **state(s, sf, d))
    assert EPS <= r_hi <= r_lo + 1e-12 <= 1 - EPS + 1e-12


@settings(max_examples=60, deadline=None)
@given(models, stabilities, stabilities, difficulties, st.floats(0, 1e4), st.integers(1, 4))
def test_next_state_within_bounds(model, s, sf, d, t, g) -> None:
    s2, sf2, d2 = model.next_state(elapsed_days=t, grade=g, **state(s, sf, d))
    assert S_MIN <= s2 <= S_MAX and S_MIN <= sf2 <= S_MAX and 1 <= d2 <= 10
    if g == 1:  # Again: the fast trace is capped at 80 % of the new slow one
        assert sf2 <= max(0.8 * s2, S_MIN) * (1 + 1e-12)


@settings(max_examples=20, deadline=None)
@given(models, st.integers(0, 2**32 - 1))
def test_forward_matches_review_by_review(model, seed) -> None:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 8, size=5)
    grades = np.zeros((5, 7), dtype=int)
    elapsed = np.full((5, 7), np.nan)
    for card, n in enumerate(lengths):
        grades[card, :n] = rng.integers(1, 5, n)
        elapsed[card, 1:n] = rng.choice([0.0, 0.3, 1.0, 4.0, 40.0], n - 1)
    trace = model.forward(grades=grades, elapsed_days=elapsed)
    assert trace.retrievability.shape == (5, 7)
    for card, n in enumerate(lengths):
        s, sf, d = model.initial_state(grades[card, 0])
        for i in range(1, n):
            r = model.retrievability(elapsed_days=elapsed[card, i], **state(s, sf, d))
            assert trace.retrievability[card, i] == pytest.approx(r, rel=1e-12)
            s, sf, d = model.next_state(
                elapsed_days=elapsed[card, i], grade=grades[card, i], **state(s, sf, d)
            )
            assert trace.stability[card, i] == pytest.approx(s, rel=1e-12)
            assert trace.stability_fast[card, i] == pytest.approx(sf, rel=1e-12)
            assert trace.difficulty[card, i] == pytest.approx(d, rel=1e-12)
        assert np.isnan(trace.retrievability[card, n:]).all()


def test_vectorised_shapes() -> None:
    model = FSRS7()
    r = model.retrievability(elapsed_days=np.ones((3, 1)), **state(np.arange(1.0, 5.0), 2.0, 5.0))
    assert r.shape == (3, 4)
    s, sf, d = model.next_state(elapsed_days=[1.0, 2.0], grade=[[1], [3]], **state(4.0, 2.0, 5.0))
    assert s.shape == sf.shape == d.shape == (2, 2)
    assert isinstance(model.retrievability(elapsed_days=1.0, **state(1.0, 1.0, 5.0)), float)
    assert FSRS7.from_dict(model.to_dict()) == model


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (DEFAULT_WEIGHTS[:21], "expected 34"),
        ((*DEFAULT_WEIGHTS[:33], 0.9), r"weights\[33\]"),
        ((5.0, 1.0, *DEFAULT_WEIGHTS[2:]), r"weights\[1\]"),  # w1 < w0
        ((*DEFAULT_WEIGHTS[:5], float("nan"), *DEFAULT_WEIGHTS[6:]), "NaN"),
    ],
)
def test_bad_weights(weights, message) -> None:
    with pytest.raises(ValueError, match=message):
        FSRS7(weights)


def test_bad_input_raises() -> None:
    model = FSRS7()
    with pytest.raises(ValueError, match="elapsed_days"):
        model.retrievability(elapsed_days=-1.0, **state(1.0, 1.0, 5.0))
    with pytest.raises(ValueError, match="stability_fast"):
        model.retrievability(elapsed_days=1.0, **state(1.0, 0.0, 5.0))
    with pytest.raises(ValueError, match="difficulty"):
        model.next_state(elapsed_days=1.0, grade=3, **state(1.0, 1.0, 11.0))
    with pytest.raises(ValueError, match="grade"):
        model.next_state(elapsed_days=1.0, grade=5, **state(1.0, 1.0, 5.0))
    with pytest.raises(TypeError, match="keywords"):
        model.retrievability(elapsed_days=1.0, stability=1.0, difficulty=5.0)
    with pytest.raises(ValueError, match="padding"):
        model.forward(grades=[[3, 0, 3]], elapsed_days=[[np.nan, np.nan, 1.0]])
    with pytest.raises(ValueError, match="elapsed_days"):
        model.forward(grades=[[3, 3]], elapsed_days=[[np.nan, np.nan]])
    with pytest.raises(ValueError, match="shape"):
        model.forward(grades=[[3, 3]], elapsed_days=[[np.nan]])
