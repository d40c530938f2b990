"""The models the store runs, at its boundary between datetimes and model days.

One access of a memory is an FSRS-6 review and a dual-strength access at the elapsed days since
the last one, continuous (seconds / 86400): FSRS-6 takes its same-day branch below one day.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from memlab.models.fsrs6 import FSRS6, GOOD
from memlab.models.heat import HeatModel
from memlab.models.strength import DualStrength

SECONDS_PER_DAY = 86400.0


def days_between(later: ArrayLike, earlier: ArrayLike) -> NDArray[np.float64]:
    """Elapsed days between POSIX-second times, clipped at 0 (clock skew between processes)."""
    return np.maximum(
        (np.asarray(later, dtype=float) - np.asarray(earlier, dtype=float)) / SECONDS_PER_DAY, 0.0
    )


@dataclass(frozen=True)
class Dynamics:
    """FSRS-6, dual strength and heat as the store applies them."""

    fsrs: FSRS6 = field(default_factory=FSRS6)
    strength: DualStrength = field(default_factory=DualStrength)
    heat: HeatModel = field(default_factory=HeatModel)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """JSON-serialisable form: the three models' own ``to_dict``."""
        return {name: getattr(self, name).to_dict() for name in ("fsrs", "strength", "heat")}

    @classmethod
    def from_dict(cls, source: Mapping[str, Any]) -> Dynamics:
        """Inverse of :meth:`to_dict` (each model validates its parameters)."""
        if not isinstance(source, Mapping) or set(source) != {"fsrs", "strength", "heat"}:
            raise ValueError("dynamics must be a mapping with keys 'fsrs', 'strength', 'heat'")
        return cls(
            FSRS6.from_dict(source["fsrs"]),
            DualStrength.from_dict(dict(source["strength"])),
            HeatModel.from_dict(dict(source["heat"])),
        )

    def initial(self, grade: int = GOOD) -> tuple[float, float]:
        """(stability, difficulty) of a new memory: its creation is its first review."""
        s, d = self.fsrs.review(stability=np.nan, difficulty=np.nan, elapsed_days=0.0, grade=grade)
        return float(s), float(d)

    def retention(self, elapsed_days: ArrayLike, stability: ArrayLike) -> NDArray[np.float64]:
        """FSRS-6 probability of recall."""
        t, s = np.asarray(elapsed_days, float), np.asarray(stability, float)
        return np.asarray(self.fsrs.retrievability(elapsed_days=t, stability=s))

    def access(
        self,
        stability: ArrayLike,
        difficulty: ArrayLike,
        storage: ArrayLike,
        retrieval: ArrayLike,
        elapsed_days: ArrayLike,
        grade: int = GOOD,
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """State after an access: (stability, difficulty, storage, retrieval)."""
        t = np.asarray(elapsed_days, dtype=float)
        s0, d0 = np.asarray(stability, float), np.asarray(difficulty, float)
        s, d = self.fsrs.review(stability=s0, difficulty=d0, elapsed_days=t, grade=grade)
        ds, rs0 = self.strength, np.clip(retrieval, 0.0, 1.0)
        rs_before = ds.retrieval_strength(retrieval_at_access=rs0, elapsed_days=t, storage=storage)
        ss, rs = ds.on_access(storage=np.asarray(storage, float), retrieval_before=rs_before)
        return (
            np.asarray(s, float),
            np.asarray(d, float),
            np.asarray(ss, float),
            np.asarray(rs, float),
        )

    def accessibility(
        self,
        elapsed_days: ArrayLike,
        stability: ArrayLike,
        retrieval: ArrayLike,
        storage: ArrayLike,
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.str_]]:
        """(FSRS-6 retention, accessibility, state) now (``DualStrength.accessibility_at``)."""
        r = np.clip(self.retention(elapsed_days, stability), 0.0, 1.0)
        acc = self.strength.accessibility_at(
            elapsed_days=np.asarray(elapsed_days, float),
            stability=np.asarray(stability, float),
            retrieval_at_access=np.clip(retrieval, 0.0, 1.0),
            storage=np.asarray(storage, float),
        )
        acc = np.clip(np.asarray(acc), 0.0, 1.0)
        return r, acc, np.asarray(self.strength.state(acc))
