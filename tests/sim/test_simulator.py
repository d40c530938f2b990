"""Pure simulator: no budget never loses a fact; budgets hold; accesses applied as if one by one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.gate import Gate
from memlab.sim.policies import MODELS, MemoryState, Policy
from memlab.sim.simulator import _apply_accesses, simulate
from memlab.sim.workload import Workload

SMALL = dict(
    n_days=10,
    facts_per_day=12.0,
    queries_per_day=40.0,
    paraphrases_per_day=5.0,
    corrections_per_day=2.0,
)


@pytest.fixture(scope="module")
def workload() -> Workload:
    return Workload.generate(seed=11, **SMALL)


@pytest.mark.parametrize("model", MODELS)
def test_no_budget_never_loses_a_fact(workload: Workload, model: str) -> None:
    result = simulate(workload, Policy(model), record_queries=True)
    s = result.summary()
    assert s["facts_lost"] == 0 and s["miss_rate"] == 0.0
    assert (result.daily["forgotten"] == 0).all()
    assert result.memories["alive"].all()
    assert (result.daily["facts_known"] == result.daily["facts_total"]).all()


@settings(max_examples=10)
@given(seed=st.integers(0, 1000), model=st.sampled_from(MODELS))
def test_gate_that_always_updates_keeps_one_current_memory_per_fact(seed: int, model: str) -> None:
    """With thresholds that UPDATE every write, each fact has one memory holding its current
    version:
    every query is a hit and no answer is stale (ground truth and simulator agree)."""
    w = Workload.generate(seed=seed, n_days=6, facts_per_day=8.0, queries_per_day=25.0)
    r = simulate(w, Policy(model, gate=Gate(reinforce=1.0, update=-1.0)), record_queries=True)
    assert r.queries["correct"].all() and not r.queries["stale"].any()
    alive = r.memories[r.memories["alive"]]
    assert alive["fact_id"].is_unique and len(alive) == w.n_facts
    assert r.summary()["duplicate_rate"] == 0.0


def test_gate_that_always_reinforces_makes_corrections_stale(workload: Workload) -> None:
    r = simulate(
        workload, Policy("none", gate=Gate(reinforce=-1.0, update=-1.0)), record_queries=True
    )
    ev = workload.events
    corrected_queries = ev[(ev["kind"] == "query") & (ev["version"] > 0)]
    assert len(corrected_queries) > 0
    q = r.queries.set_index("event").loc[corrected_queries["event"]]
    assert q["stale"].all()  # the old value is all the store has


def test_gate_that_always_creates_duplicates(workload: Workload) -> None:
    r = simulate(workload, Policy("none", gate=Gate(reinforce=1.0, update=1.0)))
    writes = workload.events["kind"].isin(["fact", "paraphrase", "correction"]).sum()
    assert r.daily["created"].sum() == writes
    assert r.summary()["duplicate_rate"] > 0


@pytest.mark.parametrize("model", ["fsrs6", "heat", "exponential", "lru"])
def test_store_size_cap_holds_and_costs_hits(workload: Workload, model: str) -> None:
    cap = 40
    r = simulate(workload, Policy(model, max_memories=cap, protect_important=False))
    assert (r.daily["store_size"] <= cap).all()
    assert r.summary()["facts_lost"] > 0 and r.summary()["miss_rate"] > 0
    # forgotten memories never come back
    assert r.daily["forgotten"].sum() == (~r.memories["alive"]).sum()


def test_protected_memories_survive_the_cap(workload: Workload) -> None:
    r = simulate(workload, Policy("lru", max_memories=5, protect_important=True))
    important = r.memories[r.memories["importance"] >= 0.9]
    assert len(important) > 0 and important["alive"].all()


def test_retention_threshold_forgets_only_faded_memories(workload: Workload) -> None:
    loose = simulate(workload, Policy("fsrs6", min_retention=0.0)).summary()
    tight = simulate(workload, Policy("fsrs6", min_retention=0.95)).summary()
    assert loose["facts_lost"] == 0
    assert tight["mean_store_size"] < loose["mean_store_size"]


@pytest.mark.parametrize("model", ["fsrs6", "exponential", "lru"])
def test_accesses_in_rounds_equal_one_by_one(model: str) -> None:
    rng = np.random.default_rng(0)
    scorer = Policy(model).scorer()
    a, b = MemoryState.empty(6), MemoryState.empty(6)
    for i in range(6):
        scorer.create(a, i, 0.0, 0.5), scorer.create(b, i, 0.0, 0.5)
    slots = rng.integers(0, 6, 30)
    times = np.sort(rng.uniform(0.2, 5.0, 30))
    for s, t in zip(slots, times, strict=False):
        scorer.access(a, np.array([s]), np.array([t]))
    _apply_accesses(scorer, b, list(slots), list(times))
    for name in ("last_access", "stability", "difficulty"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-12)


def test_same_workload_same_result(workload: Workload) -> None:
    a = simulate(workload, Policy("heat", max_memories=30)).daily
    b = simulate(workload, Policy("heat", max_memories=30)).daily
    assert a.equals(b)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"model": "nope"}, ValueError),
        ({"model": ["lru"]}, ValueError),  # was "unhashable type: 'list'", naming no argument
        ({"protect_important": "no"}, TypeError),  # was taken as True
        ({"max_memories": 0}, ValueError),
        ({"model": "lru", "min_retention": 0.5}, ValueError),
        ({"model": "none", "max_memories": 10}, ValueError),  # a cap it would ignore
        ({"k": 0}, ValueError),
        ({"gate": (0.9, 0.7)}, TypeError),
        ({"model": "heat", "params": {"k": -1.0}}, ValueError),
        ({"model": "lru", "params": {"x": 1}}, TypeError),  # "model 'lru' rejects params ['x']"
    ],
)
def test_bad_policy_is_rejected(kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        Policy(**kwargs)


def test_a_run_without_queries_has_no_rates() -> None:
    w = Workload.generate(n_days=3, queries_per_day=0.0, burst_prob=0.0)
    s = simulate(w, Policy("lru", max_memories=5)).summary()
    assert all(np.isnan(s[m]) for m in ("hit_rate", "correct_rate", "stale_rate", "miss_rate"))


def test_policy_round_trips_and_bad_arguments(workload: Workload) -> None:
    with pytest.raises(ValueError, match="min_retention"):
        Policy("fsrs6", min_retention="a")  # type: ignore[arg-type]
    p = Policy("heat", min_retention=0.5, gate=Gate(0.95, 0.8), k=3)
    assert Policy.from_dict(p.to_dict()) == Policy(
        "heat", min_retention=0.5, gate=Gate(0.95, 0.8), k=3, name=p.label
    )
    with pytest.raises(TypeError):
        simulate(workload.events, p)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        simulate(workload, "lru")  # type: ignore[arg-type]


def test_memlab_keep_policy_runs_counts_uses_and_protects() -> None:
    from memlab.sim import Policy, Workload, WorkloadConfig
    from memlab.sim.simulator import simulate

    wl = Workload.generate(WorkloadConfig(n_days=20, facts_per_day=10.0, queries_per_day=40.0))
    for params in ({}, {"importance_weight": 0.0}):
        res = simulate(wl, Policy("memlab", max_memories=60, params=params))
        alive = res.memories[res.memories["alive"]]
        assert res.daily["store_size"].max() <= 60 + (res.memories["importance"] >= 0.9).sum()
        important = res.memories[res.memories["importance"] >= 0.9]
        assert important["alive"].all()  # protected memories are never forgotten
        assert len(alive) > 0
    with pytest.raises(ValueError, match="importance_weight"):
        Policy("memlab", params={"importance_weight": 2.0})


def test_memlab_keep_learns_that_random_importance_predicts_nothing() -> None:
    from memlab.sim.policies import MemlabKeepScorer

    # 100 memories 30 days old: importance at random, uses unrelated to it; memory 0 has the
    # highest importance and no use, memory 1 the lowest and three uses in the last two days
    rng = np.random.default_rng(5)
    n = 100
    st = MemoryState.empty(n)
    st.importance[:] = rng.uniform(0.1, 0.8, n)
    st.importance[0], st.importance[1] = 0.8, 0.1
    st.created[:] = 0.0
    st.access_count[:] = rng.poisson(4.0, n)
    st.last_access[:] = rng.uniform(20.0, 30.0, n)
    st.access_count[0], st.last_access[0] = 0.0, 0.0
    st.access_count[1], st.last_access[1] = 3.0, 29.5
    scorer = MemlabKeepScorer()
    keep = scorer.keep(st, np.arange(n), 30.0)
    assert keep[1] > keep[0]  # use decides once the store has a use history
    assert keep[0] < np.median(keep)
    # with no use history anywhere, the importance decides
    st.access_count[:] = 0.0
    st.last_access[:] = 0.0
    keep = scorer.keep(st, np.arange(n), 30.0)
    assert (np.argsort(keep) == np.argsort(st.importance)).all()


def test_memlab_keep_is_no_worse_than_lru_on_seeded_workloads() -> None:
    from memlab.sim import WorkloadConfig

    diffs = []
    for seed in range(3):
        wl = Workload.generate(WorkloadConfig(seed=seed, n_days=30))
        policies = [Policy(m, max_memories=None if m == "none" else 150) for m in MODELS]
        hit = {p.model: simulate(wl, p).summary()["hit_rate"] for p in policies}
        diffs.append(hit["memlab"] - hit["lru"])
        assert hit["memlab"] > hit["fsrs6"]
    assert np.mean(diffs) > -0.01
