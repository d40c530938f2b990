"""The store-backed simulator: a policy run through the real :class:`~memlab.store.MemoryStore`.

The workload is replayed on a simulated clock (``now=`` on every call). Writes are ingested
with the policy's gate, which decides from real embedding similarities; the simulator tracks
the (fact, version) each memory holds (SUPERSEDE or CREATE: the event's; REINFORCE keeps what
the memory held, even another fact's: a false merge). Queries are preview searches of depth
``k``; the answer, the first hit holding the fact, is then accessed. Importance flags call
``store.importance``. Each day ends with the policy's sweep, scored from the store's state,
purging what it forgets. On a workload where the gate and retrieval agree with the pure
simulator's abstraction (facts and queries, ``Gate(1, 1)``), both give the same daily table.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd

from memlab.gate import Decision
from memlab.sim.policies import ExponentialScorer, MemoryState, Policy, forget_mask
from memlab.sim.simulator import DAILY_COLUMNS, SimResult, sim_result
from memlab.sim.workload import Workload

START = datetime(2026, 1, 1, tzinfo=UTC)


def simulate_store(
    workload: Workload, policy: Policy, *, embedder: Any = "hashing", record_queries: bool = False
) -> SimResult:
    """Run ``policy`` on ``workload`` through a new in-memory store (module docs): the policy's
    gate becomes the store's, its model and budget drive the daily sweep. ``embedder`` is the
    store's (``"hashing"``, ``"fastembed"`` or an Embedder); ``record_queries`` keeps a row per
    query."""
    from memlab.store import MemoryStore
    from memlab.store.validation import MAX_RESULTS

    if not isinstance(workload, Workload):
        raise TypeError(f"workload must be a Workload, got {type(workload).__name__}")
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must be a Policy, got {type(policy).__name__}")
    if policy.k > MAX_RESULTS:
        raise ValueError(f"policy k must be at most {MAX_RESULTS} (the store's), got {policy.k}")
    store = MemoryStore(":memory:", embedder=embedder, gate=policy.gate, secrets="allow")
    scorer = policy.scorer()
    t0 = time.perf_counter()
    holds: dict[int, tuple[int, int]] = {}  # memory id -> (fact, version)
    current: dict[int, int] = {}
    fact_imp: dict[int, float] = {}  # the workload's importance of each fact (flags raise it)
    facts_total = 0
    n_days = int(workload.config.n_days)
    daily = np.zeros((n_days, len(DAILY_COLUMNS)))
    query_rows: list[tuple[Any, ...]] = []
    memory_days = 0
    ev = workload.events
    day_of = np.minimum(np.floor(ev["day"].to_numpy()).astype(int), n_days - 1)
    try:
        for day in range(n_days):
            counts = dict.fromkeys(DAILY_COLUMNS[6:14], 0)  # queries .. updated
            for row in ev[day_of == day].itertuples(index=False):
                now = START + timedelta(days=float(row.day))
                f, v = int(row.fact_id), int(row.version)
                if row.kind == "query":
                    counts["queries"] += 1
                    hits = store.search(row.text, policy.k, mark_accessed=False, now=now)
                    held = [(h.memory.id, holds.get(h.memory.id)) for h in hits]
                    mine = [(m, fv) for m, fv in held if fv is not None and fv[0] == f]
                    hit = any(fv[1] == v for _, fv in mine)
                    counts["hits"] += hit
                    if not mine:
                        counts["misses"] += 1
                        ok = stale = False
                    else:
                        answer, (_, av) = mine[0]
                        ok, stale = av == v, av != v
                        counts["correct"] += ok
                        counts["stale"] += stale
                        store.access(answer, now=now)
                    if record_queries:
                        query_rows.append(
                            (int(row.event), float(row.day), f, v, hit, ok, stale, not mine)
                        )
                elif row.kind in ("fact", "paraphrase", "correction"):
                    if row.kind == "fact":
                        facts_total += 1
                    current[f] = v
                    importance = fact_imp.setdefault(f, float(row.importance))
                    res = store.ingest(
                        row.text,
                        topics=[str(row.topic)],
                        entity=str(row.entity),
                        importance=importance,
                        now=now,
                    )
                    if res.decision is Decision.REINFORCE:
                        counts["reinforced"] += 1
                    else:
                        holds[res.memory_id] = (f, v)
                        key = "updated" if res.decision is Decision.SUPERSEDE else "created"
                        counts[key] += 1
                else:  # importance flag
                    fact_imp[f] = max(fact_imp[f], float(row.importance))
                    for m, (fm, _) in list(holds.items()):
                        if fm == f:
                            store.importance(m, level=float(row.importance), now=now)
            # end-of-day forgetting sweep from the store's state
            end = START + timedelta(days=day + 1)
            frame = store.to_dataframe(now=end, include_archived=False)
            memory_days += len(frame)
            forgotten = 0
            if policy.has_budget and len(frame):
                st = _state_from_store(frame, scorer)
                idx = np.arange(len(frame))
                mask = forget_mask(policy, scorer, st, idx, float(day + 1))
                purged: set[int] = set()
                for m in frame["id"].to_numpy()[mask]:
                    if int(m) not in purged:  # a purge takes every version of its fact
                        purged.update(store.purge(int(m)))
                for m in purged:
                    holds.pop(m, None)
                forgotten = int(mask.sum())
                frame = frame[~mask]
            alive = [holds[int(m)] for m in frame["id"] if int(m) in holds]
            facts_alive = {fv[0] for fv in alive}
            stale_mem = sum(1 for fm, vm in alive if vm < current.get(fm, vm))
            sizes = (day, len(frame), len(facts_alive), facts_total, len(frame) - len(facts_alive))
            daily[day] = (*sizes, stale_mem, *counts.values(), forgotten)
        seconds = time.perf_counter() - t0
        final = store.to_dataframe(include_archived=False, now=START + timedelta(days=n_days))
    finally:
        store.close()
    memories = pd.DataFrame(
        {
            "memory_id": final["id"].to_numpy(),
            "fact_id": [holds.get(int(m), (-1, -1))[0] for m in final["id"]],
            "version": [holds.get(int(m), (-1, -1))[1] for m in final["id"]],
            "alive": True,
            "importance": final["importance"].to_numpy(),
        }
    )
    queries = query_rows if record_queries else None
    extra = {"simulator": "store"}
    return sim_result(policy, workload, daily, queries, memories, seconds, memory_days, extra)


def _state_from_store(frame: pd.DataFrame, scorer: Any) -> MemoryState:
    """The policy model's state of each active memory, read from the store (days since
    :data:`START`)."""
    st = MemoryState.empty(len(frame))
    for name, column in (("last_access", "last_access"), ("created", "created_at")):
        since = frame[column] - pd.Timestamp(START)
        getattr(st, name)[:] = since.dt.total_seconds().to_numpy() / 86400.0
    st.access_count[:] = frame["access_count"].to_numpy(dtype=float)
    st.importance[:] = frame["importance"].to_numpy(dtype=float)
    st.difficulty[:] = frame["difficulty"].to_numpy(dtype=float)
    if isinstance(scorer, ExponentialScorer):
        st.stability[:] = scorer.model.strength_after(frame["access_count"].to_numpy(dtype=float))
    else:
        st.stability[:] = frame["stability"].to_numpy(dtype=float)
    return st
