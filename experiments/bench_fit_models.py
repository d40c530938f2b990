"""FSRS-6 (default and fitted weights), heat and exponential on the josh review log, side by side.

Time-ordered split (first 80 % of reviews train, last 20 % test); log loss, RMSE(bins) (the
srs-benchmark's review count) and AUC on both parts, fitted parameters, and a calibration plot of
the test reviews. Beside it, FSRS-6 (default and fitted) under the srs-benchmark's own protocol
(:mod:`memlab.fit.protocol`: Anki days, outlier filter, 5 time-series folds pooled), so a figure
can be quoted beside the benchmark's table.

Run: ``python experiments/bench_fit_models.py``. Writes experiments/results/bench_fit_models.json,
.md and bench_fit_models_calibration.png.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from memlab.fit.compare import (
    evaluate_fsrs6,  # noqa: E402
    evaluate_models,  # noqa: E402
)
from memlab.fit.data import load_reviews  # noqa: E402
from memlab.models.fsrs6 import DEFAULT_WEIGHTS  # noqa: E402
from memlab.plot import plot_calibration  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
JOSH = ROOT.parent / "shared" / "data" / "reviews" / "py-fsrs_review_logs_josh.csv"
if not JOSH.exists():  # shared folder found the way memlab finds it (MEMLAB_SHARED, parents)
    from memlab.datasets import shared_path

    JOSH = shared_path("data", "reviews", "py-fsrs_review_logs_josh.csv", required=False) or JOSH


def main() -> int:
    if not JOSH.exists():
        print(f"josh review log not found at {JOSH}", file=sys.stderr)
        return 1
    (RESULTS / "bench_fit_models.json").parent.mkdir(parents=True, exist_ok=True)
    data = load_reviews(JOSH)
    evaluation = evaluate_models(data, holdout=0.2)
    table = evaluation.table()
    print(table.round(4).to_string())
    protocols = {}
    for protocol in ("memlab", "srs-benchmark"):
        for name, kwargs in (("fsrs6_default", {"weights": DEFAULT_WEIGHTS}), ("fsrs6", {})):
            result = evaluate_fsrs6(data, protocol, **kwargs)
            protocols[f"{protocol}/{name}"] = result.to_dict()
    lines = [
        "",
        "## FSRS-6 under both protocols (test reviews; srs-benchmark: 5 folds pooled)",
        "",
        "| protocol | model | log loss | RMSE(bins) | AUC | n |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for key, result in protocols.items():
        protocol, name = key.split("/")
        m = result["metrics"]
        lines.append(
            f"| {protocol} | {name} | {m['log_loss']:.4f} | {m['rmse_bins']:.4f} | "
            f"{m['auc']:.4f} | {m['n']} |"
        )
    rows = protocols["srs-benchmark/fsrs6"]["rows"]
    lines += [
        "",
        f"srs-benchmark protocol rows: {rows}. Reference (srs-benchmark, 10k users): FSRS-6 log "
        "loss "
        "0.346, RMSE(bins) 0.065, AUC 0.703.",
    ]
    print("\n".join(lines))
    RESULTS.mkdir(parents=True, exist_ok=True)
    payload = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "reference": {
            "design_default_test_log_loss": 0.4515,
            "design_fsrs_rs": 0.4497,
            "design_pyfsrs": 0.4550,
        },
        "models": evaluation.to_dict(),
        "protocols": protocols,
    }
    (RESULTS / "bench_fit_models.json").write_text(json.dumps(payload, indent=2) + "\n")
    (RESULTS / "bench_fit_models.md").write_text(
        "# Forgetting curves on the josh review log (time-ordered 80/20 split)\n\n"
        + (
            table.round(4).to_markdown()
            if hasattr(table, "to_markdown") and _has_tabulate()
            else table.round(4).to_string()
        )
        + "\n"
        + "\n".join(lines)
        + "\n"
    )
    ax = plot_calibration(evaluation, split="test")
    ax.figure.savefig(RESULTS / "bench_fit_models_calibration.png", dpi=100, bbox_inches="tight")
    print(f"wrote {RESULTS / 'bench_fit_models.json'} and the calibration plot")
    return 0


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
