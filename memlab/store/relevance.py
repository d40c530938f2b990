"""Which search hits count as a retrieval, and with what grade (testing effect; pure, no I/O).

Being returned by a search is not being used. A search reviews (strengthens) only the hits that
clear a relevance test, with a grade that follows how strong the match was:

- **relevant** when all three hold: the hit ranks within the first ``max_rank`` results; its
  fused score is at least ``relative_score`` times the top hit's; and it matched the query,
  lexically (it is in the FTS5 keyword ranking: a query term, after the document-frequency
  filter, occurs in it) or semantically (vector cosine ``>= min_cosine``). A hit that only came
  up because the vector ranking returns *something* for every query (cosine 0.04, a nonsense
  query) is not relevant and is not strengthened.
- **grade**: ``Easy`` when cosine ``>= easy_cosine``; ``Good`` when cosine ``>= min_cosine``
  or the hit is the top keyword match; ``Hard`` otherwise (a lexical match of lesser rank).

An explicit use by the agent (:meth:`memlab.store.MemoryStore.feedback`) is the stronger
signal; a preview (``mark_accessed=False``) reviews nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memlab.models.fsrs6 import Rating
from memlab.store.records import SearchHit


@dataclass(frozen=True)
class ReviewPolicy:
    """The relevance test and grading of search hits (see the module docstring)."""

    max_rank: int = 3
    relative_score: float = 0.5
    min_cosine: float = 0.3
    easy_cosine: float = 0.7

    def __post_init__(self) -> None:
        if isinstance(self.max_rank, bool) or not isinstance(self.max_rank, int):
            raise TypeError(f"max_rank must be an int, got {self.max_rank!r}")
        if self.max_rank < 0:
            raise ValueError(f"max_rank must be >= 0, got {self.max_rank}")
        if not 0.0 <= self.relative_score <= 1.0:
            raise ValueError(f"relative_score must be in [0, 1], got {self.relative_score}")
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
        if not hits:
            return []
        top = max(h.score for h in hits)
        return [self.grade(h, rank, top) for rank, h in enumerate(hits, start=1)]


#: The store's default policy.
DEFAULT_REVIEW = ReviewPolicy()
