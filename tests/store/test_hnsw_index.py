"""The HNSW vector index option (memlab.store.hnsw, ``MemoryStore(index="hnsw")``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("usearch")

from memlab.store import MemoryStore  # noqa: E402
from memlab.store.hnsw import HnswIndex  # noqa: E402

TEXTS = [
    "alice prefers green tea in the morning",
    "bob deployed the staging cluster on friday",
    "carol fixed the flaky integration test",
    "dave owns the release plan for the api",
    "erin benchmarked postgres against sqlite",
]


def test_hnsw_store_finds_what_it_holds_and_reopens_from_its_file(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with MemoryStore(path, index="hnsw") as store:
        store.ingest_many(TEXTS)
        for t in TEXTS:
            hit = store.search(t, k=1, mark_accessed=False)[0]
            assert hit.memory.content == t
    assert (tmp_path / "s.db.hnsw").exists()
    with MemoryStore(path, index="hnsw") as store:
        assert store.core.index.last_load == "loaded"
        assert store.search("flaky test", k=1, mark_accessed=False)[0].memory.content == TEXTS[2]


def test_exact_equivalence_with_numpy_on_a_small_store(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    index = HnswIndex(16, "test", None, search_k=200, dtype="f32")
    vecs = rng.standard_normal((300, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    for i, v in enumerate(vecs):
        index.put(i + 1, v, i + 1)
    q = vecs[7]
    got = [m for m, _ in index.query(q, 5)]
    want = (np.argsort(-(vecs @ q))[:5] + 1).tolist()
    assert got == want
    sims = dict(index.query(q, 5))
    assert sims[8] == pytest.approx(1.0, abs=1e-5)


def test_rolled_back_write_leaves_no_vector_behind(tmp_path: Path) -> None:
    with MemoryStore(tmp_path / "s.db", index="hnsw") as store:
        store.ingest_many(TEXTS[:2])
        core = store.core
        before = core.index.info()["indexed"]
        with pytest.raises(RuntimeError), core.write():
            core.create(TEXTS[3], _meta(), core.embed([TEXTS[3]])[0], 0.0)
            assert core.index.info()["indexed"] == before + 1
            raise RuntimeError("roll back")
        assert core.index.info()["indexed"] == before
        hits = store.search(TEXTS[3], k=5, mark_accessed=False)
        assert all(h.memory.content != TEXTS[3] for h in hits)


def test_purged_memory_leaves_the_graph(tmp_path: Path) -> None:
    with MemoryStore(tmp_path / "s.db", index="hnsw") as store:
        ids = [r.memory_id for r in store.ingest_many(TEXTS)]
        with store.core.write():
            store.core.delete_memory(ids[1])
        assert store.core.index.info()["indexed"] == len(TEXTS) - 1
        assert all(
            m != ids[1] for m, _ in store.core.index.query(store.core.embed([TEXTS[1]])[0], 5)
        )


@pytest.mark.parametrize("damage", ["manifest", "file", "foreign"])
def test_damaged_or_foreign_graph_is_rebuilt(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "s.db"
    with MemoryStore(path, index="hnsw") as store:
        store.ingest_many(TEXTS)
    graph, manifest = tmp_path / "s.db.hnsw", tmp_path / "s.db.hnsw.json"
    if damage == "manifest":
        manifest.write_text("{not json")
    elif damage == "file":
        data = bytearray(graph.read_bytes())
        data[len(data) // 2] ^= 0xFF
        graph.write_bytes(bytes(data))
    else:
        m = json.loads(manifest.read_text())
        m["store_uid"] = "another"
        manifest.write_text(json.dumps(m))
    with MemoryStore(path, index="hnsw") as store:
        assert store.core.index.last_load != "loaded"
        assert store.core.index.rebuilds == 1
        assert store.search(TEXTS[4], k=1, mark_accessed=False)[0].memory.content == TEXTS[4]


def test_rows_written_by_another_connection_are_added(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with MemoryStore(path, index="hnsw") as a, MemoryStore(path, index="hnsw") as b:
        a.ingest_many(TEXTS[:2])
        b.ingest_many(TEXTS[2:])
        assert a.search(TEXTS[4], k=1, mark_accessed=False)[0].memory.content == TEXTS[4]


def test_bad_index_kind_is_refused_and_creates_no_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="index must be one of"):
        MemoryStore(tmp_path / "s.db", index="faiss")
    assert not (tmp_path / "s.db").exists()


def _meta() -> dict:
    return {"project": None, "topics": [], "layer": "context", "entity": None,
            "altitude": "implementation", "importance": 0.5}  # fmt: skip


def test_vectors_put_in_a_write_are_found_before_and_after_commit() -> None:
    """Puts are added to the graph in one batch; a query in the same write already sees them,
    a rolled-back write's never reach the graph, a purge of a pending vector removes it."""
    rng = np.random.default_rng(3)
    vecs = rng.standard_normal((40, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    index = HnswIndex(16, "test", None, search_k=200, dtype="f32")
    for i in range(20):
        index.put(i + 1, vecs[i], i + 1)
    assert index.query(vecs[3], 1)[0][0] == 4  # pending, seen by the query
    index.committed()
    for i in range(20, 40):
        index.put(i + 1, vecs[i], i + 1)
    index.drop(40)  # purged while pending
    index.invalidate_tail()  # the write rolled back: none of 21..40 enters the graph
    found = {m for m, _ in index.query(vecs[25], 40)}
    assert found == set(range(1, 21))
    batch = index.query_many(np.stack([vecs[0], np.zeros(16, np.float32), vecs[5]]), 2)
    assert batch[0][0][0] == 1 and batch[1] == [] and batch[2][0][0] == 6


def _saved(graph_manifest: Path, key: str) -> Any:
    """A setting recorded in the saved graph's manifest."""
    return json.loads(graph_manifest.read_text())[key]


def test_the_graph_degree_is_given_once_and_kept(tmp_path: Path) -> None:
    path, manifest = tmp_path / "s.db", tmp_path / "s.db.hnsw.json"
    with MemoryStore(path, index="hnsw", hnsw_connectivity=24) as store:
        store.ingest_many(TEXTS)
        assert store.core.index.info()["connectivity"] == 24
    assert _saved(manifest, "connectivity") == 24
    with MemoryStore(path, index="hnsw") as store:  # not given: the saved graph's degree
        assert store.core.index.last_load == "loaded" and store.core.index.connectivity == 24
        store.rebuild_index()  # a rebuild keeps it
        assert store.core.index.info()["connectivity"] == 24
    assert _saved(manifest, "connectivity") == 24
    graph = tmp_path / "s.db.hnsw"
    data = bytearray(graph.read_bytes())
    data[len(data) // 2] ^= 0xFF
    graph.write_bytes(bytes(data))
    with MemoryStore(path, index="hnsw") as store:  # a damaged graph is rebuilt at its degree
        assert store.core.index.last_load != "loaded" and store.core.index.connectivity == 24
    with MemoryStore(path, index="hnsw", hnsw_connectivity=8) as store:  # another: rebuilt
        assert store.core.index.last_load != "loaded" and store.core.index.rebuilds == 1
        assert store.core.index.info()["connectivity"] == 8
        for t in TEXTS:
            assert store.search(t, k=1, mark_accessed=False)[0].memory.content == t
    assert _saved(manifest, "connectivity") == 8
    graph.unlink()
    manifest.unlink()
    with MemoryStore(path, index="hnsw") as store:  # nothing saved: the default degree
        assert store.core.index.connectivity == HnswIndex.DEFAULT_CONNECTIVITY == 32


@pytest.mark.parametrize("bad", [1, 5000, True, 2.5, "32"])
def test_a_bad_graph_degree_is_refused_and_creates_no_file(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ValueError, match="connectivity must be an integer"):
        MemoryStore(tmp_path / "s.db", index="hnsw", hnsw_connectivity=bad)
    assert not (tmp_path / "s.db").exists()


def test_a_graph_degree_without_a_graph_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="index='hnsw'"):
        MemoryStore(tmp_path / "s.db", hnsw_connectivity=32)
    assert not (tmp_path / "s.db").exists()


def test_the_graph_holds_8_bit_vectors_by_default_and_keeps_the_saved_dtype(
    tmp_path: Path,
) -> None:
    path, manifest = tmp_path / "s.db", tmp_path / "s.db.hnsw.json"
    with MemoryStore(path, index="hnsw") as store:
        store.ingest_many(TEXTS)
        assert store.core.index.info()["dtype"] == HnswIndex.DEFAULT_DTYPE == "i8"
        assert not store.core.index.scores_exact
    assert _saved(manifest, "dtype") == "i8"
    with MemoryStore(path, index="hnsw", hnsw_dtype="f16") as store:  # another: rebuilt
        assert store.core.index.last_load != "loaded" and store.core.index.rebuilds == 1
    assert _saved(manifest, "dtype") == "f16"
    with MemoryStore(path, index="hnsw") as store:  # not given: the saved graph's
        assert store.core.index.last_load == "loaded" and store.core.index.dtype == "f16"
        store.rebuild_index()
    assert _saved(manifest, "dtype") == "f16"
    with MemoryStore(path, index="hnsw", hnsw_dtype="f32") as store:
        assert store.core.index.scores_exact
        for t in TEXTS:
            assert store.search(t, k=1, mark_accessed=False)[0].memory.content == t


@pytest.mark.parametrize("bad", ["f64", "int8", 8, True])
def test_a_bad_graph_dtype_is_refused_and_creates_no_file(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ValueError, match="dtype must be one of"):
        MemoryStore(tmp_path / "s.db", index="hnsw", hnsw_dtype=bad)
    assert not (tmp_path / "s.db").exists()
    with pytest.raises(ValueError, match="index='hnsw'"):
        MemoryStore(tmp_path / "s.db", hnsw_dtype="f16")
    assert not (tmp_path / "s.db").exists()


def _stored_matrix(store: MemoryStore) -> tuple[list[int], np.ndarray]:
    rows = store.core.execute("SELECT id, embedding FROM memories ORDER BY id").fetchall()
    return [int(r[0]) for r in rows], np.stack([np.frombuffer(r[1], dtype="<f4") for r in rows])


@pytest.mark.parametrize("dtype", ["i8", "f16"])
def test_a_quantised_graphs_hits_are_rescored_from_the_stored_vectors(
    tmp_path: Path, dtype: str
) -> None:
    """The similarities of a search and of the gate are the stored float32 vectors' cosines
    whatever the graph holds (quantised, they differ from them by about 1e-3)."""
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(60)]
    texts = [" ".join(rng.choice(words, size=8)) for _ in range(400)]
    with MemoryStore(tmp_path / "s.db", index="hnsw", hnsw_dtype=dtype) as store:
        store.core.index.search_k = 400  # every vector reached: the ranking is the exact one
        store.ingest_many(texts)
        ids, mat = _stored_matrix(store)
        for q in texts[:20]:
            qvec = store.core.embed_query(q)
            exact = mat @ qvec
            with store.core.read():  # as a search does: its top 10 of 30 candidates
                hits = store.core.vector_search(qvec, 30)
            order = np.argsort(-exact, kind="stable")[:10]
            assert [m for m, _ in hits[:10]] == [ids[j] for j in order]
            for m, s in hits:
                assert s == pytest.approx(float(exact[ids.index(m)]), abs=1e-6)
        # the gate judges a near copy by its exact similarity to the stored memory
        near = texts[0] + " w1"
        result = store.ingest(near)
        assert result.similarity is not None and result.nearest_id is not None
        target = ids.index(result.nearest_id)
        want = float(mat[target] @ store.core.embed([near])[0])
        assert result.similarity == pytest.approx(want, abs=1e-6)


def test_the_gates_candidates_of_a_small_namespace_are_found_past_a_large_one(
    tmp_path: Path,
) -> None:
    """The graph is shared by the file's namespaces: when its nearest hits are all of another
    namespace, the re-scored candidate lists are short and the graph is asked for more."""
    path = tmp_path / "s.db"
    with MemoryStore(path, index="hnsw", namespace="big") as big:
        big.ingest_many([f"deploy the staging cluster number {i} tonight" for i in range(120)])
    mine = ["alice prefers green tea", "carol fixed the flaky test", "erin likes sqlite"]
    with MemoryStore(path, index="hnsw", namespace="small") as small:
        small.ingest_many(mine)
        qvec = small.core.embed(["deploy the staging cluster tonight"])
        with small.core.read():
            found = small.core.vector_candidates(qvec, 3, columns="id, content")
        assert sorted(found.rows[m]["content"] for m, _ in found.scored[0]) == sorted(mine)


def test_the_shard_count_is_given_once_and_kept(tmp_path: Path) -> None:
    path, manifest = tmp_path / "s.db", tmp_path / "s.db.hnsw.json"
    with MemoryStore(path, index="hnsw") as store:
        store.ingest_many(TEXTS)
        assert store.core.index.info()["shards"] == HnswIndex.DEFAULT_SHARDS == 1
    assert _saved(manifest, "shards") == 1
    with MemoryStore(path, index="hnsw", hnsw_shards=2) as store:  # another: rebuilt
        assert store.core.index.last_load != "loaded" and store.core.index.rebuilds == 1
    assert _saved(manifest, "shards") == 2
    assert sum(_saved(manifest, "shard_sizes")) == (tmp_path / "s.db.hnsw").stat().st_size
    with MemoryStore(path, index="hnsw", hnsw_shards=3) as store:  # another: rebuilt
        assert store.core.index.last_load != "loaded" and store.core.index.rebuilds == 1
        for t in TEXTS:
            assert store.search(t, k=1, mark_accessed=False)[0].memory.content == t
    assert _saved(manifest, "shards") == 3
    with MemoryStore(path, index="hnsw") as store:  # not given: the saved graph's
        assert store.core.index.last_load == "loaded" and store.core.index.shards == 3
        store.rebuild_index()
        assert store.core.index.info()["shards"] == 3
    with MemoryStore(path, index="hnsw", hnsw_shards=1) as store:  # one graph: a usearch file
        assert store.core.index.rebuilds == 1
        assert store.search(TEXTS[0], k=1, mark_accessed=False)[0].memory.content == TEXTS[0]
    assert _saved(manifest, "shard_sizes") == [(tmp_path / "s.db.hnsw").stat().st_size]
    with MemoryStore(path, index="hnsw") as store:
        assert store.core.index.last_load == "loaded" and store.core.index.shards == 1
        assert store.search(TEXTS[1], k=1, mark_accessed=False)[0].memory.content == TEXTS[1]


def test_a_graph_saved_before_shards_is_rebuilt_once(tmp_path: Path) -> None:
    """A manifest of version 1 (one graph, no shard sizes) is not trusted: rebuilt, then kept."""
    path, manifest = tmp_path / "s.db", tmp_path / "s.db.hnsw.json"
    with MemoryStore(path, index="hnsw", hnsw_shards=2) as store:
        store.ingest_many(TEXTS)
    old = json.loads(manifest.read_text())
    old["version"] = 1
    del old["shards"], old["shard_sizes"]
    manifest.write_text(json.dumps(old))
    with MemoryStore(path, index="hnsw") as store:
        assert store.core.index.last_load != "loaded" and store.core.index.rebuilds == 1
        assert store.core.index.shards == HnswIndex.DEFAULT_SHARDS
        assert store.search(TEXTS[3], k=1, mark_accessed=False)[0].memory.content == TEXTS[3]
    with MemoryStore(path, index="hnsw") as store:
        assert store.core.index.last_load == "loaded"


@pytest.mark.parametrize("bad", [0, 65, True, 1.5, "2"])
def test_a_bad_shard_count_is_refused_and_creates_no_file(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ValueError, match="shards must be an integer"):
        MemoryStore(tmp_path / "s.db", index="hnsw", hnsw_shards=bad)
    assert not (tmp_path / "s.db").exists()
    with pytest.raises(ValueError, match="index='hnsw'"):
        MemoryStore(tmp_path / "s.db", hnsw_shards=2)
    assert not (tmp_path / "s.db").exists()
