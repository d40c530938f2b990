"""first_in_scope: the same hits as filtering every id at once, in at most two lookups."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.store.scope import first_in_scope


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 60), unique=True, max_size=40),
    st.sets(st.integers(0, 60)),
    st.integers(0, 45),
)
def test_the_first_n_in_scope_in_two_lookups_at_most(
    ids: list[int], allowed: set[int], n: int
) -> None:
    hits = [(m, 1.0 - i / 100) for i, m in enumerate(ids)]
    calls: list[list[int]] = []

    def in_scope(asked: list[int]) -> set[int]:
        calls.append(asked)
        return {m for m in asked if m in allowed}

    got = first_in_scope(hits, n, in_scope)
    assert got == [(m, s) for m, s in hits if m in allowed][:n]
    assert len(calls) <= 2 and all(calls)
    if calls:
        assert calls[0] == ids[:n]  # the first window: the first n ids only
    if len(calls) == 2:
        assert calls[1] == ids[n:] and len([m for m in ids[:n] if m in allowed]) < n


def test_every_hit_in_scope_is_one_lookup_of_n_ids() -> None:
    calls: list[int] = []

    def everything(asked: list[int]) -> set[int]:
        calls.append(len(asked))
        return set(asked)

    hits = [(m, 0.0) for m in range(150)]
    assert first_in_scope(hits, 50, everything) == hits[:50]
    assert calls == [50]
