"""Versions of a fact: the chain of memories linked by ``supersedes``, listed, reverted, extended.

A SUPERSEDE (a revision found by the gate, or an explicit ``supersedes=``) writes the new text as
a new memory and sets the old one's status to ``superseded``, with a ``supersedes`` link from
new to old and a ``supersede`` event on both. The versions of a memory are every memory reached
through those links, oldest first; the current version is the active one. :func:`revert` makes
an earlier version current again (the others superseded), recorded as ``revert`` events.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pandas as pd

from memlab.store.core import StoreCore
from memlab.store.records import to_datetime
from memlab.store.validation import check_count, check_id

COLUMNS: tuple[str, ...] = (
    "version",
    "memory_id",
    "content",
    "status",
    "created_at",
    "decision",
    "rule",
    "similarity",
    "current",
)


def chain(core: StoreCore, memory_id: int) -> list[int]:
    """Ids of every memory linked to ``memory_id`` by ``supersedes`` (itself included),
    oldest first."""
    seen = {memory_id}
    todo = [memory_id]
    while todo:
        m = todo.pop()
        for r in core.links(m):
            if r["kind"] != "supersedes":
                continue
            for other in (int(r["source"]), int(r["target"])):
                if other not in seen:
                    seen.add(other)
                    todo.append(other)
    rows = core.rows(seen, "id, created_at")
    return sorted(rows, key=lambda m: (rows[m]["created_at"], m))


def _decided(core: StoreCore, memory_id: int) -> dict[str, Any]:
    events = core.events(memory_id, ("create",))
    if not events or events[0]["data"] is None:
        return {}
    return dict(json.loads(events[0]["data"]))


def versions(core: StoreCore, memory_id: int) -> pd.DataFrame:
    """The versions of the fact ``memory_id`` belongs to, oldest first (see :data:`COLUMNS`):
    each memory's content, status, creation time, and the gate's decision, rule and similarity
    that made it (``explicit`` for a caller's ``supersedes=``)."""
    memory_id = check_id(memory_id)
    with core.read():
        core.row(memory_id)
        ids = chain(core, memory_id)
        rows = core.rows(ids)
        out = []
        for v, m in enumerate(ids, start=1):
            why = _decided(core, m)
            out.append(
                {
                    "version": v,
                    "memory_id": m,
                    "content": rows[m]["content"],
                    "status": rows[m]["status"],
                    "created_at": to_datetime(rows[m]["created_at"]),
                    "decision": why.get("decision"),
                    "rule": why.get("rule"),
                    "similarity": why.get("similarity"),
                    "current": rows[m]["status"] == "active",
                }
            )
    return pd.DataFrame(out, columns=list(COLUMNS))


def revert(core: StoreCore, memory_id: int, version: int, *, now: datetime | None = None) -> int:
    """Make ``version`` (1 = the oldest) of ``memory_id``'s fact the current one; returns its id.

    The chosen memory becomes active; every other active version becomes superseded; each
    gets a ``revert`` event. Reverting to the current version changes nothing.
    """
    memory_id = check_id(memory_id)
    version = check_count(version, "version")
    at = core.now(now).timestamp()
    with core.write():
        core.row(memory_id)
        ids = chain(core, memory_id)
        if version > len(ids):
            raise ValueError(
                f"memory {memory_id} has {len(ids)} version(s); version {version} does not exist"
            )
        chosen = ids[version - 1]
        rows = core.rows(ids, "id, status")
        if rows[chosen]["status"] == "active":
            return chosen
        replaced = [m for m in ids if m != chosen and rows[m]["status"] == "active"]
        for m in replaced:
            core.update(m, status="superseded")
            core.event(m, at, "revert", data={"reverted_to": chosen, "version": version})
        core.update(chosen, status="active")
        core.event(
            chosen,
            at,
            "revert",
            data={
                "replaces": replaced,
                "version": version,
                "status_before": rows[chosen]["status"],
            },
        )
    return chosen


def links(core: StoreCore, memory_id: int) -> pd.DataFrame:
    """Links from and to ``memory_id``: source, target, kind (``supersedes``/``related``), at."""
    memory_id = check_id(memory_id)
    with core.read():
        core.row(memory_id)
        rows = core.links(memory_id)
    return pd.DataFrame(
        {
            "source": [int(r["source"]) for r in rows],
            "target": [int(r["target"]) for r in rows],
            "kind": [r["kind"] for r in rows],
            "at": pd.to_datetime([r["at"] for r in rows], unit="s", utc=True),
            "data": [None if r["data"] is None else json.loads(r["data"]) for r in rows],
        }
    )


__all__ = ["COLUMNS", "chain", "links", "revert", "versions"]
