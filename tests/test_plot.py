"""Figures are checked by what they contain: the data of their lines, labels and patches."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from memlab.models.curves import curve_table
from memlab.models.heat import HeatModel
from memlab.plot import plot_curves, plot_heat_bands, plot_model_scores, plot_state_shares


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_plot_curves_draws_each_curve_with_its_data() -> None:
    days = np.linspace(0, 30, 31)
    table = curve_table(days)
    ax = plot_curves(table)
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"fsrs6", "heat", "exponential"}
    for name, line in lines.items():
        np.testing.assert_allclose(line.get_xdata(), days)
        np.testing.assert_allclose(line.get_ydata(), table[name])
    assert ax.get_xlabel() == "days since last access" and ax.get_ylabel() == "recall probability"


def test_plot_curves_uses_the_given_axes() -> None:
    _, ax = plt.subplots()
    assert plot_curves(curve_table([0, 1, 2], ["heat"]), ax=ax) is ax
    np.testing.assert_allclose(
        ax.get_lines()[0].get_ydata(), HeatModel().heat(elapsed_days=[0, 1, 2]) / 100
    )


def test_heat_bands_plot_has_four_bands_and_the_curve() -> None:
    days = np.linspace(0, 10, 11)
    ax = plot_heat_bands(days)
    (line,) = ax.get_lines()
    np.testing.assert_allclose(line.get_ydata(), HeatModel().heat(elapsed_days=days))
    labels = [p.get_label() for p in ax.patches]
    assert labels == ["hot (≥ 70)", "warm (≥ 40)", "cold (≥ 10)", "frozen (≥ 0)"]


def test_heat_bands_with_bad_days_leave_the_axes_alone() -> None:
    _, ax = plt.subplots()
    with pytest.raises(ValueError, match="elapsed_days must be >= 0"):
        plot_heat_bands([-1.0, 2.0], ax=ax)
    assert not ax.patches and not ax.lines
    figures = plt.get_fignums()
    with pytest.raises(ValueError, match="contains NaN"):
        plot_heat_bands([np.nan])
    assert plt.get_fignums() == figures  # no empty figure left behind


def test_state_shares_snapshot_and_over_time() -> None:
    ax = plot_state_shares(["active", "active", "silent", "dormant"])
    heights = [p.get_height() for p in ax.patches]
    assert heights == [0.5, 0.25, 0.25, 0.0]
    frame = pd.DataFrame(
        {"active": [3, 1], "dormant": [1, 1], "silent": [0, 2]}, index=pd.Index([0, 1], name="day")
    )
    ax = plot_state_shares(frame)
    assert len(ax.collections) == 4 and ax.get_xlabel() == "day"
    with pytest.raises(ValueError, match="unknown states"):
        plot_state_shares(["asleep"])


def test_log_axis_leaves_out_day_zero() -> None:
    ax = plot_curves(curve_table([0.0, 0.01, 1.0, 100.0]), log_x=True)
    assert ax.get_xscale() == "log"
    np.testing.assert_allclose(ax.get_lines()[0].get_xdata(), [0.01, 1.0, 100.0])
    ax = plot_heat_bands([0.0, 0.5, 5.0], log_x=True)
    assert ax.get_xscale() == "log" and len(ax.get_lines()[0].get_xdata()) == 2


def test_plot_model_scores_draws_each_score_against_the_baseline() -> None:
    scores = pd.DataFrame(
        {"log A": [0.40, 0.45, 0.50], "log B": [0.30, np.nan, 0.33]}, index=["fsrs6", "avg", "hlr"]
    )
    _, given = plt.subplots()
    ax = plot_model_scores(scores, baseline="avg", ax=given)
    assert ax is given
    assert [t.get_text() for t in ax.get_yticklabels()] == ["fsrs6", "avg", "hlr"]
    widths = [[bar.get_width() for bar in bars] for bars in ax.containers]
    np.testing.assert_allclose(widths[0], [-0.05, 0.0, 0.05])
    assert np.isnan(widths[1]).all()  # log B has no avg score: no difference to draw
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["log A", "log B"]
    raw = plot_model_scores(scores)
    np.testing.assert_allclose([b.get_width() for b in raw.containers[0]], [0.40, 0.45, 0.50])
    with pytest.raises(ValueError, match="baseline 'sm2' is not a model.*'hlr'"):
        plot_model_scores(scores, baseline="sm2")
    table = pd.concat({"train": scores, "test": scores}, names=["split", "model"]).swaplevel()
    with pytest.raises(ValueError, match=r"one row per model: table\.xs\('test'"):
        plot_model_scores(table)  # compare_models' (model, split) table as it comes
