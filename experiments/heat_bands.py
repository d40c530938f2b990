"""The heat presets and the fit of the default: where each band ends, and how use stretches it.

Refits the default preset with :func:`memlab.models.heat.fit_band_ends` (Linksee's meaning:
hot up to a day, warm up to a week, cold up to three months), with Ebbinghaus's unit of one
minute and with the unit free, and prints the band end times of both presets and of memories
whose FSRS-6 stability grew with use. Writes experiments/results/heat_bands.{json,md}.

    python experiments/heat_bands.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from memlab.models.fsrs6 import FSRS6
from memlab.models.heat import BAND_END_TARGETS, LINKSEE_BANDS, HeatModel, fit_band_ends

RESULTS = Path(__file__).resolve().parent / "results"


def stability_after(access_days: list[float]) -> float:
    """FSRS-6 stability of a memory created at day 0 and used (Good) at ``access_days``."""
    fsrs = FSRS6()
    s, d = fsrs.review(stability=np.nan, difficulty=np.nan, elapsed_days=0.0, grade=3)
    last = 0.0
    for t in access_days:
        s, d = fsrs.review(stability=s, difficulty=d, elapsed_days=t - last, grade=3)
        last = t
    return float(np.asarray(s))


def fmt_days(t: float) -> str:
    if t < 1 / 24:
        return f"{t * 1440:.1f} min"
    if t < 1:
        return f"{t * 24:.2f} h"
    if t < 3650:
        return f"{t:.2f} d"
    return f"{t / 365.25:,.0f} years"


def main() -> None:
    fitted = fit_band_ends()
    free = fit_band_ends(u_minutes=None)
    models = {
        "linksee (default, printed)": HeatModel(),
        "fit_band_ends() (u = 1 min)": fitted,
        "fit_band_ends(u_minutes=None)": free,
        "ebbinghaus1885": HeatModel.preset("ebbinghaus1885"),
    }
    uses = {
        "new (never used)": [],
        "used once (day 1)": [1.0],
        "used 5x (days 1, 2, 4, 8, 16)": [1.0, 2.0, 4.0, 8.0, 16.0],
    }
    out = {
        "targets_days": BAND_END_TARGETS,
        "printed": LINKSEE_BANDS,
        "fits": {
            name: {**m.to_dict(), "band_ends_days": m.band_ends()} for name, m in models.items()
        },
        "by_use": {
            name: {
                "stability": stability_after(days),
                "band_ends_days": HeatModel().band_ends(stability_after(days)),
            }
            for name, days in uses.items()
        },
    }
    lines = [
        "# Heat bands: the presets, the fit of the default, and use",
        "",
        f"Targets (Linksee's meaning): hot ends at {BAND_END_TARGETS['hot']:g} day, warm at "
        f"{BAND_END_TARGETS['warm']:g} days, cold at {BAND_END_TARGETS['cold']:g} days; "
        "least squares on log end times (scipy.optimize.least_squares). The log-savings shape "
        "cannot meet all three at once: the best fit ends warm early and cold late.",
        "",
        "| curve | k | c | u (min) | hot ends | warm ends | cold ends |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, m in models.items():
        e = m.band_ends()
        lines.append(
            f"| {name} | {m.k:.6g} | {m.c:.4g} | {m.u_minutes:.4g} | {fmt_days(e['hot'])} | "
            f"{fmt_days(e['warm'])} | {fmt_days(e['cold'])} |"
        )
    lines += [
        "",
        "Default heat of memories used differently (FSRS-6 default weights, grade Good; heat is "
        "read at t x 2.3065 / S):",
        "",
        "| memory | FSRS-6 stability (d) | hot ends | warm ends | cold ends |",
        "|---|---|---|---|---|",
    ]
    for name, row in out["by_use"].items():
        e = row["band_ends_days"]
        lines.append(
            f"| {name} | {row['stability']:.2f} | {fmt_days(e['hot'])} | {fmt_days(e['warm'])} | "
            f"{fmt_days(e['cold'])} |"
        )
    text = "\n".join(lines) + "\n"
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "heat_bands.json").write_text(json.dumps(out, indent=2))
    (RESULTS / "heat_bands.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
