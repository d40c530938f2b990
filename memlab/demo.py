"""``memlab demo``: memlab's main job on the embedded default (no download, no server).

The three forgetting laws side by side, the heat law on a few memories, a real
:class:`~memlab.store.MemoryStore` on a simulated clock (gated ingest, hybrid search, the
testing effect, a forget sweep), the forgetting policies on a simulated workload, and one real
LoCoMo conversation shipped with memlab.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd

from memlab.models.curves import FSRS6Curve, curve_table, get_curve
from memlab.models.heat import HeatModel
from memlab.store import MemoryStore

#: The simulated clock of the store tour starts here.
TOUR_START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

#: What an agent tells the store on its first morning, one text an hour.
TOUR_TEXTS: tuple[tuple[str, dict[str, object]], ...] = (
    ("The staging database runs on port 5432.", {"topics": ["infra"]}),
    (
        "Use ruff for linting; black is no longer used.",
        {"topics": ["tooling"], "layer": "implementation"},
    ),
    ("Never deploy on Fridays without a rollback plan.", {"topics": ["deploy"], "layer": "caveat"}),
    ("The staging database runs on port 5432.", {"topics": ["infra"]}),
    ("The staging database now runs on port 5433.", {"topics": ["infra"]}),
    ("Alice owns the billing service.", {"topics": ["people"], "entity": "billing"}),
)

#: Times shown in the side-by-side table, in days: 20 minutes to a year.
DEMO_DAYS: tuple[float, ...] = (0.0, 20 / 1440, 1 / 24, 1.0, 2.0, 7.0, 30.0, 90.0, 365.0)


def side_by_side_table(days: np.ndarray | None = None, stability: float = 7.0) -> pd.DataFrame:
    """Recall probability of FSRS-6 (stability S), heat/100 and exponential (strength S) over
    ``days``."""
    curves = {
        f"fsrs6 (S={stability:g}d)": FSRS6Curve(stability=stability),
        "heat/100 (linksee preset)": get_curve("heat"),
        f"exponential (S={stability:g}d)": get_curve("exponential", strength=stability),
    }
    return curve_table(np.array(DEMO_DAYS if days is None else days, dtype=float), curves)


def heat_sweep_table() -> pd.DataFrame:
    """Heat, band, risk and action for a few typical memories."""
    names = "fresh note|last week's fix|old detail|old mission|old caveat|stale idea"
    memories = pd.DataFrame(
        {
            "memory": names.split("|"),
            "days_since_access": [0.01, 7.0, 90.0, 400.0, 400.0, 120.0],
            "importance": [0.5, 0.5, 0.1, 0.5, 0.2, 0.1],
            "altitude": ["implementation"] * 3 + ["mission", "implementation", "architecture"],
            "layer": "context implementation context goal caveat context".split(),
        }
    )
    assessment = HeatModel().assess(
        elapsed_days=memories["days_since_access"].to_numpy(),
        importance=memories["importance"].to_numpy(),
        altitude=memories["altitude"].to_numpy(),
        layer=memories["layer"].to_numpy(),
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


def store_tour(path: str | Path = ":memory:") -> dict[str, pd.DataFrame]:
    """A short life of a memory store on a simulated clock; returns the tables it prints.

    ``ingest``: what the gate decided for each text; ``search``: the hits of one query three
    days later with their score parts; ``testing_effect``: stability of the hits before and
    after that search; ``sweep``: a dry-run forget sweep 120 days later.
    """
    if str(path) != ":memory:":
        for suffix in ("", "-wal", "-shm", ".annoy", ".annoy.json"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    store = MemoryStore(path)
    try:
        rows = []
        for hour, (text, options) in enumerate(TOUR_TEXTS):
            result = store.ingest(
                text, project="atlas", now=TOUR_START + timedelta(hours=hour), **options
            )  # type: ignore[arg-type]
            sim = None if result.similarity is None else round(result.similarity, 3)
            rows.append((text, result.decision.value, sim, result.memory_id))
        ingest = pd.DataFrame(rows, columns=["text", "decision", "similarity", "memory_id"])
        when = TOUR_START + timedelta(days=3)
        query = "which port does the staging database use"
        before = {m.id: m.stability for m in store.memories()}
        hits = store.search(query, k=3, project="atlas", now=when)
        search = pd.DataFrame(
            [
                {
                    "id": h.memory.id,
                    "content": h.memory.content,
                    "score": round(h.score, 4),
                    "keyword_rank": h.keyword_rank,
                    "vector_rank": h.vector_rank,
                    "retention": round(h.retention, 3),
                    "context": round(h.context, 2),
                }
                for h in hits
            ]
        ).astype({"keyword_rank": "Int64", "vector_rank": "Int64"})
        testing_effect = pd.DataFrame(
            [
                {
                    "id": h.memory.id,
                    "stability_before": round(before[h.memory.id], 2),
                    "stability_after": round(store.get(h.memory.id).stability, 2),
                }
                for h in hits
            ]
        )
        columns = ["id", "layer", "heat", "band", "risk", "protected", "action", "state"]
        sweep = store.forget_sweep(now=when + timedelta(days=120), dry_run=True)[columns].round(2)
    finally:
        store.close()
    return {"ingest": ingest, "search": search, "testing_effect": testing_effect, "sweep": sweep}


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    table = side_by_side_table(stability=args.stability)  # checks --stability first
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"--out {out}: not a folder")
    out.mkdir(parents=True, exist_ok=True)
    with pd.option_context("display.width", 120, "display.max_columns", 20):
        print("memlab demo — three forgetting laws side by side (recall probability)\n")
        table.index = [_format_days(d) for d in table.index]
        table.index.name = "since access"
        print(table.round(3).to_string())
        print("\nEbbinghaus heat, forgetting risk and the action a forget sweep would take\n")
        print(heat_sweep_table().to_string(index=False))
        database = out / "tour.db"
        tour = store_tour(database)
        print(
            f"\nA memory store on a simulated clock ({database}, HashingEmbedder, gate 0.92/0.75)\n"
        )
        print(tour["ingest"].to_string(index=False))
        print(
            "\nSearch three days later: 'which port does the staging database use' (RRF of BM25 "
            "and vectors, weighted by retention and context)\n"
        )
        print(tour["search"].to_string(index=False))
        print(
            "\nThe testing effect: search strengthened the hits that cleared its relevance test, "
            "not every hit it returned (FSRS-6 stability, days)\n"
        )
        print(tour["testing_effect"].to_string(index=False))
        print("\nA forget sweep 120 days later (dry run: nothing is changed)\n")
        print(tour["sweep"].to_string(index=False))
        print(
            "\nForgetting policies side by side: a simulated agent workload (3 seeds x 30 days, "
            "100-memory budget)\n"
        )
        from memlab.sim.runner import quick_comparison

        policies = quick_comparison()
        print(
            policies[["policy", "hit_rate", "stale_rate", "miss_rate", "mean_store_size"]]
            .round(3)
            .to_string(index=False)
        )
        _locomo_section()
    if not args.no_plot:
        figure = write_curves_figure(out / "curves.png", args.stability)
        print(f"\nwrote {figure}")
    return 0


def _locomo_section() -> None:
    """Score the LoCoMo conversation shipped with memlab (conv-30) with the HashingEmbedder."""
    from memlab.datasets import dataset_path
    from memlab.eval.locomo import DEFAULT, Config, evaluate, load_locomo

    path = dataset_path("locomo_conv30")
    print(
        f"\nLoCoMo retrieval on one real conversation ({path.name}, shipped with memlab, "
        "CC BY-NC 4.0; HashingEmbedder; recall of evidence turns)\n"
    )
    result = evaluate(
        load_locomo(path), configs=[Config("bm25", ranking="bm25"), Config("rrf"), DEFAULT]
    )
    print(result.table().round(3).to_string())


def _format_days(days: float) -> str:
    if days == 0:
        return "0"
    if days < 1 / 24 + 1e-12:
        return f"{days * 1440:.0f} min"
    if days < 1:
        return f"{days * 24:.0f} h"
    return f"{days:g} d"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "demo",
        help="run memlab's main job on the embedded default",
        description="Run memlab's main job on the embedded default (no download, no server): "
        "the forgetting laws side by side, a memory store on a simulated clock, forgetting "
        "policies and LoCoMo retrieval. It writes tour.db and curves.png into --out, replacing "
        "those of an earlier run.",
    )
    parser.add_argument("--out", default="memlab-demo", help="output folder (default: memlab-demo)")
    parser.add_argument(
        "--stability",
        type=float,
        default=7.0,
        help="FSRS-6 stability / exponential strength in days",
    )
    parser.add_argument("--no-plot", action="store_true", help="print the tables only")
    parser.set_defaults(func=run)
