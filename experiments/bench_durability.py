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
experiments/results/bench_durability.json and .md. The stress runner is also used by
``tests/store/test_concurrency.py`` (shorter).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"


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


# ---------------------------------------------------------------------- 4. stress
STRESS_WORKER = r"""
import sys, random, time
from memlab.store import IndexOptions, MemoryStore
path, tag, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
rng = random.Random(tag)
store = MemoryStore(path, index=IndexOptions(switch_at=60, n_trees=4))
end = time.monotonic() + seconds
i = 0
while time.monotonic() < end:
    text = f"proc {tag} item {i}: " + " ".join(f"{tag}w{rng.randrange(20000)}" for _ in range(8))
    r = store.ingest(text, project=tag)
    print(r.memory_id, text, flush=True)
    if i % 4 == 0:
        store.search(text, k=5)
    if i % 25 == 0:
        store.forget_sweep(dry_run=False)
    i += 1
store.close()
"""


def recoverable(path: Path) -> set[str]:
    """Every text the database holds: contents and the texts kept in events."""
    conn = sqlite3.connect(path)
    try:
        kept = {r[0] for r in conn.execute("SELECT content FROM memories")}
        kept |= {r[0] for r in conn.execute("SELECT text FROM events WHERE text IS NOT NULL")}
    finally:
        conn.close()
    return kept


def integrity(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def consistency(path: Path) -> tuple[int, int, int]:
    """(memories without a creating event, keyword rows without a memory, current memories
    without a keyword row - a superseded memory's text lives in the history index): all 0 in a
    sound store."""
    conn = sqlite3.connect(path)
    try:
        no_create = conn.execute(
            "SELECT COUNT(*) FROM memories m WHERE NOT EXISTS (SELECT 1 FROM events e"
            " WHERE e.memory_id = m.id AND e.kind IN ('create', 'import', 'consolidation'))"
        ).fetchone()[0]
        orphan_kw = conn.execute(
            "SELECT COUNT(*) FROM memories_fts f LEFT JOIN memories m ON m.id = f.rowid"
            " WHERE m.id IS NULL"
        ).fetchone()[0]
        missing_kw = conn.execute(
            "SELECT COUNT(*) FROM memories m LEFT JOIN memories_fts f ON f.rowid = m.id"
            " WHERE f.rowid IS NULL AND m.status != 'superseded'"
        ).fetchone()[0]
    finally:
        conn.close()
    return int(no_create), int(orphan_kw), int(missing_kw)


def run_stress(path: Path, seconds: float, n_threads: int = 8, n_procs: int = 4) -> dict[str, Any]:
    """``n_threads`` threads sharing one store and ``n_procs`` processes ingesting, searching
    and sweeping (``forget_sweep(dry_run=False)``) one file for ``seconds``; thread 0 also
    rebuilds the vector index now and then. Returns counts of acknowledged (returned) writes,
    those lost (their text nowhere in the database), errors, and the integrity checks."""
    from memlab.store import IndexOptions, MemoryStore

    MemoryStore(path).close()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", STRESS_WORKER, str(path), f"P{p}", str(seconds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for p in range(n_procs)
    ]
    store = MemoryStore(path, index=IndexOptions(switch_at=60, n_trees=4))
    acknowledged: list[str] = []
    errors: list[str] = []
    ops = {"search": 0, "sweep": 0, "rebuild": 0}
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def work(t: int) -> None:
        rng = np.random.default_rng(100 + t)
        i = 0
        try:
            while time.monotonic() < end:
                words = " ".join(f"T{t}w{int(w)}" for w in rng.integers(0, 20000, size=8))
                text = f"thread {t} item {i}: {words}"
                store.ingest(text, project=f"T{t}")
                with lock:
                    acknowledged.append(text)
                if i % 4 == 0:
                    store.search(text, k=5)
                    ops["search"] += 1
                if i % 25 == 0:
                    store.forget_sweep(dry_run=False)
                    ops["sweep"] += 1
                if t == 0 and i % 40 == 39:
                    store.rebuild_index()
                    ops["rebuild"] += 1
                i += 1
        except BaseException as error:  # noqa: BLE001 - counted and reported
            errors.append(f"thread {t}: {error!r}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    store.close()
    by_processes = 0
    for p in procs:
        out, err = p.communicate(timeout=600)
        if p.returncode != 0:
            errors.append(f"process exit {p.returncode}: {err[-500:]}")
        lines = out.splitlines()
        by_processes += len(lines)
        acknowledged += [line.split(" ", 1)[1] for line in lines]
    kept = recoverable(path)
    return {
        "seconds": seconds,
        "threads": n_threads,
        "processes": n_procs,
        "acknowledged": len(acknowledged),
        "acknowledged_by_processes": by_processes,
        "thread_ops": ops,
        "lost": sum(1 for text in acknowledged if text not in kept),
        "errors": errors,
        "integrity_check": integrity(path),
        "consistency": consistency(path),
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
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
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
    name = "bench_durability_quick" if q else "bench_durability"
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")
    (RESULTS / f"{name}.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
