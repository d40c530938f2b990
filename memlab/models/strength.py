"""Dual-strength memory (Bjork & Bjork, 1992), accessibility and memory states.

*Storage strength* SS >= 0 (how well a memory is learned) only grows; *retrieval strength* RS in
[0, 1] (how easy it is to reach now) decays with time and an access restores it to 1:

- desirable difficulty: an access grows SS by what RS had lost,
  ``SS' = SS + gain * (massed_share + (1 - massed_share) * (1 - RS))``, so 100 accesses within
  a minute add about one ``gain``, not 100;
- storage protects retrieval: ``RS(t) = RS0 * exp(-t / (retrieval_days * (1 + SS)))``.

**Accessibility** is ``0.5 R + 0.3 RS + 0.2 SS / (SS + storage_half)`` and names a state: active
(>= 0.7), dormant (>= 0.4), silent (>= 0.1) or unavailable. ``R`` is one trace's ``0.9 ** (t / S)``
(``S`` the FSRS-6 stability), not FSRS-6's power law, which averages a population of traces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from memlab.models._validation import (
    FloatParams,
    label_by_floors,
    non_negative,
    positive,
    positive_scalar,
    unit_interval,
)

#: Accessibility weights of retention, retrieval strength and normalised storage strength.
ACCESSIBILITY_WEIGHTS: tuple[float, float, float] = (0.5, 0.3, 0.2)

#: Retention of the single trace when the elapsed time equals the stability (as FSRS-6's R(S, S)).
TRACE_RETENTION_AT_STABILITY = 0.9

#: Memory states, from the most accessible down, with the accessibility floor of each.
STATE_FLOORS: tuple[tuple[str, float], ...] = (
    ("active", 0.7),
    ("dormant", 0.4),
    ("silent", 0.1),
    ("unavailable", -np.inf),
)
STATES: tuple[str, ...] = tuple(name for name, _ in STATE_FLOORS)


@dataclass(frozen=True)
class DualStrength(FloatParams):
    """Storage and retrieval strength with Bjork's desirable-difficulty update.

    Parameters
    ----------
    gain : float
        Storage strength added by an access made when retrieval strength had fallen to 0.
    massed_share : float
        Share of ``gain`` added by an access made while retrieval strength is still 1
        (massed practice), in [0, 1].
    retrieval_days : float
        Time constant, in days, of retrieval-strength decay at zero storage strength.
    storage_half : float
        Storage strength at which the normalised storage strength is one half.
    """

    gain: float = 1.0
    massed_share: float = 0.01
    retrieval_days: float = 1.0
    storage_half: float = 10.0

    def __post_init__(self) -> None:
        positive_scalar(self.gain, "DualStrength.gain")
        positive_scalar(self.retrieval_days, "DualStrength.retrieval_days")
        positive_scalar(self.storage_half, "DualStrength.storage_half")
        share = positive_scalar(self.massed_share, "DualStrength.massed_share", zero=True)
        unit_interval(share, "DualStrength.massed_share")

    def retrieval_strength(
        self, *, retrieval_at_access: ArrayLike, elapsed_days: ArrayLike, storage: ArrayLike = 0.0
    ) -> NDArray[np.float64]:
        """Retrieval strength ``elapsed_days`` after the last access, in [0, 1]."""
        rs0 = unit_interval(retrieval_at_access, "retrieval_at_access")
        t = non_negative(elapsed_days, "elapsed_days")
        ss = non_negative(storage, "storage")
        return rs0 * np.exp(-t / (self.retrieval_days * (1.0 + ss)))

    def on_access(
        self, *, storage: ArrayLike, retrieval_before: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Storage grown by ``gain * (massed + (1 - massed) * (1 - RS))``, and retrieval strength
        restored to 1."""
        ss = non_negative(storage, "storage")
        rs = unit_interval(retrieval_before, "retrieval_before")
        new_storage = ss + self.gain * (self.massed_share + (1.0 - self.massed_share) * (1.0 - rs))
        return new_storage, np.ones_like(new_storage)

    def storage_norm(self, storage: ArrayLike) -> NDArray[np.float64]:
        """``SS / (SS + storage_half)``: monotone, 0 at 0, below 1 for every finite SS."""
        ss = non_negative(storage, "storage")
        return ss / (ss + self.storage_half)

    @staticmethod
    def trace_retention(*, elapsed_days: ArrayLike, stability: ArrayLike) -> NDArray[np.float64]:
        """One memory's own retention ``0.9 ** (t / S)`` (``S`` the FSRS-6 stability, days > 0)."""
        t = non_negative(elapsed_days, "elapsed_days")
        return TRACE_RETENTION_AT_STABILITY ** (t / positive(stability, "stability"))

    def accessibility(
        self, *, retention: ArrayLike, retrieval: ArrayLike, storage: ArrayLike
    ) -> NDArray[np.float64]:
        """``0.5 * retention + 0.3 * RS + 0.2 * SS_norm``, in [0, 1]."""
        r = unit_interval(retention, "retention")
        rs = unit_interval(retrieval, "retrieval")
        w_r, w_rs, w_ss = ACCESSIBILITY_WEIGHTS
        return w_r * r + w_rs * rs + w_ss * self.storage_norm(storage)

    def accessibility_at(
        self,
        *,
        elapsed_days: ArrayLike,
        stability: ArrayLike,
        retrieval_at_access: ArrayLike,
        storage: ArrayLike,
    ) -> NDArray[np.float64]:
        """Accessibility ``elapsed_days`` after the last access, from the FSRS-6 ``stability``, the
        retrieval strength just after the access and the storage strength.
        """
        t, rs0, ss = elapsed_days, retrieval_at_access, storage
        r = self.trace_retention(elapsed_days=t, stability=stability)
        rs = self.retrieval_strength(retrieval_at_access=rs0, elapsed_days=t, storage=ss)
        return self.accessibility(retention=r, retrieval=rs, storage=ss)

    @staticmethod
    def state(accessibility: ArrayLike) -> NDArray[np.str_]:
        """``active`` (>= 0.7), ``dormant`` (>= 0.4), ``silent`` (>= 0.1) or ``unavailable``."""
        return label_by_floors(unit_interval(accessibility, "accessibility"), STATE_FLOORS)


__all__ = [
    "ACCESSIBILITY_WEIGHTS",
    "DualStrength",
    "STATES",
    "STATE_FLOORS",
    "TRACE_RETENTION_AT_STABILITY",
]
