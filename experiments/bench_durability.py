"""Durability and concurrency of the MemoryStore, measured in one run.

1. Ingest rate with ``synchronous="FULL"`` (the default: every commit survives a power loss)
   against ``"NORMAL"`` (commits survive a crash of the process; the last ones may roll back
   on power loss): one text per ``ingest()`` call (one transaction and, with FULL, one WAL
   sync each) and ``ingest_many`` (one transaction per batch). Rounds alternate the two modes;
   medians and the ratio NORMAL/FULL are reported.
2. How long another connection waits for the write lock while a long ``ingest_many`` runs,
   with the default batch (one commit per batch) and with the whole call as one batch (the
   previous behaviour, the baseline).
3. The cost of the checks on opening (``verify=True``: quick_check, keyword index, vector
   sizes) against opening without them.
4. A stress run: 8 threads sharing one store and 4 processes ingesting, searching and sweeping
   one file for 30 s; acknowledged writes lost, errors, ``PRAGMA integrity_check``.

Run: ``python experiments/bench_durability.py [--quick]``. Writes
experiments/results/bench_durability.json and .md. The stress runner and the checks of a
database after it live in ``tests/store/durability.py`` (the concurrency tests run it shorter).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
sys.path.insert(0, str(ROOT / "tests" / "store"))

from durability import run_stress  # noqa: E402


def texts(seed: int, n: int, words: int = 9) -> list[str]:
    """Distinct short texts of random words (the gate creates a memory for each)."""
    rng = np.random.default_rng(seed)
    return [
        f"note {i}: " + " ".join(f"w{int(w)}" for w in rng.integers(0, 10**6, size=words))
        for i in range(n)
    ]


# ---------------------------------------------------------------------- 1. FULL vs NORMAL
def ingest_rate(mode: str, n_single: int, n_batch: int, seed: int) -> dict[str, float]:
    from memlab.store import Durability, MemoryStore

    with tempfile.TemporaryDirectory() as tmp:
        with MemoryStore(
            Path(tmp) / "d.db", durability=Durability(synchronous=mode), index="exact"
        ) as s:
            single = texts(seed, n_single)
            t0 = time.perf_counter()
            for text in single:
                s.ingest(text)
            t_single = time.perf_counter() - t0
            batch = texts(seed + 1, n_batch)
            t0 = time.perf_counter()
            s.ingest_many(batch, batch_size=100)
            t_batch = time.perf_counter() - t0
    return {"single_per_s": n_single / t_single, "batch100_per_s": n_batch / t_batch}


def durability(rounds: int, n_single: int, n_batch: int) -> dict[str, Any]:
    runs: dict[str, list[dict[str, float]]] = {"FULL": [], "NORMAL": []}
    for r in range(rounds):
        for mode in ("FULL", "NORMAL") if r % 2 == 0 else ("NORMAL", "FULL"):
            runs[mode].append(ingest_rate(mode, n_single, n_batch, seed=10 * r))
    out: dict[str, Any] = {"rounds": rounds, "n_single": n_single, "n_batch": n_batch}
    for mode, rs in runs.items():
        out[mode] = {k: float(np.median([x[k] for x in rs])) for k in rs[0]}
    out["ratio_normal_over_full"] = {k: out["NORMAL"][k] / out["FULL"][k] for k in out["FULL"]}
    return out


# ---------------------------------------------------------------------- 2. lock waits
def lock_waits(n: int, batch_size: int) -> dict[str, float]:
    """The longest and median wait of another connection for the write lock (probed every
    20 ms from a thread with its own connection) during one ``ingest_many`` of ``n`` texts."""
    from memlab.store import MemoryStore

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "w.db"
        store = MemoryStore(path, index="exact")
        data = texts(99, n)
        waits: list[float] = []
        done = threading.Event()

        def probe() -> None:
            conn = sqlite3.connect(path, timeout=120, isolation_level=None)
            while not done.is_set():
                t0 = time.perf_counter()
                conn.execute("BEGIN IMMEDIATE")
                waits.append(time.perf_counter() - t0)
                conn.execute("ROLLBACK")
                time.sleep(0.02)
            conn.close()

        th = threading.Thread(target=probe)
        th.start()
        t0 = time.perf_counter()
        store.ingest_many(data, batch_size=batch_size)
        total = time.perf_counter() - t0
        done.set()
        th.join()
        store.close()
    return {
        "texts": n,
        "batch_size": batch_size,
        "ingest_s": total,
        "probes": len(waits),
        "max_wait_s": float(max(waits)),
        "median_wait_s": float(np.median(waits)),
    }


# ---------------------------------------------------------------------- 3. open checks
def open_cost(n: int, repeats: int) -> dict[str, float]:
    from memlab.store import Durability, MemoryStore

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "o.db"
        with MemoryStore(path, index="exact") as s:
            s.ingest_many(texts(7, n))
            s.rebuild_index()
        times: dict[str, list[float]] = {"verify": [], "no_verify": []}
        for _ in range(repeats):
            for key, verify in (("verify", True), ("no_verify", False)):
                t0 = time.perf_counter()
                MemoryStore(path, durability=Durability(verify=verify), index="exact").close()
                times[key].append(time.perf_counter() - t0)
    med = {k: float(np.median(v)) for k, v in times.items()}
    return {
        "memories": n,
        "open_s_verify": med["verify"],
        "open_s_no_verify": med["no_verify"],
        "ratio": med["verify"] / med["no_verify"],
    }


# ---------------------------------------------------------------------- report
def markdown(r: dict[str, Any]) -> str:
    d = r["durability"]
    lines = [
        "# Store durability and concurrency",
        "",
        f"{r['machine']}, {r['date']}. HashingEmbedder, file store in a temporary directory.",
        "",
        f"## Ingest rate, synchronous FULL vs NORMAL (median of {d['rounds']} alternating rounds)",
        "",
        "| mode | ingest() one text per call /s | ingest_many, batches of 100 /s |",
        "|---|---|---|",
    ]
    for mode in ("FULL", "NORMAL"):
        lines.append(
            f"| {mode} | {d[mode]['single_per_s']:.0f} | {d[mode]['batch100_per_s']:.0f} |"
        )
    ratio = d["ratio_normal_over_full"]
    lines += [
        f"| NORMAL / FULL | {ratio['single_per_s']:.2f} | {ratio['batch100_per_s']:.2f} |",
        "",
        "## Another writer's wait for the lock during one long ingest_many",
        "",
        "| batch_size | texts | ingest s | probes | max wait s | median wait s |",
        "|---|---|---|---|---|---|",
    ]
    for w in r["lock_waits"]:
        lines.append(
            f"| {w['batch_size']} | {w['texts']} | {w['ingest_s']:.2f} | {w['probes']} |"
            f" {w['max_wait_s']:.3f} | {w['median_wait_s']:.3f} |"
        )
    o = r["open_cost"]
    s = r["stress"]
    lines += [
        "",
        "(batch_size = texts is the previous behaviour: the whole call in one transaction.)",
        "",
        f"## Opening a store of {o['memories']} memories",
        "",
        f"verify=True {o['open_s_verify']:.3f} s, verify=False {o['open_s_no_verify']:.3f} s"
        f" (ratio {o['ratio']:.2f}).",
        "",
        f"## Stress: {s['threads']} threads + {s['processes']} processes, {s['seconds']:.0f} s",
        "",
        f"- acknowledged writes: {s['acknowledged']} ({s['acknowledged_by_processes']} by the"
        f" processes); thread searches {s['thread_ops']['search']}, sweeps"
        f" {s['thread_ops']['sweep']}, index rebuilds {s['thread_ops']['rebuild']}",
        f"- lost: {s['lost']}",
        f"- errors: {len(s['errors'])} {s['errors'][:3] if s['errors'] else ''}",
        f"- PRAGMA integrity_check: {s['integrity_check']}",
        f"- memories without a creating event / keyword rows without a memory / memories"
        f" without a keyword row: {s['consistency']}",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, 8 s stress")
    args = ap.parse_args()
    q = args.quick
    result: dict[str, Any] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python"
        f" {platform.python_version()}, SQLite {sqlite3.sqlite_version}",
    }
    result["durability"] = durability(
        rounds=3, n_single=150 if q else 400, n_batch=500 if q else 2000
    )
    print(json.dumps(result["durability"], indent=1))
    n = 2000 if q else 6000
    result["lock_waits"] = [lock_waits(n, 100), lock_waits(n, 1000), lock_waits(n, n)]
    print(json.dumps(result["lock_waits"], indent=1))
    result["open_cost"] = open_cost(2000 if q else 20000, repeats=3)
    print(json.dumps(result["open_cost"], indent=1))
    with tempfile.TemporaryDirectory() as tmp:
        result["stress"] = run_stress(Path(tmp) / "stress.db", seconds=8.0 if q else 30.0)
    print(json.dumps(result["stress"], indent=1))
    RESULTS.mkdir(parents=True, exist_ok=True)
    if q:  # a smoke run: printed, the results file is left as it is
        print(markdown(result))
        return
    name = "bench_durability"
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")
    (RESULTS / f"{name}.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
