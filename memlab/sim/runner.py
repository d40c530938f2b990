"""Sweeps over seeds x policies x workload parameters, on any ``concurrent.futures.Executor``
(a ``ProcessPoolExecutor``, a Dask client's ``get_executor()``...).

Each task generates its workload in the worker and runs one policy on it;
:func:`confidence_table` turns per-seed summaries into means with Student-t intervals.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor, as_completed
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from memlab.models._validation import integer
from memlab.sim.policies import Policy
from memlab.sim.simulator import simulate
from memlab.sim.workload import Workload, WorkloadConfig

DEFAULT_METRICS: tuple[str, ...] = tuple(
    "hit_rate correct_rate stale_rate miss_rate mean_store_size duplicate_rate".split()
)


@dataclass
class Sweep:
    """Results of a sweep: ``summary`` (a row per task) and ``daily`` (a row per task and day)."""

    summary: pd.DataFrame
    daily: pd.DataFrame

    def confidence(
        self,
        metrics: Sequence[str] = DEFAULT_METRICS,
        *,
        by: Sequence[str] | None = None,
        level: float = 0.95,
    ) -> pd.DataFrame:
        """:func:`confidence_table` by ``by``, by default each grid point's policies."""
        by = by or list(self.summary.columns[: self.summary.columns.get_loc("policy") + 1])
        return confidence_table(self.summary, metrics, by=by, level=level)


@lru_cache(maxsize=8)
def _workload(config_items: tuple[tuple[str, Any], ...]) -> Workload:
    return Workload.generate(WorkloadConfig.from_dict(dict(config_items)))


def _freeze(config: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in config.items()))


def run_task(
    config: dict[str, Any], policy: dict[str, Any], tags: dict[str, Any] | None = None
) -> tuple[dict[str, Any], pd.DataFrame]:
    """One (workload config, policy) task: summary dict and tidy daily frame (picklable)."""
    workload = _workload(_freeze(config))
    result = simulate(workload, Policy.from_dict(policy))
    task = {"policy": result.policy, "workload": result.workload}  # numpy scalars as numbers
    spec = json.dumps(task, default=lambda v: v.tolist() if hasattr(v, "tolist") else list(v))
    summary = {**(tags or {}), **result.summary(), "spec": spec}  # spec: what reruns the task
    return summary, result.tidy().assign(**(tags or {}))


def run_sweep(
    policies: Iterable[Policy],
    seeds: Iterable[int],
    *,
    base: WorkloadConfig | None = None,
    grid: Mapping[str, Sequence[Any]] | None = None,
    executor: Executor | None = None,
    progress: bool = True,
) -> Sweep:
    """Run every policy on every seed (and every point of ``grid`` over workload parameters).

    Parameters
    ----------
    policies : iterable of Policy
        The forgetting policies compared, each run on every workload.
    seeds : iterable of int
        Workload seeds: the replicates over which confidence intervals are taken.
    base : WorkloadConfig, optional
        The workload parameters (its seed is replaced by each seed).
    grid : mapping, optional
        Workload parameters to sweep, e.g. ``{"corrections_per_day": [1, 5]}``; each
        combination becomes columns of the results.
    executor : concurrent.futures.Executor, optional
        Where tasks run (default: serially in this process).
    progress : bool
        Show a progress bar (unless memlab's switch turns bars off).
    """
    policies = list(policies)
    for p in policies:
        if not isinstance(p, Policy):
            raise TypeError(f"policies must be Policy objects, got {type(p).__name__}")
    labels = [p.label for p in policies]
    twins = sorted({label for label in labels if labels.count(label) > 1})
    if twins:  # results are grouped by label: two policies under one would be pooled
        raise ValueError(
            f"policies share the label(s) {twins}: give each a distinct name= "
            "(the label names the model and budget only, not the gate or params)"
        )
    seeds = [integer(s, "seeds") for s in seeds]  # 1.7 is refused, not run as seed 1
    if not policies or not seeds or len(set(seeds)) < len(seeds):
        raise ValueError(f"run_sweep needs at least one policy and distinct seeds, got {seeds}")
    base = WorkloadConfig() if base is None else base
    if not isinstance(base, WorkloadConfig):
        raise TypeError(f"base must be a WorkloadConfig, got {type(base).__name__}")
    grid = {name: list(values) for name, values in (grid or {}).items()}
    names = list(grid)
    if "seed" in grid or not all(grid.values()):
        raise ValueError("grid values must be non-empty lists; seeds go in seeds=, not the grid")
    points = list(itertools.product(*(grid[n] for n in names))) if names else [()]
    tasks = []
    for point in points:
        tags = dict(zip(names, point, strict=False))
        for seed in seeds:
            config = WorkloadConfig.from_dict({**base.to_dict(), **tags, "seed": seed}).to_dict()
            for p in policies:
                tasks.append((config, p.to_dict(), tags))
    from memlab.progress import progress as progress_bar

    bar = progress_bar(
        total=len(tasks), desc="sweep", unit="run", enabled=None if progress else False
    )
    results: list[tuple[dict[str, Any], pd.DataFrame]] = []
    if executor is None:
        for task in tasks:
            results.append(run_task(*task))
            bar.update()
    else:
        futures = [executor.submit(run_task, *task) for task in tasks]
        for future in as_completed(futures):
            results.append(future.result())
            bar.update()
    bar.close()
    summary = pd.DataFrame([r[0] for r in results])
    sort_cols = [*names, "policy", "seed"]
    summary = summary.sort_values(sort_cols, kind="stable").reset_index(drop=True)
    daily = pd.concat([r[1] for r in results], ignore_index=True).sort_values(
        [*sort_cols, "day"], kind="stable"
    )
    return Sweep(summary, daily.reset_index(drop=True))


def t_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): the mean and its Student-t interval; NaN bounds for fewer than 2."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if len(x) == 0:
        return (np.nan, np.nan, np.nan)
    mean = float(x.mean())
    if len(x) < 2:
        return (mean, np.nan, np.nan)
    half = float(stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)))
    return (mean, mean - half, mean + half)


def confidence_table(
    summary: pd.DataFrame,
    metrics: Sequence[str] = DEFAULT_METRICS,
    *,
    by: Sequence[str] = ("policy",),
    level: float = 0.95,
) -> pd.DataFrame:
    """Per group of ``by``: n (seeds) and, for each metric, mean, ci_low, ci_high (Student t over
    seeds); ``metrics`` and ``by`` may be one column's name. A metric's NaN seeds (a run with no
    query to score) leave its mean and interval but still count in n."""
    t_interval([], level)  # checks the level before any group is read
    metrics, by = ([m] if isinstance(m, str) else list(m) for m in (metrics, by))  # one name
    missing = [c for c in [*metrics, *by] if c not in summary.columns]
    if missing:
        raise ValueError(f"summary has no columns {missing}")
    if "seed" in summary and summary.duplicated([*by, "seed"]).any():
        raise ValueError(f"a seed appears twice in a group of {list(by)}: add the grid's columns")
    rows = []
    for key, group in summary.groupby(list(by), sort=False, observed=True):
        row: dict[str, Any] = dict(zip(by, key, strict=False))
        row["n"] = len(group)
        for m in metrics:
            mean, low, high = t_interval(group[m].to_numpy(), level)
            row[m] = mean
            row[f"{m}_ci_low"] = max(low, 0.0) if m.endswith("_rate") else low  # a share: in [0, 1]
            row[f"{m}_ci_high"] = min(high, 1.0) if m.endswith("_rate") else high
        rows.append(row)
    return pd.DataFrame(rows)


def quick_comparison(
    *,
    n_seeds: int = 3,
    n_days: int = 30,
    cap: int = 100,
    executor: Executor | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """``memlab demo``'s comparison of policies: memlab's keep score, FSRS-6, heat,
    exponential and LRU at a ``cap``-memory budget, and no forgetting, on ``n_seeds`` workloads of
    ``n_days`` days: hit@5, stale-answer and miss rates with 95 % t-intervals over seeds."""
    base = WorkloadConfig(
        n_days=n_days, facts_per_day=15.0, queries_per_day=60.0, corrections_per_day=3.0
    )
    policies = [
        Policy(m, max_memories=cap, name=m)
        for m in ("memlab", "fsrs6", "heat", "exponential", "lru")
    ]
    policies.append(Policy("none", name="none (unbounded)"))
    sweep = run_sweep(policies, range(n_seeds), base=base, executor=executor, progress=progress)
    return sweep.confidence(["hit_rate", "stale_rate", "miss_rate", "mean_store_size"])
