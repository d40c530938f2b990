"""The field's recall models beside FSRS-6, as the srs-benchmark runs them.

A model's ``recall(grades=..., elapsed_days=...)`` predicts each review's recall from the card's
earlier ones, on padded histories (rows cards, columns reviews; grade 0 pads) and NaN at column 0
and in the padding. As the srs-benchmark runs them, histories hold a card's first review and its
reviews a day or more after the previous one.

- :class:`HLR` - half-life regression (Settles & Meeder 2016).
- :class:`ACTR` - ACT-R activation with decay (Pavlik & Anderson 2005).
- :class:`DASH` - DASH's windowed practice counts (Lindsey, Shroyer, Pashler & Mozer 2014).
- :class:`SM2` - SuperMemo-2's intervals (Wozniak 1990) read as a forgetting curve.
- :func:`moving_average` - the srs-benchmark's MOVING-AVG baseline.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from memlab.models._validation import positive_scalar
from memlab.models.fsrs6 import _histories


def _padded(
    grades: ArrayLike, elapsed_days: ArrayLike
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.bool_]]:
    """Histories checked as :meth:`FSRS6.forward` checks them (a 1-D one is one card's): the
    grades, the elapsed days with 0 at column 0 and in the padding, the mask of real cells."""
    g, t = _histories(np.atleast_2d(grades), np.atleast_2d(elapsed_days))
    real = g > 0
    t = np.where(real, t, 0.0)
    t[:, 0] = 0.0
    return g, t, real


def _finish(p: NDArray[np.float64], real: NDArray[np.bool_]) -> NDArray[np.float64]:
    p = np.where(real, p, np.nan)
    p[:, 0] = np.nan
    return p


def prior_counts(grades: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The card's earlier successes (grade >= 2) and failures (grade 1) before each cell."""
    g = np.atleast_2d(np.asarray(grades))
    success = (g >= 2).astype(float)
    failure = (g == 1).astype(float)
    return np.cumsum(success, axis=1) - success, np.cumsum(failure, axis=1) - failure


@dataclass(frozen=True)
class HLR:
    """Half-life regression: ``p = 2 ** (-t/h)``, ``h = 2 ** (w_s sqrt(n_s) + w_f sqrt(n_f) + b)``.

    Settles, B. & Meeder, B. (2016). A trainable spaced repetition model for language learning.
    *Proceedings of ACL 2016*, 1848-1858. The srs-benchmark's features: the square roots of the
    card's earlier successes ``n_s`` (grade >= 2) and failures ``n_f``; its initial weights.
    """

    w_success: float = 2.5819
    w_failure: float = -0.8674
    bias: float = 2.7245

    def __post_init__(self) -> None:
        if not np.isfinite([self.w_success, self.w_failure, self.bias]).all():
            raise ValueError(f"HLR weights must be finite numbers, got {self!r}")

    def half_life(self, *, successes: ArrayLike, failures: ArrayLike) -> NDArray[np.float64]:
        """``h`` in days from the counts of earlier successes and failures."""
        x = self.w_success * np.sqrt(successes) + self.w_failure * np.sqrt(failures) + self.bias
        return np.exp2(np.asarray(x, dtype=float))

    def recall(self, *, grades: ArrayLike, elapsed_days: ArrayLike) -> NDArray[np.float64]:
        g, t, real = _padded(grades, elapsed_days)
        successes, failures = prior_counts(g)
        h = self.half_life(successes=successes, failures=failures)
        return _finish(np.exp2(-t / h), real)


@dataclass(frozen=True)
class ACTR:
    """ACT-R's activation with decay, ``m_n = ln sum_{j<n} t_j ** -d_j``, ``d_j = c e**m_j + a``.

    Pavlik, P. I. & Anderson, J. R. (2005). Practice and forgetting effects on vocabulary
    memory: an activation-based model of the spacing effect. *Cognitive Science*, 29, 559-586.
    Recall ``p = 1 / (1 + exp((tau - m) / s))``. As in the srs-benchmark (and its initial values),
    ``t_j`` is the time since review ``j`` in seconds scaled by ``h`` (``max(86400 h dt, 1)``), the
    first trace decays at ``a`` and grades do not enter.
    """

    decay_intercept: float = 0.176786766570677  # a
    decay_scale: float = 0.216967308403809  # c
    noise: float = 0.254893976981164  # s
    threshold: float = -0.704205679427144  # tau
    time_scale: float = 0.025  # h

    def __post_init__(self) -> None:
        positive_scalar(self.noise, "ACTR.noise")
        positive_scalar(self.time_scale, "ACTR.time_scale")
        if not np.isfinite([self.decay_intercept, self.decay_scale, self.threshold]).all():
            raise ValueError(f"ACTR parameters must be finite numbers, got {self!r}")

    def activation(self, *, grades: ArrayLike, elapsed_days: ArrayLike) -> NDArray[np.float64]:
        """``m`` at every cell from the traces of the card's earlier reviews (-inf at column 0)."""
        g, t, real = _padded(grades, elapsed_days)
        times = np.cumsum(t, axis=1)
        m = np.full(g.shape, -np.inf)
        for i in range(1, g.shape[1]):
            age = np.maximum((times[:, i : i + 1] - times[:, :i]) * 86400 * self.time_scale, 1.0)
            decay = self.decay_scale * np.exp(m[:, :i]) + self.decay_intercept
            with np.errstate(divide="ignore"):
                m[:, i] = np.log(np.sum(np.where(real[:, :i], age**-decay, 0.0), axis=1))
        return m

    def recall(self, *, grades: ArrayLike, elapsed_days: ArrayLike) -> NDArray[np.float64]:
        m = self.activation(grades=grades, elapsed_days=elapsed_days)
        with np.errstate(over="ignore"):
            p = 1.0 / (1.0 + np.exp((self.threshold - m) / self.noise))
        return _finish(p, np.atleast_2d(np.asarray(grades)) > 0)


#: DASH's time windows in days (the srs-benchmark's: a day, a week, a month, ever).
DASH_WINDOWS: tuple[float, ...] = (1.0, 7.0, 30.0, np.inf)


def dash_counts(grades: ArrayLike, elapsed_days: ArrayLike) -> NDArray[np.float64]:
    """Per cell, the card's earlier reviews and successes within each :data:`DASH_WINDOWS` window
    before it: last axis ``[n_1, c_1, n_7, c_7, n_30, c_30, n_inf, c_inf]``.
    """
    g, t, real = _padded(grades, elapsed_days)
    times = np.cumsum(t, axis=1)
    out = np.zeros((*g.shape, 2 * len(DASH_WINDOWS)))
    for i in range(1, g.shape[1]):
        ago = times[:, i : i + 1] - times[:, :i]
        for k, window in enumerate(DASH_WINDOWS):
            inside = real[:, :i] & (ago <= window)
            out[:, i, 2 * k] = inside.sum(axis=1)
            out[:, i, 2 * k + 1] = (inside & (g[:, :i] >= 2)).sum(axis=1)
    return out


@dataclass(frozen=True)
class DASH:
    """DASH: ``p = sigmoid(sum_w theta_w log(1 + n_w) + phi_w log(1 + c_w) + b)``.

    Lindsey, R. V., Shroyer, J. D., Pashler, H. & Mozer, M. C. (2014). Improving students'
    long-term knowledge retention through personalized review. *Psychological Science*, 25(3),
    639-647. ``n_w`` and ``c_w`` count the card's earlier reviews and successes within each
    window ``w`` (:func:`dash_counts`). Fitted per collection, as the srs-benchmark does (its
    initial weights), so the student ability and item difficulty terms are left out.
    """

    weights: tuple[float, ...] = (0.2024, 0.5967, 0.1255, 0.6039, -0.1485, 0.572, 0.0933, 0.4801)
    bias: float = 0.787

    def __post_init__(self) -> None:
        if len(self.weights) != 2 * len(DASH_WINDOWS):
            raise ValueError(f"DASH needs {2 * len(DASH_WINDOWS)} weights, got {len(self.weights)}")
        if not np.isfinite([*self.weights, self.bias]).all():
            raise ValueError(f"DASH weights and bias must be finite numbers, got {self!r}")

    def recall(self, *, grades: ArrayLike, elapsed_days: ArrayLike) -> NDArray[np.float64]:
        z = np.log1p(dash_counts(grades, elapsed_days)) @ np.asarray(self.weights) + self.bias
        return _finish(1.0 / (1.0 + np.exp(-z)), np.atleast_2d(np.asarray(grades)) > 0)


@dataclass(frozen=True)
class SM2:
    """SuperMemo-2's intervals as a forgetting curve: ``p = 0.9 ** (t / I)``.

    Wozniak, P. A. (1990). *Optimization of learning* (master's thesis, University of Technology
    in Poznan), the SM-2 algorithm. Grades map to SM-2 quality ``q = grade + 1``; ``q >= 3``
    passes: the interval goes 1, 6, then ``I * EF``; a failure resets it to 1 and the repetitions
    to 0; ``EF += 0.1 - (5 - q)(0.08 + 0.02 (5 - q))``, at least 1.3, after the interval. Each
    interval is rounded (``round(I + 0.01)``) into [1, ``max_interval``] days and read as the time
    at which recall falls to 90 %, as the srs-benchmark does. Nothing is fitted.
    """

    initial_ease: float = 2.5
    max_interval: float = 36500.0

    def __post_init__(self) -> None:
        positive_scalar(self.initial_ease, "SM2.initial_ease")
        positive_scalar(self.max_interval, "SM2.max_interval")

    def schedule(self, grades: ArrayLike) -> tuple[NDArray[np.float64], ...]:
        """Interval (days), ease factor and repetitions after each cell's review."""
        g = np.atleast_2d(np.asarray(grades))
        ivl, reps = np.zeros(g.shape[0]), np.zeros(g.shape[0])
        ease = np.full(g.shape[0], self.initial_ease)
        out = np.full((3, *g.shape), np.nan)
        for i in range(g.shape[1]):
            q = g[:, i] + 1.0
            real = g[:, i] > 0
            passed = q >= 3
            grown = np.where(reps == 0, 1.0, np.where(reps == 1, 6.0, ivl * ease))
            new_ivl = np.clip(np.round(np.where(passed, grown, 1.0) + 0.01), 1.0, self.max_interval)
            new_ease = np.maximum(1.3, ease + 0.1 - (5 - q) * (0.08 + (5 - q) * 0.02))
            reps = np.where(real, np.where(passed, reps + 1, 0.0), reps)
            ivl = np.where(real, new_ivl, ivl)
            ease = np.where(real, new_ease, ease)
            out[:, :, i] = np.where(real, [ivl, ease, reps], np.nan)
        return out[0], out[1], out[2]

    def recall(self, *, grades: ArrayLike, elapsed_days: ArrayLike) -> NDArray[np.float64]:
        g, t, real = _padded(grades, elapsed_days)
        before = np.roll(self.schedule(g)[0], 1, axis=1)  # the interval set by the previous review
        return _finish(0.9 ** (t / np.where(real, before, 1.0)), real)


def moving_average(
    outcomes: ArrayLike, start: float = 1.2, rate: float = 0.3
) -> NDArray[np.float64]:
    """The srs-benchmark's MOVING-AVG: the predicted recall before each outcome, in order: one
    logit ``x`` for the collection, ``p_k = sigmoid(x_k)``, ``x_{k+1} = x_k + rate (y_k - p_k)``.
    """
    y = np.asarray(outcomes, dtype=float).ravel()
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("outcomes must be 0/1")
    out = np.empty(len(y))
    x = float(start)
    for k, yk in enumerate(y):
        out[k] = p = 1.0 / (1.0 + np.exp(-x))
        x += rate * (yk - p)
    return out


__all__ = [
    "ACTR",
    "DASH",
    "DASH_WINDOWS",
    "HLR",
    "SM2",
    "dash_counts",
    "moving_average",
    "prior_counts",
]
