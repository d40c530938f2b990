from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.datasets import load_dataset
from memlab.models.fsrs6 import FSRS6
from memlab.models.heat import (
    ALTITUDES,
    BAND_END_TARGETS,
    EBBINGHAUS_1885,
    LAYERS,
    LINKSEE_BANDS,
    NEW_MEMORY_STABILITY,
    HeatModel,
    fit_band_ends,
)

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
    heat = HeatModel.preset("ebbinghaus1885").heat(
        elapsed_days=np.array([20 / 1440, 1 / 24, 1, 6, 31])
    )
    np.testing.assert_allclose(heat, [56.5, 47.1, 30.4, 24.9, 21.2], atol=0.1)
    assert HeatModel().heat(elapsed_days=0.0) == 100.0
    assert HeatModel.preset("ebbinghaus1885") == HeatModel(**EBBINGHAUS_1885)


def test_ebbinghaus_preset_reproduces_his_calculated_column() -> None:
    # His t counts from one minute before the end of the learning: heat's t is his t - 1 min.
    table = load_dataset("ebbinghaus1885")
    model = HeatModel.preset("ebbinghaus1885")
    heat = model.heat(elapsed_days=table["minutes"].to_numpy() / 1440)
    np.testing.assert_allclose(heat, table["calculated"], atol=0.1)
    his_formula = 184.0 / (np.log10(table["t_minutes"].to_numpy()) ** 1.25 + 1.84)
    np.testing.assert_allclose(heat, his_formula, rtol=1e-12)
    # read at his t itself (the end of the learning as origin) the first value is off by 0.5
    assert abs(model.heat(elapsed_days=20 / 1440) - 57.0) > 0.4


def test_ebbinghaus_preset_band_ends_are_useless_as_bands() -> None:
    # hot after ~6 minutes, warm after ~3 hours, cold after thousands of years
    ends = HeatModel.preset("ebbinghaus1885").band_ends()
    assert 5 < ends["hot"] * 1440 < 6
    assert 2.9 < ends["warm"] * 24 < 3.0
    assert ends["cold"] / 365.25 > 5000


def test_band_ends_take_one_stability() -> None:
    # a column of stabilities was read as one list of end times, with an end for 'frozen'
    with pytest.raises(TypeError, match="stability must be a number"):
        HeatModel().band_ends(stability=[[1.0], [2.0]])
    ends = HeatModel().band_ends(stability=np.float64(4.0))
    assert list(ends) == ["hot", "warm", "cold"]
    assert ends["hot"] == pytest.approx(HeatModel().band_ends()["hot"] * 4.0 / NEW_MEMORY_STABILITY)


def test_default_band_ends_carry_linksee_meaning() -> None:
    # hot up to about a day, warm up to about a week, cold up to about three months
    ends = HeatModel().band_ends()
    assert list(ends) == ["hot", "warm", "cold"]
    assert 1.0 <= ends["hot"] < 1.25
    assert 5.0 <= ends["warm"] <= 7.0
    assert 90.0 <= ends["cold"] <= 100.0
    model = HeatModel()
    for band, floor in (("hot", 70.0), ("warm", 40.0), ("cold", 10.0)):
        t = ends[band]
        assert model.heat(elapsed_days=t * 0.999) > floor > model.heat(elapsed_days=t * 1.001)
    assert HeatModel.band([model.heat(elapsed_days=0.5)])[0] == "hot"
    assert HeatModel.band([model.heat(elapsed_days=3.0)])[0] == "warm"
    assert HeatModel.band([model.heat(elapsed_days=30.0)])[0] == "cold"
    assert HeatModel.band([model.heat(elapsed_days=365.0)])[0] == "frozen"


def test_refitting_reproduces_the_default_constants_to_their_printed_precision() -> None:
    fitted = fit_band_ends(BAND_END_TARGETS)
    assert abs(fitted.k - LINKSEE_BANDS["k"]) <= 0.05  # printed to one decimal
    assert abs(fitted.c - LINKSEE_BANDS["c"]) <= 0.0005  # printed to three decimals
    assert fitted.u_minutes == LINKSEE_BANDS["u_minutes"]
    for band, t in fitted.band_ends().items():
        assert HeatModel().band_ends()[band] == pytest.approx(t, rel=1e-4)


def test_fit_with_free_unit_is_no_worse_and_stays_in_its_bounds() -> None:
    free = fit_band_ends(u_minutes=None)
    targets = np.log(list(BAND_END_TARGETS.values()))

    def loss(model: HeatModel) -> float:
        return float(((np.log(list(model.band_ends().values())) - targets) ** 2).sum())

    assert loss(free) <= loss(HeatModel()) + 1e-9
    assert 1 / 60 - 1e-9 <= free.u_minutes <= 1440


def test_fit_band_ends_rejects_bad_targets() -> None:
    with pytest.raises(ValueError, match="must name the bands"):
        fit_band_ends({"hot": 1.0, "warm": 7.0})
    with pytest.raises(ValueError, match="must increase"):
        fit_band_ends({"hot": 7.0, "warm": 1.0, "cold": 90.0})


def _stability_after(access_days: list[float]) -> float:
    fsrs = FSRS6()
    s, d = fsrs.review(stability=np.nan, difficulty=np.nan, elapsed_days=0.0, grade=3)
    last = 0.0
    for t in access_days:
        s, d = fsrs.review(stability=s, difficulty=d, elapsed_days=t - last, grade=3)
        last = t
    return float(np.asarray(s))


def test_a_memory_used_often_stays_warmer_than_one_used_once() -> None:
    model = HeatModel()
    once = _stability_after([1.0])
    often = _stability_after([1.0, 2.0, 4.0, 8.0, 16.0])
    new = _stability_after([])
    assert new == pytest.approx(model.reference_stability)
    days_since = np.array([0.5, 2.0, 10.0, 60.0, 200.0])
    h_new, h_once, h_often = (
        model.heat(elapsed_days=days_since, stability=s) for s in (new, once, often)
    )
    assert (h_often > h_once).all() and (h_once > h_new).all()
    np.testing.assert_allclose(h_new, model.heat(elapsed_days=days_since))
    # the bands stretch with stability: hot for weeks after the five spaced uses
    assert model.band_ends(often)["hot"] > 14 > model.band_ends(once)["hot"]
    # a memory used often, left 60 days, is still warm; one used once is cold by then
    assert str(HeatModel.band(model.heat(elapsed_days=60.0, stability=often))) == "warm"
    assert str(HeatModel.band(model.heat(elapsed_days=60.0, stability=once))) == "cold"


@given(days, st.floats(0.01, 1e4), st.floats(0.01, 1e4))
def test_more_stability_never_cools_faster(t: float, s1: float, s2: float) -> None:
    model = HeatModel()
    lo, hi = sorted((s1, s2))
    assert model.heat(elapsed_days=t, stability=hi) >= model.heat(elapsed_days=t, stability=lo)


@given(st.floats(0.5, 99.5), st.floats(0.1, 1000))
def test_elapsed_at_inverts_heat(h: float, s: float) -> None:
    model = HeatModel()
    t = model.elapsed_at(heat=h, stability=s)
    assert model.heat(elapsed_days=t, stability=s) == pytest.approx(h, abs=1e-6)


@given(params, days, days)
def test_heat_in_range_and_falls_with_time(
    p: tuple[float, float, float], t1: float, t2: float
) -> None:
    model = HeatModel(*p)
    h1, h2 = model.heat(elapsed_days=[t1, t2])
    assert 0 <= h1 <= 100 and 0 <= h2 <= 100
    if t1 < t2:
        assert h1 >= h2


@given(days, importance, st.sampled_from(ALTITUDES))
def test_risk_is_non_negative(t: float, imp: float, altitude: str) -> None:
    model = HeatModel()
    assert (
        model.risk(
            heat=model.heat(elapsed_days=t), importance=imp, elapsed_days=t, altitude=altitude
        )
        >= 0
    )


@given(days, importance, st.sampled_from(ALTITUDES), st.sampled_from(LAYERS))
def test_protected_memories_are_always_kept(
    t: float, imp: float, altitude: str, layer: str
) -> None:
    assessment = HeatModel().assess(elapsed_days=t, importance=imp, altitude=altitude, layer=layer)
    expected_protection = layer in ("caveat", "goal") or imp >= 0.9 or altitude == "mission"
    assert bool(assessment.protected) == expected_protection
    if expected_protection:
        assert assessment.action == "keep"


def test_bands_and_actions_at_their_boundaries() -> None:
    bands = HeatModel.band([100, 70, 69.99, 40, 39.99, 10, 9.99, 0])
    assert bands.tolist() == ["hot", "hot", "warm", "warm", "cold", "cold", "frozen", "frozen"]
    actions = HeatModel.action(risk=[0, 49.99, 50, 200, 200.01, 1e9])
    assert actions.tolist() == ["keep", "keep", "compress", "compress", "drop", "drop"]
    assert HeatModel.action(risk=[1e9], protected=[True]).tolist() == ["keep"]


def test_risk_formula_and_altitude_multipliers() -> None:
    heat, imp, d = 30.0, 0.2, 12.0
    base = (1 - 0.3) * (1 - 0.2) * 12 * (1 + 12 / 30)
    got = HeatModel.risk(
        heat=[heat] * 4,
        importance=imp,
        elapsed_days=d,
        altitude=["mission", "strategy", "architecture", "implementation"],
    )
    np.testing.assert_allclose(got, [0, 0.1 * base, 0.3 * base, base])


def test_assess_vectorised_over_memories() -> None:
    t = np.array([0.0, 0.5, 10.0, 120.0])
    out = HeatModel().assess(
        elapsed_days=t,
        importance=[0.1, 0.95, 0.1, 0.1],
        altitude="implementation",
        layer=["context", "context", "goal", "context"],
    )
    assert out.heat.shape == out.risk.shape == out.action.shape == (4,)
    assert out.protected.tolist() == [False, True, True, False]
    assert out.action[-1] == "drop" and out.action[2] == "keep"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.heat(elapsed_days=-1.0), "elapsed_days must be >= 0"),
        (lambda m: m.heat(elapsed_days=float("nan")), "elapsed_days contains NaN"),
        (
            lambda m: m.risk(heat=50, importance=1.5, elapsed_days=1, altitude="implementation"),
            "importance must lie in",
        ),
        (
            lambda m: m.risk(
                heat=50, importance=float("nan"), elapsed_days=1, altitude="implementation"
            ),
            "importance contains NaN",
        ),
        (
            lambda m: m.risk(heat=50, importance=0.5, elapsed_days=1, altitude="galaxy"),
            "unknown altitude 'galaxy'",
        ),
        (
            lambda m: m.is_protected(layer="dream", importance=0.5, altitude="mission"),
            "unknown layer 'dream'",
        ),
        (lambda m: m.band(101), "heat must lie in"),
        (lambda m: m.action(risk=-1), "risk must be >= 0"),
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
    model = HeatModel(2.0, 1.1, 3.0, 5.0, 0.5)
    assert HeatModel.from_dict(model.to_dict()) == model
    # dicts written before the use fields existed still load
    assert HeatModel.from_dict({"k": 2.0, "c": 1.1, "u_minutes": 3.0}) == HeatModel(2.0, 1.1, 3.0)


def test_unknown_preset_and_bad_use_exponent() -> None:
    with pytest.raises(ValueError, match="unknown heat preset 'nope'"):
        HeatModel.preset("nope")
    with pytest.raises(ValueError, match="use_exponent"):
        HeatModel(use_exponent=-1.0)
    with pytest.raises(ValueError, match="stability must be > 0"):
        HeatModel().heat(elapsed_days=1.0, stability=0.0)
