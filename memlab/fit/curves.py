"""Fit the heat curve and the exponential baseline to review logs, and compare them with FSRS-6.

Both curves predict the recall of a review from the time since the card's previous review
(every review is an access: it resets the clock):

* **heat** (Ebbinghaus's savings curve on 0-1): ``p = 1 / (1 + log10(1 + t/u) ** c / k)``,
  parameters ``k``, ``c`` and ``u`` (minutes); no memory of earlier reviews.
* **exponential** (MemoryBank): ``p = exp(-t / S)`` with ``S = S0 + gain * n``, where ``n``
  counts the card's earlier successful recalls (grade >= 2, the first review excluded): each
  success strengthens the memory, a lapse does not.

Each is fitted by L-BFGS-B on the log of its parameters with the analytic gradient of the
mean log loss over the scored training reviews (the same reviews FSRS-6 is scored on).
:func:`evaluate_models` / :func:`compare_models` put FSRS-6 (default and fitted weights),
heat and exponential side by side on one time-ordered split.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.optimize import OptimizeResult, minimize

from memlab.fit.data import ReviewData, as_frame, time_split
from memlab.fit.fsrs6 import FSRS6Fitter, predict_fsrs6
from memlab.fit.metrics import EPS, score_rows, scoreable_rows
from memlab.models.exponential import ExponentialModel
from memlab.models.fsrs6 import FSRS6
from memlab.models.heat import MINUTES_PER_DAY, HeatModel

Reviews = ReviewData | pd.DataFrame | str | Path


def _bce_grad(y: NDArray[np.float64], p: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
    """Mean BCE and its derivative with respect to each p (zero where p is clipped)."""
    pc = np.clip(p, EPS, 1 - EPS)
    loss = float(-np.mean(y * np.log(pc) + (1 - y) * np.log1p(-pc)))
    inside = (p > EPS) & (p < 1 - EPS)
    dp = np.where(inside, (-(y / pc) + (1 - y) / (1 - pc)) / len(y), 0.0)
    return loss, dp


def heat_objective(
    theta: NDArray[np.float64], t: NDArray[np.float64], y: NDArray[np.float64]
) -> tuple[float, NDArray[np.float64]]:
    """Mean log loss of the heat curve at ``theta = log(k, c, u_minutes)`` and its exact
    gradient.
    """
    k, c, u = np.exp(theta)
    x = np.log10(1.0 + t * MINUTES_PER_DAY / u)  # > 0 for t >= 1 day
    xc = x**c
    q = xc / k
    p = 1.0 / (1.0 + q)
    loss, dp = _bce_grad(y, p)
    common = dp * -(p**2)  # dp/dq = -p^2
    dx_du = -(t * MINUTES_PER_DAY / u**2) / ((1.0 + t * MINUTES_PER_DAY / u) * np.log(10.0))
    dq_dlogu = c * x ** (c - 1) / k * dx_du * u
    return loss, np.array([common @ -q, common @ (q * np.log(x) * c), common @ dq_dlogu])


def exponential_objective(
    theta: NDArray[np.float64],
    t: NDArray[np.float64],
    n: NDArray[np.float64],
    y: NDArray[np.float64],
) -> tuple[float, NDArray[np.float64]]:
    """Mean log loss of ``exp(-t / (S0 + gain n))`` at ``theta = log(S0, gain)`` and its exact
    gradient.
    """
    s0, gain = np.exp(theta)
    s = s0 + gain * n
    p = np.exp(-t / s)
    loss, dp = _bce_grad(y, p)
    common = dp * (p * t / s**2)
    return loss, np.array([common @ np.full_like(n, s0), common @ (gain * n)])


def _train_rows(frame: pd.DataFrame, mask: Any) -> NDArray[np.bool_]:
    rows = scoreable_rows(frame)
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (len(frame),):
            raise ValueError(
                f"mask must have one entry per review ({len(frame)}), got shape {mask.shape}"
            )
        rows &= mask
    if not rows.any():
        raise ValueError(
            "no scoreable reviews to fit on (every card has one review, or only same-day reviews)"
        )
    return rows


class _CurveFitter:
    """Shared fit of a curve by L-BFGS-B (lifelines style).

    A subclass states only its parameter names, their bounds, the model built from them, the
    inputs of its objective and its prediction; ``fit`` returns self and sets ``params_`` (dict),
    ``model_``, ``loss_``, ``n_train_`` and ``result_``. ``bounds`` are in the optimiser's
    coordinates: the log of the parameters when ``log_scale``, else the parameters. With
    ``exact_gradient`` the objective returns (loss, gradient), else the loss alone (scipy then
    differentiates it numerically). A ``fixed`` model keeps ``init`` (nothing is fitted).
    """

    param_names: tuple[str, ...] = ()
    bounds: tuple[tuple[float, float], ...] = ()
    log_scale = True
    exact_gradient = True
    fixed = False

    def __init__(self, init: tuple[float, ...], max_iter: int = 500) -> None:
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
        raise NotImplementedError

    def _predict(self, model: Any, frame: pd.DataFrame) -> NDArray[np.float64]:
        raise NotImplementedError

    # -- the shared machinery
    def fit(self, reviews: Reviews, mask: Any = None) -> Any:
        """Fit on the scoreable reviews (inside ``mask`` when given); returns self."""
        init = np.asarray(self.init, dtype=float)
        if init.shape != (len(self.param_names),):
            raise ValueError(
                f"init must hold one value per parameter {self.param_names}, got {self.init!r}"
            )
        theta0 = np.log(init) if self.log_scale else init
        low, high = np.array(self.bounds, dtype=float).reshape(-1, 2).T
        if not ((theta0 >= low) & (theta0 <= high)).all():
            raise ValueError(f"init {self.init!r} lies outside the bounds of {self.param_names}")
        frame = as_frame(reviews)
        rows = _train_rows(frame, mask)
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


class HeatFitter(_CurveFitter):
    """Fit Ebbinghaus's heat curve (k, c, u in minutes) to review outcomes. ``fit`` returns self.

    Attributes: ``params_`` (dict k, c, u_minutes), ``model_`` (HeatModel), ``loss_``, ``n_train_``.
    """

    param_names = ("k", "c", "u_minutes")
    bounds = ((-10, 20), (-5, 3), (-10, 15))

    def __init__(
        self, init: tuple[float, float, float] = (1.84, 1.25, 1.0), max_iter: int = 500
    ) -> None:
        super().__init__(init, max_iter)

    def _objective_inputs(
        self, frame: pd.DataFrame, rows: NDArray[np.bool_]
    ) -> tuple[NDArray[np.float64], ...]:
        return (frame["elapsed_days"].to_numpy(dtype=float)[rows],)

    _objective = staticmethod(heat_objective)  # type: ignore[assignment]

    def _model(self, params: dict[str, float]) -> HeatModel:
        return HeatModel(**params)

    def _predict(self, model: Any, frame: pd.DataFrame) -> NDArray[np.float64]:
        return predict_heat(model, frame)


def predict_heat(model: HeatModel, frame: pd.DataFrame) -> NDArray[np.float64]:
    """heat/100 at each review from the time since the card's previous review (NaN at first
    reviews).
    """
    t = frame["elapsed_days"].to_numpy(dtype=float)
    out = np.full(len(frame), np.nan)
    known = ~np.isnan(t)
    out[known] = model.retention(t[known])
    return out


def prior_successes(frame: pd.DataFrame) -> NDArray[np.float64]:
    """Per review, the card's earlier successful recalls (grade >= 2, not counting the first
    review).
    """
    success = ((frame["grade"].to_numpy() >= 2) & (frame["review"].to_numpy() > 0)).astype(float)
    return pd.Series(success).groupby(frame["card_id"].to_numpy()).cumsum().to_numpy() - success


class ExponentialFitter(_CurveFitter):
    """Fit the MemoryBank exponential baseline (initial strength S0 and gain, days). ``fit``
    returns self.

    Attributes: ``params_`` (dict initial_strength, strength_gain), ``model_`` (ExponentialModel),
    ``loss_``, ``n_train_``.
    """

    param_names = ("initial_strength", "strength_gain")
    bounds = ((-7, 10), (-12, 10))

    def __init__(self, init: tuple[float, float] = (1.0, 1.0), max_iter: int = 500) -> None:
        super().__init__(init, max_iter)

    def _objective_inputs(
        self, frame: pd.DataFrame, rows: NDArray[np.bool_]
    ) -> tuple[NDArray[np.float64], ...]:
        return frame["elapsed_days"].to_numpy(dtype=float)[rows], prior_successes(frame)[rows]

    _objective = staticmethod(exponential_objective)  # type: ignore[assignment]

    def _model(self, params: dict[str, float]) -> ExponentialModel:
        return ExponentialModel(**params)

    def _predict(self, model: Any, frame: pd.DataFrame) -> NDArray[np.float64]:
        return predict_exponential(model, frame)


def predict_exponential(model: ExponentialModel, frame: pd.DataFrame) -> NDArray[np.float64]:
    """``exp(-t / (S0 + gain * n))`` at each review (NaN at first reviews)."""
    t = frame["elapsed_days"].to_numpy(dtype=float)
    s = model.initial_strength + model.strength_gain * prior_successes(frame)
    out = np.full(len(frame), np.nan)
    known = ~np.isnan(t)
    out[known] = np.exp(-t[known] / s[known])
    return out


# ----------------------------------------------------------------------------- side by side
MODEL_NAMES: tuple[str, ...] = ("fsrs6_default", "fsrs6", "heat", "exponential")


@dataclass
class ModelResult:
    """One model on one split: its parameters, train/test metrics and per-review predictions."""

    name: str
    params: dict[str, Any]
    train: dict[str, float | int]
    test: dict[str, float | int]
    predictions: NDArray[np.float64] = field(repr=False)
    seconds: float = 0.0
    fit_seconds: float = 0.0  # the fitter alone (``seconds`` adds predicting every review)

    def to_dict(self) -> dict[str, Any]:
        return {"params": self.params, "train": self.train, "test": self.test}


@dataclass
class Evaluation:
    """Every model's :class:`ModelResult` on one frame and split (``test`` marks the test
    reviews).
    """

    frame: pd.DataFrame = field(repr=False)
    test: NDArray[np.bool_] = field(repr=False)
    results: dict[str, ModelResult]

    def table(self) -> pd.DataFrame:
        """Rows (model, split), columns log_loss, rmse_bins, auc, n."""
        records = []
        for name, result in self.results.items():
            for split in ("train", "test"):
                records.append({"model": name, "split": split, **getattr(result, split)})
        return pd.DataFrame.from_records(records).set_index(["model", "split"])

    def outcomes(
        self, split: str = "test"
    ) -> tuple[NDArray[np.float64], dict[str, NDArray[np.float64]]]:
        """Outcomes y and each model's predictions at the scored reviews of ``split``."""
        if split not in ("train", "test"):
            raise ValueError(f"split must be 'train' or 'test', got {split!r}")
        rows = scoreable_rows(self.frame) & (self.test if split == "test" else ~self.test)
        y = (self.frame["grade"].to_numpy()[rows] >= 2).astype(float)
        return y, {name: r.predictions[rows] for name, r in self.results.items()}

    def to_dict(self) -> dict[str, Any]:
        return {name: r.to_dict() for name, r in self.results.items()}

    def _repr_html_(self) -> str:
        n_test = int(self.test.sum())
        caption = f"<p>{len(self.frame)} reviews; last {n_test} by time held out</p>"
        return caption + self.table().round(4)._repr_html_()


def evaluate_models(
    reviews: Reviews, holdout: float = 0.2, fitter: FSRS6Fitter | None = None
) -> Evaluation:
    """Fit FSRS-6, heat and exponential on the first ``1 - holdout`` of reviews by time; score
    both parts.

    ``fsrs6_default`` uses the default weights (nothing fitted). States are carried through the
    training reviews into the test reviews.
    """
    frame = as_frame(reviews)
    test = time_split(frame, holdout)
    train = ~test
    results: dict[str, ModelResult] = {}

    def add(
        name: str,
        params: dict[str, Any],
        p: NDArray[np.float64],
        seconds: float,
        fit_seconds: float = 0.0,
    ) -> None:
        results[name] = ModelResult(
            name,
            params,
            score_rows(frame, p, train),
            score_rows(frame, p, test),
            p,
            seconds,
            fit_seconds,
        )

    start = time.perf_counter()
    add(
        "fsrs6_default",
        {"weights": list(FSRS6().weights)},
        predict_fsrs6(FSRS6(), frame),
        time.perf_counter() - start,
    )
    start = time.perf_counter()
    fsrs = (fitter if fitter is not None else FSRS6Fitter()).fit(frame, train)
    fit_seconds = time.perf_counter() - start
    p_fsrs = fsrs.predict(frame)
    add("fsrs6", {"weights": list(fsrs.weights_)}, p_fsrs, time.perf_counter() - start, fit_seconds)
    start = time.perf_counter()
    heat = HeatFitter().fit(frame, train)
    fit_seconds = time.perf_counter() - start
    add("heat", heat.params_, heat.predict(frame), time.perf_counter() - start, fit_seconds)
    start = time.perf_counter()
    exponential = ExponentialFitter().fit(frame, train)
    fit_seconds = time.perf_counter() - start
    p_exp = exponential.predict(frame)
    add("exponential", exponential.params_, p_exp, time.perf_counter() - start, fit_seconds)
    return Evaluation(frame, test, results)


def compare_models(reviews: Reviews, holdout: float = 0.2) -> pd.DataFrame:
    """FSRS-6 (default and fitted), heat and exponential by log loss, RMSE(bins) and AUC.

    Returns a frame indexed by (model, split) with columns ``log_loss``, ``rmse_bins``, ``auc``,
    ``n``.
    """
    return evaluate_models(reviews, holdout).table()


__all__ = [
    "MODEL_NAMES",
    "Evaluation",
    "ExponentialFitter",
    "HeatFitter",
    "ModelResult",
    "compare_models",
    "evaluate_models",
    "exponential_objective",
    "heat_objective",
    "predict_exponential",
    "predict_heat",
    "prior_successes",
]
