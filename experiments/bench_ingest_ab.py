"""Gated batched ingest of this checkout against another commit's, alternating in one run.

A speed change of the store is measured against the code before it on the same machine at the
same time: on 2 shared cores the same code's rate moves by a third from one minute to the next,
so only runs that alternate compare. Each round ingests the same texts with each checkout, in a
fresh process (``--one SRC``) that imports memlab from ``SRC``, into a fresh copy of a base store
of ``bench_ingest_stages.py`` (``--base`` memories, 200k by default; built there, cached in
its cache folder): 1,000 warm-up texts, then ``--texts`` timed, batches of 1,000, the default
gate and ``importance="auto"`` as the store bench runs it. The two checkouts take turns going
first. Reported per checkout: texts/s (wall and process CPU), the decisions and a digest of
every result (decision, rule, similarity, memory and nearest memory; both must be equal when
the change is a speed change only) and the median ratio of the rounds.

Run: ``git worktree add /tmp/base <commit>``, then
``python experiments/bench_ingest_ab.py --baseline /tmp/base [--rounds 3] [--texts 4000]``.
Writes experiments/results/bench_ingest_ab.json and .md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = ROOT / "experiments" / "results"
BASE = 200_000
BATCH = 1000


def git_head(src: Path) -> str:
    out = subprocess.run(
        ["git", "-C", str(src), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return out.stdout.strip() or "unknown"


def one(src: Path, texts_n: int, cache: Path, base_n: int = BASE) -> dict:
    """Ingest with memlab imported from ``src`` (run in a child process)."""
    # The editable install's finder would import this checkout's memlab whatever sys.path says.
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, str(src))
    sys.path.insert(0, str(HERE))
    from bench_ingest_stages import CORPUS, build_base, make_texts, open_store

    import memlab

    assert Path(memlab.__file__).resolve().is_relative_to(src.resolve()), memlab.__file__
    corpus = make_texts(CORPUS, seed=CORPUS)
    base = cache / f"base_{base_n}"
    build_base(corpus[:base_n], base)
    texts = corpus[base_n : base_n + BATCH + texts_n]
    del corpus
    work = cache / "ab_work"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(base, work, ignore=shutil.ignore_patterns("build.json"))
    store = open_store(work / "bench.db")
    with store.core.read():
        store.core.keywords.refresh(store.core)
    warm = store.ingest_many(texts[:BATCH], batch_size=BATCH)
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    results = store.ingest_many(texts[BATCH:], batch_size=BATCH)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    store.close()
    shutil.rmtree(work, ignore_errors=True)
    digest = hashlib.sha256()
    for r in warm + results:
        digest.update(
            repr((r.decision.value, r.rule, r.similarity, r.memory_id, r.nearest_id)).encode()
        )
    return {
        "digest": digest.hexdigest()[:16],
        "per_s": texts_n / wall,
        "cpu_per_s": texts_n / cpu,
        "decisions": dict(Counter(r.decision.value for r in results)),
        "load": [load, os.getloadavg()[0]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="a checkout to compare (required)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--texts", type=int, default=4000)
    parser.add_argument("--base", type=int, default=BASE, help="memories in the base store")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_ingest_ab")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    cache = args.cache_dir or Path(tempfile.gettempdir()) / "memlab_bench_ingest"
    if args.one is not None:
        print(json.dumps(one(args.one, args.texts, cache, args.base)))
        return
    if args.baseline is None:
        parser.error("--baseline is required")
    start = time.perf_counter()
    checkouts = {"baseline": args.baseline.resolve(), "this": ROOT}
    runs = []
    for round_ in range(1, args.rounds + 1):
        order = list(checkouts.items())
        for name, src in order if round_ % 2 else order[::-1]:  # each goes first in turn
            out = subprocess.run(
                [sys.executable, __file__, "--one", str(src), "--texts", str(args.texts),
                 "--cache-dir", str(cache), "--base", str(args.base)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            r = {"checkout": name, "round": round_, **json.loads(out.stdout.splitlines()[-1])}
            runs.append(r)
            print(f"{name} (round {round_}): {r['per_s']:.0f}/s, cpu {r['cpu_per_s']:.0f}/s, "
                  f"load {r['load'][0]:.2f}", flush=True)  # fmt: skip
    summary = {}
    for name in checkouts:
        mine = [r for r in runs if r["checkout"] == name]
        summary[name] = {
            "commit": git_head(checkouts[name]),
            "per_s": statistics.median(r["per_s"] for r in mine),
            "cpu_per_s": statistics.median(r["cpu_per_s"] for r in mine),
            "decisions": mine[0]["decisions"],
            "same_decisions_every_round": all(r["decisions"] == mine[0]["decisions"] for r in mine),
            "digests": sorted({r["digest"] for r in mine}),
        }
    by_round = {(r["checkout"], r["round"]): r["per_s"] for r in runs}
    ratios = [by_round["this", k] / by_round["baseline", k] for k in range(1, args.rounds + 1)]
    out = {
        "run_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "base": args.base,
        "texts": args.texts,
        "rounds": args.rounds,
        "runs": runs,
        "summary": summary,
        "ratio_per_round": ratios,
        "ratio_median": statistics.median(ratios),
        "same_decisions": summary["baseline"]["decisions"] == summary["this"]["decisions"],
        "same_results": summary["baseline"]["digests"] == summary["this"]["digests"]
        and len(summary["this"]["digests"]) == 1,
        "total_s": time.perf_counter() - start,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(out, indent=1) + "\n")
    lines = [
        "# Gated ingest: this checkout against a baseline commit, alternating",
        "",
        f"Run {out['run_at']} on {out['machine']} ({out['cpus']} CPUs), {out['total_s']:.0f} s "
        "in all. Produced by `experiments/bench_ingest_ab.py`: each round ingests the same "
        f"{args.texts:,} texts of the 1M bench corpus (after 1,000 warm-up texts) into a fresh "
        f"copy of a {args.base:,}-memory hashed IVF store, once with each checkout in its own "
        "process, each going first in turn; batches of 1,000, default gate, importance "
        "estimated. Load: 1-minute average.",
        "",
        "| checkout | commit | round | texts/s | texts/s of CPU time | load |",
        "|---|---|---|---|---|---|",
    ]
    for r in runs:
        load = "-".join(f"{x:.1f}" for x in r["load"])
        lines.append(
            f"| {r['checkout']} | {summary[r['checkout']]['commit']} | {r['round']} | "
            f"{r['per_s']:.0f} | {r['cpu_per_s']:.0f} | {load} |"
        )
    lines += [
        "",
        f"- Median: baseline {summary['baseline']['per_s']:.0f} texts/s, this checkout "
        f"{summary['this']['per_s']:.0f} texts/s; ratio per round "
        + ", ".join(f"{x:.2f}" for x in ratios)
        + f" (median {out['ratio_median']:.2f}).",
        f"- Decisions equal: {out['same_decisions']} (baseline {summary['baseline']['decisions']}, "
        f"this {summary['this']['decisions']}).",
        f"- Every result equal (decision, rule, similarity, memory, nearest; digests "
        f"{', '.join(summary['baseline']['digests'])} / {', '.join(summary['this']['digests'])})"
        f": {out['same_results']}.",
    ]
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(args.out.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
