"""How a store searches (:class:`SearchOptions`), and which search hits count as a retrieval,
with what grade (:class:`ReviewPolicy`: the testing effect; pure, no I/O).

Being returned by a search is not being used. A search reviews (strengthens) only the hits that
clear a relevance test, with a grade that follows how strong the match was:

- **relevant** when all three hold: the hit ranks within the first ``max_rank`` results; its
  fused score is at least ``relative_score`` times the top hit's; and it matched the query,
  lexically (it is in the FTS5 keyword ranking: a query term, after the document-frequency
  filter, occurs in it) or semantically (vector cosine ``>= min_cosine``), not merely
  returned because the vector ranking returns something for every query.
- **grade**: ``Easy`` when cosine ``>= easy_cosine``; ``Good`` when cosine ``>= min_cosine``
  or the hit is the top keyword match; ``Hard`` otherwise (a lexical match of lesser rank).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from memlab.models.fsrs6 import Rating
from memlab.store import fts
from memlab.store.records import SearchHit
from memlab.store.validation import check_count, check_non_negative, check_number, check_unit


@dataclass(frozen=True)
class ReviewPolicy:
    """The relevance test and grading of search hits (see the module docstring)."""

    max_rank: int = 3
    relative_score: float = 0.5
    min_cosine: float = 0.3
    easy_cosine: float = 0.7

    def __post_init__(self) -> None:
        check_number(self.max_rank, "max_rank", 0, integer=True, wanted="an integer >= 0")
        check_unit(self.relative_score, "relative_score")
        if not -1.0 <= self.min_cosine <= self.easy_cosine <= 1.0:
            raise ValueError(
                "need -1 <= min_cosine <= easy_cosine <= 1, got "
                f"{self.min_cosine}, {self.easy_cosine}"
            )

    def matches(self, *, keyword_rank: int | None, similarity: float | None) -> bool:
        """Whether a hit matched the query at all: lexically (it is in the keyword ranking) or
        semantically (cosine ``>= min_cosine``); not just returned because something is."""
        cosine = similarity if similarity is not None else float("-inf")
        return keyword_rank is not None or cosine >= self.min_cosine

    def grade(self, hit: SearchHit, rank: int, top_score: float) -> Rating | None:
        """The review grade of ``hit`` at ``rank`` (from 1), or None when it is not relevant."""
        if rank > self.max_rank or hit.score < self.relative_score * top_score:
            return None
        if not self.matches(keyword_rank=hit.keyword_rank, similarity=hit.similarity):
            return None
        cosine = hit.similarity if hit.similarity is not None else float("-inf")
        if cosine >= self.easy_cosine:
            return Rating.Easy
        if cosine >= self.min_cosine or hit.keyword_rank == 1:
            return Rating.Good
        return Rating.Hard

    def grades(self, hits: Sequence[SearchHit]) -> list[Rating | None]:
        """:meth:`grade` of each hit of a ranked result list (best first)."""
        top = max((h.score for h in hits), default=0.0)
        return [self.grade(h, rank, top) for rank, h in enumerate(hits, start=1)]


@dataclass(frozen=True)
class SearchOptions:
    """How a store searches (see :meth:`MemoryStore.search`).

    Parameters
    ----------
    candidates : int
        Candidates taken from each ranking (keyword, vector) before fusion: ``max(candidates,
        5 k)``.
    time_weight, topic_weight, project_weight : float
        Weights of retention, topic overlap and project match in the score.
    min_similarity : float
        Vector candidates must be more similar than this (orthogonal vectors are no match).
    keyword_max_df : float or None
        Query terms found in more than this share of memories are left out of the keyword
        query (almost no BM25 weight, most of FTS5's cost); None keeps every term.
    keyword_max_postings : int or None
        Budget of a keyword query: terms kept rarest first while their document frequencies
        sum to at most this (:func:`memlab.store.fts.keyword_search`); None: no budget.
    review : ReviewPolicy
        Which returned hits a search strengthens, and with what grade.
    versions_at : float
        Two hits whose stored vectors are at least this similar (cosine) count as versions of
        one fact, as linked ones do: the newer ranks ahead of the older.
    """

    candidates: int = 50
    time_weight: float = 0.5
    topic_weight: float = 0.5
    project_weight: float = 0.5
    min_similarity: float = 0.0
    keyword_max_df: float | None = fts.MAX_DF
    keyword_max_postings: int | None = fts.MAX_POSTINGS
    review: ReviewPolicy = ReviewPolicy()
    versions_at: float = 0.3

    def __post_init__(self) -> None:
        if not isinstance(self.review, ReviewPolicy):
            raise TypeError(f"review must be a ReviewPolicy, got {type(self.review).__name__}")
        check_unit(self.time_weight, "time_weight")
        check_non_negative(self.topic_weight, "topic_weight")
        check_non_negative(self.project_weight, "project_weight")
        check_count(self.candidates, "candidates")
        check_unit(self.versions_at, "versions_at")
        m = self.min_similarity
        if isinstance(m, bool) or not isinstance(m, (int, float)) or not -1 <= m < 1:
            raise ValueError(f"min_similarity must be a number in [-1, 1), got {m!r}")
        if self.keyword_max_df is not None:
            check_unit(self.keyword_max_df, "keyword_max_df")
        if self.keyword_max_postings is not None:
            check_count(self.keyword_max_postings, "keyword_max_postings")

    def override(
        self,
        time_weight: float | None = None,
        topic_weight: float | None = None,
        project_weight: float | None = None,
    ) -> SearchOptions:
        """These settings with the given weights replaced (None keeps one)."""
        given = {"time_weight": time_weight, "topic_weight": topic_weight}
        given["project_weight"] = project_weight
        changes = {k: v for k, v in given.items() if v is not None}
        return replace(self, **changes) if changes else self
