"""Lifecycle of memories: importance and synaptic tagging, forget sweeps, consolidation, purge.

Synaptic tagging and capture (Frey & Morris, 1997): a strong event makes weak memories
encoded shortly before or after it last. :func:`flag_importance` sets the flagged memory's
importance to ``level`` and strengthens every memory encoded in the window
``[t - hours_back, t + hours_forward]`` around its encoding time ``t`` with the weight

    w(dt) = 4 ** -((dt / H) ** 2),   H = hours_back if dt < 0 else hours_forward,

1 at ``dt = 0`` falling to 1/4 at the window's edges, 0 outside. A tagged memory gets
``importance += gain * w * (1 - importance)``, ``stability *= 1 + gain * w`` and
``storage += gain * w``. Memories that arrive later inside the forward window are tagged on
arrival (a pending tag is stored until ``t + hours_forward``).

An event is the pair (flagged memory, ``event_type``). Flagging the same event again raises the
flagged memory to ``level`` if it is lower but tags nobody again: repeated flags do not stack.
A neighbour's first tag never lifts it to protection (importance ``>= 0.9``,
:data:`~memlab.models.heat.PROTECTED_IMPORTANCE`): its raise stops just below it. Protection is
reached only by an explicit pin (a flag's ``level`` or a given importance) or by independent
events: a later tag, which comes from another (memory, event type), may lift it further.

Forgetting never hard-deletes: a sweep's ``compress`` keeps the full content as a version
event and stores its leading sentences; ``drop`` archives. Consolidation archives the
members with a link to their summary. Only :func:`purge` deletes.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from memlab.models.heat import PROTECTED_IMPORTANCE
from memlab.store import sweep
from memlab.store.budget import Budget
from memlab.store.core import StoreCore
from memlab.store.dynamics import days_between
from memlab.store.validation import check_count, check_id, check_optional_str, check_unit

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")

#: Characters kept by the sweep's ``compress`` action (whole leading sentences, at least one).
COMPRESS_CHARS = 200


@dataclass(frozen=True)
class PendingTag:
    source_id: int
    center: float
    until: float
    hours_forward: float
    gain: float


def tag_weight(dt_hours: np.ndarray, hours_back: float, hours_forward: float) -> np.ndarray:
    """The tagging kernel ``4 ** -((dt / H) ** 2)`` inside the window, 0 outside."""
    dt = np.asarray(dt_hours, dtype=float)
    h = np.where(dt < 0, hours_back, hours_forward)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(h > 0, dt / np.where(h > 0, h, 1.0), np.where(dt == 0, 0.0, np.inf))
    inside = np.abs(x) <= 1.0
    return np.where(inside, 4.0 ** (-(np.minimum(np.abs(x), 1.0) ** 2)), 0.0)


def _boost(
    core: StoreCore, row: Any, weight: float, gain: float, at: float, source_id: int
) -> None:
    g = gain * weight
    before = float(row["importance"])
    new_imp = before + g * (1.0 - before)
    first = (
        core.execute(
            "SELECT COUNT(*) FROM events WHERE memory_id = ? AND kind = 'tag'", (row["id"],)
        ).fetchone()[0]
        == 0
    )
    if first and before < PROTECTED_IMPORTANCE:  # one event never reaches protection on its own
        new_imp = min(new_imp, float(np.nextafter(PROTECTED_IMPORTANCE, 0.0)))
    core.execute(
        "UPDATE memories SET importance = ?, importance_auto = 0,"
        " stability = MIN(stability * ?, 36500.0), storage = storage + ? WHERE id = ?",
        (min(new_imp, 1.0), 1.0 + g, g * core.dynamics.strength.gain, row["id"]),
    )
    core.event(
        row["id"],
        at,
        "tag",
        data={
            "source_id": source_id,
            "weight": weight,
            "importance_before": row["importance"],
            "stability_before": row["stability"],
        },
    )


def flag_importance(
    core: StoreCore,
    memory_id: int,
    *,
    hours_back: float = 9.0,
    hours_forward: float = 2.0,
    level: float = 0.95,
    gain: float = 0.5,
    now: datetime | None = None,
    event_type: str | None = None,
) -> pd.DataFrame:
    """Flag ``memory_id`` important and tag its temporal neighbours (see the module docstring).

    A repeated flag of the same (``memory_id``, ``event_type``) tags nobody and returns an
    empty frame."""
    memory_id = check_id(memory_id)
    event_type = check_optional_str(event_type, "event_type")
    for name, value in (("hours_back", hours_back), ("hours_forward", hours_forward)):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not np.isfinite(value)
            or value < 0
        ):
            raise ValueError(f"{name} must be a finite number of hours >= 0, got {value!r}")
    level = check_unit(level, "level")
    gain = check_unit(gain, "gain")
    at = core.now(now).timestamp()
    out = []
    with core.write():
        row = core.row(memory_id)
        center = float(row["created_at"])
        repeated = any(
            json.loads(r[0] or "{}").get("event_type") == event_type
            for r in core.execute(
                "SELECT data FROM events WHERE memory_id = ? AND kind = 'importance'",
                (memory_id,),
            )
        )
        core.execute(
            "UPDATE memories SET importance = MAX(importance, ?), importance_auto = 0 WHERE id = ?",
            (level, memory_id),
        )
        core.event(
            memory_id,
            at,
            "importance",
            data={
                "importance_before": row["importance"],
                "level": level,
                "hours_back": hours_back,
                "hours_forward": hours_forward,
                "event_type": event_type,
                "repeated": repeated,
            },
        )
        if repeated:
            return pd.DataFrame(out, columns=["id", "dt_hours", "weight"])
        lo, hi = center - hours_back * 3600.0, center + hours_forward * 3600.0
        rows = core.execute(
            "SELECT * FROM memories"
            " WHERE created_at BETWEEN ? AND ? AND id != ? AND status = 'active'"
            " AND namespace = ?",
            (lo, hi, memory_id, core.namespace),
        ).fetchall()
        if rows:
            dt = (np.array([r["created_at"] for r in rows]) - center) / 3600.0
            weights = tag_weight(dt, hours_back, hours_forward)
            for r, w, d in zip(rows, weights, dt, strict=False):
                if w > 0:
                    _boost(core, r, float(w), gain, at, memory_id)
                    out.append({"id": int(r["id"]), "dt_hours": float(d), "weight": float(w)})
        if at < hi and hours_forward > 0:
            core.execute(
                "INSERT INTO pending_tags (source_id, center, until, hours_forward, gain)"
                " VALUES (?, ?, ?, ?, ?)",
                (memory_id, center, hi, hours_forward, gain),
            )
    return pd.DataFrame(out, columns=["id", "dt_hours", "weight"])


def active_tags(core: StoreCore, at: float) -> list[PendingTag]:
    """Pending forward-window tags of the namespace still open at ``at``."""
    rows = core.execute(
        "SELECT p.source_id, p.center, p.until, p.hours_forward, p.gain FROM pending_tags p"
        " JOIN memories m ON m.id = p.source_id"
        " WHERE p.until >= ? AND p.center <= ? AND m.namespace = ?",
        (at, at, core.namespace),
    ).fetchall()
    return [PendingTag(int(r[0]), float(r[1]), float(r[2]), float(r[3]), float(r[4])) for r in rows]


def apply_tags_on_arrival(
    core: StoreCore, memory_id: int, at: float, tags: list[PendingTag]
) -> tuple[int, ...]:
    """Tag a memory created at ``at`` with every open forward-window tag; returns the source ids."""
    applied = []
    for tag in tags:
        if tag.source_id == memory_id or not tag.center <= at <= tag.until:
            continue
        w = float(tag_weight(np.array([(at - tag.center) / 3600.0]), 0.0, tag.hours_forward)[0])
        if w > 0:
            row = core.row(memory_id)
            _boost(core, row, w, tag.gain, at, tag.source_id)
            applied.append(tag.source_id)
    return tuple(applied)


def forget_sweep(
    core: StoreCore,
    *,
    now: datetime | None = None,
    dry_run: bool = True,
    budget: Budget | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Assess every active memory; apply the sweep's actions unless ``dry_run``.

    Importance is the stored one where it was given and, where it was estimated from content
    (``importance_auto``), estimated again against the store's corpus now
    (:func:`memlab.store.sweep.importance_now`). Heat reads each memory's FSRS-6 stability (a
    memory used often and well cools more slowly; :meth:`memlab.models.heat.HeatModel.heat`).

    Without a ``budget`` the heat law decides (Linksee's risk): ``compress`` replaces the
    content with its leading sentences (at most ``COMPRESS_CHARS`` characters, at least one
    sentence), the full text kept as a version event; ``drop`` archives the memory (reason
    ``risk``). With a ``budget`` (:class:`~memlab.store.budget.Budget`) the budget decides: the
    ``budget.keep`` best memories by the keep score ``budget.keep_by`` are kept and every other
    is archived (action ``drop``, reason ``budget``; the archive event records the keep score,
    its name and the budget); nothing is compressed. Protected memories (layer goal/caveat,
    importance >= 0.9, altitude mission) are always kept (and count toward a budget). Archiving
    deletes nothing: ``restore`` undoes it.

    Columns: id, layer, importance, importance_auto, altitude, elapsed_days, heat, band, risk,
    protected, keep_score (NaN without a budget), action, reason, retention, accessibility,
    state, applied.
    """
    if not isinstance(dry_run, bool):
        raise TypeError("dry_run must be True or False")
    if budget is not None and not isinstance(budget, Budget):
        raise TypeError(f"budget must be a Budget, got {type(budget).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an integer, got {seed!r}")
    at = core.now(now).timestamp()
    # Read, score and apply in one transaction: a write transaction when applying, so no other
    # writer (thread or process) can change a row between its scoring and its compression.
    with core.read() if dry_run else core.write():
        rows = core.execute(
            "SELECT * FROM memories WHERE status = 'active' AND namespace = ? ORDER BY id",
            (core.namespace,),
        ).fetchall()
        df, a = _assess(core, rows, at, budget, int(seed))
        if not dry_run and rows:
            _apply_sweep(core, df, rows, a, at, budget)
    return df


_SWEEP_COLUMNS = [
    "id",
    "layer",
    "importance",
    "importance_auto",
    "altitude",
    "elapsed_days",
    "heat",
    "band",
    "risk",
    "protected",
    "keep_score",
    "action",
    "reason",
    "retention",
    "accessibility",
    "state",
    "applied",
]


def _assess(
    core: StoreCore, rows: list[Any], at: float, budget: Budget | None, seed: int = 0
) -> tuple[pd.DataFrame, Any]:
    if not rows:
        return pd.DataFrame(columns=_SWEEP_COLUMNS), None
    t = days_between(at, [r["last_access"] for r in rows])
    importance, stats = sweep.importance_now(core, rows)
    altitude = np.array([r["altitude"] for r in rows])
    layer = np.array([r["layer"] for r in rows])
    stability = np.array([r["stability"] for r in rows], dtype=float)
    a = core.dynamics.heat.assess(t, importance, altitude, layer, stability=stability)
    retention, acc, state = core.dynamics.accessibility(
        t,
        stability,
        [r["retrieval"] for r in rows],
        [r["storage"] for r in rows],
    )
    ids = np.array([int(r["id"]) for r in rows])
    if budget is None:
        keep_score = np.full(len(rows), np.nan)
        action = np.asarray(a.action)
        reason = np.where(a.protected, "protected", np.where(action != "keep", "risk", ""))
    else:
        keep_score = sweep.score(core, rows, at, budget.keep_by, importance, stats, seed=seed)
        kept = sweep.budget_keep(keep_score, a.protected, budget.keep, ids)
        action = np.where(kept, "keep", "drop")
        reason = np.where(a.protected, "protected", np.where(kept, "", "budget"))
    df = pd.DataFrame(
        {
            "id": ids,
            "layer": layer,
            "importance": importance,
            "importance_auto": [bool(r["importance_auto"]) for r in rows],
            "altitude": altitude,
            "elapsed_days": t,
            "heat": a.heat,
            "band": a.band,
            "risk": a.risk,
            "protected": a.protected,
            "keep_score": keep_score,
            "action": action,
            "reason": reason,
            "retention": retention,
            "accessibility": acc,
            "state": state,
            "applied": False,
        }
    )
    return df, a


def _apply_sweep(
    core: StoreCore, df: pd.DataFrame, rows: list[Any], a: Any, at: float, budget: Budget | None
) -> None:
    decided = zip(rows, df["action"], a.protected, a.risk, df["keep_score"], strict=True)
    for i, (r, action, protected, risk, keep_score) in enumerate(decided):
        if protected or action == "keep":
            continue
        if action == "compress":
            short = compress_text(r["content"])
            if short != r["content"]:
                event_id = core.event(
                    r["id"],
                    at,
                    "version",
                    text=r["content"],
                    data={"reason": "compress", "risk": float(risk)},
                )
                core.add_history(event_id, int(r["id"]), r["content"], core.vector_of(r))
                core.set_content(int(r["id"]), short, None, at)
                df.loc[i, "applied"] = True
        elif action == "drop":
            if budget is None:
                data: dict[str, Any] = {"reason": "forget_sweep drop", "risk": float(risk)}
            else:
                data = {
                    "reason": "budget",
                    "keep_by": budget.keep_by,
                    "keep_score": float(keep_score),
                    "keep": budget.keep,
                    "risk": float(risk),
                }
            core.execute("UPDATE memories SET status = 'archived' WHERE id = ?", (r["id"],))
            core.event(r["id"], at, "archive", data={"status_before": "active", **data})
            df.loc[i, "applied"] = True


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def compress_text(text: str, max_chars: int = COMPRESS_CHARS) -> str:
    """Leading whole sentences of ``text`` up to ``max_chars`` (always at least the first one)."""
    parts = sentences(text)
    if not parts:
        return text
    kept = [parts[0]]
    for s in parts[1:]:
        if len(" ".join([*kept, s])) > max_chars:
            break
        kept.append(s)
    return " ".join(kept)


def consolidate(
    core: StoreCore, *, now: datetime | None = None, min_group: int = 2, max_sentences: int = 3
) -> list[int]:
    """Merge cold and frozen unprotected active memories that share (entity, layer).

    The band is the heat band now, from the time since the last access and the memory's FSRS-6
    stability (as in :func:`forget_sweep`). With the default heat (``linksee``) a memory leaves
    *warm* about 5.6 days after its last access (later the more it was used): a memory hours or
    a few days old is never consolidated. (Ebbinghaus's own 1885 constants would end *warm*
    after about 3 hours; with them consolidation takes memories hours old.)

    Memories without an entity are not grouped. Each group of at least ``min_group`` becomes
    one ``learning``-layer memory whose content is the group's ``max_sentences`` most central
    sentences (cosine similarity of each sentence's embedding to the normalised mean of the
    members' embeddings), in their original order. The members are archived with
    ``consolidated_into`` pointing to the summary and a consolidation event on both sides.
    Returns the new memory ids.
    """
    min_group = check_count(min_group, "min_group")
    max_sentences = check_count(max_sentences, "max_sentences")
    at = core.now(now).timestamp()
    # Read, group and write in one write transaction (no other writer between the read of a
    # member and its archiving).
    with core.write():
        return _consolidate(core, at, min_group, max_sentences)


def _consolidate(core: StoreCore, at: float, min_group: int, max_sentences: int) -> list[int]:
    rows = core.execute(
        "SELECT * FROM memories WHERE status = 'active' AND entity IS NOT NULL AND namespace = ?"
        " ORDER BY id",
        (core.namespace,),
    ).fetchall()
    if not rows:
        return []
    t = days_between(at, [r["last_access"] for r in rows])
    importance, _ = sweep.importance_now(core, rows)
    a = core.dynamics.heat.assess(
        t,
        importance,
        np.array([r["altitude"] for r in rows]),
        np.array([r["layer"] for r in rows]),
        stability=np.array([r["stability"] for r in rows], dtype=float),
    )
    groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for r, band, protected in zip(rows, a.band, a.protected, strict=False):
        if band in ("cold", "frozen") and not protected:
            groups[(r["entity"], r["layer"])].append(r)
    created: list[int] = []
    for (entity, _layer), members in sorted(groups.items()):
        if len(members) < min_group:
            continue
        summary = _summary(core, members, max_sentences)
        projects = {m["project"] for m in members}
        topics = list(dict.fromkeys(t for m in members for t in json.loads(m["topics"])))
        altitude = Counter(m["altitude"] for m in members).most_common(1)[0][0]
        meta = {
            "project": projects.pop() if len(projects) == 1 else None,
            "topics": tuple(topics),
            "layer": "learning",
            "entity": entity,
            "altitude": altitude,
            "importance": max(float(m["importance"]) for m in members),
        }
        vec = core.embed([summary])[0]
        new_id = core.create(summary, meta, vec, at)
        ids = [int(m["id"]) for m in members]
        core.event(new_id, at, "consolidation", data={"members": ids})
        for m in members:
            core.execute(
                "UPDATE memories SET status = 'archived', consolidated_into = ? WHERE id = ?",
                (new_id, m["id"]),
            )
            core.event(m["id"], at, "consolidation", data={"summary_id": new_id})
        created.append(new_id)
    return created


def _summary(core: StoreCore, members: list[Any], max_sentences: int) -> str:
    pieces: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for mi, m in enumerate(members):
        for si, s in enumerate(sentences(m["content"])):
            if s not in seen:
                seen.add(s)
                pieces.append((mi, si, s))
    centroid = np.mean([core.vector_of(m) for m in members], axis=0)
    norm = np.linalg.norm(centroid)
    if norm > 0:
        centroid = centroid / norm
    vectors = core.embed([p[2] for p in pieces])
    centrality = vectors @ centroid
    order = np.argsort(-centrality, kind="stable")[:max_sentences]
    chosen = sorted(order.tolist(), key=lambda j: (pieces[j][0], pieces[j][1]))
    return " ".join(pieces[j][2] for j in chosen)


def purge(core: StoreCore, memory_id: int) -> None:
    """Hard-delete one memory, its events, FTS row and pending tags (the only hard delete).

    The text leaves the file: SQLite's ``secure_delete`` zeroes freed pages, the keyword index
    is merged (``optimize``) so no segment keeps the text's tokens, and the write-ahead log is
    checkpointed and truncated (fully only when no other connection is reading at that moment;
    otherwise the old frames are overwritten by later writes).
    """
    memory_id = check_id(memory_id)
    with core.write():
        core.row(memory_id)
        core.delete_memory(memory_id)
        # merge the keyword index's segments: the deleted text's tokens leave the index (the
        # freed pages are zeroed: the connection runs with secure_delete on)
        core.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
    core.checkpoint()  # and the old page versions leave the write-ahead log


def restore(core: StoreCore, memory_id: int, *, now: datetime | None = None) -> None:
    """Set an archived or superseded memory back to active."""
    memory_id = check_id(memory_id)
    at = core.now(now).timestamp()
    with core.write():
        if core.row(memory_id)["status"] == "active":
            return
        core.set_status(memory_id, "active", at, "restore")


def archive(core: StoreCore, memory_id: int, *, now: datetime | None = None) -> None:
    """Take an active memory out of default search (status ``archived``, an ``archive`` event);
    nothing is deleted and :func:`restore` undoes it. A superseded memory stays superseded."""
    memory_id = check_id(memory_id)
    at = core.now(now).timestamp()
    with core.write():
        if core.row(memory_id)["status"] != "active":
            return
        core.set_status(memory_id, "archived", at, "archive", reason="archive")


__all__ = [
    "COMPRESS_CHARS",
    "archive",
    "PendingTag",
    "active_tags",
    "apply_tags_on_arrival",
    "compress_text",
    "consolidate",
    "flag_importance",
    "forget_sweep",
    "purge",
    "restore",
    "sentences",
    "tag_weight",
]
