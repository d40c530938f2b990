"""Hybrid search over a store core: FTS5 BM25 and vector rankings fused by RRF, weighted by
retention and context (:mod:`memlab.store.fusion`); the hits it returns are accessed."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memlab.store import fts, fusion
from memlab.store.core import StoreCore
from memlab.store.dynamics import days_between
from memlab.store.records import MEMORY_COLUMNS, Memory, SearchHit
from memlab.store.relevance import DEFAULT_REVIEW, ReviewPolicy
from memlab.store.schema import STATUSES
from memlab.store.secrets import screen_query
from memlab.store.validation import (
    MAX_RESULTS,
    check_chars,
    check_count,
    check_non_negative,
    check_optional_str,
    check_topics,
    check_unit,
)


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
    """

    candidates: int = 50
    time_weight: float = 0.5
    topic_weight: float = 0.5
    project_weight: float = 0.5
    min_similarity: float = 0.0
    keyword_max_df: float | None = fts.MAX_DF
    keyword_max_postings: int | None = fts.MAX_POSTINGS
    review: ReviewPolicy = DEFAULT_REVIEW

    def __post_init__(self) -> None:
        if not isinstance(self.review, ReviewPolicy):
            raise TypeError(f"review must be a ReviewPolicy, got {type(self.review).__name__}")
        check_unit(self.time_weight, "time_weight")
        check_non_negative(self.topic_weight, "topic_weight")
        check_non_negative(self.project_weight, "project_weight")
        check_count(self.candidates, "candidates")
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
        changes = {
            k: v
            for k, v in (
                ("time_weight", time_weight),
                ("topic_weight", topic_weight),
                ("project_weight", project_weight),
            )
            if v is not None
        }
        return replace(self, **changes) if changes else self


def check_query(query: object) -> str:
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    if not query.strip():
        raise ValueError("query is empty")
    return check_chars(query, "query")


def _statuses(include_archived: bool) -> tuple[str, ...]:
    return STATUSES if include_archived else ("active",)


def _merge(
    a: list[tuple[int, float]], b: list[tuple[int, float]], n: int, *, lower_first: bool
) -> list[tuple[int, float]]:
    """One ranking from two: each memory at its best score, best first, top ``n``."""
    best: dict[int, float] = {}
    for m, v in [*a, *b]:
        if m not in best or (v < best[m] if lower_first else v > best[m]):
            best[m] = v
    ordered = sorted(best.items(), key=lambda kv: (kv[1] if lower_first else -kv[1], kv[0]))
    return ordered[:n]


def rankings(
    core: StoreCore,
    settings: SearchOptions,
    query: str,
    n: int,
    *,
    query_vector: NDArray[np.floating] | None = None,
    include_archived: bool = False,
    include_history: bool = False,
    while_waiting: Callable[[list[int]], object] | None = None,
) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    """``(keyword, vector)``: up to ``n`` (id, bm25) and (id, cosine) each, best first.

    ``include_archived`` and ``include_history`` search memories of every status and the texts
    of their history (superseded and replaced contents, observations): a memory ranks at its
    best match. ``while_waiting`` is called with the keyword ranking's ids once it is known,
    while the vector side may still run in the core's worker (on the same snapshot).
    """
    include_history = include_history or include_archived
    statuses = _statuses(include_history)
    with core.read():
        # the query's embedding and vector query run in the core's worker thread while FTS5
        # ranks on the connection (memlab.store.background)
        pending = core.start_vector_search(
            query,
            n,
            query_vector=query_vector,
            statuses=statuses,
            min_similarity=settings.min_similarity,
        )
        try:
            keyword = core.keyword_search(
                query,
                n,
                statuses=statuses,
                max_df=settings.keyword_max_df,
                max_postings=settings.keyword_max_postings,
            )
            if while_waiting is not None and not include_history:
                while_waiting([m for m, _ in keyword])
        except BaseException:
            pending.wait()
            raise
        qvec, vector = pending.result()
        if include_history:
            keyword = _merge(keyword, core.history_keyword_search(query, n), n, lower_first=True)
            past = [
                (m, c)
                for m, c in core.history_vector_search(qvec, n)
                if c > settings.min_similarity
            ]
            vector = _merge(vector, past, n, lower_first=False)
    return keyword, vector


def search(
    core: StoreCore,
    settings: SearchOptions,
    query: str,
    k: int = 10,
    *,
    project: str | None = None,
    topics: Iterable[str] = (),
    mark_accessed: bool = True,
    include_archived: bool = False,
    include_history: bool = False,
    now: datetime | None = None,
    query_vector: NDArray[np.floating] | None = None,
    secrets: str = "redact",
) -> list[SearchHit]:
    """Ranked hits of ``query`` (see :meth:`memlab.store.MemoryStore.search`).

    Unless ``mark_accessed=False``, the hits that clear ``settings.review``'s relevance test are
    reviewed with its grade (:mod:`memlab.store.relevance`); the others are left unchanged.

    The copy of the query kept in the access events is screened for secrets (redacted unless
    ``secrets="allow"``; a query is never rejected: searching is not storing).
    """
    check_query(query)
    k = check_count(k, "k", maximum=MAX_RESULTS)
    project = check_optional_str(project, "project")
    topic_set = set(check_topics(topics))
    at = core.now(now).timestamp()
    n = max(settings.candidates, 5 * k)
    columns = "id, project, topics, stability, last_access"
    rows: dict[int, Any] = {}
    with core.read():
        keyword, vector = rankings(
            core,
            settings,
            query,
            n,
            query_vector=query_vector,
            include_archived=include_archived,
            include_history=include_history,
            # the keyword hits' rows are read while the vector side may still be running
            while_waiting=lambda ids: rows.update(core.rows(ids, columns)),
        )
        keyword_rank = {mid: r for r, (mid, _) in enumerate(keyword, start=1)}
        vector_rank = {mid: r for r, (mid, _) in enumerate(vector, start=1)}
        similarity = dict(vector)
        pool = set(keyword_rank) | set(vector_rank)
        rows.update(core.rows([m for m in pool if m not in rows], columns))
        ids = sorted(m for m in pool if m in rows)
        if not ids:
            return []
        elapsed = days_between(at, [rows[m]["last_access"] for m in ids])
        retention = np.clip(
            core.dynamics.retention(elapsed, [rows[m]["stability"] for m in ids]), 0.0, 1.0
        )
        overlap = np.array(
            [
                len(topic_set & set(json.loads(rows[m]["topics"]))) / len(topic_set)
                if topic_set
                else 0.0
                for m in ids
            ]
        )
        pmatch = np.array([project is not None and rows[m]["project"] == project for m in ids])
        score, rrf, time_factor, context = fusion.search_scores(
            [keyword_rank.get(m, np.inf) for m in ids],
            [vector_rank.get(m, np.inf) for m in ids],
            retention,
            time_weight=settings.time_weight,
            topic_overlap=overlap,
            topic_weight=settings.topic_weight,
            project_match=pmatch,
            project_weight=settings.project_weight,
        )
        top = fusion.top_k(score, ids, k)
        chosen = [ids[j] for j in top]
        full = {
            int(r["id"]): Memory.from_row(r)
            for r in core.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN"
                f" ({','.join('?' for _ in chosen)})",
                chosen,
            )
        }
    hits = [
        SearchHit(
            memory=full[ids[j]],
            score=float(score[j]),
            rrf=float(rrf[j]),
            keyword_rank=keyword_rank.get(ids[j]),
            vector_rank=vector_rank.get(ids[j]),
            similarity=similarity.get(ids[j]),
            retention=float(retention[j]),
            time_factor=float(time_factor[j]),
            project_match=bool(pmatch[j]),
            topic_overlap=float(overlap[j]),
            context=float(context[j]),
        )
        for j in top
    ]
    if mark_accessed and any(g is not None for g in settings.review.grades(hits)):
        kept_query = screen_query(query[:200], secrets)
        with core.write():  # short: k rows reviewed, after the ranking read has ended
            current = core.rows([h.memory.id for h in hits])
            grades = settings.review.grades(hits)
            for rank, (hit, grade) in enumerate(zip(hits, grades, strict=True), start=1):
                row = current.get(hit.memory.id)
                if row is not None and grade is not None:
                    core.review(row, at, source="search", grade=grade, query=kept_query, rank=rank)
    return hits


def nearest(
    core: StoreCore, text: str, n: int = 5, *, include_archived: bool = False
) -> list[tuple[int, float]]:
    """The ``n`` memories most similar to ``text`` by vector (id, cosine); reads only."""
    qvec = core.embed_query(text)
    with core.read():
        return core.vector_search(qvec, n, statuses=_statuses(include_archived))


__all__ = ["SearchOptions", "check_query", "nearest", "rankings", "search"]
