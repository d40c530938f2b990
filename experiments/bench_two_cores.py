"""How much two processes get done on this machine's two cores, beside one alone.

A pipelined or split ingest (one process searching the cells and reading candidates while
another judges and writes) can at best do what two processes do together. This script
measures that ceiling directly, in one run, the configurations alternating for ``--rounds``:

- ``python loop``: a pure-Python CPU-bound loop (no I/O, no threads), one process alone, then
  two at once (the reference: what the cores give to work that shares nothing);
- ``gated ingest``: ``ingest_many`` of ``--texts`` texts into a copy of the base store of
  ``bench_ingest_stages.py`` (``--base`` hashed memories, IVF cells; each process makes its
  own copy before the clock starts), one process alone, then two at once; with faiss's
  default threads, and with one OpenMP thread per process (``OMP_NUM_THREADS=1``).

The processes of a pair start their timed parts together (each waits for the parent's go
after its set-up). Each process reports its own rate and time; "together" is the pair's work
(texts or iterations) over the longer of its two times, and the ratio is that rate over the
rate of the process alone in the same round: 2.0 would be two cores that add up.

Run: ``python experiments/bench_two_cores.py [--base 200000] [--texts 6000] [--rounds 2]
[--cache-dir DIR]``. Writes experiments/results/bench_two_cores.json and .md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

RESULTS = Path(__file__).resolve().parents[1] / "experiments" / "results"
#: Iterations of the pure-Python loop (about two seconds on these machines).
LOOP = 15_000_000
#: Texts each ingest process ingests first, untimed (the bench's batch size).
WARM = 1000


def ready() -> None:
    """Tell the parent this process is ready and wait for its go (so the timed parts of the
    processes of a pair overlap)."""
    print("ready", flush=True)
    sys.stdin.readline()


def python_loop() -> dict[str, float]:
    """The pure-Python loop's rate (iterations a second)."""
    ready()
    start = time.perf_counter()
    total = 0
    for i in range(LOOP):
        total += i % 7
    seconds = time.perf_counter() - start
    return {"per_s": LOOP / seconds, "seconds": seconds, "work": LOOP, "check": total}


def gated_ingest(cache: Path, work: Path, base: int, texts: int) -> dict[str, float]:
    """Ingest the ``texts`` texts after the base's into a copy of the base store (of ``base``
    texts, in ``cache``) made in ``work``."""
    from bench_ingest_stages import BATCH, cached_base, fresh_copy

    folder, _, chosen = cached_base(base, cache, WARM + texts)
    store = fresh_copy(folder, work)
    store.ingest_many(chosen[:WARM], batch_size=BATCH)
    ready()
    start = time.perf_counter()
    store.ingest_many(chosen[WARM:], batch_size=BATCH)
    seconds = time.perf_counter() - start
    store.close()
    return {"per_s": texts / seconds, "seconds": seconds, "work": texts}


def run_processes(
    task: str, works: list[Path | None], args: argparse.Namespace, threads: int | None
) -> list[dict[str, Any]]:
    """Run ``task`` in one process per entry of ``works``, all at once; their reports."""
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    procs = []
    for work in works:
        cmd = [sys.executable, __file__, "--worker", task, "--base", str(args.base),
               "--texts", str(args.texts), "--cache-dir", str(args.cache_dir)]  # fmt: skip
        if work is not None:
            cmd += ["--work", str(work)]
        procs.append(
            subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
        )
    for proc in procs:  # every process ready before any starts its timed part
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"worker {task} did not get ready")
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    out = []
    for proc in procs:
        stdout, _ = proc.communicate()
        if proc.returncode:
            raise RuntimeError(f"worker {task} failed with exit code {proc.returncode}")
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


def run_of(runs: list[dict[str, Any]], config: str, round_: int, processes: int) -> dict:
    """The run of ``config`` in ``round_`` with ``processes`` processes."""
    return next(
        r for r in runs if (r["config"], r["round"], r["processes"]) == (config, round_, processes)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=int, default=200_000)
    parser.add_argument("--texts", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_two_cores")
    parser.add_argument("--worker", choices=("python loop", "gated ingest"), default=None)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    from bench_ingest_stages import DEFAULT_CACHE, cached_base, run_record, write_results

    args.cache_dir = args.cache_dir or DEFAULT_CACHE
    if args.worker == "python loop":
        print(json.dumps(python_loop()))
        return
    if args.worker == "gated ingest":
        print(json.dumps(gated_ingest(args.cache_dir, args.work, args.base, args.texts)))
        return

    start = time.perf_counter()
    if not (args.cache_dir / f"base_{args.base}" / "build.json").exists():
        cached_base(args.base, args.cache_dir, 0)  # built once here, not by both workers
    copies = [args.cache_dir / "two_cores_a", args.cache_dir / "two_cores_b"]
    configs: list[tuple[str, str, int | None]] = [
        ("python loop", "python loop", None),
        ("gated ingest, faiss's default threads", "gated ingest", None),
        ("gated ingest, one OpenMP thread a process", "gated ingest", 1),
    ]
    runs = []
    for round_ in range(1, args.rounds + 1):
        for name, task, threads in configs:
            for n in (1, 2):
                gated = task == "gated ingest"
                works: list[Path | None] = list(copies[:n]) if gated else [None] * n
                load = os.getloadavg()[0]
                reports = run_processes(task, works, args, threads)
                runs.append({"config": name, "round": round_, "processes": n,
                             "per_s": [r["per_s"] for r in reports],
                             "together_per_s": sum(r["work"] for r in reports)
                             / max(r["seconds"] for r in reports),
                             "load": [load, os.getloadavg()[0]]})  # fmt: skip
                print(f"{name}, {n} process(es), round {round_}: "
                      + " + ".join(f"{r['per_s']:.0f}/s" for r in reports), flush=True)  # fmt: skip
    for copy in copies:
        shutil.rmtree(copy, ignore_errors=True)
    summary = {}
    for name, _, _ in configs:
        ratios = []
        for round_ in range(1, args.rounds + 1):
            alone, pair = run_of(runs, name, round_, 1), run_of(runs, name, round_, 2)
            ratios.append(pair["together_per_s"] / alone["per_s"][0])
        summary[name] = {"ratios": ratios, "median": statistics.median(ratios)}
    out = {
        **run_record(),
        "base": args.base,
        "texts": args.texts,
        "rounds": args.rounds,
        "runs": runs,
        "summary": summary,
        "total_s": time.perf_counter() - start,
    }
    write_results(out, args.out, write_markdown)


def write_markdown(out: dict[str, Any], path: Path) -> None:
    lines = [
        "# Two processes on this machine's two cores, beside one alone",
        "",
        f"Run {out['run_at']} on {out['machine']} ({out['cpus']} CPUs), {out['total_s']:.0f} s "
        "in all. Produced by `experiments/bench_two_cores.py`. Gated ingest: "
        f"{out['texts']:,} texts (after {WARM:,} untimed) into a copy of a store of "
        f"{out['base']:,} hashed memories (IVF cells), each process its own copy. The "
        "configurations alternate for "
        f"{out['rounds']} rounds. The 2 cores are shared with other sessions (load: 1-minute "
        "average).",
        "",
        "| configuration | round | alone | two at once, each | together | together / alone "
        "| load |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in out["summary"].items():
        for round_, ratio in enumerate(s["ratios"], start=1):
            alone = run_of(out["runs"], name, round_, 1)
            pair = run_of(out["runs"], name, round_, 2)
            unit = "M it/s" if name == "python loop" else "texts/s"
            scale = 1e-6 if name == "python loop" else 1.0
            digits = 1 if name == "python loop" else 0
            lines.append(
                f"| {name} | {round_} | {alone['per_s'][0] * scale:.{digits}f} {unit} | "
                + " + ".join(f"{v * scale:.{digits}f}" for v in pair["per_s"])
                + f" | {pair['together_per_s'] * scale:.{digits}f} | {ratio:.2f} | "
                + f"{pair['load'][0]:.1f}-{pair['load'][1]:.1f} |"
            )
    lines += ["", "Median ratio over the rounds:", ""]
    lines += [f"- {name}: {s['median']:.2f}" for name, s in out["summary"].items()]
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
