"""Tagging per event: repeated flags do not stack; protection needs a pin or independent events."""

from __future__ import annotations

from datetime import timedelta

import pytest
from store_helpers import T0, Clock

from memlab.models.heat import PROTECTED_IMPORTANCE
from memlab.store import MemoryStore


def _pair(clock: Clock, importance: float = 0.5) -> tuple[MemoryStore, int, int, int]:
    s = MemoryStore(clock=clock)
    near = s.ingest("The release train leaves on Thursdays.", importance=importance).memory_id
    clock.advance(minutes=30)
    seed = s.ingest("Production outage: the payment service fell over.").memory_id
    clock.advance(minutes=30)
    other = s.ingest("Budget review moved to the second week of March.").memory_id
    clock.advance(hours=1)
    return s, near, seed, other


def test_repeated_flag_of_one_event_does_not_stack(clock: Clock) -> None:
    s, near, seed, _ = _pair(clock)
    first = s.importance(seed, event_type="outage")
    assert near in set(first["id"])
    after_one = s.get(near).importance
    assert 0.5 < after_one < PROTECTED_IMPORTANCE
    for _ in range(3):
        again = s.importance(seed, event_type="outage")
        assert again.empty
    assert s.get(near).importance == after_one
    tags = s.history(near).query("kind == 'tag'")
    assert len(tags) == 1
    assert s.history(seed).query("kind == 'importance'")["data"].iloc[-1]["repeated"] is True


def test_one_event_never_protects_a_neighbour(clock: Clock) -> None:
    s, near, seed, _ = _pair(clock, importance=0.85)
    s.importance(seed, event_type="outage")
    assert 0.85 < s.get(near).importance < PROTECTED_IMPORTANCE
    assert s.forget_sweep(now=T0 + timedelta(days=400)).set_index("id").loc[near, "protected"] in (
        False,
        0,
    )


def test_independent_events_or_a_pin_protect(clock: Clock) -> None:
    s, near, seed, other = _pair(clock, importance=0.8)
    s.importance(seed, event_type="outage")
    s.importance(seed, event_type="postmortem")  # a different event of the same memory
    s.importance(other, event_type="budget")  # another memory's event
    assert s.get(near).importance >= PROTECTED_IMPORTANCE
    pinned = MemoryStore(clock=clock)
    mid = pinned.ingest("Never rotate the root key without the HSM.", importance=0.95).memory_id
    assert pinned.get(mid).importance >= PROTECTED_IMPORTANCE


def test_event_type_is_checked(clock: Clock) -> None:
    s, near, seed, _ = _pair(clock)
    with pytest.raises((TypeError, ValueError), match="event_type"):
        s.importance(seed, event_type=3)  # type: ignore[arg-type]
    assert s.get(near).importance == 0.5
