"""Fit the 21 FSRS-6 weights to a review log (scikit-learn style).

Objective: the mean cross-entropy of the scored reviews
(:meth:`memlab.fit.data.Histories.scoreable`) plus a pull toward the default weights,
``l2 * sum(((w - w_default) / (upper - lower)) ** 2)``, minimised within py-fsrs's bounds by
projected Levenberg-Marquardt on the Fisher matrix (:mod:`memlab.fit._fsrs6_kernel` gives it
exactly) in scaled coordinates ``x = (w - lower) / (upper - lower)``, as the weights span four
orders of magnitude.

Initialisation (as fsrs-rs): S0(G) maximises the likelihood of the second reviews' outcomes of
the cards first graded G (the default where fewer than ``min_init_reviews``), made
non-decreasing in G; the other weights start at their defaults.

>>> fitter = FSRS6Fitter().fit(load_reviews("reviews.csv"))      # doctest: +SKIP
>>> fitter.weights_                                              # doctest: +SKIP
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.optimize import OptimizeResult, minimize_scalar

from memlab.fit import _fsrs6_kernel
from memlab.fit.base import NOTHING_TO_FIT, _clone, _params
from memlab.fit.data import Histories, Reviews, as_frame, histories, time_split, train_mask
from memlab.fit.metrics import score_rows, scoreable_rows
from memlab.fit.protocol import benchmark_rows
from memlab.models._validation import integer
from memlab.models.fsrs6 import DEFAULT_WEIGHTS, FSRS6, LOWER_BOUNDS, UPPER_BOUNDS

_DEFAULT = np.array(DEFAULT_WEIGHTS)
_LOW = np.array(LOWER_BOUNDS)
_HIGH = np.array(UPPER_BOUNDS)
_SPAN = _HIGH - _LOW


def _penalty(
    w: NDArray[np.float64], l2: float
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """The pull toward the default weights: its value, gradient and Hessian diagonal in w."""
    z = (w - _DEFAULT) / _SPAN
    return l2 * float(z @ z), 2.0 * l2 * z / _SPAN, 2.0 * l2 / _SPAN**2


def initial_stabilities(h: Histories, min_reviews: int = 10) -> NDArray[np.float64]:
    """First-review stabilities w0..w3 fitted to the second reviews' outcomes (module docs)."""
    model = FSRS6()
    s0 = np.array(DEFAULT_WEIGHTS[:4], dtype=float)
    if h.grades.shape[1] < 2:
        return s0
    # the first review at least a day after its predecessor (same-day learning steps skipped)
    first = h.grades[:, 0]
    long_term = h.scoreable()
    cell = np.arange(len(first)), np.argmax(long_term, axis=1)
    usable, second, t = long_term[cell], h.grades[cell], h.elapsed_days[cell]
    for grade in range(1, 5):
        sel = usable & (first == grade)
        if sel.sum() < min_reviews:
            continue
        tt = t[sel]
        y = (second[sel] >= 2).astype(float)

        def nll(log_s: float, tt: NDArray[np.float64] = tt, y: NDArray[np.float64] = y) -> float:
            p = np.clip(model._retrievability(tt, np.full_like(tt, np.exp(log_s))), 1e-7, 1 - 1e-7)
            return float(-np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)))

        best = minimize_scalar(
            nll,
            bounds=(np.log(LOWER_BOUNDS[grade - 1]), np.log(UPPER_BOUNDS[grade - 1])),
            method="bounded",
        )
        s0[grade - 1] = float(np.exp(best.x))
    s0 = np.maximum.accumulate(s0)
    return np.clip(s0, _LOW[:4], _HIGH[:4])


#: Values of ``l2`` tried by ``FSRS6Fitter(l2="auto")``.
L2_GRID: tuple[float, ...] = (0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3)


def _number(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < np.inf:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


class _FSRSFitter:
    """What the FSRS-6 and FSRS-7 fitters share: the training histories with their recency
    weights, and prediction and scoring by the FSRS-6 forward pass (FSRS-7's has its shape)."""

    def _histories(
        self, frame: pd.DataFrame, train: NDArray[np.bool_]
    ) -> tuple[Histories, NDArray[np.bool_], int, NDArray[np.float64] | None]:
        """Training histories, their scored cells, how many, and each cell's weight
        ``exp(recency (pos - 1))`` (``pos`` in [0, 1] its place in time; None without recency)."""
        _number(self.recency, "recency")
        if type(self.max_iter) is not int or self.max_iter < 1:  # bool is not accepted
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}")
        h = histories(frame, train)
        scored = h.scoreable()
        n = int(scored.sum())
        if n == 0:
            raise ValueError(NOTHING_TO_FIT)
        if not self.recency:
            return h, scored, n, None
        pos = h.values(frame["order"].to_numpy(dtype=float), np.nan)
        low = np.nanmin(pos)
        span = max(float(np.nanmax(pos) - low), 1.0)
        weight = np.exp(self.recency * ((pos - low) / span - 1.0))
        return h, scored, n, np.where(scored, weight, 0.0)

    def _fitted(self) -> Any:
        if not hasattr(self, "model_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit() first")
        return self.model_

    def predict(self, reviews: Reviews) -> NDArray[np.float64]:
        """Predicted recall of every review (one per frame row; NaN at first reviews)."""
        return predict_fsrs6(self._fitted(), as_frame(reviews))

    def score(self, reviews: Reviews, mask: Any = None) -> dict[str, float | int]:
        """``log_loss``, ``rmse_bins``, ``auc``, ``n`` on the scoreable reviews (where ``mask``);
        states are carried through all reviews of the frame."""
        return score_fsrs6(self._fitted(), as_frame(reviews), mask)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in _params(self).items())
        return f"{type(self).__name__}({params})"

    def _record(
        self, model_class: Any, weights: Any, loss: float, n: int, result: Any, start: float
    ) -> Any:
        """Set the fitted attributes (see the fitter's docs); returns self."""
        self.weights_ = tuple(float(v) for v in weights)
        self.model_ = model_class(self.weights_)
        self.loss_ = float(loss)
        self.n_train_ = n
        self.n_iter_ = int(result.nit)
        self.n_evals_ = int(result.nfev)
        self.result_: OptimizeResult = result
        self.fit_seconds_ = time.perf_counter() - start
        return self


class FSRS6Fitter(_FSRSFitter):
    """Fit FSRS-6 weights by projected Levenberg-Marquardt within the fsrs bounds (module docs).

    Parameters
    ----------
    l2 : float or "auto"
        Pull toward the default weights (0 = none); ``"auto"`` chooses it from :data:`L2_GRID` by
        fitting the first 80 % of the training reviews and scoring the last 20 %.
    init : {"data", "default"}
        "data" fits w0..w3 from the second reviews (module docs); "default" starts at the defaults.
    min_init_reviews : int
        Second reviews a first grade needs before its initial stability is fitted.
    max_iter : int
        Iteration limit.
    tol : float
        Relative decrease of the objective at which the fit stops.
    recency : float
        Weight each training review's loss by ``exp(recency * (pos - 1))``, ``pos`` in [0, 1] its
        place in time among the training reviews (0 = all equal), for a learner who changes.
    filter_outliers : bool
        Leave out the cards whose first long-term review is an outlier by the srs-benchmark's rule
        (:mod:`memlab.fit.protocol`, rules 5-6), as fsrs-rs does, unless that leaves nothing.

    Attributes
    ----------
    weights_ : tuple of 21 floats;  model_ : FSRS6;  result_ : OptimizeResult
    loss_ : float, training log loss at the fitted weights (without the penalty)
    n_train_ (scored training reviews), n_iter_, n_evals_, outlier_cards_ : int;  fit_seconds_
    l2_ : float, the pull used;  l2_scores_ : dict, validation log loss per grid value ("auto")
    """

    def __init__(
        self,
        l2: float | str = 0.005,
        init: str = "data",
        min_init_reviews: int = 10,
        max_iter: int = 200,
        tol: float = 1e-7,
        recency: float = 0.0,
        filter_outliers: bool = False,
    ) -> None:
        self.l2 = l2
        self.init = init
        self.min_init_reviews = min_init_reviews
        self.max_iter = max_iter
        self.tol = tol
        self.recency = recency
        self.filter_outliers = filter_outliers

    def fit(self, reviews: Reviews, mask: Any = None) -> FSRS6Fitter:
        """Fit on the reviews (all, or where ``mask`` is true, e.g. ``~test``); returns self."""
        if self.l2 != "auto":
            _number(self.l2, "l2")
        _number(self.tol, "tol")
        integer(self.min_init_reviews, "min_init_reviews", low=1)
        if self.init not in ("data", "default"):
            raise ValueError(f"init must be 'data' or 'default', got {self.init!r}")
        if not isinstance(self.filter_outliers, bool):
            raise ValueError(f"filter_outliers must be True or False, got {self.filter_outliers!r}")
        start = time.perf_counter()
        frame = as_frame(reviews)
        train = train_mask(frame, mask)
        outliers = 0
        if self.filter_outliers:
            train, outliers = _without_outlier_cards(frame, train)
        h, scored, n, weight = self._histories(frame, train)
        n_fit = float(n) if weight is None else float(weight.sum())
        data = _fsrs6_kernel.CardArrays(h.grades, h.elapsed_days, scored, weight)
        w0 = _DEFAULT.copy()
        if self.init == "data":
            w0[:4] = initial_stabilities(h, self.min_init_reviews)
        scores = self._validate_l2(frame, mask) if self.l2 == "auto" else {}
        l2 = min(scores, key=scores.__getitem__) if scores else float(self.l2)
        x0 = (w0 - _LOW) / _SPAN
        result = _levenberg_marquardt(data, n_fit, x0, l2, self.max_iter, self.tol)
        weights = np.clip(_LOW + result.x * _SPAN, _LOW, _HIGH)
        if weight is not None:  # the training loss is reported unweighted
            data = _fsrs6_kernel.CardArrays(h.grades, h.elapsed_days, scored)
        loss = _fsrs6_kernel.loss_grad_fisher(weights, data, want_grad=False)[0] / n
        self.outlier_cards_, self.l2_scores_, self.l2_ = outliers, scores, l2  # all set, or none
        return self._record(FSRS6, weights, loss, n, result, start)

    def _validate_l2(self, frame: pd.DataFrame, mask: Any) -> dict[float, float]:
        """Validation log loss of each :data:`L2_GRID` value (class docs)."""
        sub = frame[train_mask(frame, mask)].reset_index(drop=True)
        val = time_split(sub, 0.2)
        scores = {}
        for value in L2_GRID:
            inner = _clone(self)
            inner.l2 = value
            try:
                inner.fit(sub, ~val)
            except ValueError:  # too little data before the validation part
                continue
            scores[value] = float(inner.score(sub, val)["log_loss"])
        scores = {k: v for k, v in scores.items() if np.isfinite(v)}
        if not scores:
            raise ValueError(
                "l2='auto' needs scoreable reviews in both parts of the training reviews"
            )
        return scores


def _without_outlier_cards(
    frame: pd.DataFrame, train: NDArray[np.bool_]
) -> tuple[NDArray[np.bool_], int]:
    """``train`` without the cards whose first long-term training review is an outlier."""
    rows = np.flatnonzero(train)
    if len(rows) == 0:
        return train, 0
    sub = frame.iloc[rows].reset_index(drop=True)
    kept = benchmark_rows(sub, max_seq_len=1 << 30)  # the outlier rule only, no review cap
    out = train.copy()
    out[rows[~kept.history]] = False
    if not (scoreable_rows(frame) & out).any():  # a tiny log: the rule would leave nothing
        return train, 0
    return out, kept.counts["outlier_cards"]


#: Initial Levenberg-Marquardt damping (relative to the diagonal of the Fisher matrix).
_LM_LAMBDA0 = 0.1


def _levenberg_marquardt(
    data: _fsrs6_kernel.CardArrays,
    n: float,
    x0: NDArray[np.float64],
    l2: float,
    max_iter: int,
    tol: float,
) -> OptimizeResult:
    """Projected Levenberg-Marquardt on the Fisher matrix, in scaled coordinates x in [0, 1]^21:
    solve ``(F + lam diag(F)) step = -g`` over the weights not held at a bound, clip the step into
    the box, accept it if the loss decreases (``lam`` shrinks by Nielsen's rule), else raise
    ``lam`` by a growing factor; stop when the relative decrease falls below ``tol``.
    """

    def evaluate(
        x: NDArray[np.float64], full: bool
    ) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
        w = _LOW + x * _SPAN
        total, grad, fisher = _fsrs6_kernel.loss_grad_fisher(
            w, data, want_grad=full, want_fisher=full
        )
        pen, pen_grad, pen_hess = _penalty(w, l2)
        if not full:
            return total / n + pen, grad, np.zeros(0)
        hess = fisher / n + np.diag(pen_hess)  # type: ignore[operator]
        return total / n + pen, (grad / n + pen_grad) * _SPAN, hess * np.outer(_SPAN, _SPAN)

    x = np.clip(np.asarray(x0, dtype=float), 0.0, 1.0)
    value, g, hess = evaluate(x, True)
    lam, nu, n_evals, message, it = _LM_LAMBDA0, 2.0, 1, "maximum iterations reached", 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        held = ((x <= 0.0) & (g > 0)) | ((x >= 1.0) & (g < 0))
        free = ~held
        if not free.any():
            message = "all weights held at bounds"
            break
        accepted = False
        for _ in range(30):
            a = hess[np.ix_(free, free)]
            a = a + lam * np.diag(np.diag(a) + 1e-12)
            step = np.zeros_like(x)
            try:
                step[free] = np.linalg.solve(a, -g[free])
            except np.linalg.LinAlgError:
                lam *= nu
                nu *= 2.0
                continue
            x_new = np.clip(x + step, 0.0, 1.0)
            new_value = evaluate(x_new, False)[0]
            n_evals += 1
            taken = x_new - x
            predicted = -(g @ taken) - 0.5 * (taken @ hess @ taken)
            if np.isfinite(new_value) and new_value < value:
                accepted = True
                # Nielsen's damping update from the gain ratio (actual / predicted decrease)
                rho = (value - new_value) / predicted if predicted > 0 else 1.0
                lam = max(lam * max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3), 1e-9)
                nu = 2.0
                break
            lam *= nu
            nu *= 2.0
        if not accepted:
            message = "no decrease found (converged)"
            break
        decrease = value - new_value
        x = x_new
        value, g, hess = evaluate(x, True)
        n_evals += 1
        if decrease <= tol * max(1.0, abs(value)):
            message = "relative decrease below tol"
            break
    return OptimizeResult(
        x=x, fun=value, jac=g, nit=it, nfev=n_evals, success=True, message=message
    )


def predict_fsrs6(model: FSRS6, frame: pd.DataFrame) -> NDArray[np.float64]:
    """R predicted before each review of the tidy frame (NaN at each card's first review)."""
    h = histories(frame)
    r = model.forward(grades=h.grades, elapsed_days=h.elapsed_days).retrievability
    return h.to_rows(r, len(frame))


def score_fsrs6(model: FSRS6, frame: pd.DataFrame, mask: Any = None) -> dict[str, float | int]:
    """Metrics of ``model`` on the scoreable reviews of ``frame`` (where ``mask``), states carried
    through all."""
    return score_rows(frame, predict_fsrs6(model, frame), mask)
