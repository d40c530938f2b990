"""Importance from content on ingest (importance="auto"), schema 5, consolidation by band."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import T0, Clock

from memlab.gate import Gate
from memlab.informativeness import MAX_CONTENT_IMPORTANCE, TermStats, content_importance
from memlab.models.heat import PROTECTED_IMPORTANCE, HeatModel
from memlab.store import MemoryStore
from memlab.store.corpus import term_stats
from memlab.store.dynamics import Dynamics
from memlab.store.schema import SCHEMA_VERSION

COMMON = [f"we had a meeting about the plan on day {i}" for i in range(30)]


def test_auto_is_the_default_and_a_given_value_wins() -> None:
    s = MemoryStore(gate=Gate.off())
    auto = s.get(s.ingest("Melanie painted a sunrise over Lake Tahoe in 2022").memory_id)
    given = s.get(s.ingest("the same kind of text, importance given", importance=0.3).memory_id)
    zero = s.get(s.ingest_many([{"content": "another one", "importance": 0.0}])[0].memory_id)
    assert auto.importance_auto and 0.0 < auto.importance < MAX_CONTENT_IMPORTANCE
    assert not given.importance_auto and given.importance == 0.3
    assert not zero.importance_auto and zero.importance == 0.0
    frame = s.to_dataframe().set_index("id")
    assert frame.loc[auto.id, "importance_auto"] and not frame.loc[given.id, "importance_auto"]


def test_informative_text_gets_more_importance_than_a_common_one() -> None:
    s = MemoryStore(gate=Gate.off())
    s.ingest_many(COMMON)
    plain = s.get(s.ingest("we had a meeting about the plan").memory_id)
    rich = s.get(
        s.ingest("Caroline adopted a greyhound named Oscar in Portland on 3 May").memory_id
    )
    assert rich.importance > plain.importance + 0.1


def test_auto_importance_is_the_informativeness_against_the_keyword_index() -> None:
    s = MemoryStore(gate=Gate.off())
    texts = [*COMMON, "Jon opened a dance studio in Lyon", "plan a café visit with max_connections"]
    ids = [r.memory_id for r in s.ingest_many(texts, batch_size=7)]
    with s.core.read():
        stats = term_stats(s.core, texts)
    # the index's document frequencies are the corpus's own (café -> cafe, max_connections ->
    # max + connections: the tokenizer's split, rarest token)
    assert stats.n_docs == len(texts)
    assert stats == TermStats(stats.n_docs, TermStats.from_texts(texts).df)
    sweep = s.forget_sweep().set_index("id")
    expected = content_importance(texts, TermStats.from_texts(texts))
    assert sweep.loc[ids, "importance"].to_numpy() == pytest.approx(expected)


def test_auto_importance_follows_the_corpus_as_it_grows() -> None:
    s = MemoryStore(gate=Gate.off())
    s.ingest_many(COMMON)
    first = s.ingest("the zeppelin landed near the harbour").memory_id
    at_ingest = s.get(first).importance
    s.ingest_many([f"zeppelin tour number {i} near the harbour" for i in range(40)])
    now = s.forget_sweep().set_index("id").loc[first, "importance"]
    assert now < at_ingest  # its words became common: judged again against the corpus now
    assert s.get(first).importance == at_ingest  # the stored estimate is not rewritten


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(min_size=1, max_size=300).filter(str.strip), min_size=1, max_size=6))
def test_content_alone_never_protects(texts: list[str]) -> None:
    with MemoryStore(gate=Gate.off(), secrets="allow") as s:
        try:
            s.ingest_many(texts)
        except ValueError:  # NUL, lone surrogates: refused at the boundary
            return
        sweep = s.forget_sweep(now=T0 + timedelta(days=3650))
        assert (sweep["importance"] < MAX_CONTENT_IMPORTANCE).all()
        assert (sweep["importance"] < PROTECTED_IMPORTANCE).all() and not sweep["protected"].any()


def test_reinforce_merges_a_given_importance_over_an_estimate() -> None:
    s = MemoryStore()
    mid = s.ingest("The build server lives in rack 12 of room B").memory_id
    assert s.get(mid).importance_auto
    again = s.ingest("The build server lives in rack 12 of room B", importance=0.7)
    assert again.memory_id == mid and again.decision.value == "reinforce"
    m = s.get(mid)
    assert m.importance == 0.7 and not m.importance_auto  # the given value wins
    s.ingest("The build server lives in rack 12 of room B")  # an estimate never lowers it
    assert s.get(mid).importance == 0.7 and not s.get(mid).importance_auto


def test_a_flag_or_a_tag_makes_importance_given() -> None:
    s = MemoryStore(gate=Gate.off())
    a = s.ingest("kickoff of the Atlas project", now=T0).memory_id
    b = s.ingest("Atlas budget notes", now=T0 + timedelta(hours=1)).memory_id
    s.importance(a, now=T0 + timedelta(hours=2))
    assert not s.get(a).importance_auto and s.get(a).importance == 0.95
    assert not s.get(b).importance_auto  # tagged: the store's own record from now on


def test_export_import_keeps_the_flag_and_reads_older_exports(tmp_path: Path) -> None:
    s = MemoryStore(gate=Gate.off())
    s.ingest("estimated from its text")
    s.ingest("given by the caller", importance=0.4)
    path = tmp_path / "out.jsonl"
    s.export_jsonl(path)
    t = MemoryStore(gate=Gate.off())
    t.import_jsonl(path)
    assert [m.importance_auto for m in t.memories()] == [True, False]
    lines = path.read_text().splitlines()
    old = [lines[0]] + [
        json.dumps({k: v for k, v in json.loads(x).items() if k != "importance_auto"})
        for x in lines[1:]
    ]
    path.write_text("\n".join(old) + "\n")
    u = MemoryStore(gate=Gate.off())
    u.import_jsonl(path)  # an export written before schema 5: importances were given
    assert [m.importance_auto for m in u.memories()] == [False, False]


def test_a_schema_4_file_migrates(tmp_path: Path) -> None:
    path = tmp_path / "v4.db"
    with MemoryStore(path) as s:
        old = s.ingest("written under schema 4", importance=0.5).memory_id
    conn = sqlite3.connect(path)  # back to schema 4: no importance_auto column
    conn.execute("ALTER TABLE memories DROP COLUMN importance_auto")
    conn.execute("ALTER TABLE memories DROP COLUMN own_chars")
    conn.execute("ALTER TABLE memories DROP COLUMN valid_from")
    conn.execute("ALTER TABLE memories DROP COLUMN valid_until")
    conn.execute("DELETE FROM schema_version WHERE version >= 5")
    conn.commit()
    assert "importance_auto" not in {r[1] for r in conn.execute("PRAGMA table_info(memories)")}
    conn.close()
    with MemoryStore(path) as s:
        assert s.stats()["schema_version"] == SCHEMA_VERSION == 9
        m = s.get(old)
        assert m.importance == 0.5 and not m.importance_auto  # kept as given
        assert m.own_chars is None and m.own_text == m.content
        new = s.get(s.ingest("a new fact about penguins in Oslo").memory_id)
        assert new.importance_auto
        assert s.forget_sweep().set_index("id").loc[old, "importance"] == 0.5


# ------------------------------------------------------------------ consolidation by band
def _group(s: MemoryStore, at: object) -> list[int]:
    texts = [
        "Alice leads the data team.",
        "Alice prefers written updates.",
        "Alice reviews the data pipeline.",
    ]
    return [s.ingest(t, entity="alice", now=at).memory_id for t in texts]  # type: ignore[arg-type]


@pytest.mark.parametrize("hours", [1, 4, 12, 24, 72])
def test_a_memory_hours_old_is_never_consolidated(hours: float) -> None:
    s = MemoryStore(gate=Gate.off())
    _group(s, T0)
    assert s.consolidate(now=T0 + timedelta(hours=hours)) == []
    assert all(m.status == "active" for m in s.memories())


def test_consolidation_starts_when_memories_leave_warm() -> None:
    heat = HeatModel()
    warm_ends = heat.band_ends(heat.reference_stability)["warm"]  # ~5.6 days for a new memory
    assert 5.0 < warm_ends < 6.5
    s = MemoryStore(gate=Gate.off())
    ids = _group(s, T0)
    assert s.consolidate(now=T0 + timedelta(days=warm_ends * 0.95)) == []
    created = s.consolidate(now=T0 + timedelta(days=warm_ends * 1.05))
    assert len(created) == 1 and all(s.get(m).consolidated_into == created[0] for m in ids)


def test_a_memory_used_often_is_consolidated_later() -> None:
    clock = Clock()
    s = MemoryStore(gate=Gate.off(), clock=clock)
    ids = _group(s, T0)
    used = ids[0]
    for day in (1, 3, 6, 10, 15):
        s.feedback(used, now=T0 + timedelta(days=day))
    # 10 days after the last use: the others are long cold, the used one still warm
    created = s.consolidate(now=T0 + timedelta(days=25))
    assert len(created) == 1
    assert s.get(used).status == "active" and s.get(used).consolidated_into is None
    assert all(s.get(m).consolidated_into == created[0] for m in ids[1:])


def test_ebbinghaus_constants_would_consolidate_hours_old_memories() -> None:
    """The reason the default is the fitted preset: with Ebbinghaus's own constants warm ends
    after ~3 hours."""
    s = MemoryStore(gate=Gate.off(), dynamics=Dynamics(heat=HeatModel.preset("ebbinghaus1885")))
    _group(s, T0)
    assert len(s.consolidate(now=T0 + timedelta(hours=6))) == 1
    assert np.isclose(HeatModel.preset("ebbinghaus1885").band_ends()["warm"] * 24, 2.97, atol=0.01)


# ------------------------------------------------------------------ context on ingest
def test_context_is_searched_but_importance_reads_the_own_text() -> None:
    s = MemoryStore(gate=Gate.off())
    s.ingest_many(COMMON)
    own = "we had a meeting about the plan"
    ctx = "Caroline adopted a greyhound named Oscar in Portland on 3 May"
    with_ctx = s.get(s.ingest(own, context=ctx).memory_id)
    alone = s.get(s.ingest(ctx).memory_id)
    assert with_ctx.content == f"{own} (context: {ctx})" and with_ctx.own_text == own
    assert with_ctx.own_chars == len(own) and alone.own_chars is None
    hits = s.search("greyhound Oscar Portland", k=5, mark_accessed=False)
    assert with_ctx.id in {h.memory.id for h in hits}  # the context is searched
    assert with_ctx.importance < alone.importance - 0.1  # importance: the own text's
    sweep = s.forget_sweep(keep=0.5, keep_by="length").set_index("id")
    assert sweep.loc[with_ctx.id, "keep_score"] == len(own)  # keep scores: the own text
    frame = s.to_dataframe().set_index("id")
    assert frame.loc[with_ctx.id, "own_chars"] == len(own)


def test_context_is_validated_screened_and_kept_through_export(tmp_path: Path) -> None:
    s = MemoryStore(gate=Gate.off())
    with pytest.raises(ValueError, match="context"):
        s.ingest("a text", context="   ")
    with pytest.raises(TypeError, match="context"):
        s.ingest("a text", context=3)  # type: ignore[arg-type]
    assert len(s) == 0
    r = s.ingest("deploy notes", context="password = Hunter2-very-secret-123456")
    assert r.redacted >= 1 and "Hunter2" not in s.get(r.memory_id).content
    path = tmp_path / "ctx.jsonl"
    s.export_jsonl(path)
    t = MemoryStore(gate=Gate.off())
    t.import_jsonl(path)
    assert t.memories()[0].own_text == "deploy notes"
