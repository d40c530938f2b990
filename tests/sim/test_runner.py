"""Sweeps: any Executor, results identical to serial, t intervals."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from scipy import stats

from memlab.gate import Gate
from memlab.sim.policies import SCORERS, Policy
from memlab.sim.runner import confidence_table, run_sweep, t_interval
from memlab.sim.workload import WorkloadConfig

BASE = WorkloadConfig(n_days=5, facts_per_day=8.0, queries_per_day=20.0)
POLICIES = [Policy("lru", max_memories=15), Policy("none")]


def test_sweep_on_an_executor_matches_serial() -> None:
    serial = run_sweep(POLICIES, seeds=[1, 2, 3], base=BASE, progress=False)
    with ThreadPoolExecutor(2) as ex:
        parallel = run_sweep(POLICIES, seeds=[1, 2, 3], base=BASE, executor=ex, progress=False)
    cols = ["policy", "seed", "hit_rate", "stale_rate", "mean_store_size"]
    assert serial.summary[cols].equals(parallel.summary[cols])
    assert len(serial.summary) == 6 and set(serial.daily["day"]) == set(range(5))
    table = serial.confidence(["hit_rate"])
    none = table.set_index("policy").loc["none"]
    assert none["hit_rate"] == 1.0 and none["n"] == 3


def test_grid_adds_columns() -> None:
    sweep = run_sweep(
        [Policy("lru", max_memories=15)],
        seeds=[0, 1],
        base=BASE,
        grid={"corrections_per_day": [0.0, 4.0]},
        progress=False,
    )
    assert set(sweep.summary["corrections_per_day"]) == {0.0, 4.0}
    t = confidence_table(sweep.summary, ["stale_rate"], by=["corrections_per_day", "policy"])
    assert len(t) == 2


def test_numpy_numbers_sweep_like_python_numbers() -> None:
    # a grid from np.arange, or a cap held as np.int64, used to end the sweep at its first task
    # ("'numpy.int64' object is not iterable": its spec could not be written as JSON)
    policy = Policy("lru", max_memories=np.int64(15), k=np.int64(3))
    grid = {"n_days": np.arange(4, 6), "burst_size": [np.int64(5)]}
    sweep = run_sweep([policy], seeds=[0], base=BASE, grid=grid, progress=False)
    spec = json.loads(sweep.summary["spec"].iloc[0])
    assert spec["workload"]["n_days"] == 4 and spec["policy"]["max_memories"] == 15
    assert type(WorkloadConfig(n_days=np.int64(4)).n_days) is int and type(policy.k) is int
    # numpy floats too (np.float64 is a float; np.float32 is not)
    policy = Policy("fsrs6", min_retention=np.float32(0.5))
    grid = {"queries_per_day": np.array([2.0], dtype=np.float32)}
    sweep = run_sweep([policy], seeds=[0], base=BASE, grid=grid, progress=False)
    spec = json.loads(sweep.summary["spec"].iloc[0])
    assert spec["workload"]["queries_per_day"] == 2.0 and spec["policy"]["min_retention"] == 0.5


def test_confidence_groups_each_grid_point_and_keeps_rates_in_the_unit_interval() -> None:
    grid = {"corrections_per_day": [0.0, 6.0]}
    sweep = run_sweep(POLICIES[:1], seeds=[0, 1, 2], base=BASE, grid=grid, progress=False)
    table = sweep.confidence(["stale_rate", "hit_rate"])
    assert list(table["corrections_per_day"]) == [0.0, 6.0] and set(table["n"]) == {3}
    rates = table.filter(like="_rate_ci")
    assert ((rates >= 0) & (rates <= 1)).all().all()
    with pytest.raises(ValueError, match="a seed appears twice"):
        confidence_table(sweep.summary, ["stale_rate"])  # the grid's points pooled
    # one column may be named alone, as in pandas (it was split into its letters: "no columns
    # ['h', 'i', 't', ...]")
    one = confidence_table(sweep.summary, "hit_rate", by="corrections_per_day")
    assert one.equals(confidence_table(sweep.summary, ["hit_rate"], by=["corrections_per_day"]))
    spec = json.loads(sweep.summary["spec"].iloc[0])  # what reruns one task
    assert spec["policy"]["name"] == "lru[cap=15]" and spec["workload"]["seed"] == 0


def test_a_law_registered_in_scorers_runs_as_a_policy() -> None:
    class Oldest(SCORERS["lru"]):  # keeps the oldest memories: LRU upside down
        def keep(self, st, idx, now):
            return -super().keep(st, idx, now)

    SCORERS["oldest"] = Oldest
    try:
        policies = [Policy("lru", max_memories=15), Policy("oldest", max_memories=15)]
        table = run_sweep(policies, seeds=[1, 2], base=BASE, progress=False).confidence()
        rates = table.set_index("policy")["hit_rate"]
        assert rates["oldest[cap=15]"] < rates["lru[cap=15]"]
    finally:
        del SCORERS["oldest"]
    with pytest.raises(ValueError, match="SCORERS"):
        Policy("oldest")


def test_t_interval_matches_scipy() -> None:
    x = np.random.default_rng(1).normal(size=12)
    mean, low, high = t_interval(x, 0.9)
    ref = stats.t.interval(0.9, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    assert mean == pytest.approx(x.mean()) and (low, high) == pytest.approx(ref)
    assert np.isnan(t_interval([1.0])[1])
    for level in (1.5, 0.0):
        with pytest.raises(ValueError, match="level must be in"):
            t_interval([1.0, 2.0], level)


def test_bad_sweep_arguments() -> None:
    with pytest.raises(ValueError):
        run_sweep([], seeds=[1], progress=False)
    with pytest.raises(TypeError):
        run_sweep(["lru"], seeds=[1], progress=False)  # type: ignore[list-item]
    with pytest.raises(ValueError):
        confidence_table(run_sweep(POLICIES, [1], base=BASE, progress=False).summary, ["nope"])
    for base in ({}, {"n_days": 3}):  # {} used to run the default workload, the other to crash
        with pytest.raises(TypeError, match="base must be a WorkloadConfig"):
            run_sweep(POLICIES, [1], base=base, progress=False)  # type: ignore[arg-type]
    for seeds, grid in (([1, 1], None), ([1], {"seed": [5, 6]}), ([1], {"flags_per_day": []})):
        with pytest.raises(ValueError, match="distinct seeds|grid values"):
            run_sweep(POLICIES, seeds, base=BASE, grid=grid, progress=False)


def test_seeds_must_be_integers_never_truncated() -> None:
    # seed 1.7 used to run as seed 1, under a seed column that said 1
    for seeds in ([1.7], [True], ["2"]):
        with pytest.raises(ValueError, match="seeds must be an int >= 0"):
            run_sweep(POLICIES, seeds, base=BASE, progress=False)
    sweep = run_sweep(POLICIES[:1], np.arange(2), base=BASE, progress=False)
    assert sweep.summary["seed"].tolist() == [0, 1]


def test_policies_under_one_label_are_refused() -> None:
    # two gates under the label "fsrs6[cap=15]" would be pooled into one row of the table
    twins = [Policy("fsrs6", max_memories=15), Policy("fsrs6", max_memories=15, gate=Gate(1, 1))]
    with pytest.raises(ValueError, match="distinct name"):
        run_sweep(twins, seeds=[1], base=BASE, progress=False)
    named = [
        Policy("fsrs6", max_memories=15, name="vestige"),
        Policy("fsrs6", max_memories=15, gate=Gate(1, 1), name="off"),
    ]
    assert len(run_sweep(named, seeds=[1], base=BASE, progress=False).confidence(["hit_rate"])) == 2
