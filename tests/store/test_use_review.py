"""The testing effect follows real use: only relevant hits are reviewed; feedback is a use."""

from __future__ import annotations

import pytest
from store_helpers import Clock, VecEmbedder

from memlab.gate import Gate
from memlab.models.fsrs6 import Rating
from memlab.store import MemoryStore, SearchOptions
from memlab.store.relevance import ReviewPolicy


def _store(clock: Clock) -> MemoryStore:
    # texts that differ only in the similarity they ask for are distinct memories here
    return MemoryStore(embedder=VecEmbedder(), clock=clock, gate=Gate())


def test_irrelevant_hit_is_not_strengthened_and_a_relevant_one_is(clock: Clock) -> None:
    s = _store(clock)
    answer = s.ingest("base alpha fact").memory_id
    noise = s.ingest("sim=0.04 unrelated turn").memory_id
    clock.advance(days=2)
    hits = s.search("base query", k=5)
    by_id = {h.memory.id: h for h in hits}
    assert noise in by_id and by_id[noise].similarity == pytest.approx(0.04, abs=1e-6)
    assert by_id[noise].keyword_rank is None
    assert s.get(noise).access_count == 0 and list(s.history(noise)["kind"]) == ["create"]
    m = s.get(answer)
    assert m.access_count == 1 and m.last_access == clock.now
    assert s.history(answer)["grade"].iloc[-1] == Rating.Easy  # cosine 1.0


def test_nonsense_query_strengthens_nothing(clock: Clock) -> None:
    s = MemoryStore(clock=clock)  # the hashing embedder: small cosines for unrelated text
    texts = ("Alice moved to Berlin in May 2023", "The cat likes fish and sleeping in the sun")
    ids = [s.ingest(t).memory_id for t in texts]
    clock.advance(days=1)
    hits = s.search("xqzv blorf", k=5)
    assert hits and all(h.keyword_rank is None and h.similarity < 0.3 for h in hits)
    assert all(s.get(i).access_count == 0 for i in ids)


def test_grades_follow_match_strength(clock: Clock) -> None:
    s = _store(clock)
    strong = s.ingest("sim=0.8 strong").memory_id
    mid = s.ingest("sim=0.5 middling").memory_id
    clock.advance(days=1)
    hits = s.search("base", k=5, mark_accessed=False)
    grades = dict(zip([h.memory.id for h in hits], s.options.review.grades(hits), strict=True))
    assert grades[strong] == Rating.Easy
    # the second hit's fused score is half the first's or more only if it ranks closely
    assert grades[mid] in (Rating.Good, None)
    loose = ReviewPolicy(relative_score=0.0)
    assert dict(zip([h.memory.id for h in hits], loose.grades(hits), strict=True))[mid] == (
        Rating.Good
    )


def test_rank_cut_and_previews(clock: Clock) -> None:
    options = SearchOptions(review=ReviewPolicy(max_rank=1))
    s = MemoryStore(embedder=VecEmbedder(), clock=clock, search=options, gate=Gate())
    a = s.ingest("sim=0.9 first").memory_id
    b = s.ingest("sim=0.85 second").memory_id
    clock.advance(days=1)
    s.search("base", k=5, mark_accessed=False)
    assert s.get(a).access_count == s.get(b).access_count == 0
    s.search("base", k=5)
    assert s.get(a).access_count == 1 and s.get(b).access_count == 0


def test_feedback_is_an_explicit_use(clock: Clock) -> None:
    s = _store(clock)
    mid = s.ingest("sim=0.04 a fact search never ranks as relevant").memory_id
    clock.advance(days=3)
    before = s.get(mid)
    after = s.feedback(mid, Rating.Good)
    assert after.access_count == 1 and after.stability > before.stability
    assert after.storage > before.storage
    h = s.history(mid)
    assert h["kind"].iloc[-1] == "access" and h["data"].iloc[-1]["source"] == "feedback"
    with pytest.raises(ValueError, match="grade"):
        s.feedback(mid, 7)
    assert s.get(mid).access_count == 1


def test_massed_searches_do_not_inflate_storage_strength(clock: Clock) -> None:
    s = _store(clock)
    mid = s.ingest("base the answer").memory_id
    clock.advance(days=1)
    start = s.get(mid).storage
    s.search("base", k=3)
    once = s.get(mid).storage - start
    for _ in range(99):  # 100 searches in 50 s
        clock.advance(seconds=0.5)
        s.search("base", k=3)
    m = s.get(mid)
    assert m.access_count == 100
    assert m.storage - start < 5 * once  # diminishing returns: far from 100 full boosts
    assert m.storage < start + 5.0


def test_bad_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="min_cosine"):
        ReviewPolicy(min_cosine=0.9, easy_cosine=0.5)
    with pytest.raises(TypeError, match="review"):
        SearchOptions(review="loose")  # type: ignore[arg-type]
