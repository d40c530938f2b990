"""MemoryStore facade: gate decisions, search, access dynamics, preview, context, embedders."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from store_helpers import T0, Clock, VecEmbedder, dump

from memlab.embed import HashingEmbedder
from memlab.gate import Decision, Gate
from memlab.store import EmbedderMismatchError, MemoryStore
from memlab.store.relevance import SearchOptions
from memlab.store.schema import SCHEMA_VERSION


@pytest.mark.parametrize(
    ("sim", "band"),
    [
        (0.9205, Decision.REINFORCE),
        (0.9195, Decision.UPDATE),
        (0.7505, Decision.UPDATE),
        (0.7495, Decision.CREATE),
    ],
)
def test_threshold_bands_of_a_different_text(clock: Clock, sim: float, band: Decision) -> None:
    # "sim=... new text" says something else than "base fact": above the update threshold it is
    # RELATED (a new memory linked to its neighbour, whatever the band), below it CREATEd
    s = MemoryStore(embedder=VecEmbedder(), clock=clock)
    first = s.ingest("base fact")
    assert first.decision is Decision.CREATE and first.similarity is None
    clock.advance(days=1)
    r = s.ingest(f"sim={sim} new text")
    assert r.similarity == pytest.approx(sim, abs=1e-6)
    assert r.memory_id != first.memory_id and len(s) == 2
    expected = Decision.CREATE if band is Decision.CREATE else Decision.RELATED
    assert r.decision is expected and r.nearest_id == first.memory_id
    created = s.history(r.memory_id).iloc[0]
    assert created["kind"] == "create" and created["data"]["band"] == band.value
    assert created["data"]["rule"] == ("novel" if band is Decision.CREATE else "related")
    # both stay in default search; a related pair is linked both ways
    for q in ("base fact", f"sim={sim} new text"):
        assert q in [h.memory.content for h in s.search(q, mark_accessed=False)]
    linked = s.links(r.memory_id)
    assert len(linked) == (0 if band is Decision.CREATE else 1)
    if band is not Decision.CREATE:
        assert linked.iloc[0][["source", "target", "kind"]].tolist() == [
            r.memory_id,
            first.memory_id,
            "related",
        ]
        assert s.links(first.memory_id).equals(linked)


def test_reinforce_is_an_access_and_keeps_the_text(clock: Clock) -> None:
    s = MemoryStore(embedder=VecEmbedder(), clock=clock)
    mid = s.ingest("base fact").memory_id
    before = s.get(mid)
    clock.advance(days=3)
    r = s.ingest("base facts, noted again")  # the same content words (and vector)
    assert r.decision is Decision.REINFORCE and r.rule == "same-fact" and r.memory_id == mid
    after = s.get(mid)
    assert after.content == "base fact" and len(s) == 1
    assert after.access_count == 1 and after.stability > before.stability
    assert after.last_access == clock.now
    h = s.history(mid)
    assert list(h["kind"]) == ["create", "access", "observation"]
    assert h["grade"].iloc[1] == 3 and h["text"].iloc[2] == "base facts, noted again"
    assert h["data"].iloc[1]["elapsed_days"] == pytest.approx(3.0)
    assert h["data"].iloc[2]["rule"] == "same-fact" and h["data"].iloc[2]["similarity"] == 1.0
    # the observation is found with include_history only
    assert s.search("base facts, noted again", mark_accessed=False)[0].memory.id == mid
    hits = s.search("noted again", include_history=True, mark_accessed=False)
    assert [x.memory.id for x in hits] == [mid]


def test_a_changed_number_supersedes(clock: Clock) -> None:
    s = MemoryStore(embedder=VecEmbedder(), clock=clock)
    old = s.ingest("base backup at 02:00", topics=["ops"]).memory_id
    clock.advance(hours=5)
    r = s.ingest("base backup at 03:00", topics=["infra"], importance=0.7)
    assert r.decision is Decision.SUPERSEDE and r.rule == "contradiction" and r.nearest_id == old
    new = r.memory_id
    assert new != old and s.get(old).status == "superseded" and s.get(new).status == "active"
    m = s.get(new)
    assert m.content == "base backup at 03:00" and m.topics == ("ops", "infra")
    assert m.importance == 0.7
    # default search: only the revision; include_history: both
    assert [h.memory.id for h in s.search("backup", mark_accessed=False)] == [new]
    assert {h.memory.id for h in s.search("backup", include_history=True, mark_accessed=False)} == {
        old,
        new,
    }
    v = s.versions(new)
    assert v["memory_id"].tolist() == [old, new] and v["current"].tolist() == [False, True]
    assert v["rule"].tolist() == ["novel", "contradiction"]
    assert v["similarity"].iloc[1] == pytest.approx(1.0)
    assert s.versions(old).equals(v)
    # linked both ways
    assert s.history(old)["kind"].iloc[-1] == "supersede"
    assert s.history(old)["data"].iloc[-1]["superseded_by"] == new
    assert (
        s.history(new).loc[lambda h: h["kind"] == "supersede", "data"].iloc[0]["supersedes"] == old
    )


def test_the_guard_needs_texts(clock: Clock) -> None:
    s = MemoryStore(embedder=VecEmbedder(), clock=clock, gate=Gate(lexical=False))
    mid = s.ingest("base fact").memory_id
    # without comparing texts, the threshold gate reinforces above 0.92 unless the guard objects
    assert s.ingest("base fact").decision is Decision.REINFORCE
    r = s.ingest("base fact 2")
    assert r.decision is Decision.RELATED and r.memory_id != mid


def test_gate_scope_is_the_project(clock: Clock) -> None:
    s = MemoryStore(embedder=VecEmbedder(), clock=clock)
    a = s.ingest("base fact", project="alpha")
    b = s.ingest("base fact", project="beta")
    assert b.decision is Decision.CREATE and b.memory_id != a.memory_id
    assert s.ingest("base fact", project="alpha").decision is Decision.REINFORCE
    assert s.ingest("base fact").decision is Decision.CREATE  # no project is its own scope


def test_custom_gate_is_persisted(tmp_path, clock: Clock) -> None:
    path = tmp_path / "g.db"
    gate = Gate.fitted(0.9, 0.6, macro_f1=0.7, n_pairs=100)
    with MemoryStore(path, embedder=VecEmbedder(), clock=clock, gate=gate) as s:
        s.ingest("base")
        assert s.ingest("sim=0.65 x").decision is Decision.RELATED  # above the fitted 0.6
        assert s.stats()["gate"]["preset"] == "fitted"
    with MemoryStore(path, embedder=VecEmbedder(), clock=clock) as s:
        assert s.gate == gate and s.gate.params == {"macro_f1": 0.7, "n_pairs": 100}
        s.gate = Gate()
    with MemoryStore(path, embedder=VecEmbedder(), clock=clock) as s:
        assert s.gate == Gate() and s.gate.preset == "vestige"
        assert s.gate.band(0.65) is Decision.CREATE  # 0.65 is below the Vestige 0.75
    with pytest.raises(TypeError, match="Gate"):
        MemoryStore(gate=(0.9, 0.7))  # type: ignore[arg-type]


def test_spaced_accesses_raise_stability_more_than_massed(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    spaced = s.ingest("spaced memory about tide tables").memory_id
    massed = s.ingest("massed memory about bus routes").memory_id
    for i in range(4):
        s.search("bus routes", k=1, now=T0 + timedelta(minutes=10 * (i + 1)))
        s.search("tide tables", k=1, now=T0 + timedelta(days=3 * (i + 1)))
    sp, ma = s.get(spaced), s.get(massed)
    assert sp.access_count == ma.access_count == 4
    assert sp.stability > 3 * ma.stability
    assert sp.storage > ma.storage  # Bjork: accesses at low retrieval strength build more storage


def test_search_finds_and_explains(store: MemoryStore) -> None:
    ids = [
        store.ingest(t).memory_id
        for t in [
            "Alice prefers dark mode in the editor",
            "The CI pipeline caches pip wheels",
            "Bob's birthday is in March",
            "Use ruff for linting the repository",
        ]
    ]
    hits = store.search("which editor theme does Alice prefer", k=2, mark_accessed=False)
    assert hits[0].memory.id == ids[0]
    h = hits[0]
    assert h.keyword_rank == 1 and h.vector_rank == 1
    assert h.rrf == pytest.approx(2 / 61)
    assert h.score == pytest.approx(h.rrf * h.time_factor * h.context)
    assert 0 < h.retention <= 1 and h.context == 1.0
    assert len(hits) == 2 and hits[0].score >= hits[1].score


def test_context_match_reranks(clock: Clock) -> None:
    s = MemoryStore(clock=clock, search=SearchOptions(versions_at=1.0))  # context alone
    a = s.ingest("deploy notes for the service", project="alpha", topics=["ops"]).memory_id
    b = s.ingest("deploy notes for the service again", project="beta", topics=["dev"]).memory_id
    base = {h.memory.id: h for h in s.search("deploy notes service", mark_accessed=False)}
    for proj, topic, winner in (("alpha", "ops", a), ("beta", "dev", b)):
        hits = s.search("deploy notes service", project=proj, topics=[topic], mark_accessed=False)
        assert hits[0].memory.id == winner
        assert hits[0].project_match and hits[0].topic_overlap == 1.0
        assert hits[0].context == pytest.approx(
            1 + s.options.project_weight + s.options.topic_weight
        )
        assert hits[0].rrf == base[winner].rrf


def test_retention_weighs_scores(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    old = s.ingest("garden hose repair tips", project="a").memory_id
    clock.advance(days=60)
    new = s.ingest("garden hose repair tips", project="b").memory_id
    hits = {h.memory.id: h for h in s.search("garden hose repair", mark_accessed=False)}
    assert hits[old].retention < hits[new].retention
    flat = {
        h.memory.id: h for h in s.search("garden hose repair", mark_accessed=False, time_weight=0.0)
    }
    assert flat[old].time_factor == 1.0 and flat[old].score == flat[old].rrf


def test_preview_search_changes_nothing(file_store: MemoryStore, clock: Clock) -> None:
    for t in ["alpha beta gamma", "beta gamma delta", "delta epsilon"]:
        file_store.ingest(t)
    clock.advance(days=2)
    before = dump(file_store)
    hits = file_store.search("beta gamma", mark_accessed=False)
    assert hits
    assert dump(file_store) == before
    file_store.search("beta gamma")
    assert dump(file_store) != before


def test_search_accesses_returned_hits(store: MemoryStore, clock: Clock) -> None:
    mid = store.ingest("the wifi password is on the fridge").memory_id
    store.ingest("unrelated note about lunch")
    clock.advance(days=2)
    hits = store.search("wifi password", k=1)
    assert [h.memory.id for h in hits] == [mid]
    m = store.get(mid)
    assert m.access_count == 1 and m.last_access == clock.now
    assert hits[0].memory.access_count == 0  # the hit shows the memory as ranked
    h = store.history(mid)
    assert h["kind"].iloc[-1] == "access" and h["data"].iloc[-1]["source"] == "search"


def test_archived_excluded_unless_asked(store: MemoryStore) -> None:
    mid = store.ingest("archived memory about kites").memory_id
    store.core.execute("UPDATE memories SET status = 'archived' WHERE id = ?", (mid,))
    assert store.search("kites", mark_accessed=False) == []
    assert [
        h.memory.id for h in store.search("kites", include_archived=True, mark_accessed=False)
    ] == [mid]


@pytest.mark.parametrize(
    "query", ['"AND OR NOT (* ^ NEAR(', "col:value", "a*", "-x", '""', "NEAR(a b, 2)", "'"]
)
def test_fts_operator_soup_is_safe(store: MemoryStore, query: str) -> None:
    store.ingest("AND OR NOT near column value a x")
    before = dump(store)
    store.search(query, mark_accessed=False)
    assert dump(store) == before


def test_reopen_with_other_embedder_is_an_error(tmp_path, clock: Clock) -> None:
    path = tmp_path / "m.db"
    MemoryStore(path, clock=clock).close()
    with pytest.raises(EmbedderMismatchError, match="hashing"):
        MemoryStore(path, embedder=HashingEmbedder(dim=128), clock=clock)
    with pytest.raises(EmbedderMismatchError):
        MemoryStore(path, embedder=VecEmbedder(), clock=clock)
    MemoryStore(path, clock=clock).close()  # same embedder: fine
    custom = tmp_path / "custom.db"  # a custom embedder cannot be rebuilt: it must be given
    MemoryStore(custom, embedder=VecEmbedder(), clock=clock).close()
    with pytest.raises(EmbedderMismatchError, match="opened with 'hashing"):
        MemoryStore(custom, clock=clock)


def test_a_store_reopens_by_a_relative_path(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with MemoryStore("rel.db") as s:
        s.ingest("a fact kept by a relative path")
    with MemoryStore("rel.db") as again:  # its embedder is read from the file first
        assert len(again) == 1


def test_a_store_reopens_with_the_model_it_was_written_with(
    tmp_path, minilm_dir, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memlab.cli import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    path = tmp_path / "fe.db"
    with MemoryStore(path, embedder="fastembed") as s:
        s.ingest("The nightly backup runs at 02:00 UTC.")
        name = s.embedder.name
    with MemoryStore(path) as again:  # no embedder given: the file's own
        assert again.embedder.name == name and name.startswith("fastembed:")
        assert again.search("when does the backup run")[0].memory.id == 1
    assert main(["store", "stats", "--db", str(path)]) == 0  # the shell and MCP alike
    with pytest.raises(EmbedderMismatchError):
        MemoryStore(path, embedder="hashing")


def test_persistence_across_reopen(tmp_path, clock: Clock) -> None:
    path = tmp_path / "m.db"
    with MemoryStore(path, clock=clock) as s:
        mid = s.ingest("persistent memory about owls", topics=["birds"]).memory_id
    with MemoryStore(path, clock=clock) as s:
        assert s.get(mid).topics == ("birds",)
        assert s.search("owls", mark_accessed=False)[0].memory.id == mid


def test_secrets_redacted_by_default(store: MemoryStore) -> None:
    r = store.ingest("deploy with key AKIAIOSFODNN7EXAMPLE please")
    assert r.redacted == 1
    assert "AKIA" not in store.get(r.memory_id).content
    assert "[REDACTED:aws_access_key_id]" in store.get(r.memory_id).content


def test_dataframe_and_stats(store: MemoryStore, clock: Clock) -> None:
    store.ingest("one note", topics=["x"])
    store.ingest("another different thing", layer="goal")
    clock.advance(days=10)
    df = store.to_dataframe()
    assert list(df["id"]) == [1, 2] and df["topics"].iloc[0] == ["x"]
    assert ((df["retention"] > 0) & (df["retention"] < 1)).all()
    assert set(df["state"]) <= {"active", "dormant", "silent", "unavailable"}
    st = store.stats()
    assert (
        st["memories"] == 2
        and st["by_layer"] == {"context": 1, "goal": 1}
        and st["schema_version"] == SCHEMA_VERSION
    )


def test_clock_and_now(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    m = s.get(s.ingest("clocked").memory_id)
    assert m.created_at == T0
    later = T0 + timedelta(days=1)
    m2 = s.get(s.ingest("explicit now", now=later).memory_id)
    assert m2.created_at == later
    with pytest.raises(ValueError, match="naive"):
        MemoryStore(clock=lambda: later.replace(tzinfo=None)).ingest("x")


def test_ingest_many_matches_sequential_ingest(clock: Clock) -> None:
    rng = np.random.default_rng(7)
    words = ["red", "green", "blue", "cat", "dog", "tea", "code", "test", "plan", "ship"]
    texts = [" ".join(rng.choice(words, size=4)) for _ in range(50)]
    texts += texts[-10:]  # repeats of recent texts reinforce
    a = MemoryStore(clock=clock)
    b = MemoryStore(clock=clock)
    seq = [a.ingest(t) for t in texts]
    bulk = b.ingest_many(texts, batch_size=7)
    assert [(r.decision, r.memory_id) for r in seq] == [(r.decision, r.memory_id) for r in bulk]
    assert {Decision.CREATE, Decision.REINFORCE} <= {r.decision for r in bulk}
    assert a.to_dataframe()["content"].tolist() == b.to_dataframe()["content"].tolist()


def test_ingest_many_items_with_metadata(store: MemoryStore) -> None:
    res = store.ingest_many(
        [{"content": "first item", "project": "p", "topics": ["t"]}, "second plain item"],
        layer="caveat",
    )
    m1, m2 = store.get(res[0].memory_id), store.get(res[1].memory_id)
    assert (m1.project, m1.topics, m1.layer) == ("p", ("t",), "caveat")
    assert (m2.project, m2.layer) == (None, "caveat")


def test_rankings_are_what_search_fuses(store: MemoryStore) -> None:
    ids = [
        store.ingest(t).memory_id for t in ["red kite nest", "kite surfing lessons", "tax forms"]
    ]
    keyword, vector = store.rankings("kite", 10)
    assert {m for m, _ in keyword} == set(ids[:2])
    assert all(s > store.options.min_similarity for _, s in vector)
    hits = {h.memory.id: h for h in store.search("kite", mark_accessed=False)}
    for r, (m, _) in enumerate(keyword, start=1):
        assert hits[m].keyword_rank == r
    for r, (m, s) in enumerate(vector, start=1):
        assert hits[m].vector_rank == r and hits[m].similarity == s
    with pytest.raises(ValueError):
        store.rankings("", 5)


def test_public_access(store: MemoryStore, clock: Clock) -> None:
    mid = store.ingest("a memory used by the agent").memory_id
    clock.advance(days=2)
    m = store.access(mid, grade=4)
    assert m.access_count == 1 and m.last_access == clock.now
    h = store.history(mid)
    assert h["grade"].iloc[-1] == 4 and h["data"].iloc[-1]["source"] == "api"
    before = dump(store)
    for bad in (0, 5, 2.5, True):
        with pytest.raises(ValueError, match="grade"):
            store.access(mid, grade=bad)
    with pytest.raises(KeyError):
        store.access(mid + 1)
    with pytest.raises(ValueError, match="before memory .* was created"):
        store.access(mid, now=clock.now - timedelta(days=3))
    assert dump(store) == before


def test_a_search_before_a_memory_exists_records_no_access(
    store: MemoryStore, clock: Clock
) -> None:
    mid = store.ingest("the spare key is under the plant pot").memory_id
    hits = store.search("spare key", now=clock.now - timedelta(days=1))
    assert [h.memory.id for h in hits] == [mid]
    assert store.get(mid).access_count == 0
    assert list(store.history(mid)["kind"]) == ["create"]


def test_progress_bar_option(store: MemoryStore) -> None:
    res = store.ingest_many(["one", "two"], progress=True)
    assert len(res) == 2


def test_the_constructor_fits_on_a_screen() -> None:
    import inspect

    params = [p for p in inspect.signature(MemoryStore.__init__).parameters if p != "self"]
    assert len(params) <= 10, params
    kinds = [p.kind for p in inspect.signature(MemoryStore.__init__).parameters.values()]
    assert kinds.count(inspect.Parameter.KEYWORD_ONLY) == len(params) - 2  # path, embedder


def test_a_bad_query_vector_raises_and_writes_nothing() -> None:
    store = MemoryStore()
    store.ingest_many(["Ana prefers dark roast coffee", "the deploy pipeline uses blue green"])
    before = dump(store)
    with pytest.raises(ValueError, match="query_vector must be a finite vector"):
        store.search("coffee", query_vector=np.ones(7))
    with pytest.raises(ValueError, match="query_vector must be a finite vector"):
        store.search("coffee", query_vector=np.full(store.embedder.dim, np.nan))
    assert dump(store) == before
