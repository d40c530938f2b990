"""Lifecycle: synaptic tagging windows, forget sweeps, consolidation, purge and restore."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from store_helpers import T0, Clock

from memlab.store import MemoryStore
from memlab.store.lifecycle import compress_text, tag_weight


def test_tag_kernel() -> None:
    w = tag_weight(np.array([-10.0, -9.0, -4.5, 0.0, 1.0, 2.0, 2.01]), 9.0, 2.0)
    np.testing.assert_allclose(w, [0.0, 0.25, 4**-0.25, 1.0, 4**-0.25, 0.25, 0.0])


def test_flag_strengthens_neighbours_inside_window_only(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    offsets = {"far_before": -12, "before": -8, "near": -1, "after": 1.5, "far_after": 3}
    ids = {}
    for name, h in sorted(offsets.items(), key=lambda kv: kv[1]):
        ids[name] = s.ingest(
            f"note {name} about topic {name}", now=T0 + timedelta(hours=h)
        ).memory_id
    flagged = s.ingest("the crucial decision was made", now=T0).memory_id
    before = {k: s.get(v) for k, v in ids.items()}
    out = s.importance(flagged, now=T0 + timedelta(hours=5))
    assert s.get(flagged).importance >= 0.95
    after = {k: s.get(v) for k, v in ids.items()}
    for name in ("before", "near", "after"):
        assert after[name].importance > before[name].importance
        assert after[name].stability > before[name].stability
        assert after[name].storage > before[name].storage
    for name in ("far_before", "far_after"):
        assert after[name] == before[name]
    # closer is stronger
    assert after["near"].importance > after["before"].importance
    assert set(out["id"]) == {ids["before"], ids["near"], ids["after"]}
    assert (s.history(ids["near"])["kind"] == "tag").sum() == 1


def test_forward_window_arrivals_are_tagged(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    flagged = s.ingest("important kickoff meeting", now=T0).memory_id
    s.importance(flagged, hours_back=9, hours_forward=2, now=T0 + timedelta(minutes=10))
    inside = s.ingest("follow-up detail on budgets", now=T0 + timedelta(hours=1), importance=0.5)
    outside = s.ingest("unrelated later remark on lunch", now=T0 + timedelta(hours=3))
    assert inside.tagged == (flagged,) and outside.tagged == ()
    assert s.get(inside.memory_id).importance > 0.5
    untagged = s.get(outside.memory_id)  # estimated from its text, never raised by a tag
    assert untagged.importance_auto and 0 < untagged.importance < 0.8
    assert (s.history(outside.memory_id)["kind"] == "tag").sum() == 0


def _age(store: MemoryStore, clock: Clock, days: float) -> None:
    clock.advance(days=days)


def test_sweep_reports_and_protections_hold(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    plain = s.ingest(
        "ordinary detail one. More words follow here.", importance=0.1, entity="e"
    ).memory_id
    goal = s.ingest("ship version one by spring", layer="goal", importance=0.1).memory_id
    caveat = s.ingest("never run migrations on friday", layer="caveat", importance=0.1).memory_id
    vip = s.ingest("the customer id format", importance=0.95).memory_id
    mission = s.ingest(
        "we build tools for researchers", altitude="mission", importance=0.1
    ).memory_id
    clock.advance(days=90)
    dry = s.forget_sweep()
    assert set(dry.columns) >= {"id", "heat", "band", "risk", "action", "protected", "state"}
    row = dry.set_index("id")
    assert row.loc[plain, "action"] == "drop" and not row.loc[plain, "protected"]
    for mid in (goal, caveat, vip, mission):
        assert row.loc[mid, "protected"] and row.loc[mid, "action"] == "keep"
    before = s.to_dataframe()
    s.forget_sweep(dry_run=False)
    after = s.to_dataframe().set_index("id")
    assert after.loc[plain, "status"] == "archived"
    assert (
        after.loc[plain, "content"] == before.set_index("id").loc[plain, "content"]
    )  # archived, not deleted
    for mid in (goal, caveat, vip, mission):
        assert after.loc[mid, "status"] == "active"
    # and through consolidation
    for mid in (goal, caveat, vip, mission):
        s.core.execute("UPDATE memories SET entity = 'e' WHERE id = ?", (mid,))
    s.ingest(
        "another ordinary detail for e",
        entity="e",
        importance=0.1,
        now=clock.now - timedelta(days=80),
    )
    created = s.consolidate()
    for mid in (goal, caveat, vip, mission):
        assert s.get(mid).status == "active" and s.get(mid).consolidated_into is None
    assert created == []  # only one unprotected active member left in (e, context)


def test_sweep_compress_keeps_full_text_as_version(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    long = "First sentence is the gist. " + " ".join(
        f"Detail number {i} is rather long." for i in range(20)
    )
    mid = s.ingest(long, importance=0.0).memory_id
    # find a time where the action is compress
    for days in range(1, 60):
        df = s.forget_sweep(now=T0 + timedelta(days=days))
        if df.set_index("id").loc[mid, "action"] == "compress":
            break
    else:
        pytest.fail("no compress window found")
    s.forget_sweep(now=T0 + timedelta(days=days), dry_run=False)
    m = s.get(mid)
    assert m.status == "active" and m.content == compress_text(long) and len(m.content) < len(long)
    h = s.history(mid)
    assert h.loc[h["kind"] == "version", "text"].tolist() == [long]


def test_consolidate_groups_cold_memories(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    texts = [
        "Alice leads the data team.",
        "Alice prefers written updates.",
        "Alice reviews the data pipeline.",
    ]
    ids = [
        s.ingest(t, entity="alice", project=f"p{i}", topics=["people"]).memory_id
        for i, t in enumerate(texts)
    ]
    other = s.ingest("Bob owns the billing service.", entity="bob").memory_id
    hot = s.ingest("Alice is on leave next week.", entity="alice", layer="emotion").memory_id
    clock.advance(days=30)
    s.search("Alice leave", k=1)  # keeps 'hot' hot
    created = s.consolidate(max_sentences=3)
    assert len(created) == 1
    summary = s.get(created[0])
    assert (
        summary.layer == "learning" and summary.entity == "alice" and summary.topics == ("people",)
    )
    assert summary.project is None  # members came from different projects
    assert summary.content == " ".join(texts)
    for mid in ids:
        m = s.get(mid)
        assert m.status == "archived" and m.consolidated_into == created[0]
    assert s.get(other).status == "active" and s.get(hot).status == "active"
    assert s.history(created[0])["data"].iloc[-1] == {"members": ids}


def test_consolidate_merges_only_members_the_summary_holds_whole(clock: Clock) -> None:
    """A member with a sentence the summary leaves out stays active: no fact leaves search."""
    s = MemoryStore(clock=clock)
    texts = [
        "Ana is allergic to penicillin.",
        "Ana's birthday is on March 3.",
        "Ana prefers tea. Ana has two kids. Ana lives in Porto.",
    ]
    ids = [s.ingest(t, entity="ana").memory_id for t in texts]
    clock.advance(days=30)
    created = s.consolidate(max_sentences=3)
    assert len(created) == 1 and s.get(created[0]).content == " ".join(texts[:2])
    assert [s.get(m).consolidated_into for m in ids] == [created[0], created[0], None]
    assert s.get(ids[2]).status == "active"  # three sentences: not all in a summary of three
    texts_in_search = " ".join(
        m.content for m in s.memories(include_archived=False)
    )  # every sentence given is still in an active memory
    for t in texts:
        for sentence in t.split(". "):
            assert sentence.rstrip(".") in texts_in_search
    assert not s.consolidate(max_sentences=1)  # no two members fit whole in one sentence


def test_consolidate_writes_no_summary_over_the_content_limit(clock: Clock, tmp_path) -> None:
    """A summary too long to import again is not written; its members stay as they are."""
    rng = np.random.default_rng(0)
    s = MemoryStore(clock=clock)
    for tag in ("alpha", "beta", "gamma"):  # one sentence of ~98 KB each, under the limit
        words = " ".join(f"w{n}" for n in rng.integers(0, 10**9, 9000))
        s.ingest(f"{tag} {words}", entity="server", importance=0.1)
    clock.advance(days=3650)
    assert s.consolidate() == [] and {m.status for m in s.memories()} == {"active"}
    s.export_jsonl(tmp_path / "all.jsonl")
    assert len(MemoryStore().import_jsonl(tmp_path / "all.jsonl")) == 3


def test_purge_is_the_only_hard_delete(store: MemoryStore) -> None:
    a = store.ingest("to be purged about zebras").memory_id
    b = store.ingest("kept memory about giraffes").memory_id
    store.purge(a)
    with pytest.raises(KeyError):
        store.get(a)
    with pytest.raises(KeyError):
        store.history(a)
    assert store.search("zebras", mark_accessed=False) == []
    assert (
        store.core.execute("SELECT COUNT(*) FROM events WHERE memory_id = ?", (a,)).fetchone()[0]
        == 0
    )
    assert store.get(b).content == "kept memory about giraffes"
    with pytest.raises(KeyError):
        store.purge(a)


def test_restore(store: MemoryStore) -> None:
    a = store.ingest("archived then restored").memory_id
    store.core.execute("UPDATE memories SET status = 'archived' WHERE id = ?", (a,))
    store.restore(a)
    assert store.get(a).status == "active"
    assert store.history(a)["kind"].iloc[-1] == "restore"


def test_states_from_accessibility(store: MemoryStore, clock: Clock) -> None:
    store.ingest("fresh memory")
    assert store.to_dataframe()["state"].iloc[0] == "active"
    clock.advance(days=3650)
    assert store.to_dataframe()["state"].iloc[0] in ("silent", "unavailable")
    assert len(store) == 1  # states never delete


def test_a_flag_tags_no_memory_created_after_it(store: MemoryStore) -> None:
    """A flag at ``now`` tags the neighbours that exist then: a tag event is never older than
    the memory it strengthens."""
    flagged = store.ingest("the crucial kickoff decision", now=T0).memory_id
    before = store.ingest("an earlier note on hiring", now=T0 - timedelta(hours=1)).memory_id
    later = store.ingest("a follow-up about budgets", now=T0 + timedelta(hours=1)).memory_id
    untouched = store.get(later)
    out = store.importance(flagged, now=T0 + timedelta(minutes=10))
    assert out["id"].tolist() == [before]
    assert store.get(later) == untouched and "tag" not in set(store.history(later)["kind"])
