"""matplotlib figures for memlab's models and results.

Every function imports matplotlib inside (memlab imports without it being loaded),
takes ``ax=None`` (a new figure is made when it is None) and returns the Axes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from memlab.fit.metrics import calibration_table
from memlab.models.heat import BAND_FLOORS, HeatModel
from memlab.models.strength import STATES

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

#: One colour per heat band, used by every figure.
BAND_COLOURS: dict[str, str] = {
    "hot": "#d7301f",
    "warm": "#fc8d59",
    "cold": "#91bfdb",
    "frozen": "#4575b4",
}
#: One colour per memory state, used by every figure.
STATE_COLOURS: dict[str, str] = {
    "active": "#1a9850",
    "dormant": "#fee08b",
    "silent": "#fc8d59",
    "unavailable": "#999999",
}


def _axes(ax: Axes | None, figsize: tuple[float, float] = (7, 4)) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, new_ax = plt.subplots(figsize=figsize)
    return new_ax


def plot_curves(table: pd.DataFrame, *, log_x: bool = False, ax: Axes | None = None) -> Axes:
    """Forgetting curves side by side: recall probability against days since access.

    Parameters
    ----------
    table : DataFrame
        A :func:`memlab.models.curves.curve_table`: one column per curve, indexed by days.
    log_x : bool
        A logarithmic time axis (day 0 left out): the first minutes and the long tail together.
    ax : matplotlib Axes, optional
    """
    if log_x:
        table = table[table.index.to_numpy() > 0]
    ax = _axes(ax)
    for column in table.columns:
        ax.plot(table.index.to_numpy(), table[column].to_numpy(), label=str(column), lw=2)
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel("days since last access")
    ax.set_ylabel("recall probability")
    ax.set_ylim(0, 1.02)
    ax.set_title("Forgetting curves side by side")
    ax.grid(alpha=0.3)
    ax.legend()
    return ax


def plot_heat_bands(
    days: ArrayLike | None = None, *, log_x: bool = False, ax: Axes | None = None
) -> Axes:
    """The default heat curve over time on top of the hot / warm / cold / frozen bands.

    With ``log_x`` the time axis is logarithmic (points at day 0 are left out).
    """
    model = HeatModel()
    grid = np.asarray(np.linspace(0, 30, 601) if days is None else days, dtype=float)
    if log_x:
        grid = grid[grid > 0]
    heat = model.heat(elapsed_days=grid)  # bad days raise before anything is drawn
    ax = _axes(ax)
    ceiling = 100.0
    for name, floor in BAND_FLOORS:
        bottom = max(floor, 0.0)
        ax.axhspan(
            bottom,
            ceiling,
            color=BAND_COLOURS[name],
            alpha=0.15,
            lw=0,
            label=f"{name} (≥ {bottom:g})",
        )
        ceiling = bottom
    ax.plot(grid, heat, color="black", lw=2, label="heat")
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel("days since last access")
    ax.set_ylabel("heat (0-100)")
    ax.set_ylim(0, 100)
    ax.set_title(f"Ebbinghaus heat (k={model.k:g}, c={model.c:g}, u={model.u_minutes:g} min)")
    ax.legend(loc="upper right", fontsize="small")
    return ax


def plot_state_shares(
    states: pd.DataFrame | Sequence[str] | pd.Series, *, ax: Axes | None = None
) -> Axes:
    """Shares of memory states: a stacked area over time, or bars for one snapshot.

    Parameters
    ----------
    states : DataFrame or sequence of state names
        A frame indexed by time with one column per state (counts or shares; rows are
        normalised to shares), or the states of a set of memories at one moment.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure); returned.
    """
    is_frame = isinstance(states, pd.DataFrame)
    unknown = set(states.columns if is_frame else states) - set(STATES)
    if unknown:
        raise ValueError(f"unknown states {sorted(unknown)}; expected {list(STATES)}")
    ax = _axes(ax)
    colours = [STATE_COLOURS[s] for s in STATES]
    if is_frame:
        frame = states.reindex(columns=list(STATES), fill_value=0).astype(float)
        shares = frame.div(frame.sum(axis=1).replace(0, np.nan), axis=0).fillna(0.0)
        ax.stackplot(
            shares.index.to_numpy(),
            *[shares[s].to_numpy() for s in STATES],
            labels=list(STATES),
            colors=colours,
        )
        ax.set_xlabel(str(shares.index.name or "time"))
        ax.legend(loc="upper right", fontsize="small")
    else:
        labels = pd.Series(list(states), dtype=object)
        shares = labels.value_counts(normalize=True).reindex(list(STATES), fill_value=0.0)
        ax.bar(list(STATES), shares.to_numpy(), color=colours)
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of memories")
    ax.set_title("Memory states")
    return ax


def plot_model_scores(
    scores: pd.DataFrame, *, baseline: str | None = None, ax: Axes | None = None
) -> Axes:
    """Models side by side on one metric: grouped horizontal bars, one colour per column.

    Parameters
    ----------
    scores : DataFrame
        Indexed by model, one column per data set (e.g. held-out log loss of
        :func:`memlab.fit.compare.compare_models` on each log); NaN cells are left blank.
    baseline : str, optional
        A model of the index subtracted from each column, so that every data set's bars read
        as the difference to that model's score (0 is the baseline, drawn as a line).
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure); returned.
    """
    if scores.index.nlevels > 1:  # e.g. compare_models' (model, split) table as it comes
        raise ValueError("scores needs one row per model: table.xs('test', level='split')[[m]]")
    if baseline is not None and baseline not in scores.index:
        raise ValueError(f"baseline {baseline!r} is not a model of scores: {list(scores.index)}")
    ax = _axes(ax)
    table = scores - scores.loc[baseline] if baseline is not None else scores
    height = 0.8 / max(1, table.shape[1])
    rows = np.arange(len(table))
    for i, column in enumerate(table.columns):
        ax.barh(rows + (i - (table.shape[1] - 1) / 2) * height, table[column], height, label=column)
    ax.set_yticks(rows, [str(m) for m in table.index])
    ax.invert_yaxis()
    if baseline is not None:
        ax.axvline(0, color="black", lw=1)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def plot_calibration(evaluation: Any, *, split: str = "test", ax: Axes | None = None) -> Axes:
    """Calibration of several models: observed recall against predicted recall, per bin.

    Parameters
    ----------
    evaluation : Evaluation
        A :class:`memlab.fit.compare.Evaluation`.
    split : {"test", "train"}
        Which of its reviews are binned.
    ax : matplotlib Axes, optional

    Notes
    -----
    Ten equal-width bins of predicted recall; bins of fewer than five reviews are left out.
    """
    outcomes, predictions = evaluation.outcomes(split)
    ax = _axes(ax, (5, 5))
    ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="perfect")
    for name, p in predictions.items():
        table = calibration_table(outcomes, np.asarray(p, dtype=float), bins=10)
        table = table[table["n"] >= 5]
        ax.plot(
            table["predicted"], table["observed"], marker="o", label=f"{name} (n={len(outcomes)})"
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("predicted recall")
    ax.set_ylabel("observed recall")
    ax.set_title(f"Calibration ({split} reviews)")
    ax.legend(loc="lower right", fontsize="small")
    return ax


__all__ = [
    "BAND_COLOURS",
    "STATE_COLOURS",
    "plot_calibration",
    "plot_curves",
    "plot_heat_bands",
    "plot_model_scores",
    "plot_state_shares",
]
