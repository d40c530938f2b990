"""Current facts first and validity in time, through the public API (hashing embedder)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import T0, Clock

from memlab.cli import main
from memlab.gate import Candidate, Decision, Gate, JudgeResult
from memlab.store import MemoryStore


def moved(text: str, candidates: Sequence[Candidate]) -> JudgeResult:
    """A deterministic stand-in judge: a text saying 'moved' revises its nearest memory."""
    return (Decision.SUPERSEDE, 0) if "moved" in text.split() else None


def _texts(hits: list) -> list[str]:
    return [h.memory.content for h in hits]


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_explicit_revision_current_first_with_history(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    old = s.ingest("The staging database runs on port 5432.")
    clock.advance(days=3)
    new = s.ingest("The staging database now runs on port 5433.")
    assert new.decision is Decision.SUPERSEDE
    assert _texts(s.search("staging database port", mark_accessed=False)) == [
        "The staging database now runs on port 5433."
    ]
    hits = s.search("staging database port 5432", include_history=True, mark_accessed=False)
    assert [h.memory.id for h in hits] == [new.memory_id, old.memory_id]
    assert hits[1].superseded_by == new.memory_id and hits[0].superseded_by is None
    assert hits[1].memory.valid_until == hits[0].memory.valid_from == clock.now


def test_paraphrase_linked_newer_first_and_flagged_by_the_judge(clock: Clock, tmp_path) -> None:
    path = tmp_path / "p.db"
    with MemoryStore(path, clock=clock) as s:
        a = s.ingest("I live in a flat in Oakland near the lake.").memory_id
        clock.advance(days=30)
        b = s.ingest("I moved to a flat in Berkeley near the campus.").memory_id
        assert s.get(a).status == "active"  # the offline rules did not call it a revision
        hits = s.search("flat in Oakland near the lake", mark_accessed=False)
        assert [h.memory.id for h in hits[:2]] == [b, a]  # both found, the newer first
        assert hits[1].possibly_outdated_by is None
    with MemoryStore(path, clock=clock, gate=Gate(judged_by=moved)) as s:
        hits = s.search("flat in Oakland near the lake", mark_accessed=False)
        assert [(h.memory.id, h.possibly_outdated_by) for h in hits[:2]] == [(b, None), (a, b)]
    with pytest.raises(ValueError, match="judge"):
        MemoryStore(path)  # saved with a judge: it must be given again
    with MemoryStore(path, clock=clock, gate=moved) as s:  # a judge alone: the saved settings
        assert s.gate == Gate(judged_by=moved)
    with MemoryStore(tmp_path / "new.db", gate=moved) as s:  # a new store: the defaults
        assert s.gate == Gate(judged_by=moved)
    with pytest.raises(TypeError, match="gate must be a Gate or a judge"):
        MemoryStore(tmp_path / "bad.db", gate="rules")


def test_another_value_in_other_words_is_flagged_not_replaced(clock: Clock) -> None:
    """The gate keeps both (other words), search flags the older (memlab.revision.outdates)."""
    s = MemoryStore(clock=clock)
    a = s.ingest("The billing service runs on PostgreSQL 13.")
    clock.advance(days=30)
    new = "Billing is on PostgreSQL 15 since the maintenance window."
    b = s.ingest(new)
    assert b.decision is not Decision.SUPERSEDE and s.get(a.memory_id).status == "active"
    hits = s.search("Which PostgreSQL version does billing use?", mark_accessed=False)
    pairs = [(h.memory.id, h.possibly_outdated_by) for h in hits]
    assert pairs == [(b.memory_id, None), (a.memory_id, b.memory_id)]
    keep = Gate(judged_by=lambda text, candidates: (Decision.RELATED, 0))
    with MemoryStore(clock=clock, gate=keep) as t:  # a judge's answer stands
        for text in ("The billing service runs on PostgreSQL 13.", new):
            t.ingest(text)
        hits = t.search("Which PostgreSQL version does billing use?", mark_accessed=False)
        assert all(h.possibly_outdated_by is None for h in hits)


@pytest.mark.parametrize(
    "first, second",
    [
        ("I have a dog named Rex.", "I also have a cat named Tom."),  # additive
        ("My sister lives in Paris.", "My brother lives in Rome."),  # distinct
    ],
)
def test_additive_and_distinct_facts_both_stay_found(clock: Clock, first: str, second: str) -> None:
    s = MemoryStore(clock=clock)
    s.ingest(first)
    clock.advance(days=2)
    s.ingest(second)
    assert {m.status for m in s.memories()} == {"active"}
    for text in (first, second):
        hits = s.search(text, k=2, mark_accessed=False)
        assert set(_texts(hits)) == {first, second}
        assert all(h.possibly_outdated_by is None for h in hits)


def test_a_text_said_before_its_match_neither_supersedes_nor_reinforces_it(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    first = s.ingest("The staging database runs on port 5432.").memory_id
    earlier = T0 - timedelta(days=30)
    older = s.ingest("The staging database runs on port 6543.", now=earlier)
    again = s.ingest("The staging database runs on port 5432.", now=earlier)
    for result in (older, again):
        assert (result.decision, result.rule) == (Decision.RELATED, "older")
    assert s.get(first).status == "active" and s.get(first).access_count == 0
    assert s.get(older.memory_id).valid_until == s.get(first).valid_from
    hits = s.search("staging database port", as_of=T0 + timedelta(days=1), mark_accessed=False)
    assert first in [h.memory.id for h in hits]
    with pytest.raises(ValueError, match="later time"):  # an explicit successor, said before
        s.ingest("The staging database runs on port 7000.", supersedes=first, now=earlier)


def test_a_memory_superseded_earlier_in_the_batch_cannot_be_superseded_again(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    x = s.ingest("The staging database runs on port 5432").memory_id
    clock.advance(hours=1)
    items = [
        "The staging database runs on port 6543",  # the gate supersedes x
        {"content": "Staging database port: 7000", "supersedes": x},
    ]
    with pytest.raises(ValueError, match="supersede its current version"):
        s.ingest_many(items)
    assert [(m.id, m.status) for m in s.memories()] == [(x, "active")]


def test_chain_as_of_before_between_and_after(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    texts = [f"The API rate limit is {n} requests per minute." for n in (600, 900, 1200)]
    ids = [s.ingest(texts[0], observed_at=T0 - timedelta(days=10)).memory_id]
    for text in texts[1:]:
        clock.advance(days=5)
        ids.append(s.ingest(text, supersedes=ids[-1]).memory_id)
    v = s.versions(ids[0])
    assert v["memory_id"].tolist() == ids
    assert v["valid_from"].tolist() == [T0 - timedelta(days=10), T0 + timedelta(days=5),
                                        T0 + timedelta(days=10)]  # fmt: skip
    assert v["valid_until"].tolist()[:2] == v["valid_from"].tolist()[1:]
    assert v["valid_until"].isna().tolist() == [False, False, True]

    def as_of(days: float) -> list[int]:
        when = T0 + timedelta(days=days)
        return [h.memory.id for h in s.search("API rate limit", as_of=when, mark_accessed=False)]

    assert as_of(-20) == []  # before the first version
    assert as_of(-1) == [ids[0]] and as_of(5) == [ids[1]] and as_of(7) == [ids[1]]
    assert as_of(30) == [ids[2]]  # after the last
    frame = s.to_dataframe().set_index("id")
    assert frame.loc[ids[0], "valid_from"] == T0 - timedelta(days=10)
    assert frame.loc[ids[2], "valid_until"] is pd_nat()
    with pytest.raises(ValueError, match="as_of"):
        s.search("API rate limit", as_of=(T0).replace(tzinfo=None))


def pd_nat() -> object:
    import pandas as pd

    return pd.NaT


def test_observed_at_is_checked_and_carried_by_export(clock: Clock, tmp_path: Path) -> None:
    s = MemoryStore(clock=clock)
    with pytest.raises(ValueError, match="observed_at"):
        s.ingest("A fact from the past.", observed_at=T0.replace(tzinfo=None))
    with pytest.raises(TypeError, match="item 1"):
        s.ingest_many(["one fact", {"content": "two", "observed_at": "2020"}])
    assert len(s) == 0
    when = T0 - timedelta(days=400)
    mid = s.ingest_many([{"content": "We lived in Lisbon.", "observed_at": when}])[0].memory_id
    assert s.get(mid).valid_from == when and s.get(mid).created_at == T0
    s.export_jsonl(tmp_path / "e.jsonl")
    t = MemoryStore()
    (new,) = t.import_jsonl(tmp_path / "e.jsonl").values()
    assert t.get(new).valid_from == when


def test_cli_as_of_observed_at_and_judge(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")

    def run(*args: str) -> object:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["store", args[0], "--db", db, "--json", *args[1:]]) == 0
        return json.loads(out.getvalue())

    first = run("remember", "I", "live", "in", "Oakland.", "--observed-at",
                "2025-01-01T00:00:00+00:00", "--now", "2026-01-01T00:00:00+00:00")  # fmt: skip
    assert first["decision"] == "create"
    second = run("remember", "I", "moved", "to", "Berkeley.", "--judge",
                 "test_current:moved", "--now", "2026-02-01T00:00:00+00:00")  # fmt: skip
    assert second["decision"] == "supersede" and second["rule"] == "judge:test_current.moved"
    hits = run("recall", "live", "--as-of", "2025-06-01T00:00:00+00:00", "--no-mark",
               "--judge", "test_current:moved")  # fmt: skip
    assert [h["content"] for h in hits] == ["I live in Oakland."]
    assert hits[0]["superseded_by"] == second["memory_id"]
    assert hits[0]["valid_from"].startswith("2025-01-01")
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        args = ["recall", "live", "--include-history", "--no-mark", "--judge", "test_current:moved"]
        assert main(["store", *args[:1], "--db", db, *args[1:]]) == 0
    assert f"I live in Oakland.  (superseded by #{second['memory_id']})" in text.getvalue()
    MemoryStore(db, gate=Gate()).close()  # settings of the user's own
    stats = run("stats", "--judge", "test_current:moved")
    assert stats["gate"] == {**Gate().to_dict(), "judged_by": "test_current.moved"}
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["store", "stats", "--db", db, "--judge", "nowhere:judge"]) == 2
    assert "--judge" in err.getvalue()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["rent", "office", "port", "pet", "city"]),
            st.integers(1, 4),
            st.booleans(),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_no_text_given_becomes_unfindable_with_history(steps: list) -> None:
    """Random ingests, with revisions of each other (numbers changed) and explicit supersedes:
    every text given stays findable with include_history=True."""
    templates = {
        "rent": "My rent is {} hundred dollars a month.",
        "office": "The office opens at {} in the morning.",
        "port": "The staging server listens on port 80{}.",
        "pet": "Our dog eats {} cups of food a day.",
        "city": "The team meets in room {} on Mondays.",
    }
    clock = Clock()
    s = MemoryStore(clock=clock)
    given_texts = []
    for topic, n, explicit in steps:
        text = templates[topic].format(n)
        target = next(
            (m.id for m in s.memories() if m.status == "active" and topic in m.content), None
        ) if explicit else None  # fmt: skip
        clock.advance(hours=1)
        if target is not None:
            s.ingest(text, supersedes=target)
        else:
            s.ingest(text)
        given_texts.append(text)
    for text in given_texts:
        hits = s.search(text, k=50, include_history=True, mark_accessed=False)
        found = {h.memory.id for h in hits}
        history = {
            m.id
            for m in s.memories()
            if m.content == text or text in s.history(m.id)["text"].dropna().tolist()
        }
        assert found & history, text


def test_a_backdated_revision_does_not_end_the_current_fact(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    current = s.ingest("The staging database runs on port 5432.").memory_id
    clock.advance(days=1)
    old = s.ingest("The staging database runs on port 6000.", observed_at=T0 - timedelta(days=300))
    assert old.decision is Decision.RELATED  # an older value, not a successor
    assert s.get(current).status == "active" and s.get(current).valid_until is None
    hits = s.search("staging database port", k=2, mark_accessed=False)
    assert [h.memory.id for h in hits] == [current, old.memory_id]  # the newer first
    assert s.get(old.memory_id).valid_until == T0  # it held until the current fact began

    def as_of(when):
        return [
            h.memory.id for h in s.search("staging database port", as_of=when, mark_accessed=False)
        ]

    assert as_of(T0 + timedelta(hours=1)) == [current]
    assert as_of(T0 - timedelta(days=100)) == [old.memory_id]
    with pytest.raises(ValueError, match="observed_at"):
        s.ingest("The staging database ran on port 7000.", supersedes=current,
                 observed_at=T0 - timedelta(days=30))  # fmt: skip
    assert s.get(current).status == "active"


def test_as_of_before_an_archive_or_consolidation_finds_what_search_found_then(
    clock: Clock,
) -> None:
    s = MemoryStore(clock=clock)
    ana = [s.ingest(t, entity="Ana").memory_id for t in
           ("Ana is allergic to penicillin.", "Ana's birthday is on March 3.")]  # fmt: skip
    wifi = s.ingest("The office wifi network is called Falcon.").memory_id
    then = T0 + timedelta(days=2)

    def as_of(query: str, when=then) -> set[int]:
        return {h.memory.id for h in s.search(query, as_of=when, mark_accessed=False)}

    before = as_of("Ana allergic penicillin"), as_of("office wifi network")
    assert ana[0] in before[0] and wifi in before[1]
    clock.advance(days=30)
    assert s.consolidate() and s.get(ana[0]).status == "archived"
    s.archive(wifi)
    assert (as_of("Ana allergic penicillin"), as_of("office wifi network")) == before
    later = clock.now + timedelta(hours=1)  # after both: archived, out of search
    assert ana[0] not in as_of("Ana allergic penicillin", later)
    assert wifi not in as_of("office wifi network", later)


def test_possibly_outdated_by_names_a_newer_hit(clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    port = "The staging database runs on port {}."
    clock.advance(days=5)
    middle = s.ingest(port.format(5433)).memory_id
    clock.advance(hours=1)
    older = s.ingest(port.format(5432), observed_at=T0 + timedelta(days=1)).memory_id
    clock.advance(days=1)
    current = s.ingest(port.format(5434)).memory_id
    assert s.get(middle).status == "superseded"
    hits = s.search("staging database port", mark_accessed=False)
    assert [h.memory.id for h in hits] == [current, older]
    # flagged by the current fact among the hits, not by the superseded version out of them
    assert hits[1].possibly_outdated_by == current
    then = s.search("staging database port", as_of=T0 + timedelta(days=2), mark_accessed=False)
    assert [(h.memory.id, h.possibly_outdated_by) for h in then] == [(older, None)]
