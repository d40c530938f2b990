from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.models.heat import ALTITUDES, LAYERS, HeatModel

days = st.floats(min_value=0, max_value=1e5, allow_nan=False)
importance = st.floats(min_value=0, max_value=1)
params = st.tuples(
    st.floats(min_value=0.01, max_value=100),
    st.floats(min_value=0.05, max_value=5),
    st.floats(min_value=0.01, max_value=1e4),
)


def test_ebbinghaus_savings_values() -> None:
    # Ebbinghaus (1885) savings: ~58 % after 20 min, ~44 % after 1 h, ~34 % after 1 day,
    # ~25 % after 6 days, ~21 % after 31 days; his fitted curve gives these within a few points.
    heat = HeatModel().heat(np.array([20 / 1440, 1 / 24, 1, 6, 31]))
    np.testing.assert_allclose(heat, [56.5, 47.1, 30.4, 24.9, 21.2], atol=0.1)
    assert HeatModel().heat(0.0) == 100.0


@given(params, days, days)
def test_heat_in_range_and_falls_with_time(
    p: tuple[float, float, float], t1: float, t2: float
) -> None:
    model = HeatModel(*p)
    h1, h2 = model.heat([t1, t2])
    assert 0 <= h1 <= 100 and 0 <= h2 <= 100
    if t1 < t2:
        assert h1 >= h2


@given(days, importance, st.sampled_from(ALTITUDES))
def test_risk_is_non_negative(t: float, imp: float, altitude: str) -> None:
    model = HeatModel()
    assert model.risk(model.heat(t), imp, t, altitude) >= 0


@given(days, importance, st.sampled_from(ALTITUDES), st.sampled_from(LAYERS))
def test_protected_memories_are_always_kept(
    t: float, imp: float, altitude: str, layer: str
) -> None:
    assessment = HeatModel().assess(t, imp, altitude, layer)
    expected_protection = layer in ("caveat", "goal") or imp >= 0.9 or altitude == "mission"
    assert bool(assessment.protected) == expected_protection
    if expected_protection:
        assert assessment.action == "keep"


def test_bands_and_actions_at_their_boundaries() -> None:
    bands = HeatModel.band([100, 70, 69.99, 40, 39.99, 10, 9.99, 0])
    assert bands.tolist() == ["hot", "hot", "warm", "warm", "cold", "cold", "frozen", "frozen"]
    actions = HeatModel.action([0, 49.99, 50, 200, 200.01, 1e9])
    assert actions.tolist() == ["keep", "keep", "compress", "compress", "drop", "drop"]
    assert HeatModel.action([1e9], protected=[True]).tolist() == ["keep"]


def test_risk_formula_and_altitude_multipliers() -> None:
    heat, imp, d = 30.0, 0.2, 12.0
    base = (1 - 0.3) * (1 - 0.2) * 12 * (1 + 12 / 30)
    got = HeatModel.risk(
        [heat] * 4, imp, d, ["mission", "strategy", "architecture", "implementation"]
    )
    np.testing.assert_allclose(got, [0, 0.1 * base, 0.3 * base, base])


def test_assess_vectorised_over_memories() -> None:
    t = np.array([0.0, 0.5, 10.0, 120.0])
    out = HeatModel().assess(
        t, [0.1, 0.95, 0.1, 0.1], "implementation", ["context", "context", "goal", "context"]
    )
    assert out.heat.shape == out.risk.shape == out.action.shape == (4,)
    assert out.protected.tolist() == [False, True, True, False]
    assert out.action[-1] == "drop" and out.action[2] == "keep"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.heat(-1.0), "elapsed_days must be >= 0"),
        (lambda m: m.heat(float("nan")), "elapsed_days contains NaN"),
        (lambda m: m.risk(50, 1.5, 1, "implementation"), "importance must lie in"),
        (lambda m: m.risk(50, float("nan"), 1, "implementation"), "importance contains NaN"),
        (lambda m: m.risk(50, 0.5, 1, "galaxy"), "unknown altitude 'galaxy'"),
        (lambda m: m.is_protected("dream", 0.5, "mission"), "unknown layer 'dream'"),
        (lambda m: m.band(101), "heat must lie in"),
        (lambda m: m.action(-1), "risk must be >= 0"),
    ],
)
def test_bad_input_is_a_clear_error(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(HeatModel())


@pytest.mark.parametrize(
    "kwargs", [{"k": 0}, {"c": -1}, {"u_minutes": float("nan")}, {"k": float("inf")}]
)
def test_bad_parameters(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must be a finite number > 0"):
        HeatModel(**kwargs)


def test_round_trip_dict() -> None:
    model = HeatModel(2.0, 1.1, 3.0)
    assert HeatModel.from_dict(model.to_dict()) == model
