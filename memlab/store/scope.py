"""The first ``n`` ranked hits that are in scope, with as few lookups as the hits allow (pure).

The ids are looked up in two windows: the first ``n``, then, only if some of those were out of
scope, the rest (the same result as one lookup of all).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


def first_in_scope(
    hits: Sequence[tuple[int, float]], n: int, in_scope: Callable[[list[int]], set[int]]
) -> list[tuple[int, float]]:
    """The first ``n`` of ``hits`` (ranked ``(id, score)``) whose ids ``in_scope`` keeps."""
    if n <= 0 or not hits:
        return []
    first = list(hits[:n])
    allowed = in_scope([m for m, _ in first])
    kept = [(m, s) for m, s in first if m in allowed]
    if len(kept) == len(first) or len(hits) <= n:
        return kept
    rest = list(hits[n:])
    allowed = in_scope([m for m, _ in rest])
    kept += [(m, s) for m, s in rest if m in allowed]
    return kept[:n]
