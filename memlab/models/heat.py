"""Ebbinghaus heat: a 0-100 score that decays from the last access.

The curve is Ebbinghaus's own (1885) savings function,
``heat(t) = 100 k / ((log10(1 + t/u))**c + k)`` with his fitted k = 1.84, c = 1.25 and
u = 1 minute; an access resets t to 0. Around it, the forgetting-risk score, the
keep/compress/drop actions and the protection rules of the Linksee Memory server.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from memlab.models._validation import (
    label_by_floors,
    labels,
    non_negative,
    positive_scalar,
    unit_interval,
)

MINUTES_PER_DAY = 1440.0

#: Heat bands, from the hottest down: a memory is in the first band whose floor it reaches.
BAND_FLOORS: tuple[tuple[str, float], ...] = (
    ("hot", 70.0),
    ("warm", 40.0),
    ("cold", 10.0),
    ("frozen", -np.inf),
)
BANDS: tuple[str, ...] = tuple(name for name, _ in BAND_FLOORS)

#: How strongly forgetting risk applies at each altitude of abstraction.
ALTITUDE_MULTIPLIERS: dict[str, float] = {
    "mission": 0.0,
    "strategy": 0.1,
    "architecture": 0.3,
    "implementation": 1.0,
}
ALTITUDES: tuple[str, ...] = tuple(ALTITUDE_MULTIPLIERS)

#: Memory layers. ``caveat`` and ``goal`` are always protected; ``learning`` holds consolidations.
LAYERS: tuple[str, ...] = ("goal", "context", "emotion", "implementation", "caveat", "learning")
PROTECTED_LAYERS: frozenset[str] = frozenset({"caveat", "goal"})
PROTECTED_IMPORTANCE = 0.9

#: Risk at or above which a memory is compressed, and above which it is dropped.
COMPRESS_AT = 50.0
DROP_ABOVE = 200.0
ACTIONS: tuple[str, ...] = ("keep", "compress", "drop")


@dataclass(frozen=True)
class HeatAssessment:
    """Heat, band, forgetting risk, protection and action for each memory."""

    heat: NDArray[np.float64]
    band: NDArray[np.str_]
    risk: NDArray[np.float64]
    protected: NDArray[np.bool_]
    action: NDArray[np.str_]

    def to_dict(self) -> dict[str, NDArray[Any]]:
        return {key: np.asarray(value) for key, value in asdict(self).items()}


@dataclass(frozen=True)
class HeatModel:
    """Ebbinghaus's savings curve on a 0-100 heat scale, with forgetting risk.

    Parameters
    ----------
    k : float
        Ebbinghaus's k (1.84): larger keeps heat high for longer.
    c : float
        Ebbinghaus's exponent c (1.25) on the log of elapsed time.
    u_minutes : float
        The time unit of the curve, in minutes (1 minute in Ebbinghaus's fit).
    """

    k: float = 1.84
    c: float = 1.25
    u_minutes: float = 1.0

    name = "heat"

    def __post_init__(self) -> None:
        for field in ("k", "c", "u_minutes"):
            positive_scalar(getattr(self, field), f"HeatModel.{field}")

    # -- the curve ---------------------------------------------------------------------------
    def heat(self, elapsed_days: ArrayLike) -> NDArray[np.float64]:
        """Heat in [0, 100] after ``elapsed_days`` days since the last access (100 at 0)."""
        t = non_negative(elapsed_days, "elapsed_days")
        return self._heat(t)

    def _heat(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        log_time = np.log10(1.0 + t * (MINUTES_PER_DAY / self.u_minutes))
        # 100 k / (L**c + k), written so that heat(0) is exactly 100.
        return 100.0 / (1.0 + log_time**self.c / self.k)

    def retention(self, elapsed_days: ArrayLike) -> NDArray[np.float64]:
        """Heat on a 0-1 scale, read as a recall probability (Ebbinghaus's savings)."""
        return self.heat(elapsed_days) / 100.0

    # -- bands, risk, protection, actions ----------------------------------------------------
    @staticmethod
    def band(heat: ArrayLike) -> NDArray[np.str_]:
        """``hot`` (>= 70), ``warm`` (>= 40), ``cold`` (>= 10) or ``frozen`` (< 10)."""
        return label_by_floors(_heat_values(heat), BAND_FLOORS)

    @staticmethod
    def risk(
        heat: ArrayLike, importance: ArrayLike, elapsed_days: ArrayLike, altitude: ArrayLike | str
    ) -> NDArray[np.float64]:
        """Linksee's forgetting risk, ``(1 - heat/100)(1 - importance) d (1 + d/30) m(altitude)``.

        ``d`` is days since the last access and ``m`` the altitude multiplier
        (mission 0, strategy 0.1, architecture 0.3, implementation 1). Always >= 0.
        """
        h = _heat_values(heat)
        imp = unit_interval(importance, "importance")
        d = non_negative(elapsed_days, "elapsed_days")
        multiplier = _altitude_multiplier(altitude)
        return (1.0 - h / 100.0) * (1.0 - imp) * d * (1.0 + d / 30.0) * multiplier

    @staticmethod
    def is_protected(
        layer: ArrayLike | str, importance: ArrayLike, altitude: ArrayLike | str
    ) -> NDArray[np.bool_]:
        """True for memories never compressed or dropped: layer ``caveat`` or ``goal``,
        importance >= 0.9, or altitude ``mission``."""
        layer_arr = labels(layer, LAYERS, "layer")
        imp = unit_interval(importance, "importance")
        alt = labels(altitude, ALTITUDES, "altitude")
        return (
            np.isin(layer_arr, list(PROTECTED_LAYERS))
            | (imp >= PROTECTED_IMPORTANCE)
            | (alt == "mission")
        )

    @staticmethod
    def action(risk: ArrayLike, protected: ArrayLike | bool = False) -> NDArray[np.str_]:
        """``keep`` (risk < 50), ``compress`` (50-200) or ``drop`` (> 200); protected memories are kept."""
        r = non_negative(risk, "risk")
        shielded = np.asarray(protected, dtype=bool)
        chosen = np.where(r < COMPRESS_AT, "keep", np.where(r <= DROP_ABOVE, "compress", "drop"))
        return np.where(shielded, "keep", chosen).astype(str)

    def assess(
        self,
        elapsed_days: ArrayLike,
        importance: ArrayLike,
        altitude: ArrayLike | str = "implementation",
        layer: ArrayLike | str = "context",
    ) -> HeatAssessment:
        """Everything a forget sweep needs, for arrays of memories at once."""
        heat = self.heat(elapsed_days)
        risk = self.risk(heat, importance, elapsed_days, altitude)
        protected = self.is_protected(layer, importance, altitude)
        protected = np.broadcast_to(protected, risk.shape).copy()
        return HeatAssessment(
            heat=heat,
            band=self.band(heat),
            risk=risk,
            protected=protected,
            action=self.action(risk, protected),
        )

    def to_dict(self) -> dict[str, float]:
        return {"k": float(self.k), "c": float(self.c), "u_minutes": float(self.u_minutes)}

    @classmethod
    def from_dict(cls, source: dict[str, Any]) -> HeatModel:
        return cls(k=source["k"], c=source["c"], u_minutes=source["u_minutes"])


def _heat_values(heat: ArrayLike) -> NDArray[np.float64]:
    h = non_negative(heat, "heat")
    if (h > 100).any():
        raise ValueError(f"heat must lie in [0, 100], got {h.max()!r}")
    return h


def _altitude_multiplier(altitude: ArrayLike | str) -> NDArray[np.float64]:
    alt = labels(altitude, ALTITUDES, "altitude")
    lookup = np.vectorize(ALTITUDE_MULTIPLIERS.__getitem__, otypes=[float])
    return lookup(alt) if alt.size else np.zeros(alt.shape)


__all__ = [
    "ACTIONS",
    "ALTITUDES",
    "ALTITUDE_MULTIPLIERS",
    "BANDS",
    "COMPRESS_AT",
    "DROP_ABOVE",
    "HeatAssessment",
    "HeatModel",
    "LAYERS",
    "PROTECTED_IMPORTANCE",
    "PROTECTED_LAYERS",
]
