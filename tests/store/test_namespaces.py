"""Namespaces as a security property: two namespaces in one file, and no call of one returns,
merges with, strengthens, sweeps or changes a memory of the other."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_helpers import Clock

from memlab.gate import Decision
from memlab.store import IndexOptions, MemoryStore
from memlab.store.schema import SCHEMA_VERSION

ALICE = [
    "Alice leads the data team. She likes short meetings.",
    "Alice prefers written updates. She works from Lisbon.",
    "Alice reviews the data pipeline. She approves schema changes.",
]
SHARED = "The deploy key rotates every Monday at noon."


def _snapshot(s: MemoryStore) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """Everything of a namespace: its rows and every memory's history."""
    timed = ["elapsed_days", "retention", "accessibility", "state"]  # functions of now
    df = s.to_dataframe().drop(columns=timed)
    return df, [s.history(m) for m in df["id"]]


def _same(a: tuple[pd.DataFrame, list[pd.DataFrame]], b: tuple[pd.DataFrame, list[pd.DataFrame]]):
    pd.testing.assert_frame_equal(a[0], b[0])
    assert len(a[1]) == len(b[1])
    for x, y in zip(a[1], b[1], strict=True):
        pd.testing.assert_frame_equal(x, y)


@pytest.fixture
def pair(tmp_path: Path, clock: Clock) -> tuple[MemoryStore, MemoryStore, dict[str, list[int]]]:
    path = tmp_path / "shared.db"
    a = MemoryStore(path, clock=clock, namespace="alpha")
    b = MemoryStore(path, clock=clock, namespace="beta")
    ids: dict[str, list[int]] = {"alpha": [], "beta": []}
    for s in (a, b):  # identical texts in both namespaces
        for t in [*ALICE, SHARED]:
            r = s.ingest(t, entity="alice" if "Alice" in t else None, importance=0.2)
            assert r.decision is Decision.CREATE  # never merged with the other namespace's
            ids[s.namespace].append(r.memory_id)
    clock.advance(hours=1)
    yield a, b, ids
    a.close()
    b.close()


def test_identical_texts_get_their_own_memory_and_reinforce_stays_home(pair) -> None:
    a, b, ids = pair
    assert not set(ids["alpha"]) & set(ids["beta"])
    assert len(a) == len(b) == 4 and a.stats()["memories"] == 4
    before = _snapshot(a)
    again = b.ingest(SHARED)
    assert again.decision is Decision.REINFORCE and again.memory_id == ids["beta"][3]
    assert again.nearest_id == ids["beta"][3]
    _same(before, _snapshot(a))  # alpha's twin was not strengthened
    assert b.get(ids["beta"][3]).access_count == 1 and a.get(ids["alpha"][3]).access_count == 0


def test_ids_of_the_other_namespace_are_absent(pair) -> None:
    a, b, ids = pair
    before = _snapshot(a)
    other = ids["alpha"][0]
    calls = [
        lambda: b.get(other),
        lambda: b.history(other),
        lambda: b.versions(other),
        lambda: b.links(other),
        lambda: b.access(other),
        lambda: b.importance(other),
        lambda: b.restore(other),
        lambda: b.purge(other),
        lambda: b.ingest("Alice moved to Porto.", supersedes=other),
    ]
    for call in calls:
        with pytest.raises((KeyError, ValueError)):
            call()
    _same(before, _snapshot(a))
    assert len(b) == 4  # the failed supersede wrote nothing either


def test_searches_return_only_the_namespace(pair, clock: Clock) -> None:
    a, b, ids = pair
    b.ingest(
        "The deploy key rotates every Friday at noon.", supersedes=ids["beta"][3], importance=0.2
    )
    before = _snapshot(a)
    mine = set(b.to_dataframe()["id"])
    for kwargs in (
        {},
        {"include_history": True},
        {"include_archived": True},
        {"include_history": True, "include_archived": True},
    ):
        for query in ("Alice data team", "deploy key Monday", "Lisbon", "noon"):
            hits = b.search(query, k=20, **kwargs)
            assert hits and {h.memory.id for h in hits} <= mine
    assert {m for m, _ in b.rankings(SHARED, k=20)[1]} <= mine
    assert {m.id for m in b.memories()} == mine
    _same(before, _snapshot(a))  # mark_accessed touched beta only
    monday = b.search("Monday", k=5, include_history=True, mark_accessed=False)
    got = [h.memory.id for h in monday]
    assert ids["beta"][3] in got and set(got) <= mine  # the old version found, not alpha's twin


def test_importance_sweep_and_consolidation_stay_home(pair, clock: Clock) -> None:
    a, b, ids = pair
    before = _snapshot(a)
    tagged = b.importance(ids["beta"][0], hours_back=48, hours_forward=48)
    assert set(tagged["id"]) and set(tagged["id"]) <= set(ids["beta"])
    clock.advance(hours=1)
    late = b.ingest("Carol joins the data team on Monday.").memory_id  # forward window
    assert set(b.history(late)["kind"]) >= {"create"}
    clock.advance(days=120)
    dry = b.forget_sweep()
    assert set(dry["id"]) == set(b.to_dataframe(include_archived=False)["id"])
    applied = b.forget_sweep(dry_run=False)
    assert set(applied["id"]) <= set(b.to_dataframe()["id"])
    created = b.consolidate()
    for m in created:
        assert b.get(m).entity == "alice"
        with pytest.raises(KeyError):
            a.get(m)
    _same(before, _snapshot(a))  # nothing of alpha was tagged, swept or merged
    assert a.forget_sweep()["id"].tolist() == ids["alpha"]  # alpha still has all of its own


def test_export_holds_one_namespace_and_import_lands_in_the_importer(pair, tmp_path: Path) -> None:
    a, b, ids = pair
    out = tmp_path / "beta.jsonl"
    assert b.export_jsonl(out) == 4
    records = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    assert [r["id"] for r in records] == ids["beta"]
    mapping = a.import_jsonl(out)
    assert set(mapping.values()).isdisjoint(ids["beta"])  # beta's ids were taken in the file
    assert len(a) == 8 and len(b) == 4
    assert {m.id for m in b.memories()} == set(ids["beta"])


def test_stats_count_the_namespace(pair) -> None:
    a, b, _ = pair
    b.ingest("Only beta knows this.")
    sa, sb = a.stats(), b.stats()
    assert sa["memories"] == 4 and sb["memories"] == 5
    assert sum(sa["events"].values()) < sum(sb["events"].values())


def test_vector_hits_are_over_fetched_past_another_namespace(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "crowded.db"
    crowd = MemoryStore(
        path, clock=clock, namespace="crowd", index=IndexOptions(switch_at=64), secrets="allow"
    )
    crowd.ingest_many([f"the deploy key rotates every Monday {i}" for i in range(400)])
    crowd.rebuild_index()
    lone = MemoryStore(
        path, clock=clock, namespace="lone", index=IndexOptions(switch_at=64), secrets="allow"
    )
    mine = lone.ingest("the deploy key rotates every Monday").memory_id
    assert lone.rankings("the deploy key rotates every Monday", k=3)[1] == [
        (mine, pytest.approx(1.0))
    ]
    hits = lone.search("deploy key Monday", k=5, mark_accessed=False)
    assert [h.memory.id for h in hits] == [mine]
    r = lone.ingest("the deploy key rotates every Monday 7")  # near a crowd memory too
    assert r.nearest_id == mine and r.memory_id in {m.id for m in lone.memories()}
    crowd.close()
    lone.close()


def test_namespace_names_are_checked_before_any_file(tmp_path: Path) -> None:
    for bad, error in [("", ValueError), (" x", ValueError), ("a\x00b", ValueError),
                       ("a\nb", ValueError), ("x" * 201, ValueError), (3, TypeError),
                       (None, TypeError)]:  # fmt: skip
        with pytest.raises(error, match="namespace"):
            MemoryStore(tmp_path / "bad.db", namespace=bad)
    assert not (tmp_path / "bad.db").exists()
    with MemoryStore(tmp_path / "ok.db", namespace="team/α-1") as s:
        assert s.namespace == "team/α-1"


def test_a_store_without_namespaces_migrates_into_default(tmp_path: Path) -> None:
    path = tmp_path / "v3.db"
    with MemoryStore(path) as s:
        old = s.ingest("written before namespaces existed").memory_id
    conn = sqlite3.connect(path)  # back to schema 3: no namespace column
    conn.execute("DROP INDEX memories_namespace")
    conn.execute("ALTER TABLE memories DROP COLUMN namespace")
    conn.execute("ALTER TABLE memories DROP COLUMN importance_auto")
    conn.execute("ALTER TABLE memories DROP COLUMN own_chars")
    conn.execute("ALTER TABLE memories DROP COLUMN valid_from")
    conn.execute("ALTER TABLE memories DROP COLUMN valid_until")
    conn.execute("DELETE FROM schema_version WHERE version >= 4")
    conn.commit()
    conn.close()
    with MemoryStore(path) as s:
        assert s.stats()["schema_version"] == SCHEMA_VERSION == 9
        assert s.namespace == "default" and s.get(old).content.startswith("written before")
    with MemoryStore(path, namespace="other") as s:
        assert len(s) == 0 and s.search("written before namespaces", mark_accessed=False) == []
        with pytest.raises(KeyError):
            s.get(old)


WORDS = ["deploy", "key", "Monday", "Alice", "data", "team", "port", "noon", "Lisbon", "tea"]
OPS = ["ingest", "search", "history_search", "importance", "sweep", "consolidate", "foreign"]


@settings(max_examples=12, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(OPS),
            st.lists(st.sampled_from(WORDS), min_size=2, max_size=5),
            st.integers(0, 50),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_no_sequence_of_calls_in_one_namespace_touches_the_other(ops) -> None:
    clock = Clock()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "prop.db"
        a = MemoryStore(path, clock=clock, namespace="alpha")
        b = MemoryStore(path, clock=clock, namespace="beta")
        try:
            for t in [*ALICE, SHARED]:
                a.ingest(t, entity="alice" if "Alice" in t else None)
            alpha_ids = [m.id for m in a.memories()]
            before = _snapshot(a)
            for op, words, days in ops:
                text = " ".join(words)
                clock.advance(days=days)
                mine = {m.id for m in b.memories()}
                if op == "ingest":
                    r = b.ingest(text, entity="alice")
                    assert r.memory_id not in alpha_ids and r.nearest_id not in alpha_ids
                elif op in ("search", "history_search"):
                    hits = b.search(text, include_history=op == "history_search")
                    assert {h.memory.id for h in hits} <= mine
                elif op == "importance" and mine:
                    tagged = b.importance(min(mine), hours_back=24 * 60, hours_forward=24 * 60)
                    assert set(tagged["id"]) <= mine
                elif op == "sweep":
                    assert set(b.forget_sweep(dry_run=False)["id"]) <= mine
                elif op == "consolidate":
                    assert not set(b.consolidate()) & set(alpha_ids)
                elif op == "foreign":
                    with pytest.raises(KeyError):
                        b.access(alpha_ids[days % len(alpha_ids)])
                _same(before, _snapshot(a))
        finally:
            a.close()
            b.close()
