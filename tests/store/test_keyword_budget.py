"""The keyword budget (``keyword_max_postings``): a keyword query scores at most about that
many postings; the most frequent terms are left out first and the rarest is always kept."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_helpers import Clock

from memlab.gate import Gate
from memlab.store import MemoryStore, SearchOptions
from memlab.store.fts import MAX_POSTINGS, frequent_terms_dropped

# "report" is in 40 memories, "budget" in 12, "zephyr" in 2 (none above keyword_max_df's 10 %
# of 400 memories, so only the budget can leave one out). The gate is off: every text is kept
# as its own memory (texts differing by a number would otherwise revise each other).
TEXTS = (
    [f"weekly report number {i} on the release" for i in range(28)]
    + [f"weekly report and budget {i} for the team" for i in range(12)]
    + [f"zephyr migration step {i} finished" for i in range(2)]
    + [f"unrelated note {i} about lunch plans" for i in range(358)]
)


@pytest.fixture(scope="module")
def store() -> MemoryStore:
    s = MemoryStore(":memory:", clock=Clock(), gate=Gate.off())
    s.ingest_many(TEXTS, batch_size=200)
    yield s
    s.close()


def _kept(store: MemoryStore, terms: list[str], budget: int | None) -> list[str]:
    with store.core.read():
        return frequent_terms_dropped(store.core, terms, 0.1, budget)[0]


def test_budget_keeps_rarest_terms_within_it(store: MemoryStore) -> None:
    terms = ["report", "budget", "zephyr"]
    assert _kept(store, terms, None) == terms  # no budget: every term
    assert _kept(store, terms, 1000) == terms  # 54 postings fit
    assert _kept(store, terms, 14) == ["budget", "zephyr"]  # 2 + 12 fit, + 40 does not
    assert _kept(store, terms, 13) == ["zephyr"]
    assert _kept(store, terms, 1) == ["zephyr"]  # the rarest is always kept
    assert _kept(store, ["report", "budget"], 1) == ["budget"]


def test_store_search_uses_the_budget(store: MemoryStore) -> None:
    assert store.options.keyword_max_postings == MAX_POSTINGS
    options = SearchOptions(keyword_max_postings=14)
    small = MemoryStore(":memory:", clock=Clock(), gate=Gate.off(), search=options)
    small.ingest_many(TEXTS, batch_size=200)
    hits = dict(small.core.keyword_search("report budget zephyr", 100, max_postings=14))
    contents = {small.get(m).content for m in hits}
    assert all("report number" not in c for c in contents)  # "report" alone left out
    assert sum("budget" in c for c in contents) == 12 and sum("zephyr" in c for c in contents) == 2
    ranked, _ = small.rankings("report budget zephyr")
    assert {m for m, _ in ranked} <= set(hits)
    small.close()


@pytest.mark.parametrize("bad", [0, -5, 2.5, "many", True])
def test_bad_budget_is_refused(bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="keyword_max_postings"):
        SearchOptions(keyword_max_postings=bad)  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None)
@given(
    budget=st.integers(min_value=1, max_value=80),
    order=st.permutations(["report", "budget", "zephyr"]),
)
def test_kept_postings_never_exceed_the_budget_unless_one_term(
    store: MemoryStore, budget: int, order: list[str]
) -> None:
    df = {"report": 40, "budget": 12, "zephyr": 2}
    kept = _kept(store, list(order), budget)
    assert kept and "zephyr" in kept
    assert len(kept) == 1 or sum(df[t] for t in kept) <= budget
    assert kept == [t for t in order if t in kept]  # the query's order is kept
    # every term left out is more frequent than every term kept
    assert all(df[o] >= max(df[t] for t in kept) for o in order if o not in kept)


def _scores_unwindowed(core, term: str) -> dict[int, float]:
    rows = core.execute(
        "SELECT rowid, bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ?",
        (f'"{term}"',),
    )
    return {int(r[0]): float(r[1]) for r in rows}


def test_one_term_over_the_budget_scores_its_newest_matches(store: MemoryStore) -> None:
    # "report" alone: 40 matches, a budget of 10 scores its 10 newest (the highest ids)
    with store.core.read():
        every = _scores_unwindowed(store.core, "report")
        newest = sorted(every)[-10:]
        hits = store.core.keyword_search("report", 5, max_postings=10)
        assert {m for m, _ in hits} <= set(newest) and len(hits) == 5
        want = sorted((every[m], m) for m in newest)[:5]  # best bm25 first, ties by id
        assert [(m, s) for s, m in want] == hits  # each with its unwindowed score
        unbudgeted = store.core.keyword_search("report", 5, max_postings=None)
        best = sorted((s, m) for m, s in every.items())[:5]
        assert unbudgeted == [(m, s) for s, m in best]  # no budget: every match scored


def test_a_window_short_of_the_namespace_scores_every_match(tmp_path) -> None:
    path = tmp_path / "ns.db"
    with MemoryStore(path, clock=Clock(), gate=Gate.off(), namespace="small") as small:
        mine = {r.memory_id for r in small.ingest_many([f"shared word {i}" for i in range(3)])}
    with MemoryStore(path, clock=Clock(), gate=Gate.off(), namespace="big") as big:
        big.ingest_many([f"shared word again {i}" for i in range(50)])  # newer ids
    with MemoryStore(path, clock=Clock(), gate=Gate.off(), namespace="small") as small:
        with small.core.read():
            # the budget's 10 newest "shared" matches are all of the other namespace
            hits = small.core.keyword_search("shared", 10, max_postings=10, max_df=None)
        assert {m for m, _ in hits} == mine
