"""The first ``n`` ranked hits that are in scope, with as few lookups as the hits allow (pure).

Both rankings of a search over-fetch from an index shared by the file's namespaces and statuses
(FTS5 twice the candidates, the vector index three times), then keep the hits that are memories
of the search's namespace and statuses. Looking every fetched id up is not free (each reads a
page of memory rows, which hold their vectors). Most hits are in scope, so the ids are looked
up in two windows: the first ``n``, then, only if some of those were out of scope, all the
rest. The result is the same as looking all of them up at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


def first_in_scope(
    hits: Sequence[tuple[int, float]],
    n: int,
    in_scope: Callable[[list[int]], set[int]],
) -> list[tuple[int, float]]:
    """The first ``n`` of ``hits`` (ranked ``(id, score)``) whose ids ``in_scope`` keeps.

    ``in_scope`` is given a list of ids and returns those of them that may be returned; it is
    called at most twice: on the first ``n`` ids, then on the rest if fewer than ``n`` of
    those were kept.
    """
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


__all__ = ["first_in_scope"]
