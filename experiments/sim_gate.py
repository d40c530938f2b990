"""Which gate thresholds keep the store clean? Duplicates and stale answers vs (reinforce, update).

Pure simulator, no forgetting (so only the gate matters), default workload over 60 days;
95 % t-intervals over seeds. The workload's latent similarities: paraphrases ~ N(0.88, 0.05)
(near-duplicates ~0.97), corrections ~ N(0.82, 0.05) - a correction that REINFORCEs leaves
the old value (stale), one that CREATEs leaves both values (a duplicate that may rank first).

Writes experiments/results/sim_gate.{csv,md}.

    python experiments/sim_gate.py [--seeds 10]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from memlab.gate import Gate
from memlab.sim import Policy, WorkloadConfig, run_sweep

RESULTS = Path(__file__).resolve().parent / "results"
METRICS = ["correct_rate", "stale_rate", "duplicate_rate", "mean_store_size"]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    policies = [
        Policy("none", gate=Gate(r, u), name=f"reinforce>{r:g} update>{u:g}")
        for r in (0.85, 0.92, 0.97)
        for u in (0.70, 0.75, 0.80)
        if u <= r
    ]
    sweep = run_sweep(policies, seeds=range(args.seeds), base=WorkloadConfig(n_days=60))
    table = sweep.confidence(METRICS)
    args.out.mkdir(parents=True, exist_ok=True)
    sweep.summary.to_csv(args.out / "sim_gate.csv", index=False)
    lines = [
        "# Gate thresholds: duplicates and stale answers (pure simulator, no forgetting)",
        "",
        f"Default workload, 60 days, {args.seeds} seeds, 95 % t-intervals. Default gate: "
        "reinforce > 0.92, update > 0.75. "
        "Latent similarities of the workload: paraphrases ~ N(0.88, 0.05) (30 % near-duplicates ~ "
        "0.97), corrections "
        "~ N(0.82, 0.05). Stale answers come from corrections the gate REINFORCEs (the old value "
        "stays); a correction "
        "that CREATEs is a duplicate but, being the most recent memory of its fact, ranks first. "
        "So the reinforce "
        "threshold sets staleness and the update threshold sets duplication - under these assumed "
        "similarity laws.",
        "",
        "| gate | answer correct | stale answers | duplicate rate | mean store size |",
        "|---|---|---|---|---|",
    ]
    for _, r in table.iterrows():
        cells = [
            f"{r[m]:.4f} [{r[m + '_ci_low']:.4f}, {r[m + '_ci_high']:.4f}]"
            if m != "mean_store_size"
            else f"{r[m]:.0f}"
            for m in METRICS
        ]
        lines.append(f"| {r['policy']} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    (args.out / "sim_gate.md").write_text(text)
    print(text)


if __name__ == "__main__":
    pd.set_option("display.width", 200)
    main()
