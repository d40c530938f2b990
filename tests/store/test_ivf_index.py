"""The IVF vector index option (memlab.store.ivf, ``MemoryStore(index="ivf")``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("faiss")

from memlab.gate import Decision, Gate  # noqa: E402
from memlab.store import MemoryStore  # noqa: E402
from memlab.store.ingest import N_CANDIDATES, N_JUDGED, N_RESCORED  # noqa: E402
from memlab.store.ivf import IvfIndex, cells_for  # noqa: E402

TEXTS = [
    "alice prefers green tea in the morning",
    "bob deployed the staging cluster on friday",
    "carol fixed the flaky integration test",
    "dave owns the release plan for the api",
    "erin benchmarked postgres against sqlite",
]


def _texts(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(300)]
    return [f"note {i} " + " ".join(rng.choice(words, size=8)) for i in range(n)]


def _meta() -> dict:
    return {"project": None, "topics": [], "layer": "context", "entity": None,
            "altitude": "implementation", "importance": 0.5}  # fmt: skip


def _stored_matrix(store: MemoryStore) -> tuple[list[int], np.ndarray]:
    rows = store.core.execute("SELECT id, embedding FROM memories ORDER BY id").fetchall()
    return [int(r[0]) for r in rows], np.stack([np.frombuffer(r[1], dtype="<f4") for r in rows])


def test_ivf_store_finds_what_it_holds_and_reopens_from_its_file(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with MemoryStore(path, index="ivf") as store:
        store.ingest_many(TEXTS)
        for t in TEXTS:
            assert store.search(t, k=1, mark_accessed=False)[0].memory.content == t
    assert (tmp_path / "s.db.ivf").exists() and (tmp_path / "s.db.ivf.json").exists()
    with MemoryStore(path, index="ivf") as store:
        assert store.core.index.last_load == "loaded"
        assert store.search("flaky test", k=1, mark_accessed=False)[0].memory.content == TEXTS[2]


def test_cells_for_grows_as_the_square_root_and_keeps_a_sample_per_cell() -> None:
    assert [cells_for(n) for n in (10_000, 40_000, 160_000, 640_000, 1_000_000)] == [
        250, 512, 1024, 2048, 2048,
    ]  # fmt: skip
    assert cells_for(1000) == 25 and cells_for(10) == 1 and cells_for(0) == 1


def test_the_cells_are_clustered_as_the_store_grows_and_find_the_exact_neighbours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below TRAIN_MIN one exact list; then clustered from SQLite at TRAIN_MIN and again at
    each GROWTH-fold; a search of every cell re-scored is the exact ranking, and a reopened
    store loads the clustered cells."""
    monkeypatch.setattr(IvfIndex, "TRAIN_MIN", 300)
    texts = _texts(1600)
    path = tmp_path / "s.db"
    with MemoryStore(path, index="ivf") as store:
        index = store.core.index
        store.ingest_many(texts[:200], batch_size=100)
        assert index.info()["cells"] == 0 and index.rebuilds == 1  # the rebuild at open
        store.ingest_many(texts[200:400], batch_size=100)
        first = index.info()
        assert (
            first["cells"] == cells_for(first["trained_on"]) and 300 <= first["trained_on"] <= 400
        )
        store.ingest_many(texts[400:], batch_size=100)
        info = index.info()
        assert info["trained_on"] > 4 * first["trained_on"] - 100 and info["cells"] > first["cells"]
        assert info["indexed"] == store.core.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        index.search_k = info["cells"]  # every cell: the re-scored ranking is the exact one
        ids, mat = _stored_matrix(store)
        for q in texts[:20]:
            qvec = store.core.embed_query(q)
            exact = mat @ qvec
            with store.core.read():
                hits = store.core.vector_search(qvec, 30)
            order = np.argsort(-exact, kind="stable")[:10]
            assert [m for m, _ in hits[:10]] == [ids[j] for j in order]
            for m, s in hits:
                assert s == pytest.approx(float(exact[ids.index(m)]), abs=1e-6)
        index.search_k = -1
        assert index.default_ef() == int(np.ceil(info["cells"] / 8))
    with MemoryStore(path, index="ivf") as store:
        assert store.core.index.last_load == "loaded"
        assert store.core.index.info()["cells"] == info["cells"]
        assert store.search(texts[7], k=1, mark_accessed=False)[0].memory.content == texts[7]


def test_the_gate_decides_as_with_exact_search_on_the_same_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(IvfIndex, "TRAIN_MIN", 300)
    base = _texts(700, seed=1)
    texts = base + [t + " again" for t in base[:60]] + base[100:130]  # near copies and copies
    decisions = {}
    for kind in ("annoy", "ivf"):  # annoy: 790 vectors, all in its exact tail
        with MemoryStore(tmp_path / f"{kind}.db", index=kind) as store:
            results = store.ingest_many(texts, batch_size=100)
            decisions[kind] = [(r.decision.value, r.nearest_id) for r in results]
    assert decisions["ivf"] == decisions["annoy"]
    assert {d for d, _ in decisions["ivf"]} > {"create"}


def test_a_failed_clustering_keeps_the_cells_in_place_and_waits_to_try_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No memory leaves search when clustering again fails: the cells in place answer, the
    failure is a warning, and the next try waits until the index has doubled."""
    from memlab.store.ivf_cells import IvfCells

    monkeypatch.setattr(IvfIndex, "TRAIN_MIN", 300)
    texts = _texts(1500, seed=2)
    with MemoryStore(tmp_path / "s.db", index="ivf") as store:
        store.ingest_many(texts[:400], batch_size=100)
        index = store.core.index
        first = index.info()
        assert first["cells"] > 0

        def fail(self: IvfCells, sample: np.ndarray, *, cells: int) -> None:
            raise MemoryError("no memory for the sample")

        monkeypatch.setattr(IvfCells, "train", fail)
        with pytest.warns(UserWarning, match="not clustered again"):
            store.ingest_many(texts[400:1400], batch_size=100)
        info = index.info()
        assert "no memory for the sample" in info["last_error"]
        assert info["cells"] == first["cells"] and info["trained_on"] == first["trained_on"]
        count = store.core.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        assert info["indexed"] == count
        index.search_k = info["cells"]
        for t in texts[:1400:97]:
            assert store.search(t, k=1, mark_accessed=False)[0].memory.content == t
        assert not index.outgrown()  # waits for twice the count of the failed try
        monkeypatch.undo()


def test_rolled_back_write_and_purge_leave_no_vector_behind(tmp_path: Path) -> None:
    with MemoryStore(tmp_path / "s.db", index="ivf") as store:
        ids = [r.memory_id for r in store.ingest_many(TEXTS[:3])]
        core = store.core
        before = core.index.info()["indexed"]
        with pytest.raises(RuntimeError), core.write():
            core.create(TEXTS[3], _meta(), core.embed([TEXTS[3]])[0], 0.0)
            assert core.index.info()["indexed"] == before + 1
            raise RuntimeError("roll back")
        assert core.index.info()["indexed"] == before
        assert all(
            h.memory.content != TEXTS[3] for h in store.search(TEXTS[3], k=5, mark_accessed=False)
        )
        with core.write():
            core.delete_memory(ids[1])
        assert core.index.info()["indexed"] == before - 1
        assert all(m != ids[1] for m, _ in core.index.query(core.embed([TEXTS[1]])[0], 5))


@pytest.mark.parametrize("damage", ["manifest", "file", "foreign", "cells"])
def test_damaged_or_foreign_cells_are_rebuilt(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "s.db"
    with MemoryStore(path, index="ivf") as store:
        store.ingest_many(TEXTS)
    cells, manifest = tmp_path / "s.db.ivf", tmp_path / "s.db.ivf.json"
    if damage == "manifest":
        manifest.write_text("{not json")
    elif damage == "file":
        data = bytearray(cells.read_bytes())
        data[len(data) // 2] ^= 0xFF
        cells.write_bytes(bytes(data))
    else:
        m = json.loads(manifest.read_text())
        m["store_uid" if damage == "foreign" else "cells"] = "another" if damage == "foreign" else 7
        manifest.write_text(json.dumps(m))
    with MemoryStore(path, index="ivf") as store:
        assert store.core.index.last_load != "loaded"
        assert store.core.index.rebuilds == 1
        assert store.search(TEXTS[4], k=1, mark_accessed=False)[0].memory.content == TEXTS[4]


def test_rows_written_by_another_connection_are_added(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with MemoryStore(path, index="ivf") as a, MemoryStore(path, index="ivf") as b:
        a.ingest_many(TEXTS[:2])
        b.ingest_many(TEXTS[2:])
        assert a.search(TEXTS[4], k=1, mark_accessed=False)[0].memory.content == TEXTS[4]


def test_the_saved_dtype_is_kept_and_another_one_given_rebuilds(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    index = IvfIndex(384, "hashing", path)
    assert index.dtype == "i8"
    with MemoryStore(path, index="ivf") as store:
        store.ingest_many(TEXTS)
    assert json.loads((tmp_path / "s.db.ivf.json").read_text())["dtype"] == "i8"
    with MemoryStore(path, index="ivf") as store:
        assert store.core.index.last_load == "loaded" and store.core.index.dtype == "i8"


@pytest.mark.parametrize("bad", [{"dtype": "f16"}, {"dtype": 8}, {"search_k": 0}])
def test_bad_settings_are_refused(tmp_path: Path, bad: dict) -> None:
    with pytest.raises(ValueError):
        IvfIndex(16, "test", tmp_path / "s.db.ivf", **bad)
    assert not (tmp_path / "s.db.ivf").exists()


def test_ingest_reaches_an_in_scope_memory_past_the_rescored_hits(tmp_path: Path) -> None:
    """Ingest re-scores only a text's first ``N_RESCORED`` hits up front; when fewer than
    ``N_JUDGED`` of them are in the text's project, it re-scores the rest of the hits, so a
    memory of the project found deeper is still judged (here: the same fact, reinforced)."""
    fact = "the deploy key of the billing service rotates every ninety days"
    with MemoryStore(tmp_path / "s.db", index="ivf") as store:
        mine = store.ingest(fact, project="mine").memory_id
        for p in range(N_RESCORED + 4):  # the same fact in other projects (ties: newest first)
            store.ingest(fact, project=f"other-{p}")
        vec = store.core.embed([fact])
        with store.core.read():
            found = store.core.vector_candidates(vec, N_CANDIDATES, rescore=N_RESCORED)
        assert len(found.scored[0]) == N_RESCORED
        assert mine in found.unscored[0]  # a precondition: the project's memory is deeper
        result = store.ingest(fact, project="mine")
        assert result.decision is Decision.REINFORCE
        assert result.memory_id == mine
        assert result.similarity == pytest.approx(1.0, abs=1e-6)


def test_candidates_are_the_exact_cosines_of_the_first_hits_best_first(tmp_path: Path) -> None:
    """Ingest's candidates (``vector_candidates`` of a quantised index): each text's first
    ``N_RESCORED`` hits of the index re-scored by the exact cosine of their stored vectors
    (equal to ``exact_similarities``, to the last bit), best first with ties by id; the rest
    of the hits come unscored, in the index's order. With another namespace in the file, its
    memories are never among them, and a text left short is re-scored over a wider search."""
    texts = _texts(400, seed=5)
    with MemoryStore(tmp_path / "s.db", index="ivf", gate=Gate.off()) as store:
        store.ingest_many(texts[:300] + texts[290:300], batch_size=100)  # ten stored twice
        core = store.core
        vecs = core.embed(texts[300:] + texts[290:300])
        with core.read():
            found = core.vector_candidates(vecs, N_CANDIDATES, "id, content", rescore=N_RESCORED)
            hits = core.index.query_many(vecs, N_CANDIDATES)
            for vec, scored, unscored, index_hits in zip(
                vecs, found.scored, found.unscored, hits, strict=True
            ):
                assert scored == core.exact_similarities(
                    vec, [m for m, _ in index_hits[:N_RESCORED]]
                )
                assert scored == sorted(scored, key=lambda h: (-h[1], h[0]))
                assert unscored == [m for m, _ in index_hits[N_RESCORED:]]
                assert {m for m, _ in scored} <= set(found.rows)
            lists = [h[: 5 + i % 20] for i, h in enumerate(hits)]  # lists of unequal lengths
            rescored = core.exact_similarities_many(vecs, lists)
            for vec, many, h in zip(vecs, rescored, lists, strict=True):
                one = core.exact_similarities(vec, [m for m, _ in h])
                assert {m for m, _ in many} == {m for m, _ in h}
                assert dict(many) == pytest.approx(dict(one), abs=1e-6)  # float32 rounding
                assert many == sorted(many, key=lambda x: (-x[1], x[0]))
                # to the last bit, a list's scores do not depend on the other lists beside it
                assert many == core.exact_similarities_many(vec[None, :], [h])[0]
            tied = [scored[:2] for scored in found.scored[-10:]]  # the twins, ties by id
            assert all(a[1] == b[1] and a[0] < b[0] for a, b in tied)
        with MemoryStore(tmp_path / "s.db", index="ivf", namespace="other") as other:
            theirs = {r.memory_id for r in other.ingest_many(texts[:250], batch_size=100)}
        with core.read():
            core.refresh_index()
            found = core.vector_candidates(vecs, N_CANDIDATES, "id, content", rescore=N_RESCORED)
            wider = core.index.query_many(vecs, 4 * N_CANDIDATES)
            assert any({m for m, _ in h[:N_CANDIDATES]} & theirs for h in wider)
            for vec, scored, index_hits in zip(vecs, found.scored, wider, strict=True):
                assert not {m for m, _ in scored} & theirs
                mine = [m for m, _ in index_hits if m not in theirs]
                assert {m for m, _ in scored} <= set(mine)
                assert scored == core.exact_similarities(vec, [m for m, _ in scored])


def _workload(n: int, seed: int) -> list[str]:
    """Texts with the gate's cases: about one in ten says an earlier one again, one in ten
    changes one word of an earlier one."""
    rng = np.random.default_rng(seed)
    out = _texts(n, seed=seed)
    for i in range(50, n):
        u = rng.random()
        if u < 0.1:
            out[i] = out[int(rng.integers(i))]
        elif u < 0.2:
            words = out[int(rng.integers(i))].split()
            words[2 + int(rng.integers(len(words) - 2))] = f"w{int(rng.integers(300))}"
            out[i] = " ".join(words)
    return out


def test_hits_trailing_the_judged_rank_are_left_unscored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``near`` (a rank), of a text's first ``N_RESCORED`` hits only those whose index
    score is within the index's ``SCORE_MARGIN`` of the rank-th hit's are read and re-scored
    (their cosines to the last bit those of a full re-scoring); the others come first among
    the unscored ids, in the index's order."""
    monkeypatch.setattr(IvfIndex, "TRAIN_MIN", 300)  # quantised cells: scores not exact
    monkeypatch.setattr(IvfIndex, "SCORE_MARGIN", 0.002)
    texts = _texts(700, seed=11)
    with MemoryStore(tmp_path / "s.db", index="ivf", gate=Gate.off()) as store:
        store.ingest_many(texts[:600], batch_size=200)
        core = store.core
        assert core.index.cells > 0
        vecs = core.embed(texts[600:])
        with core.read():
            found = core.vector_candidates(
                vecs, N_CANDIDATES, "id", rescore=N_RESCORED, near=N_JUDGED
            )
            full = core.vector_candidates(vecs, N_CANDIDATES, "id", rescore=N_RESCORED)
            keys, sims = core.index.query_arrays(vecs, N_CANDIDATES)
            for bad in (0, -1, 2.5, True):
                with pytest.raises(ValueError, match="near must be a rank"):
                    core.vector_candidates(vecs, N_CANDIDATES, rescore=N_RESCORED, near=bad)
        left_out = 0
        for i, (scored, unscored) in enumerate(zip(found.scored, found.unscored, strict=True)):
            first, rest = keys[i, :N_RESCORED].tolist(), keys[i, N_RESCORED:].tolist()
            bar = sims[i, N_JUDGED - 1] - np.float32(0.002)
            taken = {m for m, s in zip(first, sims[i, :N_RESCORED], strict=True) if s >= bar}
            assert {m for m, _ in scored} == taken
            assert scored == [h for h in full.scored[i] if h[0] in taken]
            assert unscored == [m for m in first if m not in taken] + rest
            assert set(found.rows) >= taken
            left_out += len(first) - len(taken)
        assert left_out > 0  # the margin left hits unread (else the test shows nothing)


def test_ingest_with_the_margin_decides_as_with_every_first_hit_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ingest reads up front only the hits near its judged rank (the cells' ``SCORE_MARGIN``):
    every result (decision, rule, similarity, memory, nearest) is that of reading every one of
    the first ``N_RESCORED`` hits."""
    monkeypatch.setattr(IvfIndex, "TRAIN_MIN", 300)
    texts = _workload(1500, seed=12)
    results = {}
    for margin in (IvfIndex.SCORE_MARGIN, None):  # None: every first hit is read
        monkeypatch.setattr(IvfIndex, "SCORE_MARGIN", margin)
        with MemoryStore(tmp_path / f"s{margin}.db", index="ivf") as store:
            results[margin] = [
                (r.decision, r.rule, r.similarity, r.memory_id, r.nearest_id)
                for r in store.ingest_many(texts, batch_size=250)
            ]
            assert store.core.index.cells > 0
            with store.core.read():
                vecs = store.core.embed(texts[-200:])
                found = store.core.vector_candidates(
                    vecs, N_CANDIDATES, rescore=N_RESCORED, near=N_JUDGED
                )
            unread = sum(len(s) < N_RESCORED for s in found.scored)
            assert (unread > 0) == (margin is not None)
    margins = list(results)
    assert results[margins[0]] == results[None]
    decisions = {d for d, *_ in results[None]}
    assert {Decision.REINFORCE, Decision.CREATE} <= decisions
    assert decisions & {Decision.RELATED, Decision.SUPERSEDE}
