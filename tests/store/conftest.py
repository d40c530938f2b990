"""Fixtures of the store tests (helpers live in store_helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from store_helpers import Clock

from memlab.store import MemoryStore


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
