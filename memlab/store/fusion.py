"""Reciprocal rank fusion and the store's search score, vectorised (pure numpy, no I/O).

``rrf(d) = sum_i w_i / (RRF_K + rank_i(d))`` with ranks from 1 (Cormack et al., 2009; a list
that does not hold ``d`` adds nothing), then the store's weighting

    score = rrf * time_factor * context
    time_factor = (1 - time_weight) + time_weight * retention
    context = 1 + project_weight * project_match + topic_weight * topic_overlap

The store's search and :mod:`memlab.eval.locomo` both call these functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: Reciprocal-rank-fusion constant.
RRF_K = 60


def search_scores(
    keyword_rank: ArrayLike,
    vector_rank: ArrayLike,
    retention: ArrayLike,
    *,
    time_weight: float = 0.0,
    topic_overlap: ArrayLike | float = 0.0,
    topic_weight: float = 0.0,
    project_match: ArrayLike | float = 0.0,
    project_weight: float = 0.0,
    keyword_weight: float = 1.0,
    vector_weight: float = 1.0,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The store's search score of each candidate: ``(score, rrf, time_factor, context)``;
    a rank of ``inf`` (not in that ranking) adds 0 to ``rrf``."""
    keyword, vector = np.asarray(keyword_rank, dtype=float), np.asarray(vector_rank, dtype=float)
    if (keyword < 1).any() or (vector < 1).any():
        raise ValueError("ranks start at 1")
    fused = keyword_weight / (RRF_K + keyword) + vector_weight / (RRF_K + vector)
    time_factor = (1.0 - time_weight) + time_weight * np.asarray(retention, dtype=float)
    context = (
        1.0
        + project_weight * np.asarray(project_match, dtype=float)
        + topic_weight * np.asarray(topic_overlap, dtype=float)
    )
    return fused * time_factor * context, fused, time_factor, context


def top_k(scores: ArrayLike, ids: ArrayLike, k: int) -> NDArray[np.int64]:
    """Positions of the ``k`` best scores, best first; ties go to the smaller id."""
    return np.lexsort((np.asarray(ids), -np.asarray(scores, dtype=float)))[:k]


def current_first(
    ids: Sequence[int], pairs: Iterable[tuple[int, int]], newer: Callable[[int, int], bool]
) -> list[int]:
    """The ranked ``ids`` with the newer of each pair ahead of the older one.

    Hits are placed in rank order, each after its newer partners not placed yet: every pair
    ends newer first, a hit moves up only to stand ahead of an older partner (or of one a
    partner stands ahead of), and hits in no pair keep their order. Only a permutation: recall
    at k is unchanged.

    Parameters
    ----------
    ids : sequence of int
        Hit ids, best first.
    pairs : iterable of (int, int)
        Pairs of hits that are versions of one fact (ids not in ``ids`` are ignored).
    newer : callable
        ``newer(a, b)``: whether ``a`` is the newer of the pair; must be a strict order.
    """
    partners: dict[int, list[int]] = {m: [] for m in ids}
    for a, b in pairs:
        if a in partners and b in partners and a != b:
            partners[a].append(b)
            partners[b].append(a)
    rank = {m: i for i, m in enumerate(ids)}
    placed: list[int] = []
    done: set[int] = set()

    def place(m: int) -> None:
        done.add(m)
        for p in sorted(partners[m], key=rank.__getitem__):
            if p not in done and newer(p, m):
                place(p)
        placed.append(m)

    for m in ids:
        if m not in done:
            place(m)
    return placed
