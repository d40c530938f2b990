"""``memlab demo``: memlab's main job on the embedded default (no download, no server).

It puts the three forgetting laws side by side (a table and a figure), then shows what
each law says about a handful of memories of different ages, importance and altitude.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from memlab.models.curves import FSRS6Curve, curve_table, get_curve
from memlab.models.heat import HeatModel

#: Times shown in the side-by-side table, in days: 20 minutes to a year.
DEMO_DAYS: tuple[float, ...] = (0.0, 20 / 1440, 1 / 24, 1.0, 2.0, 7.0, 30.0, 90.0, 365.0)


def side_by_side_table(days: np.ndarray | None = None, stability: float = 7.0) -> pd.DataFrame:
    """Recall probability of FSRS-6 (stability S), heat/100 and exponential (strength S) over ``days``."""
    curves = {
        f"fsrs6 (S={stability:g}d)": FSRS6Curve(stability=stability),
        "heat/100 (Ebbinghaus)": get_curve("heat"),
        f"exponential (S={stability:g}d)": get_curve("exponential", strength=stability),
    }
    return curve_table(np.array(DEMO_DAYS if days is None else days, dtype=float), curves)


def heat_sweep_table() -> pd.DataFrame:
    """Heat, band, risk and action for a few typical memories."""
    memories = pd.DataFrame(
        {
            "memory": ["fresh note", "last week's fix", "old detail", "old mission", "old caveat", "stale idea"],
            "days_since_access": [0.01, 7.0, 90.0, 400.0, 400.0, 120.0],
            "importance": [0.5, 0.5, 0.1, 0.5, 0.2, 0.1],
            "altitude": ["implementation", "implementation", "implementation", "mission", "implementation", "architecture"],
            "layer": ["context", "implementation", "context", "goal", "caveat", "context"],
        }
    )
    assessment = HeatModel().assess(
        memories["days_since_access"].to_numpy(),
        memories["importance"].to_numpy(),
        memories["altitude"].to_numpy(),
        memories["layer"].to_numpy(),
    )
    return memories.assign(
        heat=assessment.heat.round(1),
        band=assessment.band,
        risk=assessment.risk.round(1),
        protected=assessment.protected,
        action=assessment.action,
    )


def write_curves_figure(path: Path, stability: float = 7.0) -> Path:
    """The side-by-side curves and the heat bands, written to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from memlab.plot import plot_curves, plot_heat_bands

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    grid = np.geomspace(1 / 1440, 365, 400)  # one minute to one year, on a log axis
    plot_curves(side_by_side_table(grid, stability), log_x=True, ax=left)
    plot_heat_bands(grid, log_x=True, ax=right)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    with pd.option_context("display.width", 120, "display.max_columns", 20):
        print("memlab demo — three forgetting laws side by side (recall probability)\n")
        table = side_by_side_table(stability=args.stability)
        table.index = [_format_days(d) for d in table.index]
        table.index.name = "since access"
        print(table.round(3).to_string())
        print("\nEbbinghaus heat, forgetting risk and the action a forget sweep would take\n")
        print(heat_sweep_table().to_string(index=False))
    if not args.no_plot:
        figure = write_curves_figure(out / "curves.png", args.stability)
        print(f"\nwrote {figure}")
    return 0


def _format_days(days: float) -> str:
    if days == 0:
        return "0"
    if days < 1 / 24 + 1e-12:
        return f"{days * 1440:.0f} min"
    if days < 1:
        return f"{days * 24:.0f} h"
    return f"{days:g} d"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("demo", help="run memlab's main job on the embedded default")
    parser.add_argument("--out", default="memlab-demo", help="folder for the figures (default: memlab-demo)")
    parser.add_argument("--stability", type=float, default=7.0, help="FSRS-6 stability / exponential strength in days")
    parser.add_argument("--no-plot", action="store_true", help="print the tables only")
    parser.set_defaults(func=run)


__all__ = ["heat_sweep_table", "register", "side_by_side_table"]
