from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from memlab.models.curves import (
    ExponentialCurve,
    ForgettingCurve,
    FSRS6Curve,
    HeatCurve,
    curve_table,
    get_curve,
)
from memlab.models.fsrs6 import FSRS6
from memlab.models.heat import HeatModel


def test_three_curves_by_name() -> None:
    for name in ("fsrs6", "heat", "exponential"):
        curve = get_curve(name)
        assert isinstance(curve, ForgettingCurve) and curve.name == name


def test_curve_table_matches_the_models() -> None:
    days = np.array([0.0, 1.0, 7.0, 30.0])
    table = curve_table(
        days,
        {"a": FSRS6Curve(stability=7.0), "b": HeatCurve(), "c": ExponentialCurve(strength=7.0)},
    )
    assert isinstance(table, pd.DataFrame) and table.index.name == "days"
    assert table.columns.tolist() == ["a", "b", "c"]
    np.testing.assert_allclose(table["a"], FSRS6().retrievability(elapsed_days=days, stability=7.0))
    np.testing.assert_allclose(table["b"], HeatModel().heat(elapsed_days=days) / 100)
    np.testing.assert_allclose(table["c"], np.exp(-days / 7.0))
    assert table.loc[7.0, "a"] == pytest.approx(0.9)  # R(S, S) = 0.9


def test_every_curve_starts_at_one_and_falls() -> None:
    table = curve_table(np.linspace(0, 100, 201))
    assert np.allclose(table.iloc[0], 1.0)
    assert (table.diff().iloc[1:] <= 0).all().all()


def test_a_new_curve_is_any_object_with_name_and_retention() -> None:
    class Hyperbolic:
        name = "hyperbolic"

        def __init__(self, rate: float = 1.0) -> None:
            self.rate = rate

        def retention(self, elapsed_days):  # type: ignore[no-untyped-def]
            return 1.0 / (1.0 + self.rate * np.asarray(elapsed_days, dtype=float))

    table = curve_table([0, 1], ["fsrs6", Hyperbolic()])
    assert table["hyperbolic"].tolist() == [1.0, 0.5]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: get_curve("nope"), "unknown curve 'nope'"),
        (lambda: curve_table([-1.0]), "days must be >= 0"),
        (lambda: curve_table([1.0], []), "at least one curve"),
        (lambda: FSRS6Curve(stability=0), "stability must be a finite number > 0"),
        (
            lambda: curve_table([1.0], [get_curve("heat"), get_curve("heat")]),
            "share the column name",
        ),
    ],
)
def test_bad_input(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("curves", [[0.5], {"half": 0.5}, ["heat", object()]])
def test_something_that_is_not_a_curve_is_named_in_a_type_error(curves) -> None:
    with pytest.raises(TypeError, match="is not a forgetting curve"):
        curve_table([1.0], curves)
