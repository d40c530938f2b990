"""Fixtures of the store tests (helpers live in store_helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from store_helpers import Clock

from memlab.store import MemoryStore, graph_shards


@pytest.fixture(autouse=True)
def one_thread_graph_adds(monkeypatch: pytest.MonkeyPatch) -> None:
    """HNSW graphs built by one thread, so the store tests are repeatable.

    usearch adds a batch in several threads, and the graph it builds then depends on their
    timing: under load about one build in twenty of a 400-vector graph left a vector no search
    reached, and the gate's nearest neighbour of a text changed between runs (both seen in CI).
    Built by one thread the graph is the same every run. The threaded build keeps its own test
    (``test_graph_shards.py``), which asserts only what an approximate graph promises.
    """
    monkeypatch.setattr(graph_shards, "ADD_THREADS", 1)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(clock: Clock) -> Iterator[MemoryStore]:
    s = MemoryStore(":memory:", clock=clock)
    yield s
    s.close()


@pytest.fixture
def file_store(tmp_path: Path, clock: Clock) -> Iterator[MemoryStore]:
    s = MemoryStore(tmp_path / "mem.db", clock=clock)
    yield s
    s.close()
