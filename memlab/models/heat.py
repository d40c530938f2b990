"""Ebbinghaus heat: a 0-100 score that decays from the last access.

Ebbinghaus's (1885) savings function, ``heat(t) = 100 k / ((log10(1 + t/u))**c + k)``; an access
resets t to 0. Presets: ``ebbinghaus1885`` (his k = 1.84, c = 1.25, u = 1 minute; his t counts
"from one minute before the end of the learning", *Memory*, 1913, p. 77) and ``linksee`` (the
default: k and c fitted by :func:`fit_band_ends` so hot lasts about a day, warm a week, cold
three months, as the Linksee Memory server means them). ``heat(elapsed_days=t, stability=S)``
reads the curve at ``t * (reference_stability / S) ** use_exponent``: use slows cooling. Around
the curve: Linksee's forgetting risk, keep/compress/drop actions and protection rules.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from memlab.models._validation import (
    FloatParams,
    label_by_floors,
    labels,
    non_negative,
    positive,
    positive_scalar,
    unit_interval,
)
from memlab.models.fsrs6 import DEFAULT_WEIGHTS

MINUTES_PER_DAY = 1440.0

#: FSRS-6's default stability after a first Good review (w2, py-fsrs 6.3.2): a new memory's.
NEW_MEMORY_STABILITY = float(DEFAULT_WEIGHTS[2])

#: Ebbinghaus's own fit of his 1885 savings data (u in minutes).
EBBINGHAUS_1885: dict[str, float] = {"k": 1.84, "c": 1.25, "u_minutes": 1.0}

#: When each band should end (days), the targets of the default preset's fit.
BAND_END_TARGETS: dict[str, float] = {"hot": 1.0, "warm": 7.0, "cold": 90.0}

#: The default preset: ``fit_band_ends()`` (targets above, u = 1 minute) printed to 5 digits.
LINKSEE_BANDS: dict[str, float] = {"k": 4901.7, "c": 6.531, "u_minutes": 1.0}

#: Named presets of the curve's constants.
HEAT_PRESETS: dict[str, dict[str, float]] = {
    "linksee": LINKSEE_BANDS,
    "ebbinghaus1885": EBBINGHAUS_1885,
}

#: Heat bands, from the hottest down: a memory is in the first band whose floor it reaches.
BAND_FLOORS: tuple[tuple[str, float], ...] = (
    ("hot", 70.0),
    ("warm", 40.0),
    ("cold", 10.0),
    ("frozen", -np.inf),
)

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


@dataclass(frozen=True)
class HeatAssessment:
    """Heat, band, forgetting risk, protection and action for each memory."""

    heat: NDArray[np.float64]
    band: NDArray[np.str_]
    risk: NDArray[np.float64]
    protected: NDArray[np.bool_]
    action: NDArray[np.str_]


@dataclass(frozen=True)
class HeatModel(FloatParams):
    """Ebbinghaus's savings curve on a 0-100 heat scale, with forgetting risk.

    The defaults are the ``linksee`` preset (band ends fitted to Linksee's meaning);
    ``HeatModel.preset("ebbinghaus1885")`` is Ebbinghaus's own fit.

    Parameters
    ----------
    k : float
        Larger keeps heat high for longer (Ebbinghaus: 1.84).
    c : float
        Exponent on the log of elapsed time (Ebbinghaus: 1.25); larger makes the fall steeper.
    u_minutes : float
        The time unit of the curve, in minutes (1 minute in Ebbinghaus's fit).
    reference_stability : float
        FSRS-6 stability (days) at which ``heat(elapsed_days=t, stability=S)`` equals the plain
        curve: a new memory's (FSRS-6 ``w2``).
    use_exponent : float
        How strongly stability slows cooling: effective time ``t * (reference / S) ** use_exponent``
        (0 ignores stability, 1 scales time by stability).
    """

    k: float = LINKSEE_BANDS["k"]
    c: float = LINKSEE_BANDS["c"]
    u_minutes: float = LINKSEE_BANDS["u_minutes"]
    reference_stability: float = NEW_MEMORY_STABILITY
    use_exponent: float = 1.0

    name = "heat"
    _optional = ("reference_stability", "use_exponent")  # absent from older dicts

    def __post_init__(self) -> None:
        for field in ("k", "c", "u_minutes", "reference_stability"):
            positive_scalar(getattr(self, field), f"HeatModel.{field}")
        positive_scalar(self.use_exponent, "HeatModel.use_exponent", zero=True)

    @classmethod
    def preset(cls, name: str, **overrides: float) -> HeatModel:
        """The named preset (``"linksee"``, the default, or ``"ebbinghaus1885"``)."""
        if name not in HEAT_PRESETS:
            raise ValueError(f"unknown heat preset {name!r}; available: {sorted(HEAT_PRESETS)}")
        return cls(**{**HEAT_PRESETS[name], **overrides})

    # -- the curve ---------------------------------------------------------------------------
    def heat(
        self, *, elapsed_days: ArrayLike, stability: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """Heat in [0, 100] after ``elapsed_days`` since the last access (100 at 0), read at
        ``t * (reference_stability / S) ** use_exponent`` when the FSRS-6 ``stability`` S is given.
        """
        t = non_negative(elapsed_days, "elapsed_days") * self._slowdown(stability)
        log_time = np.log10(1.0 + t * (MINUTES_PER_DAY / self.u_minutes))
        # 100 k / (L**c + k), written so that heat(0) is exactly 100.
        return 100.0 / (1.0 + log_time**self.c / self.k)

    def _slowdown(self, stability: ArrayLike | None) -> NDArray[np.float64] | float:
        if stability is None or self.use_exponent == 0:
            return 1.0
        return (self.reference_stability / positive(stability, "stability")) ** self.use_exponent

    def retention(
        self, *, elapsed_days: ArrayLike, stability: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """Heat on a 0-1 scale, read as a recall probability (Ebbinghaus's savings)."""
        return self.heat(elapsed_days=elapsed_days, stability=stability) / 100.0

    def elapsed_at(
        self, *, heat: ArrayLike, stability: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """Days after an access at which heat has fallen to ``heat`` (0 < heat <= 100)."""
        h = _heat_values(heat)
        if (h <= 0).any():
            raise ValueError("heat must be > 0 to have a finite time")
        log_time = (self.k * (100.0 / h - 1.0)) ** (1.0 / self.c)
        t = self.u_minutes / MINUTES_PER_DAY * np.expm1(log_time * np.log(10.0))
        return t / self._slowdown(stability)

    def band_ends(self, stability: float | None = None) -> dict[str, float]:
        """Days after an access at which each band ends (heat falls below its floor):
        ``{"hot": ..., "warm": ..., "cold": ...}``; frozen never ends. ``stability``: one number."""
        s = None if stability is None else positive_scalar(stability, "stability")
        floors = [floor for _, floor in BAND_FLOORS if np.isfinite(floor)]
        times = self.elapsed_at(heat=floors, stability=s)
        return {name: float(t) for (name, _), t in zip(BAND_FLOORS, np.ravel(times), strict=False)}

    # -- bands, risk, protection, actions ----------------------------------------------------
    @staticmethod
    def band(heat: ArrayLike) -> NDArray[np.str_]:
        """``hot`` (>= 70), ``warm`` (>= 40), ``cold`` (>= 10) or ``frozen`` (< 10)."""
        return label_by_floors(_heat_values(heat), BAND_FLOORS)

    @staticmethod
    def risk(
        *,
        heat: ArrayLike,
        importance: ArrayLike,
        elapsed_days: ArrayLike,
        altitude: ArrayLike | str,
    ) -> NDArray[np.float64]:
        """Linksee's forgetting risk, ``(1 - heat/100)(1 - importance) d (1 + d/30) m(altitude)``,
        ``d`` the days since the last access and ``m`` :data:`ALTITUDE_MULTIPLIERS`.
        """
        h = _heat_values(heat)
        imp = unit_interval(importance, "importance")
        d = non_negative(elapsed_days, "elapsed_days")
        alt = labels(altitude, ALTITUDES, "altitude")
        lookup = np.vectorize(ALTITUDE_MULTIPLIERS.__getitem__, otypes=[float])
        multiplier = lookup(alt) if alt.size else np.zeros(alt.shape)
        return (1.0 - h / 100.0) * (1.0 - imp) * d * (1.0 + d / 30.0) * multiplier

    @staticmethod
    def is_protected(
        *, layer: ArrayLike | str, importance: ArrayLike, altitude: ArrayLike | str
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
    def action(*, risk: ArrayLike, protected: ArrayLike | bool = False) -> NDArray[np.str_]:
        """``keep`` (risk < 50), ``compress`` (50-200) or ``drop`` (> 200); protected: keep."""
        r = non_negative(risk, "risk")
        shielded = np.asarray(protected, dtype=bool)
        chosen = np.where(r < COMPRESS_AT, "keep", np.where(r <= DROP_ABOVE, "compress", "drop"))
        return np.where(shielded, "keep", chosen).astype(str)

    def assess(
        self,
        *,
        elapsed_days: ArrayLike,
        importance: ArrayLike,
        altitude: ArrayLike | str = "implementation",
        layer: ArrayLike | str = "context",
        stability: ArrayLike | None = None,
    ) -> HeatAssessment:
        """Heat, band, risk, protection and action of arrays of memories (``importance`` is given:
        the models read no text; :func:`memlab.informativeness.content_importance` estimates it).
        """
        t = elapsed_days
        heat = self.heat(elapsed_days=t, stability=stability)
        risk = self.risk(heat=heat, importance=importance, elapsed_days=t, altitude=altitude)
        protected = self.is_protected(layer=layer, importance=importance, altitude=altitude)
        protected = np.broadcast_to(protected, risk.shape).copy()
        return HeatAssessment(
            heat=heat,
            band=self.band(heat),
            risk=risk,
            protected=protected,
            action=self.action(risk=risk, protected=protected),
        )


def fit_band_ends(
    targets: dict[str, float] | None = None, u_minutes: float | None = 1.0
) -> HeatModel:
    """Fit k and c so the bands end at ``targets`` (days; :data:`BAND_END_TARGETS` by default).

    Least squares on the log ratios of each band's end time to its target. ``u_minutes`` fixes
    the time unit (Ebbinghaus's 1 minute); ``None`` fits it too, within [1 second, 1 day]
    (unbounded, the fit runs off to u -> 0, c -> infinity). :data:`LINKSEE_BANDS` is this
    function's result to 5 digits.
    """
    from scipy.optimize import least_squares  # only the fit needs scipy

    goal = dict(BAND_END_TARGETS if targets is None else targets)
    names = [name for name, floor in BAND_FLOORS if np.isfinite(floor)]
    if sorted(goal) != sorted(names):
        raise ValueError(f"targets must name the bands {names}, got {sorted(goal)}")
    days = np.array([positive_scalar(goal[n], f"targets[{n!r}]") for n in names])
    if not (np.diff(days) > 0).all():
        raise ValueError("band end targets must increase from hot to cold")
    if u_minutes is not None:
        positive_scalar(u_minutes, "u_minutes")
    floors = np.array([floor for _, floor in BAND_FLOORS if np.isfinite(floor)])
    ratio = 100.0 / floors - 1.0

    def ends(theta: NDArray[np.float64]) -> NDArray[np.float64]:
        k, c = np.exp(theta[0]), np.exp(theta[1])
        u = u_minutes if u_minutes is not None else np.exp(theta[2])
        return u / MINUTES_PER_DAY * np.expm1((k * ratio) ** (1.0 / c) * np.log(10.0))

    start = [np.log(EBBINGHAUS_1885["k"]), np.log(EBBINGHAUS_1885["c"])]
    lower, upper = [-np.inf, np.log(0.05)], [np.inf, np.log(50.0)]
    if u_minutes is None:
        start.append(np.log(EBBINGHAUS_1885["u_minutes"]))
        lower.append(np.log(1.0 / 60.0))
        upper.append(np.log(MINUTES_PER_DAY))
    fit = least_squares(
        lambda theta: np.log(ends(theta)) - np.log(days),
        np.array(start),
        bounds=(lower, upper),
        xtol=1e-15,
        ftol=1e-15,
        gtol=1e-15,
        max_nfev=10_000,
    )
    k, c = float(np.exp(fit.x[0])), float(np.exp(fit.x[1]))
    u = float(u_minutes) if u_minutes is not None else float(np.exp(fit.x[2]))
    return HeatModel(k=k, c=c, u_minutes=u)


def _heat_values(heat: ArrayLike) -> NDArray[np.float64]:
    h = non_negative(heat, "heat")
    if (h > 100).any():
        raise ValueError(f"heat must lie in [0, 100], got {h.max()!r}")
    return h


__all__ = [
    "BAND_END_TARGETS",
    "EBBINGHAUS_1885",
    "HEAT_PRESETS",
    "LINKSEE_BANDS",
    "NEW_MEMORY_STABILITY",
    "fit_band_ends",
    "ALTITUDES",
    "ALTITUDE_MULTIPLIERS",
    "COMPRESS_AT",
    "DROP_ABOVE",
    "HeatAssessment",
    "HeatModel",
    "LAYERS",
    "PROTECTED_IMPORTANCE",
    "PROTECTED_LAYERS",
]
