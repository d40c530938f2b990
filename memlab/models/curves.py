"""Forgetting curves side by side, by name.

Each curve is a small object with a ``name`` and ``retention(elapsed_days)`` giving the
probability of recall (0-1) after ``elapsed_days`` days since the last access; :func:`get_curve`
builds the three below by name, and :func:`curve_table` takes names or any such object:

>>> curve_table([0, 1, 7], ["fsrs6", "heat", "exponential"]).round(3).columns.tolist()
['fsrs6', 'heat', 'exponential']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from memlab.models._validation import non_negative, positive_scalar
from memlab.models.exponential import ExponentialModel
from memlab.models.fsrs6 import FSRS6
from memlab.models.heat import LINKSEE_BANDS, HeatModel


@runtime_checkable
class ForgettingCurve(Protocol):
    """A forgetting curve: recall probability as a function of days since the last access."""

    name: str

    def retention(self, elapsed_days: ArrayLike) -> NDArray[np.float64]: ...


@dataclass(frozen=True)
class FSRS6Curve:
    """FSRS-6's power law ``R = (1 + f t / S) ** -w20`` for one stability ``S`` (days)."""

    stability: float = 1.0
    weights: tuple[float, ...] | None = None
    name: str = "fsrs6"

    def __post_init__(self) -> None:
        positive_scalar(self.stability, "stability")
        FSRS6(self.weights)  # validate the weights now, not at the first call

    def retention(self, elapsed_days: ArrayLike) -> NDArray[np.float64]:
        t = non_negative(elapsed_days, "elapsed_days")
        return FSRS6(self.weights).retrievability(elapsed_days=t, stability=self.stability)


@dataclass(frozen=True)
class HeatCurve:
    """The heat curve, heat/100 (defaults: :class:`HeatModel`'s ``linksee`` preset)."""

    k: float = LINKSEE_BANDS["k"]
    c: float = LINKSEE_BANDS["c"]
    u_minutes: float = LINKSEE_BANDS["u_minutes"]
    name: str = "heat"

    def __post_init__(self) -> None:
        HeatModel(self.k, self.c, self.u_minutes)

    def retention(self, elapsed_days: ArrayLike) -> NDArray[np.float64]:
        return HeatModel(self.k, self.c, self.u_minutes).retention(elapsed_days=elapsed_days)


@dataclass(frozen=True)
class ExponentialCurve:
    """Exponential forgetting ``R = exp(-t / S)`` for one strength ``S`` (days)."""

    strength: float = 1.0
    name: str = "exponential"

    def __post_init__(self) -> None:
        positive_scalar(self.strength, "strength")

    def retention(self, elapsed_days: ArrayLike) -> NDArray[np.float64]:
        return ExponentialModel().retention(elapsed_days=elapsed_days, strength=self.strength)


_CURVES: dict[str, Callable[..., ForgettingCurve]] = {
    "fsrs6": FSRS6Curve,
    "heat": HeatCurve,
    "exponential": ExponentialCurve,
}


def get_curve(name: str, **params: Any) -> ForgettingCurve:
    """The curve named ``name``, built with ``params`` (e.g. ``stability=5``)."""
    try:
        factory = _CURVES[name]
    except KeyError:
        raise ValueError(f"unknown curve {name!r}; available: {sorted(_CURVES)}") from None
    return factory(**params)


def curve_table(
    days: ArrayLike,
    curves: Sequence[str | ForgettingCurve] | Mapping[str, ForgettingCurve] = (
        "fsrs6",
        "heat",
        "exponential",
    ),
) -> pd.DataFrame:
    """Retention of several curves over a grid of days, one column per curve.

    Parameters
    ----------
    days : array_like
        Days since the last access (>= 0), the index of the table.
    curves : sequence of names or curves, or mapping of column name to curve
        Names are built with their default parameters by :func:`get_curve`.

    Returns
    -------
    pandas.DataFrame
        Index ``days``; columns are the curve names (or mapping keys).
    """
    grid = non_negative(np.atleast_1d(days), "days")
    if grid.ndim != 1:
        raise ValueError(f"days must be one-dimensional, got shape {grid.shape}")
    if isinstance(curves, Mapping):
        items: Iterable[tuple[str, ForgettingCurve | str]] = curves.items()
    elif isinstance(curves, str):
        raise TypeError("curves must be a sequence of names or curves, not a single string")
    else:
        items = ((c if isinstance(c, str) else getattr(c, "name", repr(c)), c) for c in curves)
    named: dict[str, ForgettingCurve] = {}
    for label, curve in items:
        built = get_curve(curve) if isinstance(curve, str) else curve
        if not isinstance(built, ForgettingCurve):
            raise TypeError(f"{label!r} is not a forgetting curve (needs .name and .retention)")
        if label in named:
            raise ValueError(
                f"two curves share the column name {label!r}; pass a mapping to name them"
            )
        named[label] = built
    if not named:
        raise ValueError("curve_table needs at least one curve")
    table = {label: curve.retention(grid) for label, curve in named.items()}
    return pd.DataFrame(table, index=pd.Index(grid, name="days"))


__all__ = [
    "ExponentialCurve",
    "FSRS6Curve",
    "ForgettingCurve",
    "HeatCurve",
    "curve_table",
    "get_curve",
]
