"""``memlab fit FILE [--holdout 0.2] [--deck NAME] [--models a,b] [--json]``: FSRS-6 (default and
fitted), heat and exponential, or any models of ``compare_models``, on a review log or an Anki
collection.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from typing import Any


def _l2(text: str) -> str | float:
    try:
        return text if text == "auto" else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number or 'auto', got {text!r}") from None


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``fit`` subcommand."""
    parser = subparsers.add_parser(
        "fit",
        help="fit forgetting models to a review log and score them on its latest reviews",
        description="Fit the models on the first (1 - holdout) of the reviews by time and score "
        "both parts (log loss, RMSE(bins), AUC). FILE is a py-fsrs review-log CSV, an "
        "srs-benchmark revlog (CSV or parquet), an Anki collection, a .colpkg or an .apkg.",
    )
    add = parser.add_argument
    add("file", help="the review log")
    add("--holdout", type=float, default=0.2, help="latest share held out (default 0.2)")
    add(
        "--convention",
        choices=("24h", "anki", "continuous"),
        help="day convention for timestamps (default: anki for Anki files, 24h otherwise; "
        "continuous keeps fractional days, as FSRS-7 is made for)",
    )
    add(
        "--invalid-grades",
        choices=("drop", "error"),
        default="error",
        help="rows graded outside 1..4: stop with an error naming them (default) or drop them",
    )
    add(
        "--deck",
        action="append",
        help="Anki files: keep this deck and its subdecks (name or id; repeatable)",
    )
    add(
        "--models",
        type=lambda v: [m.strip() for m in v.split(",") if m.strip()],
        help="comma-separated models of memlab.fit.compare.model_registry (default fsrs6_default,"
        "fsrs6,heat,exponential; also fsrs7, hlr, act-r, dash, avg, moving-avg, sm2)",
    )
    add("--l2", type=_l2, help="pull of the FSRS-6 weights toward the defaults: a number or 'auto'")
    add("--recency", type=float, help="FSRS-6 fit: weight later training reviews: exp(r (pos - 1))")
    add(
        "--protocol",
        choices=("memlab", "srs-benchmark"),
        default="memlab",
        help="also score FSRS-6 under the srs-benchmark protocol (memlab.fit.protocol)",
    )
    add("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)
    return parser


def _clean(value: Any) -> Any:
    """JSON-safe: NaN becomes null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def run(args: argparse.Namespace) -> int:
    from memlab.fit.compare import evaluate_models
    from memlab.fit.data import load_reviews
    from memlab.fit.fsrs6 import FSRS6Fitter

    options = {k: getattr(args, k) for k in ("l2", "recency") if getattr(args, k) is not None}
    if options and args.protocol == "memlab" and "fsrs6" not in (args.models or ["fsrs6"]):
        raise ValueError(f"--{' and --'.join(options)} shape the fsrs6 fit: add fsrs6 to --models")
    start = time.perf_counter()
    data = load_reviews(
        args.file,
        convention=args.convention,
        invalid_grades="drop" if args.invalid_grades == "drop" else "raise",
        decks=args.deck,
    )
    load_seconds = time.perf_counter() - start
    if args.convention not in (None, "anki") and data.report.layout == "srs-benchmark":
        raise ValueError(f"--convention {args.convention}: an srs-benchmark log is in Anki days")
    fitter = FSRS6Fitter(**options)
    evaluation = evaluate_models(data, holdout=args.holdout, fitter=fitter, models=args.models)
    fitted = {k: v for k, v in evaluation.results.items() if k != "fsrs6_default"}
    timings = {"load": load_seconds} | {f"{k}_fit": v.fit_seconds for k, v in fitted.items()}
    benchmark, skipped = None, None
    if args.protocol == "srs-benchmark":
        from memlab.fit.compare import evaluate_fsrs6
        from memlab.models.fsrs6 import DEFAULT_WEIGHTS

        bench_start = time.perf_counter()
        try:
            benchmark = {
                "fsrs6_default": evaluate_fsrs6(data, "srs-benchmark", weights=DEFAULT_WEIGHTS),
                "fsrs6": evaluate_fsrs6(data, "srs-benchmark", fitter),
            }
        except ValueError as error:  # a small log: the 80/20 table still stands
            skipped = str(error)
        timings["srs_benchmark_protocol"] = time.perf_counter() - bench_start
    seconds = time.perf_counter() - start
    timings["total"] = seconds
    if args.json:
        payload = {"models": evaluation.to_dict(), "seconds": seconds, "timings": timings}
        if benchmark is not None:
            payload["srs_benchmark"] = {k: v.to_dict() for k, v in benchmark.items()}
        elif skipped is not None:
            payload["srs_benchmark_not_run"] = skipped
        print(json.dumps(_clean(payload)))
        return 0
    report = data.report
    print(
        f"{report.source}: {report.reviews} reviews of {report.cards} cards "
        f"({report.layout}, days: {report.convention})"
    )
    for note in report.notes:
        print(f"  note: {note}")
    print(
        f"time-ordered split: first {100 - 100 * args.holdout:g}% of reviews train, "
        f"last {100 * args.holdout:g}% test\n"
    )
    print(evaluation.table().round(4).to_string())
    if skipped is not None:
        print(f"\nsrs-benchmark protocol not run: {skipped}")
    if benchmark is not None:
        rows = benchmark["fsrs6"].rows
        print(
            f"\nsrs-benchmark protocol (Anki days, outlier filter: {rows['outlier_cards']} card(s) "
            f"left out, 5 time-series folds, {benchmark['fsrs6'].metrics['n']} test reviews "
            "pooled):"
        )
        for name, result in benchmark.items():
            m = result.metrics
            print(
                f"  {name:14s} log_loss {m['log_loss']:.4f}  rmse_bins {m['rmse_bins']:.4f}  "
                f"auc {m['auc']:.4f}"
            )
    if any(result.params for result in fitted.values()):
        print("\nparameters:")
    for name, result in fitted.items():
        if "weights" in (params := result.params):
            print(f"  {name}: w = [" + ", ".join(f"{w:.4f}" for w in params["weights"]) + "]")
        elif params:
            print(f"  {name}: " + ", ".join(f"{k}={v:.4g}" for k, v in params.items()))
    fits = ", ".join(f"{k} {v.fit_seconds:.3f} s" for k, v in fitted.items())
    fits = f"fit {fits}; " if fits else ""
    print(f"\nload {load_seconds:.3f} s; {fits}{seconds:.2f} s in all")
    return 0
