"""``memlab fit FILE [--holdout 0.2] [--json]``: FSRS-6 (default and fitted), heat and exponential on a review log."""

from __future__ import annotations

import argparse
import json
import math
import time
from typing import Any


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``fit`` subcommand."""
    parser = subparsers.add_parser(
        "fit",
        help="fit FSRS-6, heat and exponential curves to a review log",
        description="Fit FSRS-6, the heat curve and the exponential baseline on the first (1 - holdout) of the "
        "reviews by time and score both parts (log loss, RMSE(bins), AUC). FILE is a py-fsrs review-log CSV or an "
        "srs-benchmark revlog (CSV or parquet).",
    )
    parser.add_argument("file", help="review log (py-fsrs CSV, or srs-benchmark CSV/parquet)")
    parser.add_argument(
        "--holdout",
        type=float,
        default=0.2,
        help="share of the latest reviews held out (default 0.2)",
    )
    parser.add_argument(
        "--convention", choices=("24h", "anki"), default="24h", help="day convention for timestamps"
    )
    parser.add_argument(
        "--l2",
        type=lambda v: v if v == "auto" else float(v),
        default=0.0,
        help="pull of the FSRS-6 weights toward the defaults: a number (default 0) or 'auto' "
        "(chosen by a time-ordered validation inside the training reviews)",
    )
    parser.add_argument(
        "--recency",
        type=float,
        default=0.0,
        help="weight later training reviews more: exp(r (pos - 1)) (default 0)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
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
    from memlab.fit.curves import evaluate_models
    from memlab.fit.data import load_reviews

    start = time.perf_counter()
    data = load_reviews(args.file, convention=args.convention)
    from memlab.fit.fsrs6 import FSRS6Fitter

    evaluation = evaluate_models(
        data, holdout=args.holdout, fitter=FSRS6Fitter(l2=args.l2, recency=args.recency)
    )
    seconds = time.perf_counter() - start
    if args.json:
        payload = {"models": evaluation.to_dict(), "seconds": seconds}
        print(json.dumps(_clean(payload)))
        return 0
    report = data.report
    print(
        f"{report.source}: {report.reviews} reviews of {report.cards} cards ({report.layout}, days: {report.convention})"
    )
    for note in report.notes:
        print(f"  note: {note}")
    print(
        f"time-ordered split: first {1 - args.holdout:.0%} of reviews train, last {args.holdout:.0%} test\n"
    )
    print(evaluation.table().round(4).to_string())
    print("\nparameters:")
    for name, result in evaluation.results.items():
        if name == "fsrs6_default":
            continue
        params = result.params
        if "weights" in params:
            print(f"  {name}: w = [" + ", ".join(f"{w:.4f}" for w in params["weights"]) + "]")
        else:
            print(f"  {name}: " + ", ".join(f"{k}={v:.4g}" for k, v in params.items()))
    print(f"\n{seconds:.2f} s")
    return 0


__all__ = ["register", "run"]
