from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.models.exponential import ExponentialModel


@given(st.floats(0, 1e4), st.floats(0, 1e4), st.floats(0.01, 1e3))
def test_retention_in_unit_interval_and_falls(t1: float, t2: float, s: float) -> None:
    r1, r2 = ExponentialModel().retention(elapsed_days=[t1, t2], strength=s)
    assert 0 <= r1 <= 1 and 0 <= r2 <= 1
    if t1 < t2:
        assert r1 >= r2


def test_memorybank_rule() -> None:
    model = ExponentialModel()
    s = 1.0
    for _ in range(3):
        s = float(model.recall(s))
    assert s == 4.0 == float(model.strength_after(3))
    np.testing.assert_allclose(model.retention(elapsed_days=4.0, strength=s), np.exp(-1.0))
    assert model.retention(elapsed_days=0.0, strength=s) == 1.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.retention(elapsed_days=-1), "elapsed_days must be >= 0"),
        (lambda m: m.retention(elapsed_days=1, strength=0), "strength must be > 0"),
        (lambda m: m.retention(elapsed_days=1, strength=float("nan")), "strength contains NaN"),
        (lambda m: m.strength_after(-2), "successful_recalls must be >= 0"),
    ],
)
def test_bad_input(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(ExponentialModel())


def test_round_trip_dict() -> None:
    assert ExponentialModel.from_dict(ExponentialModel(2.0, 0.5).to_dict()) == ExponentialModel(
        2.0, 0.5
    )
