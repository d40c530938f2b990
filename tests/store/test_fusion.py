"""fusion.current_first: the newer of each pair ahead of the older, only a permutation."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memlab.store.fusion import current_first


@st.composite
def _hits(draw: st.DrawFn) -> tuple[list[int], list[tuple[int, int]], dict[int, int]]:
    n = draw(st.integers(0, 12))
    ids = draw(st.permutations(list(range(1, n + 1))))
    time = {m: draw(st.integers(0, 5)) for m in ids}  # ties broken by id
    pairs = (
        draw(st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids)), max_size=15))
        if ids
        else []
    )
    return ids, pairs, time


@given(_hits())
def test_current_first_is_a_permutation_with_each_pair_newer_first(
    case: tuple[list[int], list[tuple[int, int]], dict[int, int]],
) -> None:
    ids, pairs, time = case

    def newer(a: int, b: int) -> bool:
        return (time[a], a) > (time[b], b)

    out = current_first(ids, pairs, newer)
    assert sorted(out) == sorted(ids)  # a permutation: the same hits, so recall at k unchanged
    pos = {m: i for i, m in enumerate(out)}
    for a, b in pairs:
        if a != b:
            new, old = (a, b) if newer(a, b) else (b, a)
            assert pos[new] < pos[old]
    paired = {m for p in pairs for m in p if p[0] != p[1]}
    alone = [m for m in ids if m not in paired]
    assert [m for m in out if m in alone] == alone  # hits in no pair keep their order
    rank = {m: i for i, m in enumerate(ids)}
    for m in out:  # a hit moves up only to stand ahead of an older hit it is linked to
        if pos[m] < rank[m]:
            older = {m}
            grew = True
            while grew:  # the hits reachable from m through newer-to-older pairs
                more = {
                    o
                    for a, b in pairs
                    for n, o in ((a, b), (b, a))
                    if n in older and o not in older and newer(n, o)
                }
                older |= more
                grew = bool(more)
            assert any(rank[o] < rank[m] and pos[o] > pos[m] for o in older - {m})


def test_current_first_places_the_newer_just_ahead() -> None:
    time = {1: 0, 2: 1, 3: 2, 4: 3}
    out = current_first([1, 2, 3, 4], [(1, 3)], lambda a, b: time[a] > time[b])
    assert out == [3, 1, 2, 4]
    assert current_first([1, 2], [], lambda a, b: a > b) == [1, 2]
    assert current_first([5, 9], [(5, 7)], lambda a, b: a > b) == [5, 9]  # 7 is not a hit
