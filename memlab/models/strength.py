"""Dual-strength memory (Bjork & Bjork, 1992), accessibility and memory states.

*Storage strength* SS >= 0 measures how well a memory is learned; it only grows.
*Retrieval strength* RS in [0, 1] measures how easy it is to reach now; it decays with
time and an access restores it to 1. Two of Bjork's observations shape the equations:

- desirable difficulty: an access grows SS more when RS was low just before it,
  ``SS' = SS + gain * (1 + difficulty_bonus * (1 - RS))``;
- storage protects retrieval: RS is lost more slowly when SS is high,
  ``RS(t) = RS0 * exp(-t / (retrieval_days * (1 + SS)))``.

A memory's accessibility blends its FSRS-6 retention with both strengths,
``0.5 R + 0.3 RS + 0.2 SS_norm`` with ``SS_norm = SS / (SS + storage_half)`` (a monotone map
of [0, inf) onto [0, 1), one half at ``storage_half``), and names a state: active (>= 0.7),
dormant (>= 0.4), silent (>= 0.1) or unavailable. States never delete anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from memlab.models._validation import label_by_floors, non_negative, positive_scalar, unit_interval

#: Accessibility weights of retention, retrieval strength and normalised storage strength.
ACCESSIBILITY_WEIGHTS: tuple[float, float, float] = (0.5, 0.3, 0.2)

#: Memory states, from the most accessible down, with the accessibility floor of each.
STATE_FLOORS: tuple[tuple[str, float], ...] = (
    ("active", 0.7),
    ("dormant", 0.4),
    ("silent", 0.1),
    ("unavailable", -np.inf),
)
STATES: tuple[str, ...] = tuple(name for name, _ in STATE_FLOORS)


@dataclass(frozen=True)
class DualStrength:
    """Storage and retrieval strength with Bjork's desirable-difficulty update.

    Parameters
    ----------
    gain : float
        Storage strength added by an access when retrieval strength was 1.
    difficulty_bonus : float
        Extra fraction of ``gain`` earned per unit of retrieval strength lost (1 doubles
        the gain of an access made when RS had fallen to 0).
    retrieval_days : float
        Time constant, in days, of retrieval-strength decay at zero storage strength.
    storage_half : float
        Storage strength at which the normalised storage strength is one half.
    """

    gain: float = 1.0
    difficulty_bonus: float = 1.0
    retrieval_days: float = 1.0
    storage_half: float = 5.0

    def __post_init__(self) -> None:
        positive_scalar(self.gain, "DualStrength.gain")
        positive_scalar(self.retrieval_days, "DualStrength.retrieval_days")
        positive_scalar(self.storage_half, "DualStrength.storage_half")
        non_negative(self.difficulty_bonus, "DualStrength.difficulty_bonus")

    def retrieval_strength(
        self, retrieval_at_access: ArrayLike, elapsed_days: ArrayLike, storage: ArrayLike = 0.0
    ) -> NDArray[np.float64]:
        """Retrieval strength ``elapsed_days`` after the last access, in [0, 1]."""
        rs0 = unit_interval(retrieval_at_access, "retrieval_at_access")
        t = non_negative(elapsed_days, "elapsed_days")
        ss = non_negative(storage, "storage")
        return rs0 * np.exp(-t / (self.retrieval_days * (1.0 + ss)))

    def on_access(
        self, storage: ArrayLike, retrieval_before: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Storage and retrieval strength just after an access.

        Storage grows by ``gain * (1 + difficulty_bonus * (1 - RS))`` and retrieval
        strength is restored to 1.
        """
        ss = non_negative(storage, "storage")
        rs = unit_interval(retrieval_before, "retrieval_before")
        new_storage = ss + self.gain * (1.0 + self.difficulty_bonus * (1.0 - rs))
        return new_storage, np.ones_like(new_storage)

    def storage_norm(self, storage: ArrayLike) -> NDArray[np.float64]:
        """``SS / (SS + storage_half)``: monotone, 0 at 0, below 1 for every finite SS."""
        ss = non_negative(storage, "storage")
        return ss / (ss + self.storage_half)

    def accessibility(
        self, retention: ArrayLike, retrieval: ArrayLike, storage: ArrayLike
    ) -> NDArray[np.float64]:
        """``0.5 * retention + 0.3 * RS + 0.2 * SS_norm``, in [0, 1]."""
        r = unit_interval(retention, "retention")
        rs = unit_interval(retrieval, "retrieval")
        w_r, w_rs, w_ss = ACCESSIBILITY_WEIGHTS
        return w_r * r + w_rs * rs + w_ss * self.storage_norm(storage)

    @staticmethod
    def state(accessibility: ArrayLike) -> NDArray[np.str_]:
        """``active`` (>= 0.7), ``dormant`` (>= 0.4), ``silent`` (>= 0.1) or ``unavailable``."""
        return label_by_floors(unit_interval(accessibility, "accessibility"), STATE_FLOORS)

    def to_dict(self) -> dict[str, float]:
        return {
            "gain": float(self.gain),
            "difficulty_bonus": float(self.difficulty_bonus),
            "retrieval_days": float(self.retrieval_days),
            "storage_half": float(self.storage_half),
        }

    @classmethod
    def from_dict(cls, source: dict[str, Any]) -> DualStrength:
        return cls(
            **{
                key: float(source[key])
                for key in ("gain", "difficulty_bonus", "retrieval_days", "storage_half")
            }
        )


__all__ = ["ACCESSIBILITY_WEIGHTS", "DualStrength", "STATES", "STATE_FLOORS"]
