"""Forgetting policies side by side at a fixed store budget (pure simulator, seeds as replicates).

memlab's default keep score (and its use term alone) vs FSRS-6 vs heat vs exponential vs LRU,
each keeping at most CAP memories (importance >= 0.9 protected for all), and no forgetting
(unbounded: the reference every budgeted policy loses against). Hit rate@k of the needed fact,
answer accuracy, stale-answer rate and miss rate, with 95 % Student-t confidence intervals over
workload seeds.

Writes experiments/results/sim_policies.{csv,md,png}.

    python experiments/sim_policies.py [--seeds 20] [--cap 300] [--days 90] [--workers 2]
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from memlab.sim import Policy, WorkloadConfig, run_sweep

RESULTS = Path(__file__).resolve().parent / "results"
#: memlab's keep score with a flat prior (importance weight 0): the use evidence alone.
USE_ONLY = "memlab flat prior"
METRICS = [
    "hit_rate",
    "correct_rate",
    "stale_rate",
    "miss_rate",
    "mean_store_size",
    "duplicate_rate",
]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--cap", type=int, default=300)
    ap.add_argument("--days", type=int, default=90)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()

    base = WorkloadConfig(
        n_days=args.days,
        facts_per_day=20.0,
        queries_per_day=100.0,
        corrections_per_day=4.0,
        paraphrases_per_day=8.0,
    )
    policies = [
        Policy("memlab", max_memories=args.cap, name="memlab"),
        Policy(
            "memlab",
            max_memories=args.cap,
            name=USE_ONLY,
            params={"importance_weight": 0.0},
        ),
    ]
    policies += [
        Policy(m, max_memories=args.cap, name=m) for m in ("fsrs6", "heat", "exponential", "lru")
    ]
    policies.append(Policy("none", name="none (unbounded)"))
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as ex:
        sweep = run_sweep(policies, seeds=range(args.seeds), base=base, executor=ex)
        # the same budget when queries follow popularity only (no recency bias)
        flat = run_sweep(
            policies, seeds=range(args.seeds), base=base, grid={"recency_mix": [0.0]}, executor=ex
        )
    wall = time.perf_counter() - t0
    table = sweep.confidence(METRICS)
    flat_table = flat.confidence(METRICS)

    args.out.mkdir(parents=True, exist_ok=True)
    pd.concat([sweep.summary.assign(recency_mix=base.recency_mix), flat.summary]).to_csv(
        args.out / "sim_policies.csv", index=False
    )
    lines = [
        "# Forgetting policies at a fixed store budget (pure simulator)",
        "",
        f"Workload: {args.days} days, ~{base.facts_per_day:g} new facts/day, "
        f"~{base.queries_per_day:g} queries/day "
        f"(Zipf popularity, recency, topic drift, bursts), ~{base.paraphrases_per_day:g} "
        "paraphrases and "
        f"~{base.corrections_per_day:g} corrections/day; default gate (0.92/0.75). Budget: at "
        f"most {args.cap} memories "
        f"(forgetting sweep each simulated day; importance >= 0.9 protected). k = 5. "
        f"{args.seeds} seeds; 95 % t-intervals over seeds. Wall time {wall:.1f} s for "
        f"{len(sweep.summary)} runs.",
        "",
        "| policy | hit@5 | answer correct | stale answers | misses | mean store size | duplicate "
        "rate |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += _rows(table) + _paired(sweep)
    lines += (
        [
            "",
            "## Same budget, queries by popularity only (recency_mix = 0; default "
            f"{base.recency_mix:g})",
            "",
            lines[4],
            lines[5],
        ]
        + _rows(flat_table)
        + _paired(flat)
    )
    speed = sweep.summary["memory_day_updates_per_s"]
    cpu = sweep.summary["memory_day_updates_per_cpu_s"]
    lines += [
        "",
        f"Simulator throughput in these runs: median {cpu.median():,.0f} memory-day updates per "
        "CPU second "
        f"({speed.median():,.0f} per wall second on the shared machine); small stores, where "
        "per-event work "
        "dominates - see sim_throughput.md for large ones.",
        "",
        "`memlab` is memlab's default keep score (memlab.keep.MemlabKeep): the posterior need of "
        "each memory, a content/importance prior (worth one expected use) updated by its uses "
        "(ACT-R decay 0.5), against the store's own use rate; protection first. Every access the "
        "simulator makes is a real use (the answer the agent used, or the fact stated again), so "
        "each counts fully. The workload's importance is drawn at random for each fact and says "
        "nothing about which facts are asked: the score learns that from the store's uses (the "
        "prior's importance slope shrinks from 1 toward the slope the uses show, here about 0). "
        f"`{USE_ONLY}` is the same score with importance weight 0 (a flat prior).",
        "",
    ]
    text = "\n".join(lines)
    (args.out / "sim_policies.md").write_text(text)
    print(text)
    _figure(sweep, table, args.out / "sim_policies.png")


def _rows(table: pd.DataFrame) -> list[str]:
    out = []
    for _, r in table.iterrows():
        cells = [
            f"{r[m]:.3f} [{r[m + '_ci_low']:.3f}, {r[m + '_ci_high']:.3f}]"
            if m != "mean_store_size"
            else f"{r[m]:.0f}"
            for m in METRICS
        ]
        out.append(f"| {r['policy']} | " + " | ".join(cells) + " |")
    return out


def _paired(sweep) -> list[str]:
    from memlab.sim import t_interval

    budgeted = sweep.summary[sweep.summary["policy"] != "none (unbounded)"]
    wide = budgeted.pivot(index="seed", columns="policy", values="hit_rate")
    out = ["", "Paired differences of hit@5 against LRU (same workloads), mean [95 % CI]:", ""]
    for p in ("memlab", USE_ONLY, "fsrs6", "heat", "exponential"):
        m, lo, hi = t_interval((wide[p] - wide["lru"]).to_numpy())
        out.append(f"- {p} - lru: {m:+.4f} [{lo:+.4f}, {hi:+.4f}]")
    return out


def _figure(sweep, table: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    daily = sweep.daily.groupby(["policy", "day"])["hit_rate"].mean().unstack(0)
    daily.rolling(7, min_periods=1).mean().plot(ax=ax1)
    ax1.set(xlabel="day", ylabel="hit@5 (7-day mean over seeds)", title="Hit rate over time")
    x = np.arange(len(table))
    for j, (m, label) in enumerate([("hit_rate", "hit@5"), ("stale_rate", "stale answers")]):
        err = np.vstack([table[m] - table[m + "_ci_low"], table[m + "_ci_high"] - table[m]])
        ax2.bar(x + (j - 0.5) * 0.4, table[m], 0.4, yerr=err, capsize=3, label=label)
    ax2.set_xticks(x, table["policy"], rotation=20)
    ax2.set(ylabel="rate (95 % CI over seeds)", title="At the store budget")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
