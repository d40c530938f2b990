"""Vector index: annoy + exact tail, atomic rebuilds, untrusted files rebuilt."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import numpy as np
import pytest
from store_helpers import Clock

from memlab.store import MemoryStore
from memlab.store.vectors import VectorIndex


def _fill(store: MemoryStore, n: int, seed: int = 3) -> list[int]:
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(400)]
    texts = [" ".join(rng.choice(words, size=6, replace=False)) for _ in range(n)]
    return [r.memory_id for r in store.ingest_many(texts)]


def _exact_top(store: MemoryStore, q: np.ndarray, n: int) -> list[int]:
    rows = store.core.execute("SELECT id, embedding FROM memories").fetchall()
    mat = np.stack([np.frombuffer(r[1], "<f4") for r in rows])
    order = np.argsort(-(mat @ q), kind="stable")[:n]
    return [int(rows[i][0]) for i in order]


def test_rebuild_saves_file_and_manifest(tmp_path, clock: Clock) -> None:
    s = MemoryStore(tmp_path / "m.db", clock=clock, tail_min=50, n_trees=10)
    _fill(s, 120)
    idx = s.index
    assert idx.rebuilds >= 1 and idx.indexed + idx.tail_size >= 120 and idx.tail_size <= 60
    manifest = json.loads((tmp_path / "m.db.annoy.json").read_text())
    assert (
        manifest["embedder"] == s.embedder.name
        and manifest["dim"] == 384
        and manifest["count"] == idx.indexed
    )
    assert not list(tmp_path.glob("*.tmp-*"))  # temp files renamed or removed
    s.close()
    s2 = MemoryStore(tmp_path / "m.db", clock=clock, tail_min=50, n_trees=10)
    assert s2.index.last_load == "loaded" and s2.index.rebuilds == 0
    s2.close()


@pytest.mark.parametrize("damage", ["delete", "corrupt", "truncate", "manifest", "stale"])
def test_damaged_index_is_rebuilt(tmp_path, clock: Clock, damage: str) -> None:
    path = tmp_path / "m.db"
    s = MemoryStore(path, clock=clock, tail_min=20, n_trees=5)
    ids = _fill(s, 60)
    s.rebuild_index()
    s.close()
    annoy_file = tmp_path / "m.db.annoy"
    if damage == "delete":
        annoy_file.unlink()
    elif damage == "corrupt":
        data = bytearray(annoy_file.read_bytes())
        data[100:200] = b"\xff" * 100
        annoy_file.write_bytes(bytes(data))
    elif damage == "truncate":
        annoy_file.write_bytes(annoy_file.read_bytes()[:1000])
    elif damage == "manifest":
        (tmp_path / "m.db.annoy.json").write_text("{not json")
    elif damage == "stale":
        # another database now lives at this path: same ids, other vectors
        conn = sqlite3.connect(path)
        conn.execute(
            "UPDATE memories SET embedding = ? ",
            ((np.ones(384) / np.sqrt(384)).astype("<f4").tobytes(),),
        )
        conn.commit()
        conn.close()
    s = MemoryStore(path, clock=clock, tail_min=20, n_trees=5)
    assert s.index.last_load != "loaded" and s.index.rebuilds == 1
    if damage != "stale":
        text = s.get(ids[7]).content
        assert s.nearest(text, 1)[0][0] == ids[7]
    s.close()


def test_tail_serves_new_and_updated_vectors(tmp_path, clock: Clock) -> None:
    s = MemoryStore(tmp_path / "m.db", clock=clock, tail_min=10_000, n_trees=5)
    ids = _fill(s, 40)
    s.rebuild_index()
    assert s.index.tail_size == 0
    new = s.ingest("completely novel words zebra quartz").memory_id
    assert s.index.tail_size == 1
    assert s.nearest("completely novel words zebra quartz", 1)[0] == (new, pytest.approx(1.0))
    # re-embedding an indexed memory moves it to the tail and the stale annoy vector is ignored
    old_text = s.get(ids[0]).content
    with s.core.write():
        s.core.set_content(ids[0], "replaced by kangaroo text", None, clock.now.timestamp())
    hits = dict(s.nearest(old_text, 5))
    assert hits.get(ids[0], 0.0) < 0.5
    assert s.nearest("replaced by kangaroo text", 1)[0][0] == ids[0]
    s.close()


def test_other_process_rows_reach_the_tail(tmp_path, clock: Clock) -> None:
    a = MemoryStore(tmp_path / "m.db", clock=clock)
    b = MemoryStore(tmp_path / "m.db", clock=clock)
    mid = b.ingest("written by the other handle about marmots").memory_id
    assert a.nearest("written by the other handle about marmots", 1)[0][0] == mid
    assert a.search("marmots", mark_accessed=False)[0].memory.id == mid
    a.close()
    b.close()


def test_annoy_recall_against_exact(clock: Clock) -> None:
    s = MemoryStore(clock=clock, tail_min=10, n_trees=20, search_k=4000)
    _fill(s, 500)
    s.rebuild_index()
    rng = np.random.default_rng(0)
    recalls = []
    for i in rng.choice(500, size=20, replace=False):
        q = s.embedder.embed_query(s.get(int(i) + 1).content)
        got = [m for m, _ in s.index.query(q, 10)]
        recalls.append(len(set(got) & set(_exact_top(s, q, 10))) / 10)
    assert np.mean(recalls) >= 0.95


def test_query_dimension_checked() -> None:
    idx = VectorIndex(8, "x")
    with pytest.raises(ValueError, match="shape"):
        idx.query_many(np.zeros((2, 7), np.float32), 3)


def test_orphaned_temp_files_removed(tmp_path, clock: Clock) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    pid = int(dead.stdout)
    orphan = tmp_path / f"m.db.annoy.tmp-{pid}-deadbeef"
    orphan.write_bytes(b"half-built index")
    mine = tmp_path / f"m.db.annoy.tmp-{os.getpid()}-cafe"
    mine.write_bytes(b"a build of this process")
    s = MemoryStore(tmp_path / "m.db", clock=clock)
    assert not orphan.exists() and mine.exists()
    s.close()
