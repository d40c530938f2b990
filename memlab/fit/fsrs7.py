"""Fit the 34 FSRS-7 weights to a review log (scikit-learn style, as :class:`FSRS6Fitter`).

FSRS6Fitter's objective, minimised from the default weights by L-BFGS-B in the same scaled
coordinates. The gradient is by central differences, the 68 displaced weight vectors run in one
batched pass (:mod:`memlab.models.fsrs7` broadcasts over weight vectors); the clipper's order is
applied inside the objective, so every point visited is a valid model. FSRS-7 was made for
fractional days: load logs with ``convention="continuous"``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize

from memlab.fit.data import Reviews, as_frame, train_mask
from memlab.fit.fsrs6 import _FSRSFitter, _number
from memlab.models.fsrs7 import DEFAULT_WEIGHTS, FSRS7, N_WEIGHTS, _steps, clip_weights
from memlab.models.fsrs7 import LOWER_BOUNDS as _LOWER
from memlab.models.fsrs7 import UPPER_BOUNDS as _UPPER

_LOW = np.array(_LOWER)
_SPAN = np.array(_UPPER) - _LOW
_DEFAULT = np.array(DEFAULT_WEIGHTS)
_STEP = 1e-5  # half-width of the central differences, in scaled coordinates


def _losses(
    weights: NDArray[np.float64],
    grades: NDArray[np.intp],
    elapsed: NDArray[np.float64],
    y: NDArray[np.float64],
    sample_weight: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Summed weighted cross-entropy of each row of ``weights`` (m, 34) over the histories;
    ``sample_weight`` is 0 at the cells not scored."""
    w = weights.T[:, :, None]  # (34, m, 1): the equations broadcast over the m vectors
    total = np.zeros(len(weights))
    for i, rows, r, *_ in _steps(w, grades, elapsed):
        if i == 0:
            continue
        cell = np.flatnonzero(sample_weight[rows, i])
        if cell.size:
            p, yy = r[:, cell], y[rows[cell], i]
            bce = -(yy * np.log(p) + (1.0 - yy) * np.log1p(-p))
            total += bce @ sample_weight[rows[cell], i]
    return total


class FSRS7Fitter(_FSRSFitter):
    """Fit FSRS-7 weights by L-BFGS-B within the specification's bounds (module docs).

    Parameters
    ----------
    l2 : float
        Pull toward the default weights (0 = none), as FSRS6Fitter's ``l2``.
    recency : float
        Weight each training review's loss by ``exp(recency * (pos - 1))``, as FSRS6Fitter.
    max_iter : int
        L-BFGS-B iteration limit.

    Attributes
    ----------
    weights_ : tuple of 34 floats;  model_ : FSRS7;  result_ : OptimizeResult;  fit_seconds_
    loss_ : float, unweighted training log loss at the fitted weights (without the penalty)
    n_train_ (scored training reviews), n_iter_, n_evals_ : int
    """

    def __init__(self, l2: float = 0.01, recency: float = 2.0, max_iter: int = 200) -> None:
        self.l2 = l2
        self.recency = recency
        self.max_iter = max_iter

    def fit(self, reviews: Reviews, mask: Any = None) -> FSRS7Fitter:
        """Fit on the reviews (all, or where ``mask`` is true, e.g. ``~test``); returns self."""
        _number(self.l2, "l2")
        start = time.perf_counter()
        frame = as_frame(reviews)
        h, scored, n, weight = self._histories(frame, train_mask(frame, mask))
        y = (h.grades >= 2).astype(float)
        t = np.where(h.grades > 0, np.nan_to_num(h.elapsed_days, nan=0.0), 0.0)
        sw = scored.astype(float) if weight is None else weight
        n_fit = float(sw.sum())
        eye = np.eye(N_WEIGHTS)

        def objective(x: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
            up = np.minimum(x + _STEP, 1.0)
            down = np.maximum(x - _STEP, 0.0)
            points = np.vstack([x, np.where(eye, up, x), np.where(eye, down, x)])
            w = clip_weights(_LOW + points * _SPAN)
            values = _losses(w, h.grades, t, y, sw) / n_fit
            values += self.l2 * (((w - _DEFAULT) / _SPAN) ** 2).sum(axis=1)
            grad = (values[1 : 1 + N_WEIGHTS] - values[1 + N_WEIGHTS :]) / (up - down)
            return float(values[0]), grad

        x0 = (clip_weights(_DEFAULT) - _LOW) / _SPAN
        result = minimize(
            objective,
            x0,
            jac=True,
            method="L-BFGS-B",
            bounds=[(0.0, 1.0)] * N_WEIGHTS,
            options={"maxiter": self.max_iter, "ftol": 1e-7, "gtol": 1e-7},
        )
        weights = clip_weights(_LOW + np.clip(result.x, 0.0, 1.0) * _SPAN)
        plain = _losses(weights[None], h.grades, t, y, scored.astype(float))[0]
        return self._record(FSRS7, weights, float(plain) / n, n, result, start)
