"""The exponential forgetting curve with MemoryBank's strength rule: the classic baseline.

``R(t) = exp(-t / S)``; every successful recall adds ``strength_gain`` to S (MemoryBank adds
one) and resets t to 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from memlab.models._validation import FloatParams, non_negative, positive, positive_scalar


@dataclass(frozen=True)
class ExponentialModel(FloatParams):
    """Exponential forgetting ``R = exp(-t/S)`` with strength growing by recall.

    Parameters
    ----------
    initial_strength : float
        S of a new memory, in days (1 in MemoryBank).
    strength_gain : float
        Added to S by each successful recall (1 in MemoryBank).
    """

    initial_strength: float = 1.0
    strength_gain: float = 1.0

    name = "exponential"

    def __post_init__(self) -> None:
        positive_scalar(self.initial_strength, "ExponentialModel.initial_strength")
        positive_scalar(self.strength_gain, "ExponentialModel.strength_gain")

    def retention(
        self, *, elapsed_days: ArrayLike, strength: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """``exp(-t/S)``; ``strength`` defaults to the initial strength."""
        t = non_negative(elapsed_days, "elapsed_days")
        s = positive(self.initial_strength if strength is None else strength, "strength")
        return np.exp(-t / s)

    def recall(self, strength: ArrayLike) -> NDArray[np.float64]:
        """Strength after a successful recall (the clock restarts from the recall)."""
        return positive(strength, "strength") + self.strength_gain

    def strength_after(self, successful_recalls: ArrayLike) -> NDArray[np.float64]:
        """Strength after ``n`` successful recalls: ``S0 + n * gain``."""
        n = non_negative(successful_recalls, "successful_recalls")
        return self.initial_strength + n * self.strength_gain


__all__ = ["ExponentialModel"]
