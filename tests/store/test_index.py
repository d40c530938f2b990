"""The vector index protocol (memlab.store.index): three implementations, one file kept in step."""

from __future__ import annotations

import json
import sqlite3
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_helpers import Clock

from memlab.store import IndexOptions, MemoryStore
from memlab.store import index as index_module
from memlab.store.index import AnnoyIndex, ExactIndex, IvfIndex, VectorIndex

DIM = 16
TEXTS = [
    "alice prefers green tea in the morning",
    "bob deployed the staging cluster on friday",
    "carol fixed the flaky integration test",
    "dave owns the release plan for the api",
    "erin benchmarked postgres against sqlite",
]


def _unit(n: int, seed: int, dim: int = DIM) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _make(kind: str) -> VectorIndex:
    if kind == "ivf":
        pytest.importorskip("faiss")
        index = IvfIndex(DIM, nprobe=10**6)  # every cell scanned: exact
        index.TRAIN_MIN = 200
        return index
    if kind == "annoy":
        return AnnoyIndex(DIM, n_trees=20, search_k=10**6, switch_at=50)  # search_k: every node
    return ExactIndex(DIM)


def _held(index: VectorIndex):
    """What a store passes to ``maintain``: the index's vectors, read once."""
    items = index.items()  # type: ignore[attr-defined]
    return lambda: [items]


def _brute(ids: list[int], mat: np.ndarray, q: np.ndarray, k: int) -> list[int]:
    sims = mat @ q
    return [ids[i] for i in np.lexsort((ids, -sims))[:k]]


@pytest.mark.parametrize("kind", ["exact", "annoy", "ivf"])
def test_every_index_finds_the_exact_neighbours_with_their_cosines(kind: str, tmp_path: Path):
    index = _make(kind)
    vecs = _unit(400, seed=1)
    ids = np.arange(1, 401, dtype=np.int64) * 3
    index.add(ids[:300], vecs[:300])
    index.maintain(_held(index))  # annoy: trees; ivf: cells
    index.add(ids[300:], vecs[300:])  # annoy: a tail beside the trees
    index.add(ids[:5], vecs[-5:])  # replaced
    index.remove(ids[5:10])
    held = dict(zip(ids.tolist(), vecs, strict=True))
    held.update(zip(ids[:5].tolist(), vecs[-5:], strict=True))
    for m in ids[5:10].tolist():
        del held[m]
    assert len(index) == len(held)
    keys = list(held)
    mat = np.stack([held[m] for m in keys])
    for q in _unit(20, seed=2):
        found, sims = index.query(q, 10)
        assert found.tolist() == _brute(keys, mat, q, 10)
        np.testing.assert_allclose(sims, mat[[keys.index(m) for m in found]] @ q, atol=1e-5)
    index.save(tmp_path / "i")
    again = _make(kind)
    again.load(tmp_path / "i")
    assert len(again) == len(held)
    q = _unit(1, seed=3)[0]
    assert again.query(q, 10)[0].tolist() == index.query(q, 10)[0].tolist()


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 30)), max_size=60),
    st.integers(0, 10**6),
)
def test_exact_index_holds_the_last_vector_of_each_id(ops: list, seed: int) -> None:
    index = ExactIndex(4)
    model: dict[int, np.ndarray] = {}
    vecs = _unit(len(ops) + 1, seed, dim=4)
    for (add, m), v in zip(ops, vecs, strict=False):
        if add:
            index.add(np.array([m]), v[None, :])
            model[m] = v
        else:
            index.remove(np.array([m]))
            model.pop(m, None)
    assert len(index) == len(model)
    found, sims = index.query(vecs[-1], 100)
    assert sorted(found.tolist()) == sorted(model)
    for m, s in zip(found.tolist(), sims.tolist(), strict=True):
        assert s == pytest.approx(float(model[m] @ vecs[-1]), abs=1e-6)


def test_annoy_builds_trees_only_past_the_switch_point() -> None:
    index = AnnoyIndex(DIM, n_trees=5, switch_at=100)
    index.add(np.arange(100), _unit(100, seed=4))
    assert not index.maintain(_held(index))  # exact search below the switch point
    index.add(np.arange(100, 101), _unit(1, seed=5))
    assert index.maintain(_held(index)) and len(index.tail) == 0 and len(index) == 101


def test_ivf_clusters_at_train_min_and_again_when_its_tail_outgrows_its_share() -> None:
    pytest.importorskip("faiss")
    index, vecs = IvfIndex(DIM, nprobe=10**6), _unit(700, seed=6)
    index.TRAIN_MIN = 200
    index.add(np.arange(199), vecs[:199])
    assert not index.maintain(_held(index)) and index.cells == 0
    index.add(np.arange(199, 400), vecs[199:400])
    assert index.maintain(_held(index)) and index.cells == IvfIndex.cells_for(400)
    assert len(index.tail) == 0 and len(index) == 400
    index.add(np.arange(400, 599), vecs[400:599])  # appended to the tail, not to the cells
    assert not index.maintain(_held(index)) and len(index.tail) == 199
    index.add(np.arange(599, 600), vecs[599:600])
    assert index.maintain(_held(index)) and len(index.tail) == 0 and len(index) == 600
    index.add(np.array([5]), vecs[600:601])  # replaced: out of its cell, into the tail
    index.remove(np.array([6, 450]))
    assert len(index) == 598 and len(index.tail) == 1
    ids, sims = index.query(vecs[600], 2)
    assert ids[0] == 5 and sims[0] == pytest.approx(1.0, abs=1e-5)
    assert 5 not in index.query(vecs[5], 1)[0] and 6 not in index.query(vecs[6], 1)[0]


def test_ivf_clusters_again_from_the_stored_blocks_without_a_copy_of_its_cells() -> None:
    pytest.importorskip("faiss")
    n, vecs = 60_000, _unit(60_000, seed=12, dim=64)
    index = IvfIndex(64)
    index.add(np.arange(10_000), vecs[:10_000])
    assert index.maintain(_held(index))  # the first cells
    index.add(np.arange(10_000, n), vecs[10_000:])  # the tail

    def stored():
        return ((np.arange(s, s + 5_000), vecs[s : s + 5_000]) for s in range(0, n, 5_000))

    tracemalloc.start()
    try:
        assert index.maintain(stored)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.6 * vecs.nbytes  # the training sample and a block, not the cells' vectors
    assert len(index.tail) == 0 and len(index) == n and index.cells == IvfIndex.cells_for(n)
    ids, held = index.items()
    np.testing.assert_array_equal(held[np.argsort(ids)], vecs)


def test_ivf_saves_its_tail_beside_its_cells(tmp_path: Path) -> None:
    faiss = pytest.importorskip("faiss")
    index, vecs = IvfIndex(DIM), _unit(450, seed=13)
    index.TRAIN_MIN = 200
    index.add(np.arange(400), vecs[:400])
    index.maintain(_held(index))
    index.add(np.arange(400, 450), vecs[400:])
    index.save(tmp_path / "i")
    again = IvfIndex(DIM)
    again.load(tmp_path / "i")
    assert len(again) == 450 and len(again.tail) == 50 and again.cells == index.cells
    ids, held = again.items()
    np.testing.assert_array_equal(held[np.argsort(ids)], vecs)
    faiss.write_index(index._ivf, str(tmp_path / "old"))  # a file of cells alone
    again.load(tmp_path / "old")
    assert len(again) == 400 and len(again.tail) == 0


def test_ivf_reads_its_cells_back_copying_each_vector_at_most_once(tmp_path: Path) -> None:
    pytest.importorskip("faiss")
    index, vecs = IvfIndex(128), _unit(3000, seed=10, dim=128)
    index.TRAIN_MIN = 200
    index.add(np.arange(3000), vecs)
    index.maintain(_held(index))
    index.save(tmp_path / "i")
    again = IvfIndex(128)
    tracemalloc.start()
    try:
        again.load(tmp_path / "i")  # the ids alone: no vector copied
        loaded = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        ids, held = again.items()  # one copy
        read = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(again) == 3000 and loaded < vecs.nbytes / 2 and read < 1.5 * vecs.nbytes
    np.testing.assert_array_equal(held[np.argsort(ids)], vecs)


def test_annoy_reads_its_trees_back_into_one_array() -> None:
    index, vecs = AnnoyIndex(128, n_trees=5, switch_at=100), _unit(3000, seed=11, dim=128)
    index.add(np.arange(3000), vecs)
    index.maintain(_held(index))
    index.add(np.arange(3000, 3010), vecs[:10])  # a tail beside the trees
    tracemalloc.start()
    try:
        ids, held = index.items()
        read = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert read < 1.5 * vecs.nbytes  # not a Python float per component
    np.testing.assert_allclose(held[:3000], vecs, atol=1e-6)
    assert ids[3000:].tolist() == list(range(3000, 3010))


def test_cells_grow_as_the_square_root_and_keep_a_sample_per_cell() -> None:
    assert IvfIndex.cells_for(0) == 1 and IvfIndex.cells_for(1_000) == 25  # 40 vectors each
    assert IvfIndex.cells_for(100_000) == 512
    assert IvfIndex.cells_for(1_000_000) == 2048
    assert all(IvfIndex.cells_for(n) * IvfIndex.SAMPLE_PER_CELL <= n for n in (40, 500, 10**5))


# ---------------------------------------------------------------------- the file beside a store
def _fill(store: MemoryStore, n: int, seed: int = 3) -> list[int]:
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(400)]
    texts = [" ".join(rng.choice(words, size=6, replace=False)) for _ in range(n)]
    return [r.memory_id for r in store.ingest_many(texts)]


@pytest.mark.parametrize("kind", ["exact", "annoy", "ivf"])
def test_a_store_reopens_from_its_index_file(tmp_path: Path, kind: str) -> None:
    if kind == "ivf":
        pytest.importorskip("faiss")
    path = tmp_path / "s.db"
    with MemoryStore(path, index=IndexOptions(kind=kind, switch_at=3)) as store:
        store.ingest_many(TEXTS)
        for t in TEXTS:
            assert store.search(t, k=1, mark_accessed=False)[0].memory.content == t
    assert Path(f"{path}.{kind}").exists() and Path(f"{path}.{kind}.json").exists()
    with MemoryStore(path, index=IndexOptions(kind=kind, switch_at=3)) as store:
        assert store.index.last_load == "loaded" and store.index.rebuilds == 0
        assert store.search("flaky test", k=1, mark_accessed=False)[0].memory.content == TEXTS[2]


def test_a_small_store_reopens_without_annoy_installed(tmp_path: Path, monkeypatch) -> None:
    """The default index stays exact below ``switch_at``: opening a store needs no ``ann`` extra."""
    monkeypatch.setitem(sys.modules, "annoy", None)  # an import of annoy now fails
    path = tmp_path / "s.db"
    with MemoryStore(path) as store:
        store.ingest_many(TEXTS)
    with MemoryStore(path) as store:
        assert store.index.last_load == "loaded" and store.index.rebuilds == 0
        assert store.search("flaky test", k=1, mark_accessed=False)[0].memory.content == TEXTS[2]


@pytest.mark.parametrize(
    "damage", ["delete", "corrupt", "truncate", "manifest", "foreign", "stale", "kind", "huge"]
)
def test_a_missing_stale_or_corrupt_index_is_rebuilt(tmp_path, clock: Clock, damage: str) -> None:
    path = tmp_path / "m.db"
    options = IndexOptions(switch_at=20, n_trees=5)
    s = MemoryStore(path, clock=clock, index=options)
    ids = _fill(s, 60)
    s.close()
    annoy_file, manifest = tmp_path / "m.db.annoy", tmp_path / "m.db.annoy.json"
    if damage == "delete":
        annoy_file.unlink()
    elif damage == "corrupt":
        data = bytearray(annoy_file.read_bytes())
        data[100:200] = b"\xff" * 100
        annoy_file.write_bytes(bytes(data))
    elif damage == "truncate":
        annoy_file.write_bytes(annoy_file.read_bytes()[:1000])
    elif damage == "manifest":
        manifest.write_text("{not json")
    elif damage == "huge":  # a number SQLite cannot hold
        manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "max_seq": 1e30}))
    elif damage in ("foreign", "kind"):
        m = json.loads(manifest.read_text())
        m["store_uid" if damage == "foreign" else "n_trees"] = (
            "another" if damage == "foreign" else 9
        )
        manifest.write_text(json.dumps(m))
    elif damage == "stale":  # the covered rows changed under the file: other vectors
        conn = sqlite3.connect(path)
        conn.execute(
            "UPDATE memories SET embedding = ?", (np.full(384, 384**-0.5, dtype="<f4").tobytes(),)
        )
        conn.commit()
        conn.close()
    s = MemoryStore(path, clock=clock, index=options)
    assert s.index.last_load != "loaded" and s.index.rebuilds == 1
    if damage != "stale":
        text = s.get(ids[7]).content
        assert s.rankings(text, 1)[1][0][0] == ids[7]
    s.close()


@pytest.mark.parametrize("kind", ["annoy", "ivf"])
def test_a_rolled_back_write_and_a_purge_leave_no_vector_behind(tmp_path: Path, kind: str) -> None:
    if kind == "ivf":
        pytest.importorskip("faiss")
    with MemoryStore(tmp_path / "s.db", index=IndexOptions(kind=kind, switch_at=2)) as store:
        ids = [r.memory_id for r in store.ingest_many(TEXTS[:3])]
        core = store.core
        before = len(core.index.index)
        meta = {"project": None, "topics": [], "layer": "context", "entity": None,
                "altitude": "implementation", "importance": 0.5}  # fmt: skip
        with pytest.raises(RuntimeError), core.write():
            core.create(TEXTS[3], meta, core.embed([TEXTS[3]])[0], 0.0)
            assert len(core.index.index) == before + 1
            raise RuntimeError("roll back")
        assert len(core.index.index) == before
        assert TEXTS[3] not in [h.memory.content for h in store.search(TEXTS[3], k=5)]
        store.purge(ids[1])
        assert len(core.index.index) == before - 1
        assert all(m != ids[1] for m, _ in core.index.query_many(core.embed([TEXTS[1]]), 5)[0])


def test_re_embedded_vectors_replace_the_trees_copy(tmp_path: Path, clock: Clock) -> None:
    s = MemoryStore(tmp_path / "m.db", clock=clock, index=IndexOptions(switch_at=10, n_trees=5))
    ids = _fill(s, 40)
    s.rebuild_index()
    old_text = s.get(ids[0]).content
    with s.core.write():
        s.core.set_content(ids[0], "replaced by kangaroo text", None, clock.now.timestamp())
    assert dict(s.rankings(old_text, 5)[1]).get(ids[0], 0.0) < 0.5
    assert s.rankings("replaced by kangaroo text", 1)[1][0] == (ids[0], pytest.approx(1.0))
    s.close()


@pytest.mark.parametrize("kind", ["annoy", "ivf"])
def test_rows_written_by_another_connection_are_added(tmp_path: Path, kind: str) -> None:
    if kind == "ivf":
        pytest.importorskip("faiss")
    path = tmp_path / "s.db"
    with MemoryStore(path, index=kind) as a, MemoryStore(path, index=kind) as b:
        a.ingest_many(TEXTS[:2])
        b.ingest_many(TEXTS[2:])
        assert a.search(TEXTS[4], k=1, mark_accessed=False)[0].memory.content == TEXTS[4]


def test_the_gate_decides_with_ivf_as_with_exact_search(tmp_path: Path) -> None:
    pytest.importorskip("faiss")
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(300)]
    base = [f"note {i} " + " ".join(rng.choice(words, size=8)) for i in range(700)]
    texts = base + [t + " again" for t in base[:60]] + base[100:130]  # near copies and copies
    decisions = {}
    for kind in ("exact", "ivf"):
        options = IndexOptions(kind=kind, search_k=10**6)  # every cell: the exact neighbours
        with MemoryStore(tmp_path / f"{kind}.db", index=options) as store:
            store.core.index.index.TRAIN_MIN = 300  # type: ignore[attr-defined]
            results = store.ingest_many(texts, batch_size=100)
            decisions[kind] = [(r.decision.value, r.nearest_id) for r in results]
    assert decisions["ivf"] == decisions["exact"]
    assert {d for d, _ in decisions["ivf"]} > {"create"}


@pytest.mark.parametrize("kind", ["annoy", "ivf"])
def test_an_import_is_read_into_the_index_at_once_after_it_commits(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if kind == "ivf":
        pytest.importorskip("faiss")
    monkeypatch.setattr(index_module, "BUILD_BLOCK", 40)
    monkeypatch.setattr(IvfIndex, "TRAIN_MIN", 100)
    options = IndexOptions(kind=kind, search_k=10**6, switch_at=50)  # every cell or node
    with MemoryStore(tmp_path / "a.db", index="exact") as source:
        ids = _fill(source, 300)
        source.export_jsonl(tmp_path / "a.jsonl")
        vectors = source.core.embed([source.get(m).content for m in ids])
    with MemoryStore(tmp_path / "b.db", index=options) as store:
        index = store.core.index
        store.ingest_many(TEXTS)
        added = []
        monkeypatch.setattr(index.index, "add", lambda *a: added.append(a), raising=False)
        rebuilds = index.rebuilds
        store.import_jsonl(tmp_path / "a.jsonl")
        assert not added and index.rebuilds == rebuilds + 1  # nothing appended: one build
        assert len(index.index) == 300 + len(TEXTS) == len(store)
        if kind == "ivf":
            assert index.index.cells == IvfIndex.cells_for(len(store))  # type: ignore[attr-defined]
        found = [hits[0] for hits in index.query_many(vectors, 1)]
        contents = [store.get(m).content for m, _ in found]
        assert contents == _texts(tmp_path / "a.jsonl")
        assert all(sim == pytest.approx(1.0, abs=1e-5) for _, sim in found)


def test_a_refused_import_leaves_the_index_as_it_was(tmp_path: Path) -> None:
    export = tmp_path / "a.jsonl"
    with MemoryStore(tmp_path / "a.db") as source:
        source.ingest_many(TEXTS)
        source.export_jsonl(export)
    lines = export.read_text().splitlines()
    export.write_text("\n".join([*lines, "{not json"]) + "\n")
    with MemoryStore(tmp_path / "b.db") as store:
        store.ingest("a memory kept")
        with pytest.raises(ValueError, match="nothing imported"):
            store.import_jsonl(export)
        assert len(store.core.index.index) == len(store) == 1
        store.ingest("another memory kept")
        assert len(store.core.index.index) == len(store) == 2


def _texts(export: Path) -> list[str]:
    return [json.loads(line)["content"] for line in export.read_text().splitlines()[1:]]


def test_a_failed_clustering_is_built_again_at_the_next_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("faiss")
    monkeypatch.setattr(IvfIndex, "TRAIN_MIN", 100)
    stored = index_module.IndexFile._stored

    def failing(self, conn):
        read = stored(self, conn)
        calls = []

        def blocks():
            calls.append(1)
            if len(calls) > 1:  # the cells' fill, after the old ones went
                raise OSError("disk read failed")
            return read()

        return blocks

    with MemoryStore(tmp_path / "s.db", index=IndexOptions("ivf", search_k=10**6)) as store:
        monkeypatch.setattr(index_module.IndexFile, "_stored", failing)
        with pytest.raises(OSError, match="disk read failed"):
            _fill(store, 150)  # committed; clustering the cells fails after
        monkeypatch.setattr(index_module.IndexFile, "_stored", stored)
        n = len(store)  # the ingest stopped after the chunk whose clustering failed
        assert n >= 100
        for m in (1, n // 2, n):
            assert store.rankings(store.get(m).content, 1)[1][0] == (m, pytest.approx(1.0))
        assert len(store.core.index.index) == n


@pytest.mark.parametrize("kind", ["exact", "annoy"])
def test_a_write_does_not_skip_a_vector_another_connection_wrote_before_it(
    tmp_path: Path, clock: Clock, kind: str
) -> None:
    """A consolidation in ``a`` after ``b`` wrote a memory leaves ``b``'s vector to ``a``'s
    next read, in this session and in the index file ``a`` saves."""
    path = tmp_path / "s.db"
    a = MemoryStore(path, index=kind, clock=clock)
    a.ingest_many([TEXTS[0], "alice lives in porto"], entity="alice")
    with MemoryStore(path, index=kind, clock=clock) as b:
        written = b.ingest(TEXTS[3]).memory_id
        clock.advance(days=400)
        assert a.consolidate()  # a write in ``a`` that takes the next embed_seq
    assert a.rankings(TEXTS[3], 3)[1][0] == (written, pytest.approx(1.0))
    a.close()
    with MemoryStore(path, index=kind, clock=clock) as again:
        assert again.core.index.last_load == "loaded"
        assert again.rankings(TEXTS[3], 3)[1][0] == (written, pytest.approx(1.0))
