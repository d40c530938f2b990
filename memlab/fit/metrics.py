"""Metrics of predicted recall against review outcomes, as the srs-benchmark defines them.

Outcome ``y = 1`` when recalled (grade >= 2); only reviews a day or more after the card's
previous one are scored (:func:`scoreable_rows`). :func:`rmse_bins` is the srs-benchmark's
RMSE(bins): reviews grouped by interval
  (``2.48 * 3.62 ** floor(log_3.62 dt)``), review number (``1.99 * 1.89 ** floor(log_1.89 i)``)
  and prior lapses (``1.65 * 1.73 ** floor(log_1.73 L)``, or 0), then
  ``sqrt(sum n_b (mean y_b - mean p_b) ** 2 / sum n_b)`` (``utils.rmse_matrix``). ``i`` is the
  benchmark's, not the review's index: ``1 +`` the card's reviews so far a day or more after
  their previous one (``features/base.py``: ``(elapsed_days > 0).cumsum() + 1``), so same-day
  reviews do not count; ``L`` counts the Again grades of such earlier reviews (``count_lapse``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.stats import rankdata

from memlab.fit.data import train_mask

EPS = 1e-7


def _pair(y: ArrayLike, p: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    yy = np.asarray(y, dtype=float).ravel()
    pp = np.asarray(p, dtype=float).ravel()
    if yy.shape != pp.shape:
        raise ValueError(f"y and p must have the same length, got {yy.shape[0]} and {pp.shape[0]}")
    if np.isnan(pp).any() or np.isnan(yy).any():
        raise ValueError("y and p must not contain NaN")
    if not np.isin(yy, (0.0, 1.0)).all():
        raise ValueError("y must be 0/1 outcomes")
    if ((pp < 0) | (pp > 1)).any():
        raise ValueError("p must be probabilities in [0, 1]")
    return yy, pp


def log_loss(y: ArrayLike, p: ArrayLike) -> float:
    """Mean binary cross-entropy of outcomes ``y`` (0/1) under predictions ``p``, clipped at
    float64's machine epsilon as scikit-learn's ``log_loss`` clips them; NaN when empty."""
    yy, pp = _pair(y, p)
    if len(yy) == 0:
        return float("nan")
    pp = np.clip(pp, np.finfo(float).eps, 1 - np.finfo(float).eps)
    return float(-np.mean(yy * np.log(pp) + (1 - yy) * np.log1p(-pp)))


def _bin_exponent(x: NDArray[np.float64], base: float) -> NDArray[np.float64]:
    with np.errstate(divide="ignore"):
        return np.floor(np.log(x) / np.log(base))


def rmse_bins(
    y: ArrayLike, p: ArrayLike, elapsed_days: ArrayLike, review_number: ArrayLike, lapses: ArrayLike
) -> float:
    """RMSE(bins) of the srs-benchmark (see the module docs); NaN when empty.

    Parameters
    ----------
    y, p : array_like
        Outcomes (0/1) and predicted recall probabilities.
    elapsed_days : array_like
        Days since the previous review (>= 1 for scored reviews).
    review_number : array_like
        The benchmark's review number ``i`` (module docs; 2 for a card's first scored review).
    lapses : array_like
        Prior lapses of the card before this review.
    """
    yy, pp = _pair(y, p)
    if len(yy) == 0:
        return float("nan")
    t = np.asarray(elapsed_days, dtype=float).ravel()
    i = np.asarray(review_number, dtype=float).ravel()
    lapse = np.asarray(lapses, dtype=float).ravel()
    if not (t.shape == i.shape == lapse.shape == yy.shape):
        raise ValueError(
            "elapsed_days, review_number and lapses must have one entry per prediction"
        )
    if (t <= 0).any() or (i < 1).any() or (lapse < 0).any():
        raise ValueError("rmse_bins needs elapsed_days > 0, review_number >= 1 and lapses >= 0")
    bin_t = _bin_exponent(t, 3.62)
    bin_i = _bin_exponent(i, 1.89)
    bin_l = np.where(lapse > 0, _bin_exponent(np.maximum(lapse, 1.0), 1.73), -1.0)
    frame = pd.DataFrame({"t": bin_t, "i": bin_i, "l": bin_l, "y": yy, "p": pp})
    grouped = frame.groupby(["t", "i", "l"], sort=False).agg(
        n=("y", "size"), y=("y", "mean"), p=("p", "mean")
    )
    return float(
        np.sqrt(np.sum(grouped["n"] * (grouped["y"] - grouped["p"]) ** 2) / np.sum(grouped["n"]))
    )


def auc(y: ArrayLike, p: ArrayLike) -> float:
    """Area under the ROC curve (Mann-Whitney U from average ranks); NaN with only one class."""
    yy, pp = _pair(y, p)
    n_pos = int(yy.sum())
    n_neg = len(yy) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(pp)
    return float((ranks[yy == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def calibration_table(y: ArrayLike, p: ArrayLike, bins: int = 10) -> pd.DataFrame:
    """Mean predicted and observed recall in ``bins`` equal-width bins of ``p`` (empty bins left
    out): columns ``bin_low``, ``bin_high``, ``n``, ``predicted``, ``observed``.
    """
    yy, pp = _pair(y, p)
    if not isinstance(bins, int) or bins < 1:
        raise ValueError(f"bins must be a positive integer, got {bins!r}")
    edges = np.linspace(0.0, 1.0, bins + 1)
    index = np.clip(np.searchsorted(edges, pp, side="right") - 1, 0, bins - 1)
    frame = pd.DataFrame({"bin": index, "y": yy, "p": pp})
    grouped = frame.groupby("bin").agg(
        n=("y", "size"), predicted=("p", "mean"), observed=("y", "mean")
    )
    grouped.insert(0, "bin_high", edges[grouped.index + 1])
    grouped.insert(0, "bin_low", edges[grouped.index])
    return grouped.reset_index(drop=True)


def score_rows(
    frame: pd.DataFrame, p: ArrayLike, mask: ArrayLike | None = None
) -> dict[str, float | int]:
    """``log_loss``, ``rmse_bins``, ``auc`` and ``n`` (NaN when empty) of per-row predictions
    ``p`` at a tidy frame's scoreable rows (where ``mask``)."""
    pred = np.asarray(p, dtype=float)
    if pred.shape != (len(frame),):
        raise ValueError(
            f"p must have one prediction per review ({len(frame)}), got shape {pred.shape}"
        )
    rows = scoreable_rows(frame) & train_mask(frame, mask)
    if np.isnan(pred[rows]).any():
        raise ValueError("p is NaN at a scored review")
    number, lapses = row_features(frame)
    y = (frame["grade"].to_numpy()[rows] >= 2).astype(float)
    t = frame["elapsed_days"].to_numpy(dtype=float)[rows]
    return {
        "log_loss": log_loss(y, pred[rows]),
        "rmse_bins": rmse_bins(y, pred[rows], t, number[rows], lapses[rows]),
        "auc": auc(y, pred[rows]),
        "n": int(len(y)),
    }


def row_features(frame: pd.DataFrame) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The benchmark review number ``i`` and prior lapses of each row of a tidy frame."""
    long_term = scoreable_rows(frame)
    cards = frame["card_id"].to_numpy()
    number = 1.0 + pd.Series(long_term.astype(float)).groupby(cards).cumsum().to_numpy()
    lapse_here = ((frame["grade"].to_numpy() == 1) & long_term).astype(float)
    lapses = pd.Series(lapse_here).groupby(cards).cumsum().to_numpy() - lapse_here
    return number, lapses


def scoreable_rows(frame: pd.DataFrame) -> NDArray[np.bool_]:
    """Scored rows of a tidy frame: not a first review, and a day or more after the previous."""
    t = frame["elapsed_days"].to_numpy(dtype=float)
    return (frame["review"].to_numpy() > 0) & (np.nan_to_num(t, nan=-1.0) >= 1.0)


# ------------------------------------------------------------------------- classification (gates)
def confusion_matrix(y_true: ArrayLike, y_pred: ArrayLike, n_classes: int = 3) -> NDArray[np.int64]:
    """Counts ``[true class, predicted class]`` for integer classes ``0..n_classes-1``."""
    t = np.asarray(y_true).astype(np.int64).ravel()
    p = np.asarray(y_pred).astype(np.int64).ravel()
    if t.shape != p.shape:
        raise ValueError(
            f"y_true and y_pred must have the same length, got {t.shape[0]} and {p.shape[0]}"
        )
    if len(t) and (min(t.min(), p.min()) < 0 or max(t.max(), p.max()) >= n_classes):
        raise ValueError(f"classes must be integers in 0..{n_classes - 1}")
    return np.bincount(t * n_classes + p, minlength=n_classes * n_classes).reshape(
        n_classes, n_classes
    )


def f1_per_class(y_true: ArrayLike, y_pred: ArrayLike, n_classes: int = 3) -> NDArray[np.float64]:
    """F1 = 2 TP / (2 TP + FP + FN) of each class (for the gates: 0 reinforce, 1 update,
    2 create); a class absent from both counts 0."""
    cm = confusion_matrix(y_true, y_pred, n_classes)
    tp = np.diag(cm).astype(float)
    denominator = cm.sum(axis=0) + cm.sum(axis=1)
    return np.divide(2 * tp, denominator, out=np.zeros(n_classes), where=denominator > 0)


def macro_f1(y_true: ArrayLike, y_pred: ArrayLike, n_classes: int = 3) -> float:
    """Unweighted mean over classes of :func:`f1_per_class`."""
    return float(f1_per_class(y_true, y_pred, n_classes).mean())
