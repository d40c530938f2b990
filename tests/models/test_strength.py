from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.models.fsrs6 import FSRS6
from memlab.models.strength import STATES, DualStrength

unit = st.floats(0, 1)
storage = st.floats(0, 1e6)


@given(unit, unit, storage)
def test_accessibility_in_unit_interval(retention: float, rs: float, ss: float) -> None:
    a = DualStrength().accessibility(retention=retention, retrieval=rs, storage=ss)
    assert 0 <= a <= 1
    assert DualStrength.state(a) in STATES


@given(storage, unit)
def test_storage_only_grows_and_grows_more_when_retrieval_was_low(ss: float, rs: float) -> None:
    model = DualStrength()
    new_ss, new_rs = model.on_access(storage=ss, retrieval_before=rs)
    assert new_ss > ss and new_rs == 1.0
    low, _ = model.on_access(storage=ss, retrieval_before=rs / 2)
    assert low >= new_ss


@given(unit, st.floats(0, 1e3), st.floats(0, 1e3), storage)
def test_retrieval_strength_decays_and_storage_slows_it(
    rs0: float, t1: float, t2: float, ss: float
) -> None:
    model = DualStrength()
    a, b = model.retrieval_strength(retrieval_at_access=rs0, elapsed_days=[t1, t2], storage=ss)
    assert 0 <= a <= rs0 and 0 <= b <= rs0
    if t1 < t2:
        assert a >= b
    assert model.retrieval_strength(
        retrieval_at_access=rs0, elapsed_days=t1, storage=ss + 1
    ) >= model.retrieval_strength(retrieval_at_access=rs0, elapsed_days=t1, storage=ss)


@given(storage)
def test_storage_norm_is_monotone_below_one(ss: float) -> None:
    model = DualStrength()
    assert 0 <= model.storage_norm(ss) < 1
    assert model.storage_norm(ss + 1) >= model.storage_norm(ss)


def test_states_at_boundaries() -> None:
    states = DualStrength.state([1.0, 0.7, 0.69, 0.4, 0.39, 0.1, 0.09, 0.0])
    assert states.tolist() == [
        "active",
        "active",
        "dormant",
        "dormant",
        "silent",
        "silent",
        "unavailable",
        "unavailable",
    ]


def test_accessibility_weights() -> None:
    model = DualStrength(storage_half=5.0)
    np.testing.assert_allclose(
        model.accessibility(retention=0.8, retrieval=0.5, storage=5.0),
        0.5 * 0.8 + 0.3 * 0.5 + 0.2 * 0.5,
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda m: m.accessibility(retention=1.2, retrieval=0.5, storage=1),
            "retention must lie in",
        ),
        (
            lambda m: m.accessibility(retention=0.5, retrieval=float("nan"), storage=1),
            "retrieval contains NaN",
        ),
        (lambda m: m.on_access(storage=-1, retrieval_before=0.5), "storage must be >= 0"),
        (
            lambda m: m.retrieval_strength(retrieval_at_access=0.5, elapsed_days=-1),
            "elapsed_days must be >= 0",
        ),
    ],
)
def test_bad_input(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(DualStrength())


@pytest.mark.parametrize("share", ["0.5", [0.1, 0.2], True, 1.5, float("nan")])
def test_massed_share_must_be_one_number_in_the_unit_interval(share) -> None:
    # a string or a list would only fail (or broadcast) at the first access
    with pytest.raises((TypeError, ValueError), match="massed_share"):
        DualStrength(massed_share=share)


def _lived(access_days: list[float], model: DualStrength) -> tuple[float, float, float]:
    """(FSRS-6 stability, storage, last access day) of a memory created at day 0 and accessed
    at ``access_days`` (grade Good), the way the store updates both models."""
    fsrs = FSRS6()
    s, d = fsrs.review(stability=np.nan, difficulty=np.nan, elapsed_days=0.0, grade=3)
    ss, rs0, last = 0.0, 1.0, 0.0
    for t in access_days:
        s, d = fsrs.review(stability=s, difficulty=d, elapsed_days=t - last, grade=3)
        rs = model.retrieval_strength(retrieval_at_access=rs0, elapsed_days=t - last, storage=ss)
        ss, rs0 = (float(x) for x in model.on_access(storage=ss, retrieval_before=rs))
        last = t
    return float(np.asarray(s)), ss, last


@pytest.mark.parametrize(
    ("uses", "horizon_days"),
    [
        ([], 60.0),  # never used: unavailable within two months
        ([1.0], 365.0),  # used once: within a year
        ([1.0, 2.0, 4.0, 8.0, 16.0], 5 * 365.0),  # used five times, spaced: within five years
    ],
)
def test_every_state_is_reached_on_a_realistic_horizon(
    uses: list[float], horizon_days: float
) -> None:
    model = DualStrength()
    stability, storage, last = _lived(uses, model)
    grid = np.linspace(0.0, horizon_days, 20_001)
    states = model.state(
        model.accessibility_at(
            elapsed_days=grid, stability=stability, retrieval_at_access=1.0, storage=storage
        )
    )
    assert states[0] == "active"
    assert set(states.tolist()) == set(STATES)
    # states follow each other in order as the memory is left alone
    rank = np.array([STATES.index(x) for x in states])
    assert (np.diff(rank) >= 0).all()


def test_more_use_keeps_a_memory_accessible_for_longer() -> None:
    model = DualStrength()
    ends = []
    for uses in ([], [1.0], [1.0, 2.0, 4.0, 8.0, 16.0]):
        stability, storage, _ = _lived(uses, model)
        grid = np.geomspace(1e-3, 1e4, 4000)
        states = model.state(
            model.accessibility_at(
                elapsed_days=grid, stability=stability, retrieval_at_access=1.0, storage=storage
            )
        )
        ends.append(grid[np.argmax(states == "unavailable")])
    assert ends[0] < ends[1] < ends[2]


def test_massed_practice_has_diminishing_returns() -> None:
    model = DualStrength()
    # 100 accesses in 50 s, starting from storage 3 right after an access
    ss, rs0 = 3.0, 1.0
    step = 0.5 / 86400
    for _ in range(100):
        rs = model.retrieval_strength(retrieval_at_access=rs0, elapsed_days=step, storage=ss)
        ss, rs0 = (float(x) for x in model.on_access(storage=ss, retrieval_before=rs))
    assert 3.0 < ss < 4.5
    # the same 100 accesses a week apart build storage many times over
    spaced, rs0 = 3.0, 1.0
    for _ in range(100):
        rs = model.retrieval_strength(retrieval_at_access=rs0, elapsed_days=7.0, storage=spaced)
        spaced, rs0 = (float(x) for x in model.on_access(storage=spaced, retrieval_before=rs))
    assert spaced - 3.0 > 20 * (ss - 3.0)
    # and each spaced access adds less as storage grows (RS has lost less by the next one)
    low = model.on_access(
        storage=0.0,
        retrieval_before=model.retrieval_strength(
            retrieval_at_access=1.0, elapsed_days=7.0, storage=1.0
        ),
    )[0]
    high = model.on_access(
        storage=0.0,
        retrieval_before=model.retrieval_strength(
            retrieval_at_access=1.0, elapsed_days=7.0, storage=50.0
        ),
    )[0]
    assert high < low


def test_storage_normalisation_is_documented_map() -> None:
    model = DualStrength()
    assert model.storage_norm(model.storage_half) == pytest.approx(0.5)
    assert model.storage_norm(0.0) == 0.0
    np.testing.assert_allclose(model.storage_norm([1.0, 30.0]), [1 / 11, 30 / 40])
    # storage alone holds accessibility at most at 0.2: silent, never active or dormant
    assert model.accessibility(retention=0.0, retrieval=0.0, storage=1e9) < 0.2


def test_trace_retention_meets_fsrs6_at_zero_and_at_stability() -> None:
    fsrs = FSRS6()
    for s in (0.5, 2.3, 40.0):
        assert DualStrength.trace_retention(elapsed_days=0.0, stability=s) == 1.0
        assert DualStrength.trace_retention(elapsed_days=s, stability=s) == pytest.approx(
            float(fsrs.retrievability(elapsed_days=s, stability=s))
        )
        # and falls below the population power law after it
        assert DualStrength.trace_retention(elapsed_days=10 * s, stability=s) < float(
            fsrs.retrievability(elapsed_days=10 * s, stability=s)
        )


def test_round_trip_dict() -> None:
    model = DualStrength(2.0, 0.5, 3.0, 4.0)
    assert DualStrength.from_dict(model.to_dict()) == model
