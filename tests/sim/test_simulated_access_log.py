"""The simulated access log: bad counts refused before the store is written, seeds reproducible."""

from __future__ import annotations

import numpy as np
import pytest

from memlab.gate import Gate
from memlab.sim import simulate_access_log
from memlab.store import MemoryStore


@pytest.mark.parametrize(
    "counts",
    [
        {"n_memories": 0},
        {"n_memories": 2.5},
        {"reviews_per_memory": 2.5},  # used to fail only after every note was ingested
        {"reviews_per_memory": float("nan")},
        {"reviews_per_memory": True},
    ],
)
def test_bad_counts_are_refused_before_the_store_changes(counts: dict) -> None:
    store = MemoryStore(gate=Gate(1.0, 1.0))
    with pytest.raises(ValueError, match=f"{next(iter(counts))} must be an int >= 1"):
        simulate_access_log(store, **{"n_memories": 5, "reviews_per_memory": 2, **counts})
    assert store.stats()["memories"] == 0


def test_counts_are_keywords_and_a_generator_seed_equals_its_int() -> None:
    with pytest.raises(TypeError):
        simulate_access_log(MemoryStore(gate=Gate(1.0, 1.0)), None, 5, 2)  # type: ignore[misc]
    logs = [
        simulate_access_log(MemoryStore(gate=Gate(1.0, 1.0)), n_memories=6, seed=seed)
        for seed in (3, np.random.default_rng(3), 3)
    ]
    assert logs[0].equals(logs[1]) and logs[0].equals(logs[2])
    assert len(logs[0]) >= 6 * 8
