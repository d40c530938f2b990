"""STS-B gating with the shared MiniLM: default thresholds vs fitted thresholds vs the learned gate.

Classes from the gold 0-5 score (>= 4.5 reinforce, >= 2.5 update, else create). Thresholds and
the learned gate are fitted on sts-train and scored on sts-dev (unseen pairs). The default
0.92/0.75 is the reference measured in the same run (DESIGN.md: macro-F1 ~ 0.60 on unseen pairs).

Run: ``python experiments/bench_fit_gate.py [--model-dir DIR]``. Writes
experiments/results/bench_fit_gate.json. Embedding ~17k sentences takes ~30 s on an idle 2-core
machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from memlab.embed import FastEmbedEmbedder  # noqa: E402
from memlab.fit.gating import evaluate_gates, load_stsb  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model-dir", type=Path, default=SHARED / "models" / "all-MiniLM-L6-v2-onnx"
    )
    parser.add_argument(
        "--out", type=Path, default=ROOT / "experiments" / "results" / "bench_fit_gate.json"
    )
    args = parser.parse_args(argv)
    train_path, dev_path = (
        SHARED / "data" / "stsb" / "sts-train.csv",
        SHARED / "data" / "stsb" / "sts-dev.csv",
    )
    if not (train_path.exists() and dev_path.exists() and args.model_dir.exists()):
        print("STS-B files or the MiniLM model folder are missing", file=sys.stderr)
        return 1
    train, dev = load_stsb(train_path), load_stsb(dev_path)
    start = time.perf_counter()
    result = evaluate_gates(train, dev, FastEmbedEmbedder(model_path=args.model_dir))
    seconds = time.perf_counter() - start
    out = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "train_pairs": len(train),
        "dev_pairs": len(dev),
        "seconds": seconds,
        "reference": {"design_default_macro_f1_unseen": 0.60},
        **result,
        "fitted_over_default": result["fitted"]["macro_f1"] / result["default"]["macro_f1"],
        "learned_over_default": result["learned"]["macro_f1"] / result["default"]["macro_f1"],
    }
    print(
        f"STS-B dev ({len(dev)} pairs), fitted on train ({len(train)} pairs), "
        f"MiniLM; {seconds:.0f} s"
    )
    print(f"  default 0.92/0.75          macro-F1 {result['default']['macro_f1']:.4f}")
    r, u = result["fitted"]["thresholds"]
    print(f"  fitted {r:.3f}/{u:.3f}        macro-F1 {result['fitted']['macro_f1']:.4f}")
    print(f"  learned (cosine + lexical) macro-F1 {result['learned']['macro_f1']:.4f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
