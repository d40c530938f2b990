"""``memlab eval gate TRAIN TEST``: the default, fitted and learned gates on STS-B-format pairs."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``gate`` to the ``memlab eval`` group."""
    parser = subparsers.add_parser(
        "gate",
        help="prediction-error gates on STS-B-format pairs",
        description="Score the default gate thresholds (0.92/0.75), thresholds fitted on TRAIN "
        "and the learned gate "
        "on TEST. Classes from the 0-5 score: >= 4.5 reinforce, >= 2.5 update, else create.",
    )
    parser.add_argument("train", help="STS-B-format file to fit on (tab separated)")
    parser.add_argument("test", help="STS-B-format file to score on")
    parser.add_argument("--model-dir", help="fastembed model folder (default: HashingEmbedder)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--progress", action="store_true", help="show a progress bar while embedding"
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from memlab.embed import FastEmbedEmbedder, HashingEmbedder
    from memlab.fit.gating import evaluate_gates, load_stsb

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    train, test = load_stsb(args.train), load_stsb(args.test)
    embedder = FastEmbedEmbedder(model_path=args.model_dir) if args.model_dir else HashingEmbedder()
    result = evaluate_gates(train, test, embedder, progress=args.progress)
    if args.json:
        print(json.dumps({name: result[name] for name in ("default", "fitted", "learned")}))
        return 0
    print(
        f"gates on {args.test} ({result['n_test']} pairs), fitted on {args.train} "
        f"({result['n_train']} pairs)"
    )
    print(f"embedder: {getattr(embedder, 'name', embedder)}\n")
    labels = ("reinforce", "update", "create")
    for name in ("default", "fitted", "learned"):
        entry = result[name]
        extra = ""
        if name == "default":
            extra = " (reinforce > 0.92, update > 0.75)"
        elif name == "fitted":
            extra = " (reinforce > {:.3f}, update > {:.3f})".format(*entry["thresholds"])
        print(f"{name}{extra}: macro-F1 {entry['macro_f1']:.3f}")
        print("  true \\ predicted  " + "  ".join(f"{label:>9}" for label in labels))
        for label, row in zip(labels, entry["confusion"], strict=True):
            print(f"  {label:>16}  " + "  ".join(f"{count:>9}" for count in row))
    return 0
