"""Fit the field's recall models (:mod:`memlab.models.field`) to review logs, as the srs-benchmark.

All share the curve fitters' base (:class:`memlab.fit.base.CurveFitter`). A card's history is
its first review and its reviews a day or more after the previous (same-day reviews left out, as
the srs-benchmark runs these models). Initial values are the srs-benchmark's; it trains from them
with its own optimiser (a few epochs of Adam), so figures compare as a protocol and a metric, not
as an optimiser. :class:`AverageFitter` (AVG) predicts the training reviews' mean;
:class:`MovingAverageFitter` (MOVING-AVG) and :class:`SM2Scheduler` (SM-2) fit nothing.
"""

from __future__ import annotations

from dataclasses import astuple
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from memlab.fit.base import CurveFitter, _bce_grad
from memlab.fit.data import Histories, histories
from memlab.fit.metrics import EPS, log_loss, scoreable_rows
from memlab.models.field import ACTR, DASH, HLR, SM2, dash_counts, moving_average, prior_counts

_LN2 = float(np.log(2.0))


def field_histories(frame: pd.DataFrame) -> Histories:
    """Padded histories of each card's first review and its reviews a day or more after the
    previous (the srs-benchmark's histories for these models).

    A kept review's elapsed days run from the previous kept one: the elapsed days of the
    same-day reviews left out between them are added on. In fractional days that is the exact
    gap; in Anki days and 24-hour days a left-out review has 0 elapsed days, so nothing changes
    (in 24-hour days the gap is then counted from the left-out review, as the convention does).
    """
    keep = (frame["review"].to_numpy() == 0) | scoreable_rows(frame)
    t = frame["elapsed_days"].to_numpy(dtype=float)
    card = frame["card_id"].to_numpy()
    segment = pd.Series(keep).groupby(card).cumsum().to_numpy()  # kept reviews so far
    left_out = pd.Series(np.where(keep, 0.0, t)).groupby([card, segment]).sum()
    after = pd.MultiIndex.from_arrays([card[keep], segment[keep] - 1])
    elapsed = t.copy()
    elapsed[keep] += left_out.reindex(after, fill_value=0.0).to_numpy()
    return histories(frame.assign(elapsed_days=elapsed), keep)


class _FieldFitter(CurveFitter):
    """A model of :mod:`memlab.models.field` fitted on its raw parameters, gradient numerical."""

    log_scale = False
    exact_gradient = False

    def _objective_inputs(self, frame: pd.DataFrame, rows: NDArray[np.bool_]) -> tuple[Any, ...]:
        return self._features(frame), rows

    def _features(self, frame: pd.DataFrame) -> Any:
        return field_histories(frame), len(frame)

    def _curve(self, model: Any, features: Any) -> NDArray[np.float64]:
        h, n = features
        return h.to_rows(model.recall(grades=h.grades, elapsed_days=h.elapsed_days), n)

    def _objective(self, theta: NDArray[np.float64], *args: Any) -> float:  # type: ignore[override]
        features, rows, y = args
        params = dict(zip(self.param_names, map(float, theta), strict=True))
        return log_loss(y, np.clip(self._curve(self._model(params), features)[rows], EPS, 1 - EPS))

    def _predict(self, model: Any, frame: pd.DataFrame) -> NDArray[np.float64]:
        return self._curve(model, self._features(frame))


class HLRFitter(_FieldFitter):
    """Fit half-life regression (:class:`memlab.models.field.HLR`, Settles & Meeder 2016)."""

    param_names = ("w_success", "w_failure", "bias")
    bounds = ((-20.0, 20.0),) * 3  # memlab's box: the srs-benchmark leaves HLR's weights free
    model_class = HLR
    exact_gradient = True

    default_init = astuple(HLR())

    def _objective_inputs(self, frame: pd.DataFrame, rows: NDArray[np.bool_]) -> tuple[Any, ...]:
        h, n = field_histories(frame), len(frame)
        counts = [h.to_rows(c, n)[rows] for c in prior_counts(h.grades)]
        x = np.column_stack([np.sqrt(counts[0]), np.sqrt(counts[1]), np.ones(int(rows.sum()))])
        return x, h.to_rows(h.elapsed_days, n)[rows]

    def _objective(self, theta: NDArray[np.float64], *args: Any) -> Any:  # type: ignore[override]
        x, t, y = args
        rate = _LN2 * t * np.exp2(-(x @ theta))  # -ln p
        p = np.exp(-rate)
        loss, dp = _bce_grad(y, p)
        return loss, (dp * p * rate * _LN2) @ x


class ACTRFitter(_FieldFitter):
    """Fit ACT-R's activation with decay (:class:`memlab.models.field.ACTR`, Pavlik & Anderson
    2005) within the srs-benchmark's bounds; the threshold's floor of -10 is memlab's (theirs is
    only capped at -0.001)."""

    param_names = ("decay_intercept", "decay_scale", "noise", "threshold", "time_scale")
    bounds = ((0.001, 1.0), (0.001, 1.0), (0.001, 1.0), (-10.0, -0.001), (0.001, 1.0))
    model_class = ACTR

    default_init = astuple(ACTR())


class DASHFitter(_FieldFitter):
    """Fit DASH (:class:`memlab.models.field.DASH`, Lindsey et al. 2014), a logistic regression on
    the log windowed counts.
    """

    param_names = (*(f"w{k}" for k in range(8)), "bias")
    bounds = ((-20.0, 20.0),) * 9  # memlab's box: the srs-benchmark bounds no DASH weight
    exact_gradient = True

    default_init = (*DASH().weights, DASH().bias)

    def _features(self, frame: pd.DataFrame) -> Any:
        h = field_histories(frame)
        x = h.to_rows(dash_counts(h.grades, h.elapsed_days), len(frame))
        return np.column_stack([np.log1p(x), np.ones(len(frame))])

    def _objective_inputs(self, frame: pd.DataFrame, rows: NDArray[np.bool_]) -> tuple[Any, ...]:
        return (self._features(frame)[rows],)

    def _objective(self, theta: NDArray[np.float64], *args: Any) -> Any:  # type: ignore[override]
        x, y = args
        p = 1.0 / (1.0 + np.exp(-(x @ theta)))
        loss, dp = _bce_grad(y, p)
        return loss, (dp * p * (1.0 - p)) @ x

    def _model(self, params: dict[str, float]) -> DASH:
        return DASH(tuple(params.values())[:8], params["bias"])

    def _predict(self, model: Any, frame: pd.DataFrame) -> NDArray[np.float64]:
        theta = np.array([*model.weights, model.bias])
        return 1.0 / (1.0 + np.exp(-(self._features(frame) @ theta)))


class AverageFitter(_FieldFitter):
    """AVG, the srs-benchmark's floor: every review's recall is the training reviews' mean."""

    param_names = ("recall",)
    bounds = ((EPS, 1 - EPS),)

    default_init = (0.9,)

    def _features(self, frame: pd.DataFrame) -> Any:
        return len(frame)

    def _curve(self, model: Any, features: Any) -> NDArray[np.float64]:
        return np.full(features, model["recall"])

    def _model(self, params: dict[str, float]) -> dict[str, float]:
        return params


class MovingAverageFitter(AverageFitter):
    """MOVING-AVG (:func:`memlab.models.field.moving_average`), stepped after each scored review in
    time order, train and test alike; nothing is fitted (the srs-benchmark's start and rate).
    """

    param_names = ("start", "rate")
    bounds = ((-10.0, 10.0), (0.0, 10.0))
    fixed = True

    default_init = (1.2, 0.3)

    def _features(self, frame: pd.DataFrame) -> Any:
        scored = np.flatnonzero(scoreable_rows(frame))
        order = scored[np.argsort(frame["order"].to_numpy()[scored], kind="stable")]
        return order, (frame["grade"].to_numpy()[order] >= 2).astype(float), len(frame)

    def _curve(self, model: Any, features: Any) -> NDArray[np.float64]:
        order, y, n = features
        out = np.full(n, np.nan)
        out[order] = moving_average(y, model["start"], model["rate"])
        return out


class SM2Scheduler(_FieldFitter):
    """SM-2 (:class:`memlab.models.field.SM2`) as a scheduler baseline: its intervals read as
    ``p = 0.9 ** (t / I)``. Nothing is fitted; ``fit`` records the training loss.
    """

    param_names = ()
    bounds = ()
    fixed = True
    model_class = SM2
