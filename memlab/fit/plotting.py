"""Plots of fitted models (matplotlib is imported inside; each function takes ``ax=None`` and
returns the Axes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from memlab.fit.metrics import calibration_table


def plot_calibration(
    source: Any,
    ax: Any = None,
    *,
    split: str = "test",
    y: ArrayLike | None = None,
    bins: int = 10,
    min_count: int = 5,
) -> Any:
    """Calibration of several models: observed recall against predicted recall, per bin of ``p``.

    Parameters
    ----------
    source : Evaluation or mapping of name -> predictions
        An :class:`memlab.fit.curves.Evaluation` (its ``split`` reviews are plotted), or a
        mapping of model name to predicted probabilities with the outcomes in ``y``.
    ax : matplotlib Axes, optional
    split : {"train", "test"}
        Which reviews of an Evaluation to plot.
    y : array_like, optional
        Outcomes (0/1), required with a mapping.
    bins : int
        Equal-width bins of predicted recall.
    min_count : int
        Bins with fewer reviews are left out.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    if isinstance(source, Mapping):
        if y is None:
            raise ValueError("y (the outcomes) is required when predictions are given as a mapping")
        outcomes, predictions = np.asarray(y, dtype=float), dict(source)
    elif hasattr(source, "outcomes"):
        outcomes, predictions = source.outcomes(split)
    else:
        raise TypeError(
            f"source must be an Evaluation or a mapping of predictions, got {type(source).__name__}"
        )
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="perfect")
    for name, p in predictions.items():
        table = calibration_table(outcomes, np.asarray(p, dtype=float), bins=bins)
        table = table[table["n"] >= min_count]
        ax.plot(
            table["predicted"], table["observed"], marker="o", label=f"{name} (n={len(outcomes)})"
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("predicted recall")
    ax.set_ylabel("observed recall")
    ax.set_title(
        f"Calibration ({split} reviews)" if not isinstance(source, Mapping) else "Calibration"
    )
    ax.legend(loc="lower right", fontsize="small")
    return ax


__all__ = ["plot_calibration"]
