"""The simulator through the real MemoryStore agrees with the pure simulator on a small case."""

from __future__ import annotations

import numpy as np
import pytest

from memlab.gate import Gate
from memlab.sim.policies import Policy
from memlab.sim.simulator import simulate
from memlab.sim.store_sim import simulate_store
from memlab.sim.workload import Workload

# Facts and queries only, every write creates: the pure simulator's abstraction holds exactly.
SMALL = dict(
    n_days=5,
    facts_per_day=6.0,
    queries_per_day=12.0,
    paraphrases_per_day=0.0,
    corrections_per_day=0.0,
    flags_per_day=0.0,
    important_share=0.0,
    burst_prob=0.0,
)
COLUMNS = [
    "store_size",
    "facts_known",
    "queries",
    "hits",
    "correct",
    "misses",
    "created",
    "forgotten",
]


@pytest.mark.parametrize(
    "model, cap", [("fsrs6", 12), ("lru", 10), ("memlab", 12), ("memlab", 8), ("none", None)]
)
def test_store_and_pure_simulators_agree(model: str, cap: int | None) -> None:
    w = Workload.generate(seed=7, **SMALL)
    policy = Policy(model, max_memories=cap, gate=Gate(1.0, 1.0), k=5)
    pure = simulate(w, policy, record_queries=True)
    real = simulate_store(w, policy, record_queries=True)
    assert real.daily[COLUMNS].equals(pure.daily[COLUMNS]), (
        real.daily[COLUMNS],
        pure.daily[COLUMNS],
    )
    assert real.queries[["event", "hit", "miss"]].equals(pure.queries[["event", "hit", "miss"]])
    alive_pure = set(pure.memories.loc[pure.memories["alive"], "fact_id"])
    assert set(real.memories["fact_id"]) == alive_pure
    if cap is not None:
        assert pure.daily["forgotten"].sum() > 0  # the case exercises the budget


def test_store_simulator_keeps_the_workloads_importance() -> None:
    """A restatement or correction carries its fact's importance, not a default of 0.5."""
    w = Workload.generate(seed=0, n_days=5, flags_per_day=0.0, important_share=0.0)
    r = simulate_store(w, Policy("memlab", max_memories=10**6, gate=Gate(0.5, 0.4)))
    facts = w.events[w.events["kind"] == "fact"].set_index("fact_id")["importance"]
    held = r.memories[r.memories["fact_id"] >= 0]
    assert np.allclose(held["importance"], held["fact_id"].map(facts), equal_nan=True)


def test_store_simulator_runs_gate_and_corrections() -> None:
    w = Workload.generate(
        seed=3,
        n_days=3,
        facts_per_day=5.0,
        queries_per_day=8.0,
        corrections_per_day=2.0,
        paraphrases_per_day=2.0,
    )
    r = simulate_store(w, Policy("heat", max_memories=8))
    d = r.daily
    writes = w.events["kind"].isin(["fact", "paraphrase", "correction"]).sum()
    assert (d["created"] + d["reinforced"] + d["updated"]).sum() == writes
    assert (d["store_size"] <= 8).all()
    with pytest.raises(TypeError):
        simulate_store(w.events, Policy("lru"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k must be at most"):  # before the first day runs
        simulate_store(w, Policy("lru", k=10**6))
