"""Lossless gating through the store: what each decision leaves searchable, in history and in
metadata; related facts (peanuts, tabs) stay; revisions supersede; versions; migration."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from store_helpers import Clock, dump

from memlab.gate import Decision, Gate
from memlab.store import MemoryStore
from memlab.store.schema import MIGRATIONS, SCHEMA_VERSION

PEANUTS = ("I am allergic to peanuts", "My daughter is allergic to peanuts")
TABS = ("Alice prefers tabs", "Bob prefers tabs")


def _minilm_dir() -> Path:
    from memlab.datasets import shared_path

    path = shared_path("minilm", required=False)
    if path is None:
        pytest.skip("shared MiniLM model not available")
    return path


@pytest.fixture(params=["hashing", "minilm"])
def embedder(request: pytest.FixtureRequest) -> object:
    if request.param == "hashing":
        return "hashing"
    os.environ["HF_HUB_OFFLINE"] = "1"
    from memlab.embed import make_embedder

    return make_embedder("fastembed", model_path=_minilm_dir())


def _contents(hits: list) -> list[str]:
    return [h.memory.content for h in hits]


def _cosine(store: MemoryStore, a: str, b: str) -> float:
    v = store.core.embed([a, b])
    return float(np.dot(v[0], v[1]))


@pytest.mark.parametrize("pair", [PEANUTS, TABS], ids=["peanuts", "tabs"])
def test_related_facts_both_stay_findable(embedder: object, pair: tuple[str, str]) -> None:
    first, second = pair
    with MemoryStore(embedder=embedder) as s:
        sim = _cosine(s, first, second)
        a = s.ingest(first)
        b = s.ingest(second)
        assert b.memory_id != a.memory_id and len(s) == 2
        # above the update threshold the second is RELATED and linked; below it, CREATEd
        expected = Decision.RELATED if sim > s.gate.update else Decision.CREATE
        assert b.decision is expected and b.similarity == pytest.approx(sim, abs=1e-5)
        if expected is Decision.RELATED:
            assert s.links(a.memory_id)["kind"].tolist() == ["related"]
        for text in pair:  # both in the top 2 of each one's words (the newer ranks first)
            assert set(_contents(s.search(text, k=2, mark_accessed=False))) == set(pair)
        assert {m.status for m in s.memories()} == {"active"}


def test_minilm_puts_both_pairs_in_the_related_band() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    from memlab.embed import make_embedder

    emb = make_embedder("fastembed", model_path=_minilm_dir())
    with MemoryStore(embedder=emb) as s:
        for first, second in (PEANUTS, TABS):
            # the similarities the issue measured (0.887 and 0.824 there; about 0.87 and 0.76
            # with fastembed's document vectors): both above 0.75, where the old gate replaced
            assert 0.75 < _cosine(s, first, second) < 0.92
            s.ingest(first)
            assert s.ingest(second).decision is Decision.RELATED


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The nightly backup runs at 02:00 UTC.", "The nightly backup runs at 03:00 UTC."),
        ("The service requires memlab 1.2 or later.", "The service requires memlab 1.3 or later."),
        ("A coffee at the canteen costs $4.", "A coffee at the canteen costs $5."),
        ("Use tabs for indentation in this repo.", "Never use tabs for indentation in this repo."),
        ("The staging database runs on port 5432.", "The staging database now runs on port 5433."),
        ("Sven's favourite game is piano.", "Correction: Sven's favourite game is now chess."),
    ],
    ids=["time", "version", "price", "negation", "port", "correction"],
)  # fmt: skip
def test_a_revision_supersedes(embedder: object, old: str, new: str, tmp_path: Path) -> None:
    with MemoryStore(embedder=embedder) as s:
        a = s.ingest(old, topics=["ops"], importance=0.8, layer="caveat")
        s.ingest("An unrelated note about the office plants.")
        b = s.ingest(new, topics=["infra"])
        assert b.decision is Decision.SUPERSEDE and b.nearest_id == a.memory_id
        assert b.rule in ("contradiction", "revision")
        old_m, new_m = s.get(a.memory_id), s.get(b.memory_id)
        assert old_m.status == "superseded" and new_m.status == "active"
        # metadata merged upward: importance and the protected layer carry over, topics join
        assert new_m.importance == 0.8 and new_m.layer == "caveat"
        assert new_m.topics == ("ops", "infra")
        # default search: the revision, never the old value; include_history: both
        assert old not in _contents(s.search(old, mark_accessed=False))
        assert _contents(s.search(old, k=3, mark_accessed=False))[0] == new
        # with history both, the current version first, the old one pointing to it
        hits = s.search(old, k=3, include_history=True, mark_accessed=False)
        assert _contents(hits)[:2] == [new, old]
        assert hits[1].superseded_by == b.memory_id and hits[0].superseded_by is None
        v = s.versions(b.memory_id)
        assert v["content"].tolist() == [old, new] and v["current"].tolist() == [False, True]
        assert v["rule"].iloc[1] == b.rule
        assert v["similarity"].iloc[1] == pytest.approx(b.similarity)
        kinds = s.history(a.memory_id)["kind"].tolist()
        assert kinds[0] == "create" and kinds[-1] == "supersede"


def test_a_different_value_without_a_revision_mark_is_related_not_superseded() -> None:
    with MemoryStore() as s:
        a = s.ingest("Alice prefers tabs for indentation.")
        b = s.ingest("Alice prefers spaces for indentation.")
        assert b.decision in (Decision.RELATED, Decision.CREATE)
        assert s.get(a.memory_id).status == "active"  # ambiguous: both stay, nothing replaced


def test_reinforce_merges_metadata_upward_and_it_sticks(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    text = "Never deploy on Fridays without a rollback plan."
    mid = s.ingest(text, topics=["deploy"], importance=0.4).memory_id
    clock.advance(days=1)
    r = s.ingest(
        "Remember: never deploy on Fridays without a rollback plan!",
        layer="caveat",
        importance=1.0,
        altitude="strategy",
        topics=["release"],
        entity="ops",
    )
    assert r.decision is Decision.REINFORCE and r.memory_id == mid and r.rule == "same-fact"
    m = s.get(mid)
    assert (m.layer, m.importance, m.altitude, m.entity) == ("caveat", 1.0, "strategy", "ops")
    assert m.topics == ("deploy", "release") and m.access_count == 1 and len(s) == 1
    merged = s.history(mid)["data"].iloc[-1]["merged"]
    assert merged["layer"] == ["context", "caveat"] and merged["importance"] == [0.4, 1.0]
    # a later, weaker restatement lowers nothing
    clock.advance(days=1)
    again = s.ingest(text, layer="context", importance=0.1, altitude="implementation")
    assert again.decision is Decision.REINFORCE
    m2 = s.get(mid)
    assert (m2.layer, m2.importance, m2.altitude) == ("caveat", 1.0, "strategy")
    # protected for good: a year later the sweep keeps it
    sweep = s.forget_sweep(now=clock.advance(days=365)).set_index("id")
    assert sweep.loc[mid, "protected"] and sweep.loc[mid, "action"] == "keep"
    # every text given is findable with include_history
    for t in (text, "Remember: never deploy on Fridays without a rollback plan!"):
        hits = s.search(t, include_history=True, mark_accessed=False)
        assert hits[0].memory.id == mid


def test_explicit_supersede_and_versions(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    v1 = s.ingest("The team lunch is on Tuesday.", topics=["team"]).memory_id
    clock.advance(days=1)
    v2 = s.ingest("The team lunch moved to Thursday.", supersedes=v1).memory_id
    clock.advance(days=1)
    r3 = s.ingest("Team lunch: Friday from next week.", supersedes=v2)
    v3 = r3.memory_id
    assert r3.decision is Decision.SUPERSEDE and r3.rule == "explicit"
    v = s.versions(v1)
    assert v["memory_id"].tolist() == [v1, v2, v3] and v["version"].tolist() == [1, 2, 3]
    assert v["rule"].tolist() == ["novel", "explicit", "explicit"]
    assert v["current"].tolist() == [False, False, True]
    assert [h.memory.id for h in s.search("team lunch", mark_accessed=False)] == [v3]
    # bad input: a clear error, nothing written
    before = dump(s)
    with pytest.raises(ValueError, match="superseded"):
        s.ingest("lunch is cancelled", supersedes=v2)
    with pytest.raises(KeyError, match="999"):
        s.ingest("lunch is cancelled", supersedes=999)
    assert dump(s) == before


def test_items_of_ingest_many_supersede_each_their_own_memory(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    port, lunch = (
        r.memory_id
        for r in s.ingest_many(["The staging port is 5432.", "The team lunch is on Tuesday."])
    )
    clock.advance(days=1)
    revised = s.ingest_many(
        [
            {"content": "Staging listens on 6543 since the migration.", "supersedes": port},
            "An unrelated note about the build cache.",
            {"content": "Lunch moved to Thursday.", "supersedes": lunch, "topics": ["team"]},
        ]
    )
    assert [(r.decision, r.rule) for r in revised[::2]] == [(Decision.SUPERSEDE, "explicit")] * 2
    assert s.get(port).status == s.get(lunch).status == "superseded"
    assert s.versions(lunch)["memory_id"].tolist() == [lunch, revised[2].memory_id]
    assert s.get(revised[2].memory_id).topics == ("team",)
    # one memory superseded twice in a call, or a superseded one: a clear error, nothing written
    before = dump(s)
    current = revised[0].memory_id
    twice = [{"content": f"Staging port is {p}.", "supersedes": current} for p in (7000, 7001)]
    with pytest.raises(ValueError, match=f"items 0 and 1 both supersede memory {current}"):
        s.ingest_many(twice)
    with pytest.raises(ValueError, match="superseded"):
        s.ingest_many(["fine", {"content": "Staging port is 7002.", "supersedes": port}])
    assert dump(s) == before


def test_ingest_defaults_are_those_of_ingest_many() -> None:
    from memlab.store.ingest import INGEST_DEFAULTS as defaults
    from memlab.store.ingest import INGEST_KEYS

    assert set(defaults) == INGEST_KEYS - {"content"}
    assert defaults["importance"] == "auto" and defaults["layer"] == "context"
    s = MemoryStore()
    given = s.ingest_many([{"content": "A note with every key left out."}])[0].memory_id
    memory = s.get(given)
    assert (memory.project, memory.layer, memory.altitude) == (
        defaults["project"],
        defaults["layer"],
        defaults["altitude"],
    )


def test_the_gate_is_persisted_with_the_store(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with MemoryStore(path, gate=Gate(0.95, 0.8, preset="custom")) as s:
        assert json.loads(s.core.meta("gate"))["reinforce"] == 0.95
    with MemoryStore(path) as s:
        assert s.gate == Gate(0.95, 0.8, preset="custom")
    with MemoryStore(path, gate=Gate.off()) as s:
        s.ingest("the same text")
        assert s.ingest("the same text").decision is Decision.CREATE and len(s) == 2
    with MemoryStore(path) as s:
        assert s.gate.preset == "off"


def test_migration_from_v2_keeps_everything(tmp_path: Path) -> None:
    from memlab.embed import HashingEmbedder, l2_normalise

    path = tmp_path / "v2.db"
    emb = HashingEmbedder()
    text, seen = "The printer on floor 3 is broken.", "Reported: printer floor 3 broken"
    vec = l2_normalise(np.asarray(emb.embed_documents([text])))[0]
    conn = sqlite3.connect(path)  # a database as version 2 of the schema left it
    conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at REAL)")
    for version, statements in MIGRATIONS[:2]:
        for sql in statements:
            conn.execute(sql)
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    conn.executemany(
        "INSERT INTO meta VALUES (?, ?)", [("embedder_name", emb.name), ("embedder_dim", emb.dim)]
    )
    conn.execute(
        "INSERT INTO memories (id, content, created_at, updated_at, layer, altitude, importance,"
        " stability, difficulty, last_access, storage, retrieval, status, embedding, embed_seq)"
        " VALUES (1, ?, 1e9, 1e9, 'context', 'implementation', 0.5, 2.3, 2.1, 1e9, 0, 1,"
        " 'active', ?, 1)",
        (text, vec.astype("<f4").tobytes()),
    )
    conn.execute("INSERT INTO memories_fts (rowid, content) VALUES (1, ?)", (text,))
    conn.execute(
        "INSERT INTO events (id, memory_id, at, kind, text) VALUES (7, 1, 1e9, 'create', ?)",
        (text,),
    )
    conn.execute(
        "INSERT INTO events (id, memory_id, at, kind, text) VALUES (9, 1, 1e9, 'observation', ?)",
        (seen,),
    )
    conn.commit()
    conn.close()
    with MemoryStore(path) as s:
        assert s.stats()["schema_version"] == SCHEMA_VERSION == 9
        assert s.gate == Gate()  # the default gate, now persisted
        assert s.history(1)["event_id"].tolist() == [7, 9]  # events kept with their ids
        hits = s.search("Reported printer", include_history=True, mark_accessed=False)
        assert hits[0].memory.id == 1  # the old observation was indexed on opening
        r = s.ingest("The printer on floor 3 is broken now it is fixed.")
        assert s.get(r.memory_id).status == "active"
        assert s.core.execute("PRAGMA foreign_key_check").fetchall() == []


def test_within_one_batch_a_text_is_judged_against_the_batch_s_memories_of_its_scope() -> None:
    """Texts earlier in the same batch are candidates only in the text's scope (its project,
    still active): many same texts of other projects before it do not crowd out its own
    project's, and a memory superseded earlier in the batch is not judged again."""
    fact = "the billing service deploy key rotates every 90 days"
    # the project's memory says a word more: the texts of other projects are nearer
    items = [{"content": fact + ", as noted", "project": "mine"}]
    items += [{"content": fact, "project": f"other-{k}"} for k in range(70)]
    items += [{"content": fact, "project": "mine"}]
    revised = "the billing service deploy key rotates every 30 days"
    items += [{"content": revised, "project": "mine"}, {"content": fact, "project": "mine"}]
    with MemoryStore(":memory:") as store:
        results = store.ingest_many(items, batch_size=len(items))
        first, *others, again, revision, old_again = results
        assert first.decision is Decision.CREATE
        assert {r.decision for r in others} == {Decision.CREATE}
        assert again.decision is Decision.REINFORCE and again.memory_id == first.memory_id
        assert revision.decision is Decision.SUPERSEDE and revision.nearest_id == first.memory_id
        # the old text again: not a reinforcement of the superseded memory
        assert old_again.decision is not Decision.REINFORCE or (
            old_again.memory_id != first.memory_id
        )
        assert store.get(first.memory_id).status == "superseded"
