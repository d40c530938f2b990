"""What a sweep knows of each memory: importance now, keep inputs, keep scores, a budget's choice.

An importance estimated from content on ingest is estimated again, exactly, against the own
texts of the namespace's active memories, so it follows the corpus as it grows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from memlab.informativeness import TermStats, content_importance
from memlab.keep import KeepInputs, access_weight, keep_mask, keep_scores
from memlab.store.budget import Budget
from memlab.store.core import StoreCore
from memlab.store.dynamics import days_between

#: Columns of a sweep's assessment (:func:`assess`, ``MemoryStore.forget_sweep``).
SWEEP_COLUMNS = (
    "id layer importance importance_auto altitude elapsed_days heat band risk protected"
    " keep_score action reason retention accessibility state applied"
).split()


def own_text(row: sqlite3.Row) -> str:
    """A row's own text: its content without the context given on ingest."""
    return row["content"][: row["own_chars"]]


def corpus_stats(core: StoreCore) -> TermStats:
    """Document frequencies over the own texts of the namespace's active memories."""
    rows = core.execute(
        "SELECT content, own_chars FROM memories WHERE namespace = ? AND status = 'active'",
        (core.namespace,),
    ).fetchall()
    return TermStats.from_texts(own_text(r) for r in rows)


def use_history(
    core: StoreCore, ids: Sequence[int], at: float
) -> tuple[tuple[NDArray[np.float64], ...], tuple[NDArray[np.float64], ...]]:
    """Per memory id, the days before ``at`` of each access and its weight by kind."""
    rows = core.execute(
        "SELECT e.memory_id, e.at, json_extract(e.data, '$.source') FROM events e"
        " JOIN memories m ON m.id = e.memory_id"
        " WHERE m.namespace = ? AND m.status = 'active' AND e.kind = 'access'"
        " ORDER BY e.memory_id, e.id",
        (core.namespace,),
    ).fetchall()
    ages: dict[int, list[float]] = {}
    weights: dict[int, list[float]] = {}
    for memory_id, t, source in rows:
        ages.setdefault(memory_id, []).append(t)
        weights.setdefault(memory_id, []).append(access_weight(source))
    return (
        tuple(days_between(at, np.asarray(ages.get(int(m), []), float)) for m in ids),
        tuple(np.asarray(weights.get(int(m), []), float) for m in ids),
    )


def keep_inputs(
    core: StoreCore,
    rows: Sequence[sqlite3.Row],
    at: float,
    importance: NDArray[np.float64],
    *,
    history: bool = True,
) -> KeepInputs:
    """:class:`~memlab.keep.KeepInputs` of ``rows`` at ``at`` with ``importance`` (now)."""
    ids = [int(r["id"]) for r in rows]
    ages, weights = use_history(core, ids, at) if history else (None, None)
    return KeepInputs(
        elapsed_days=days_between(at, [r["last_access"] for r in rows]),
        age_days=days_between(at, [r["created_at"] for r in rows]),
        stability=np.array([float(r["stability"]) for r in rows]),
        access_count=np.array([float(r["access_count"]) for r in rows]),
        texts=tuple(own_text(r) for r in rows),
        importance=np.asarray(importance, float),
        layer=tuple(r["layer"] for r in rows),
        altitude=tuple(r["altitude"] for r in rows),
        use_ages=ages,
        use_weights=weights,
    )


def budget_keep(
    scores: NDArray[np.float64], protected: NDArray[np.bool_], keep: float | int, ids: Any
) -> NDArray[np.bool_]:
    """Which memories a budget of ``keep`` (a share or a count) keeps: protected ones (counted
    toward it, kept even beyond it), then the best by ``scores``."""
    s = np.asarray(scores, dtype=float)
    shielded = np.asarray(protected, dtype=bool)
    wanted = int(np.count_nonzero(keep_mask(s, keep, ids)))  # the budget in whole memories
    first = np.where(shielded, np.inf, s)  # protected before every other
    return keep_mask(first, max(wanted, int(shielded.sum())), ids)


def assess(
    core: StoreCore, rows: Sequence[sqlite3.Row], at: float, budget: Budget | None, seed: int = 0
) -> pd.DataFrame:
    """The sweep's assessment of ``rows`` at ``at`` (:data:`SWEEP_COLUMNS`, nothing applied):
    the heat law's action, or with a ``budget`` ``keep`` or ``drop`` by :func:`budget_keep`."""
    if not rows:
        return pd.DataFrame(columns=SWEEP_COLUMNS)
    t = days_between(at, [r["last_access"] for r in rows])
    stats = corpus_stats(core)
    importance = np.array([float(r["importance"]) for r in rows])
    auto = np.array([bool(r["importance_auto"]) for r in rows])
    if auto.any():  # estimated again against the corpus as it is now
        importance[auto] = content_importance(
            [own_text(r) for r in rows if r["importance_auto"]], stats
        )
    altitude = np.array([r["altitude"] for r in rows])
    layer = np.array([r["layer"] for r in rows])
    stability = np.array([r["stability"] for r in rows], dtype=float)
    a = core.dynamics.heat.assess(
        elapsed_days=t, importance=importance, altitude=altitude, layer=layer, stability=stability
    )
    retention, acc, state = core.dynamics.accessibility(
        t, stability, [r["retrieval"] for r in rows], [r["storage"] for r in rows]
    )
    ids = np.array([int(r["id"]) for r in rows])
    if budget is None:
        keep_score = np.full(len(rows), np.nan)
        action = np.asarray(a.action)
        reason = np.where(a.protected, "protected", np.where(action != "keep", "risk", ""))
    else:
        inputs = keep_inputs(core, rows, at, importance, history=budget.keep_by == "memlab")
        dyn = core.dynamics
        keep_score = keep_scores(
            inputs, (budget.keep_by,), rng=seed, stats=stats, fsrs=dyn.fsrs, heat=dyn.heat
        )[budget.keep_by]
        kept = budget_keep(keep_score, a.protected, budget.keep, ids)
        action = np.where(kept, "keep", "drop")
        reason = np.where(a.protected, "protected", np.where(kept, "", "budget"))
    columns = [ids, layer, importance, [bool(r["importance_auto"]) for r in rows], altitude, t]
    columns += [a.heat, a.band, a.risk, a.protected, keep_score, action, reason, retention, acc]
    columns += [state, False]
    return pd.DataFrame(dict(zip(SWEEP_COLUMNS, columns, strict=True)))
