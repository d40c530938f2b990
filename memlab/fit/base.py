"""The fitter base of the curves and the field's models (lifelines style): a model states its
parameters, their bounds, its objective and its prediction; the base owns the fitting."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.optimize import OptimizeResult, minimize

from memlab.fit.data import Reviews, as_frame, train_mask
from memlab.fit.metrics import EPS, scoreable_rows
from memlab.models._validation import integer


def _bce_grad(y: NDArray[np.float64], p: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
    """Mean BCE and its derivative with respect to each p (zero where p is clipped)."""
    pc = np.clip(p, EPS, 1 - EPS)
    loss = float(-np.mean(y * np.log(pc) + (1 - y) * np.log1p(-pc)))
    inside = (p > EPS) & (p < 1 - EPS)
    dp = np.where(inside, (-(y / pc) + (1 - y) / (1 - pc)) / len(y), 0.0)
    return loss, dp


NOTHING_TO_FIT = (
    "no scoreable reviews to fit on: no training review comes a day or more after its card's"
    " previous one (too few reviews, or only first and same-day reviews, in the training part)"
)


def _params(fitter: Any) -> dict[str, Any]:
    """A fitter's constructor parameters (scikit-learn's ``get_params``)."""
    code = type(fitter).__init__.__code__
    return {k: getattr(fitter, k) for k in code.co_varnames[1 : code.co_argcount]}


def _clone(fitter: Any) -> Any:
    """A new unfitted fitter with the same constructor parameters (scikit-learn's ``clone``)."""
    return type(fitter)(**_params(fitter))


class CurveFitter:
    """Shared fit of a curve by L-BFGS-B (lifelines style).

    A subclass states its parameter names, their ``bounds`` (of their logs when ``log_scale``),
    its model (``model_class(**params)`` unless it overrides ``_model``), its objective's inputs,
    its objective (loss and gradient with ``exact_gradient``, else the loss alone) and its
    prediction; a ``fixed`` model keeps ``init``. ``init`` (default ``default_init``) is where
    L-BFGS-B starts, ``max_iter`` its iteration limit; ``fit`` returns self and sets
    ``params_``, ``model_``, ``loss_``, ``n_train_`` and ``result_``.
    """

    param_names: tuple[str, ...] = ()
    bounds: tuple[tuple[float, float], ...] = ()
    log_scale = True
    exact_gradient = True
    fixed = False
    model_class: Any = None

    default_init: tuple[float, ...] = ()

    def __init__(self, init: tuple[float, ...] | None = None, max_iter: int = 500) -> None:
        self.init = init
        self.max_iter = max_iter

    # -- what a curve states
    def _objective_inputs(
        self, frame: pd.DataFrame, rows: NDArray[np.bool_]
    ) -> tuple[NDArray[np.float64], ...]:
        raise NotImplementedError

    def _objective(
        self, theta: NDArray[np.float64], *inputs: NDArray[np.float64]
    ) -> tuple[float, NDArray[np.float64]]:
        raise NotImplementedError

    def _model(self, params: dict[str, float]) -> Any:
        return self.model_class(**params)

    def _predict(self, model: Any, frame: pd.DataFrame) -> NDArray[np.float64]:
        raise NotImplementedError

    # -- the shared machinery
    def fit(self, reviews: Reviews, mask: Any = None) -> Any:
        """Fit on the scoreable reviews (inside ``mask`` when given); returns self."""
        init = np.asarray(self.default_init if self.init is None else self.init, dtype=float)
        if init.shape != (len(self.param_names),):
            raise ValueError(
                f"init must hold one value per parameter {self.param_names}, got {self.init!r}"
            )
        integer(self.max_iter, "max_iter", low=1)  # a bool or a float is refused
        theta0 = np.log(init) if self.log_scale else init
        low, high = np.array(self.bounds, dtype=float).reshape(-1, 2).T
        if not ((theta0 >= low) & (theta0 <= high)).all():
            raise ValueError(
                f"init {tuple(init.tolist())} lies outside the bounds {self.bounds} of "
                f"{self.param_names}" + " (bounds of the logs)" * self.log_scale
            )
        frame = as_frame(reviews)
        rows = scoreable_rows(frame) & train_mask(frame, mask)
        if not rows.any():
            raise ValueError(NOTHING_TO_FIT)
        inputs = self._objective_inputs(frame, rows)
        y = (frame["grade"].to_numpy()[rows] >= 2).astype(float)

        def objective(theta: NDArray[np.float64]) -> Any:
            return self._objective(theta, *inputs, y)

        if self.fixed:
            result = OptimizeResult(x=theta0, fun=objective(theta0), nit=0, success=True)
        else:
            result = minimize(
                objective,
                theta0,
                jac=self.exact_gradient,
                method="L-BFGS-B",
                bounds=list(self.bounds),
                options={"maxiter": self.max_iter},
            )
        values = np.exp(result.x) if self.log_scale else result.x
        self.params_ = {name: float(v) for name, v in zip(self.param_names, values, strict=True)}
        self.model_ = self._model(self.params_)
        self.loss_ = float(result.fun)
        self.n_train_ = int(rows.sum())
        self.result_ = result
        return self

    def predict(self, reviews: Reviews) -> NDArray[np.float64]:
        """Predicted recall of each review (NaN at first reviews)."""
        if not hasattr(self, "model_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit() first")
        return self._predict(self.model_, as_frame(reviews))
