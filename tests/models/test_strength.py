from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.models.strength import STATES, DualStrength

unit = st.floats(0, 1)
storage = st.floats(0, 1e6)


@given(unit, unit, storage)
def test_accessibility_in_unit_interval(retention: float, rs: float, ss: float) -> None:
    a = DualStrength().accessibility(retention, rs, ss)
    assert 0 <= a <= 1
    assert DualStrength.state(a) in STATES


@given(storage, unit)
def test_storage_only_grows_and_grows_more_when_retrieval_was_low(ss: float, rs: float) -> None:
    model = DualStrength()
    new_ss, new_rs = model.on_access(ss, rs)
    assert new_ss > ss and new_rs == 1.0
    low, _ = model.on_access(ss, rs / 2)
    assert low >= new_ss


@given(unit, st.floats(0, 1e3), st.floats(0, 1e3), storage)
def test_retrieval_strength_decays_and_storage_slows_it(
    rs0: float, t1: float, t2: float, ss: float
) -> None:
    model = DualStrength()
    a, b = model.retrieval_strength(rs0, [t1, t2], ss)
    assert 0 <= a <= rs0 and 0 <= b <= rs0
    if t1 < t2:
        assert a >= b
    assert model.retrieval_strength(rs0, t1, ss + 1) >= model.retrieval_strength(rs0, t1, ss)


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
        model.accessibility(0.8, 0.5, 5.0), 0.5 * 0.8 + 0.3 * 0.5 + 0.2 * 0.5
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.accessibility(1.2, 0.5, 1), "retention must lie in"),
        (lambda m: m.accessibility(0.5, float("nan"), 1), "retrieval contains NaN"),
        (lambda m: m.on_access(-1, 0.5), "storage must be >= 0"),
        (lambda m: m.retrieval_strength(0.5, -1), "elapsed_days must be >= 0"),
    ],
)
def test_bad_input(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(DualStrength())


def test_round_trip_dict() -> None:
    model = DualStrength(2.0, 0.5, 3.0, 4.0)
    assert DualStrength.from_dict(model.to_dict()) == model
