"""Fit the heat curve and the exponential baseline to review logs, and compare models.

* **heat** (Ebbinghaus's savings curve on 0-1): ``p = 1 / (1 + log10(1 + t/u) ** c / k)``;
* **exponential** (MemoryBank): ``p = exp(-t / S)``, ``S = S0 + gain * n``, ``n`` the card's
  earlier successful recalls (grade >= 2, the first review excluded).

Both are fitted on the logs of their parameters with the exact gradient. :func:`evaluate_models`
puts models side by side on a time-ordered split, :func:`evaluate_benchmark` under the
srs-benchmark's protocol.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from memlab.fit import field as f
from memlab.fit.base import CurveFitter, _bce_grad, _clone
from memlab.fit.data import Reviews, as_frame, time_split
from memlab.fit.fsrs6 import FSRS6Fitter, predict_fsrs6
from memlab.fit.fsrs7 import FSRS7Fitter
from memlab.fit.metrics import score_rows, scoreable_rows
from memlab.fit.protocol import (
    Protocol,
    ProtocolResult,
    benchmark_frame,
    benchmark_rows,
    time_series_folds,
)
from memlab.models.exponential import ExponentialModel
from memlab.models.fsrs6 import FSRS6
from memlab.models.heat import MINUTES_PER_DAY, HeatModel


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


class HeatFitter(CurveFitter):
    """Fit Ebbinghaus's heat curve (``params_``: k, c, u_minutes; ``model_``: HeatModel)."""

    param_names = ("k", "c", "u_minutes")
    bounds = ((-10, 20), (-5, 3), (-10, 15))
    model_class = HeatModel

    default_init = (1.84, 1.25, 1.0)

    def _objective_inputs(
        self, frame: pd.DataFrame, rows: NDArray[np.bool_]
    ) -> tuple[NDArray[np.float64], ...]:
        return (frame["elapsed_days"].to_numpy(dtype=float)[rows],)

    _objective = staticmethod(heat_objective)  # type: ignore[assignment]

    def _predict(self, model: Any, frame: pd.DataFrame) -> NDArray[np.float64]:
        t = frame["elapsed_days"].to_numpy(dtype=float)
        out = np.full(len(frame), np.nan)
        known = ~np.isnan(t)
        out[known] = model.retention(elapsed_days=t[known])
        return out


def prior_successes(frame: pd.DataFrame) -> NDArray[np.float64]:
    """Per review, the card's earlier successful recalls (grade >= 2, not counting the first
    review).
    """
    success = ((frame["grade"].to_numpy() >= 2) & (frame["review"].to_numpy() > 0)).astype(float)
    return pd.Series(success).groupby(frame["card_id"].to_numpy()).cumsum().to_numpy() - success


class ExponentialFitter(CurveFitter):
    """Fit the MemoryBank exponential baseline (``params_``: initial_strength, strength_gain)."""

    param_names = ("initial_strength", "strength_gain")
    bounds = ((-7, 10), (-12, 10))
    model_class = ExponentialModel

    default_init = (1.0, 1.0)

    def _objective_inputs(
        self, frame: pd.DataFrame, rows: NDArray[np.bool_]
    ) -> tuple[NDArray[np.float64], ...]:
        return frame["elapsed_days"].to_numpy(dtype=float)[rows], prior_successes(frame)[rows]

    _objective = staticmethod(exponential_objective)  # type: ignore[assignment]

    def _predict(self, model: Any, frame: pd.DataFrame) -> NDArray[np.float64]:
        t = frame["elapsed_days"].to_numpy(dtype=float)
        return np.exp(-t / (model.initial_strength + model.strength_gain * prior_successes(frame)))


#: The models :func:`compare_models` compares by default.
MODEL_NAMES: tuple[str, ...] = ("fsrs6_default", "fsrs6", "heat", "exponential")


@dataclass
class ModelResult:
    """One model on one split: its parameters, train/test metrics and per-review predictions."""

    name: str
    params: dict[str, Any]
    train: dict[str, float | int]
    test: dict[str, float | int]
    predictions: NDArray[np.float64] = field(repr=False)
    fit_seconds: float = 0.0

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


class DefaultFSRS6:
    """FSRS-6 at py-fsrs's default weights, as a fitter that fits nothing (``weights_``)."""

    def fit(self, reviews: Reviews, mask: Any = None) -> DefaultFSRS6:
        self.weights_ = FSRS6().weights
        return self

    def predict(self, reviews: Reviews) -> NDArray[np.float64]:
        return predict_fsrs6(FSRS6(), as_frame(reviews))


def model_registry() -> dict[str, Any]:
    """Model names :func:`compare_models` knows, each with the class of its fitter."""
    return {
        "fsrs6_default": DefaultFSRS6,
        "fsrs6": FSRS6Fitter,
        "fsrs7": FSRS7Fitter,
        "heat": HeatFitter,
        "exponential": ExponentialFitter,
        "hlr": f.HLRFitter,
        "act-r": f.ACTRFitter,
        "dash": f.DASHFitter,
        "avg": f.AverageFitter,
        "moving-avg": f.MovingAverageFitter,
        "sm2": f.SM2Scheduler,
    }


Models = Sequence[str] | Mapping[str, Any] | None


def _resolve(models: Models, fitter: Any = None) -> dict[str, Any]:
    """``{name: fitter}`` from names of :func:`model_registry` and/or ``{name: fitter object}``."""
    registry = model_registry()
    if models is None:
        models = MODEL_NAMES
    if isinstance(models, str):
        models = (models,)
    items = models.items() if isinstance(models, Mapping) else ((_label(m), m) for m in models)
    out: dict[str, Any] = {}
    for name, model in items:
        if isinstance(model, str):
            if model not in registry:
                raise ValueError(
                    f"unknown model {model!r}; known: {sorted(registry)} (or pass a fitter object)"
                )
            model = fitter if model == "fsrs6" and fitter is not None else registry[model]()
        if not (
            callable(getattr(model, "fit", None)) and callable(getattr(model, "predict", None))
        ):
            raise TypeError(f"model {name!r} needs fit(reviews, mask) and predict(reviews) methods")
        out[str(name)] = model
    if not out:
        raise ValueError("no models to compare")
    return out


def _label(model: Any) -> str:
    return model if isinstance(model, str) else getattr(model, "name", type(model).__name__)


def _note(error: Exception, name: str) -> None:
    error.add_note(f"in model {name!r} (fit returns the fitted object; predict, a recall per row)")


def _params(fitted: Any) -> dict[str, Any]:
    if hasattr(fitted, "params_"):
        return dict(fitted.params_)
    return {"weights": list(fitted.weights_)} if hasattr(fitted, "weights_") else {}


def evaluate_models(
    reviews: Reviews,
    *,
    holdout: float = 0.2,
    fitter: FSRS6Fitter | None = None,
    models: Models = None,
) -> Evaluation:
    """Fit each model on the first ``1 - holdout`` of reviews by time; score both parts.

    ``models``: names of :func:`model_registry` (default :data:`MODEL_NAMES`) and/or a mapping
    ``{name: fitter}``, a fitter being any object with ``fit(reviews, mask)`` returning the fitted
    object and ``predict(reviews)`` giving one recall per review (given objects are fitted in
    place). ``fitter`` is the FSRS-6 fitter used for ``"fsrs6"``.
    """
    frame = as_frame(reviews)
    test = time_split(frame, holdout)
    if not (scoreable_rows(frame) & test).any():
        raise ValueError(
            f"the last {holdout:.0%} of the reviews hold no scoreable review (a day or more"
            " after its card's previous one): nothing to test on; try a larger holdout"
        )
    train = ~test
    results: dict[str, ModelResult] = {}
    for name, model in _resolve(models, fitter).items():
        start = time.perf_counter()
        try:
            fitted = model.fit(frame, train)
            fit_seconds = time.perf_counter() - start
            p = np.asarray(fitted.predict(frame), dtype=float)
            scores = score_rows(frame, p, train), score_rows(frame, p, test)
        except Exception as error:
            _note(error, name)
            raise
        results[name] = ModelResult(name, _params(fitted), *scores, p, fit_seconds)
    return Evaluation(frame, test, results)


def compare_models(
    reviews: Reviews, *, holdout: float = 0.2, models: Models = None
) -> pd.DataFrame:
    """The models side by side (:func:`evaluate_models`): a frame indexed by (model, split) with
    columns ``log_loss``, ``rmse_bins``, ``auc``, ``n``.

    >>> compare_models(log, models=["fsrs6", "hlr", "dash", "avg"])  # doctest: +SKIP
    """
    return evaluate_models(reviews, holdout=holdout, models=models).table()


def _benchmark_folds(reviews: Reviews, timezone: str | None, n_splits: int) -> tuple[Any, ...]:
    """The rows the srs-benchmark protocol keeps (:mod:`memlab.fit.protocol`, rules 1-8), its
    scored rows, the time-series folds over them and the counts of the rows removed."""
    full = benchmark_frame(reviews, timezone)
    kept = benchmark_rows(full)
    frame = full[kept.history].reset_index(drop=True)
    frame = frame.assign(order=np.arange(len(frame), dtype=np.int64))
    scored = np.flatnonzero(kept.scored[kept.history])
    if len(scored) <= n_splits:
        c = kept.counts
        raise ValueError(
            f"the srs-benchmark protocol keeps {len(scored)} scored reviews of {c['rows']} (its"
            f" outlier rule left out {c['outlier_cards']} card(s)): too few for {n_splits}"
            " time-series folds; score this log with the 80/20 split alone"
        )
    return frame, scored, time_series_folds(len(scored), n_splits), kept.counts


def _fold_predictions(
    frame: pd.DataFrame, scored: NDArray[np.intp], folds: list[tuple[int, int]], fit_predict: Any
) -> tuple[NDArray[np.float64], NDArray[np.bool_], list[dict[str, Any]]]:
    """Each fold's ``fit_predict(frame, train) -> (weights, p)`` on its test rows, the pooled
    test rows and each fold's test metrics."""
    p = np.full(len(frame), np.nan)
    details = []
    for start, stop in folds:
        test = np.zeros(len(frame), dtype=bool)
        test[scored[start:stop]] = True
        weights, fold_p = fit_predict(frame, frame["order"].to_numpy() < scored[start])
        p[test] = fold_p[test]
        details.append(
            {"train_scored": int(start), "test": score_rows(frame, p, test), "weights": weights}
        )
    pooled = np.zeros(len(frame), dtype=bool)
    pooled[scored[folds[0][0] :]] = True
    return p, pooled, details


def evaluate_benchmark(
    reviews: Reviews, *, models: Models = None, n_splits: int = 5, timezone: str | None = None
) -> pd.DataFrame:
    """The models under the srs-benchmark's protocol (:mod:`memlab.fit.protocol`): each fold fits a
    fresh copy of each fitter; a frame indexed by model with the metrics of the pooled test rows.
    """
    frame, scored, folds, _ = _benchmark_folds(reviews, timezone, n_splits)
    records = {}
    for name, model in _resolve(models).items():

        def fit_predict(frame: pd.DataFrame, train: NDArray[np.bool_], model: Any = model) -> Any:
            return None, copy.deepcopy(model).fit(frame, train).predict(frame)

        try:
            p, pooled, _ = _fold_predictions(frame, scored, folds, fit_predict)
            records[name] = score_rows(frame, p, pooled)
        except Exception as error:
            _note(error, name)
            raise
    return pd.DataFrame.from_dict(records, orient="index").rename_axis("model")


def evaluate_fsrs6(
    reviews: Reviews,
    protocol: Protocol = "memlab",
    fitter: Any = None,
    *,
    holdout: float = 0.2,
    n_splits: int = 5,
    weights: tuple[float, ...] | None = None,
    timezone: str | None = None,
) -> ProtocolResult:
    """Test metrics of FSRS-6 under ``protocol`` (:mod:`memlab.fit.protocol`).

    Parameters
    ----------
    reviews : ReviewData, tidy frame or path
    protocol : {"memlab", "srs-benchmark"}
    fitter : FSRS6Fitter, optional
        Fitted anew on each training part (a fresh clone per fold); default ``FSRS6Fitter()``.
    holdout : float
        Test share of the memlab protocol.
    n_splits : int
        Folds of the srs-benchmark protocol.
    weights : tuple of 21 floats, optional
        Score these fixed weights instead of fitting (e.g. the defaults).
    timezone : str, optional
        Time zone of the Anki day rollover for py-fsrs logs under the srs-benchmark protocol.
    """
    if protocol not in ("memlab", "srs-benchmark"):
        raise ValueError(f"protocol must be 'memlab' or 'srs-benchmark', got {protocol!r}")
    template = fitter if fitter is not None else FSRS6Fitter()

    def fit_predict(frame: pd.DataFrame, train: NDArray[np.bool_]) -> tuple[Any, NDArray[Any]]:
        model = FSRS6(weights) if weights is not None else _clone(template).fit(frame, train).model_
        return list(model.weights), predict_fsrs6(model, frame)

    if protocol == "memlab":
        frame = as_frame(reviews)
        test = time_split(frame, holdout)
        w, p = fit_predict(frame, ~test)
        result = score_rows(frame, p, test)
        fold = {"train_reviews": int((~test).sum()), "test": result, "weights": w}
        return ProtocolResult("memlab", result, [fold], {"rows": len(frame)})
    frame, scored, folds, counts = _benchmark_folds(reviews, timezone, n_splits)
    p, pooled, details = _fold_predictions(frame, scored, folds, fit_predict)
    return ProtocolResult("srs-benchmark", score_rows(frame, p, pooled), details, counts)
