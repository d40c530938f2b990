"""Fixtures of the notebook tests: a store on a simulated clock with a few memories."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("IPython")

from nb_helpers import NOTES, T0, Clock  # noqa: E402

from memlab.store import MemoryStore  # noqa: E402


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(clock: Clock) -> Iterator[MemoryStore]:
    s = MemoryStore(":memory:", clock=clock)
    for i, (text, project, topics) in enumerate(NOTES):
        s.ingest(text, project=project, topics=topics, now=T0 + timedelta(hours=i))
    clock.advance(days=3)
    yield s
    s.close()
