"""One store under threads and processes: nothing acknowledged lost, no interleaved
read-modify-write, bounded waits with a clear StoreBusy, no crash."""

from __future__ import annotations

import sqlite3
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from durability import consistency, integrity, recoverable, run_stress
from store_helpers import T0, Clock, VecEmbedder

from memlab.models.heat import HeatModel
from memlab.store import IndexOptions, MemoryStore
from memlab.store.dynamics import Dynamics

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes")


# ---------------------------------------------------------------------- class 1: threads
def test_threads_share_one_store(tmp_path: Path) -> None:
    path = tmp_path / "threads.db"
    store = MemoryStore(path, index=IndexOptions(switch_at=40, n_trees=4))
    acknowledged: list[tuple[int, str]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def work(t: int) -> None:
        rng = np.random.default_rng(t)
        try:
            for i in range(40):
                words = " ".join(f"t{t}w{int(w)}" for w in rng.integers(0, 5000, size=7))
                text = f"thread {t} note {i}: {words}"
                r = store.ingest(text, project=f"p{t}")
                with lock:
                    acknowledged.append((r.memory_id, text))
                if i % 5 == 0:
                    store.search(text, k=3)
                if i % 13 == 0:
                    store.rebuild_index()  # unloads annoy while the other threads query it
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert len(acknowledged) == 8 * 40
    ids = {r.id for r in store.memories()}
    assert {m for m, _ in acknowledged} <= ids
    store.close()
    assert {text for _, text in acknowledged} <= recoverable(path)
    assert consistency(path) == (0, 0, 0)
    assert integrity(path) == "ok"


# ---------------------------------------------------------------------- class 2: lost updates
class _HookHeat(HeatModel):
    """The heat model, calling ``hooks`` while the sweep or consolidation scores the rows."""

    hooks: list[Any] = []

    def assess(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        for hook in list(self.hooks):
            hook()
        return super().assess(*args, **kwargs)


def _other_writer(path: Path, clock: Clock) -> MemoryStore:
    other = MemoryStore(path, embedder=VecEmbedder(), clock=clock)
    other.core.execute("PRAGMA busy_timeout = 50")  # another process, quick to give up
    return other


def test_sweep_does_not_compress_stale_content(tmp_path: Path) -> None:
    """Another process replaces a memory's content while a sweep scores it: the new content
    must survive (in content or history), on main the sweep compressed the stale text."""
    path = tmp_path / "sweep.db"
    clock = Clock()
    hooks: list[Any] = []
    _HookHeat.hooks = hooks
    store = MemoryStore(
        path, embedder=VecEmbedder(), clock=clock, dynamics=Dynamics(heat=_HookHeat())
    )
    long = " ".join(f"Sentence number {i} of the first version is here." for i in range(12))
    mid = store.ingest("base " + long, importance=0.1).memory_id
    # old enough for the sweep to compress it
    for days in range(5, 400, 5):
        clock.now = T0 + timedelta(days=days)
        if store.forget_sweep().set_index("id").loc[mid, "action"] == "compress":
            break
    else:  # pragma: no cover - the heat model's thresholds moved
        pytest.fail("no time at which the memory is compressed")
    other = _other_writer(path, clock)
    new_text = "base " + " ".join(f"Revised sentence {i} of version two." for i in range(12))
    outcome: list[str] = []

    def replace_content() -> None:
        hooks.clear()
        try:
            with other.core.write():
                at = other.core.now().timestamp()
                old = other.core.row(mid)["content"]
                other.core.event(mid, at, "version", text=old, data={"reason": "test"})
                other.core.set_content(mid, new_text, None, at)
            outcome.append("written")
        except sqlite3.OperationalError:
            outcome.append("busy")  # not acknowledged: the writer retries below

    hooks.append(replace_content)
    store.forget_sweep(dry_run=False)
    if outcome == ["busy"]:
        replace_content()
        outcome.append("retried")
    other.close()
    store.close()
    assert new_text in recoverable(path), outcome
    assert outcome == ["busy", "written", "retried"]  # the sweep held the write lock throughout


def test_consolidate_reads_inside_its_write(tmp_path: Path) -> None:
    path = tmp_path / "cons.db"
    clock = Clock()
    hooks: list[Any] = []
    _HookHeat.hooks = hooks
    store = MemoryStore(
        path, embedder=VecEmbedder(), clock=clock, dynamics=Dynamics(heat=_HookHeat())
    )
    for k in range(3, 7):
        store.ingest(f"axis={k} fact {k} about the pump.", entity="pump", importance=0.1)
    clock.advance(days=200)
    other = _other_writer(path, clock)
    outcome: list[str] = []

    def write() -> None:
        hooks.clear()
        try:
            other.access(1)
            outcome.append("written")
        except sqlite3.OperationalError:
            outcome.append("busy")

    hooks.append(write)
    created = store.consolidate()
    other.close()
    store.close()
    assert created and outcome == ["busy"]


# ---------------------------------------------------------------------- class 6: locks
def _hold_write_lock(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE meta SET value = value WHERE key = 'embedder_name'")
    return conn


def test_open_and_preview_search_do_not_wait_for_a_writer(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "busy.db"
    with MemoryStore(path, clock=clock) as s:
        s.ingest_many([f"pump note {i} about valve {i}" for i in range(30)])
    holder = _hold_write_lock(path)
    try:
        t0 = time.monotonic()
        reader = MemoryStore(path, clock=clock)  # opening only reads: no wait for the lock
        reader.core.execute("PRAGMA busy_timeout = 300")
        hits = reader.search("valve 7", k=3, mark_accessed=False)
        assert hits and time.monotonic() - t0 < 20  # (a bound on waiting, not a timing claim)
        from memlab.store import StoreBusy

        with pytest.raises(StoreBusy, match="busy_timeout=0.3 s") as info:
            reader.search("valve 7", k=3)  # records accesses: a write
        assert isinstance(info.value, sqlite3.OperationalError)
        with pytest.raises(StoreBusy):
            reader.ingest("a new note")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert reader.search("valve 7", k=3)  # the lock released: the same call works
    before = len(reader)
    reader.ingest("a new note")
    assert len(reader) == before + 1
    reader.close()


class _WriterBetweenBatches:
    """An embedder that, when asked for its second batch, lets another connection write."""

    name = "hashing-probe"

    def __init__(self, path: Path) -> None:
        from memlab.embed import HashingEmbedder

        self.inner = HashingEmbedder()
        self.dim = self.inner.dim
        self.path = path
        self.calls = 0
        self.outcome: list[str] = []

    def embed_documents(self, texts: Any) -> Any:
        self.calls += 1
        if self.calls == 2:  # the second batch: the first is committed by now
            conn = sqlite3.connect(self.path, timeout=0, isolation_level=None)
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("ROLLBACK")
                self.outcome.append("written")
            except sqlite3.OperationalError:
                self.outcome.append("busy")
            finally:
                conn.close()
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Any:
        return self.inner.embed_query(text)


def test_long_ingest_lets_other_writers_in_between_batches(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "batches.db"
    embedder = _WriterBetweenBatches(path)
    with MemoryStore(path, embedder=embedder, clock=clock) as s:
        rng = np.random.default_rng(5)
        texts = [" ".join(f"w{int(w)}" for w in rng.integers(0, 10**6, size=8)) for _ in range(90)]
        results = s.ingest_many(texts, batch_size=30)
        assert len(results) == 90 and len(s) == 90
    assert embedder.calls == 3 and embedder.outcome == ["written"]


# ---------------------------------------------------------------------- stress
@pytest.mark.slow
def test_stress_threads_and_processes(tmp_path: Path) -> None:
    result = run_stress(tmp_path / "stress.db", seconds=6.0)
    assert result["errors"] == []
    assert result["acknowledged"] > 0 and result["acknowledged_by_processes"] > 0
    assert result["lost"] == 0
    assert result["integrity_check"] == "ok"
    assert result["consistency"] == (0, 0, 0)
