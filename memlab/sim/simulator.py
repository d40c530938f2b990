"""The pure simulator: a policy's memory store driven by a workload, as arrays over memories.

- A memory holds one *version* of one fact. A write's latent similarity to the fact's newest
  memory (for a paraphrase, the newest of its version) goes through the policy's gate:
  REINFORCE accesses it (a reinforced correction leaves the old value), UPDATE accesses it and
  gives it the new version, CREATE adds a memory (a duplicate if the fact had one).
- A query ranks the fact's memories by the model's score (newest first on ties). ``hit@k``: a
  memory of the current version in the top ``k``; the answer (the top one) is ``correct``,
  ``stale`` or a ``miss`` (no memory left), and is accessed (the agent used it).
- A day's accesses are applied at its end in rounds (round j: every memory's j-th access),
  which equals applying them one by one; rankings within a day see the previous day's state.
- Forgetting: one vectorised sweep at the end of each day (:func:`policies.forget_mask`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from memlab.sim.policies import MemoryState, Policy, Scorer, forget_mask
from memlab.sim.workload import Workload

_KIND_CODE = {"fact": 0, "paraphrase": 1, "correction": 2, "query": 3, "importance": 4}
DAILY_COLUMNS: tuple[str, ...] = tuple(
    "day store_size facts_known facts_total duplicates stale_memories queries hits correct"
    " stale misses created reinforced updated forgotten".split()
)
QUERY_COLUMNS = ["event", "day", "fact_id", "version", "hit", "correct", "stale", "miss"]


@dataclass
class SimResult:
    """What one policy did on one workload.

    Attributes
    ----------
    policy, workload : dict
        ``Policy.to_dict()`` and ``WorkloadConfig.to_dict()``.
    daily : DataFrame
        One row per day (:data:`DAILY_COLUMNS`): counts within the day, sizes at its end.
    queries : DataFrame or None
        One row per query, when recorded.
    memories : DataFrame
        Final memory slots.
    seconds : float
        Wall time of the simulation (``extra["cpu_seconds"]``: its process CPU time).
    memory_days : int
        Memory-day updates made by the daily sweeps (the throughput unit).
    """

    policy: dict[str, Any]
    workload: dict[str, Any]
    daily: pd.DataFrame
    queries: pd.DataFrame | None
    memories: pd.DataFrame
    seconds: float
    memory_days: int
    extra: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """Rates over the whole run: hit@k, answer accuracy, stale-answer and miss rates, sizes."""
        d = self.daily
        q = int(d["queries"].sum()) or np.nan  # no queries: no rate (not 0)
        size = d["store_size"].replace(0, np.nan)
        return {
            "policy": self.policy["name"],
            "model": self.policy["model"],
            "seed": self.workload["seed"],
            "k": self.policy["k"],
            "queries": int(d["queries"].sum()),
            "hit_rate": float(d["hits"].sum() / q),
            "correct_rate": float(d["correct"].sum() / q),
            "stale_rate": float(d["stale"].sum() / q),
            "miss_rate": float(d["misses"].sum() / q),
            "mean_store_size": float(d["store_size"].mean()),
            "final_store_size": int(d["store_size"].iloc[-1]),
            "duplicate_rate": float((d["duplicates"] / size).mean()),
            "stale_memory_rate": float((d["stale_memories"] / size).mean()),
            "facts_lost": int(d["facts_total"].iloc[-1] - d["facts_known"].iloc[-1]),
            "memory_days": self.memory_days,
            "seconds": self.seconds,
            "memory_day_updates_per_s": self.memory_days / self.seconds
            if self.seconds > 0
            else np.nan,
            "cpu_seconds": self.extra.get("cpu_seconds", np.nan),
            "memory_day_updates_per_cpu_s": self.memory_days / self.extra["cpu_seconds"]
            if self.extra.get("cpu_seconds")
            else np.nan,
        }

    def tidy(self) -> pd.DataFrame:
        """The daily table with policy and seed columns (long-format friendly)."""
        out = self.daily.copy()
        out.insert(0, "seed", self.workload["seed"])
        out.insert(0, "policy", self.policy["name"])
        out["hit_rate"] = out["hits"] / out["queries"].replace(0, np.nan)
        out["stale_rate"] = out["stale"] / out["queries"].replace(0, np.nan)
        out["duplicate_rate"] = out["duplicates"] / out["store_size"].replace(0, np.nan)
        return out


class _Slots:
    """Memory slots: which fact and version each holds, alive or forgotten."""

    def __init__(self, capacity: int) -> None:
        self.n = 0
        self.fact = np.zeros(capacity, dtype=np.int64)
        self.version = np.zeros(capacity, dtype=np.int64)
        self.alive = np.zeros(capacity, dtype=bool)
        self.state = MemoryState.empty(capacity)

    def add(self, fact: int, version: int, now: float) -> int:
        if self.n == len(self.fact):
            for name in ("fact", "version", "alive"):
                old = getattr(self, name)
                setattr(self, name, np.concatenate([old, np.zeros_like(old)]))
            self.state.grow(2 * self.n)
        i = self.n
        self.fact[i], self.version[i], self.alive[i] = fact, version, True
        self.state.created[i] = now
        self.n += 1
        return i


def simulate(workload: Workload, policy: Policy, *, record_queries: bool = False) -> SimResult:
    """Run ``policy`` on ``workload`` (module docs); ``record_queries`` keeps a row per query in
    ``SimResult.queries``."""
    if not isinstance(workload, Workload):
        raise TypeError(f"workload must be a Workload, got {type(workload).__name__}")
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must be a Policy, got {type(policy).__name__}")
    ev = workload.events
    scorer = policy.scorer()
    t0, c0 = time.perf_counter(), time.process_time()
    kinds = ev["kind"].map(_KIND_CODE).to_numpy(dtype=np.int64)
    facts = ev["fact_id"].to_numpy(dtype=np.int64)
    versions = ev["version"].to_numpy(dtype=np.int64)
    days = ev["day"].to_numpy(dtype=float)
    importance = ev["importance"].to_numpy(dtype=float)
    sims = ev["similarity"].to_numpy(dtype=float)
    gate_codes = np.full(len(ev), 2, dtype=np.int64)
    has_sim = ~np.isnan(sims)
    if has_sim.any():
        gate_codes[has_sim] = policy.gate.codes(sims[has_sim])
    n_facts = int(facts.max()) + 1 if len(facts) else 0
    n_days = int(workload.config.n_days)
    day_of = np.minimum(np.floor(days).astype(np.int64), n_days - 1)
    bounds = np.searchsorted(day_of, np.arange(n_days + 1), side="left")

    slots = _Slots(max(16, int((kinds != 3).sum())))
    fact_slots: list[list[int]] = [[] for _ in range(n_facts)]
    current = np.zeros(n_facts, dtype=np.int64)
    fact_importance = np.zeros(n_facts)
    query_rows: list[tuple[int, float, int, int, bool, bool, bool, bool]] = []
    daily = np.zeros((n_days, len(DAILY_COLUMNS)), dtype=np.float64)
    memory_days = 0
    facts_total = 0
    k = policy.k
    st = slots.state
    alive_l: list[bool] = []  # python mirrors of slots.alive / slots.version for the per-event loop
    ver_l: list[int] = []

    def create(f: int, v: int, now: float) -> None:
        i = slots.add(f, v, now)
        alive_l.append(True)
        ver_l.append(v)
        scorer.create(st, i, now, fact_importance[f])
        fact_slots[f].append(i)

    for day in range(n_days):
        hits = correct = stale = misses = created = reinforced = updated = queries = 0
        acc_slot: list[int] = []
        acc_time: list[float] = []
        for e in range(bounds[day], bounds[day + 1]):
            kind, f, now = kinds[e], int(facts[e]), float(days[e])
            if kind == 3:  # query
                queries += 1
                live = [s for s in fact_slots[f] if alive_l[s]]
                fact_slots[f] = live
                if not live:
                    misses += 1
                    if record_queries:
                        query_rows.append((e, now, f, int(versions[e]), False, False, False, True))
                    continue
                top = live if len(live) == 1 else _ranked(scorer, st, live, now)[:k].tolist()
                v = int(versions[e])
                hit = any(ver_l[s] == v for s in top)
                answer = top[0]
                ok = ver_l[answer] == v
                hits += hit
                correct += ok
                stale += not ok
                acc_slot.append(answer)
                acc_time.append(now)
                if record_queries:
                    query_rows.append((e, now, f, v, hit, ok, not ok, False))
            elif kind == 0:  # new fact
                fact_importance[f] = importance[e]
                create(f, int(versions[e]), now)
                created += 1
                facts_total += 1
            elif kind in (1, 2):  # paraphrase or correction
                v = int(versions[e])
                if kind == 2:
                    current[f] = v
                live = [s for s in fact_slots[f] if alive_l[s]]
                fact_slots[f] = live
                nearest = None
                if live:
                    same = [s for s in live if ver_l[s] == v] if kind == 1 else []
                    nearest = (same or live)[-1]
                code = gate_codes[e] if nearest is not None else 2
                if code == 2:
                    create(f, v, now)
                    created += 1
                    continue
                acc_slot.append(nearest)
                acc_time.append(now)
                if code == 0:
                    reinforced += 1
                else:
                    slots.version[nearest] = ver_l[nearest] = v
                    updated += 1
            else:  # importance flag
                fact_importance[f] = max(fact_importance[f], importance[e])
                for s in fact_slots[f]:
                    if alive_l[s]:
                        st.importance[s] = max(st.importance[s], importance[e])
        _apply_accesses(scorer, st, acc_slot, acc_time)
        # end-of-day forgetting sweep, vectorised over every memory
        end = float(day + 1)
        alive_idx = np.flatnonzero(slots.alive[: slots.n])
        memory_days += len(alive_idx)
        forgotten = 0
        if policy.has_budget:
            mask = forget_mask(policy, scorer, st, alive_idx, end)
            forgotten = int(mask.sum())
            slots.alive[alive_idx[mask]] = False
            for s_dead in alive_idx[mask].tolist():
                alive_l[s_dead] = False
            alive_idx = alive_idx[~mask]
        alive_facts = slots.fact[alive_idx]
        facts_known = len(np.unique(alive_facts))
        stale_mem = int((slots.version[alive_idx] < current[alive_facts]).sum())
        sizes = (day, len(alive_idx), facts_known, facts_total, len(alive_idx) - facts_known)
        answers = (queries, hits, correct, stale, misses)
        daily[day] = (*sizes, stale_mem, *answers, created, reinforced, updated, forgotten)
    seconds = time.perf_counter() - t0
    cpu_seconds = time.process_time() - c0

    n = slots.n
    memories = pd.DataFrame(
        {
            "fact_id": slots.fact[:n],
            "version": slots.version[:n],
            "alive": slots.alive[:n],
            "created": st.created[:n],
            "importance": st.importance[:n],
        }
    )
    queries = query_rows if record_queries else None
    extra = {"simulator": "pure", "cpu_seconds": cpu_seconds}
    return sim_result(policy, workload, daily, queries, memories, seconds, memory_days, extra)


def sim_result(
    policy: Policy,
    workload: Workload,
    daily: np.ndarray,
    query_rows: list[tuple[Any, ...]] | None,
    memories: pd.DataFrame,
    seconds: float,
    memory_days: int,
    extra: dict[str, Any],
) -> SimResult:
    """The :class:`SimResult` of a run (of either simulator) from its daily array and query rows
    (None when not recorded)."""
    queries = None if query_rows is None else pd.DataFrame(query_rows, columns=QUERY_COLUMNS)
    daily_frame = pd.DataFrame(daily, columns=list(DAILY_COLUMNS)).astype(np.int64)
    return SimResult(
        policy.to_dict(),
        workload.config.to_dict(),
        daily_frame,
        queries,
        memories,
        seconds,
        memory_days,
        extra,
    )


def _apply_accesses(
    scorer: Scorer, st: MemoryState, acc_slot: list[int], acc_time: list[float]
) -> None:
    """Apply a day's accesses in rounds (the j-th access of each memory in round j)."""
    if not acc_slot:
        return
    slot = np.asarray(acc_slot, dtype=np.int64)
    when = np.asarray(acc_time, dtype=float)
    order = np.lexsort((when, slot))
    slot, when = slot[order], when[order]
    start = np.r_[True, slot[1:] != slot[:-1]]
    group_start = np.maximum.accumulate(np.where(start, np.arange(len(slot)), 0))
    round_of = np.arange(len(slot)) - group_start
    for r in range(int(round_of.max()) + 1):
        sel = round_of == r
        scorer.access(st, slot[sel], when[sel])


def _ranked(scorer: Scorer, st: MemoryState, live: list[int], now: float) -> np.ndarray:
    idx = np.asarray(live, dtype=np.int64)
    score = scorer.rank(st, idx, now)
    return idx[np.lexsort((-idx, -score))]
