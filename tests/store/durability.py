"""Checks of a store file after concurrent writers, and the stress run that exercises them.

Used by tests/store/test_concurrency.py (a short run) and experiments/bench_durability.py (30 s).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

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
