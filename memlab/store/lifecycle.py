"""Synaptic tagging, and the texts of compression and consolidation.

Synaptic tagging and capture (Frey & Morris, 1997): flagging a memory (``MemoryStore.importance``)
strengthens every memory encoded in ``[t - hours_back, t + hours_forward]`` around its encoding
time ``t`` with

    w(dt) = 4 ** -((dt / H) ** 2),   H = hours_back if dt < 0 else hours_forward,

0 outside: ``importance += gain * w * (1 - importance)``, ``stability *= 1 + gain * w``,
``storage += gain * w``. Later arrivals inside the forward window are tagged on arrival. A
neighbour's first tag stops just below protection (importance 0.9).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from memlab.models.heat import PROTECTED_IMPORTANCE
from memlab.store.core import StoreCore

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class PendingTag:
    """A flagged memory's open forward window."""

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


def boost(core: StoreCore, row: Any, weight: float, gain: float, at: float, source_id: int) -> None:
    """Tag one memory (inside a write) with ``gain * weight``, a ``tag`` event."""
    g = gain * weight
    before = float(row["importance"])
    new_imp = before + g * (1.0 - before)
    first = not core.events(row["id"], ("tag",))
    if first and before < PROTECTED_IMPORTANCE:  # one event never reaches protection on its own
        new_imp = min(new_imp, float(np.nextafter(PROTECTED_IMPORTANCE, 0.0)))
    core.execute(
        "UPDATE memories SET importance = ?, importance_auto = 0,"
        " stability = MIN(stability * ?, 36500.0), storage = storage + ? WHERE id = ?",
        (min(new_imp, 1.0), 1.0 + g, g * core.dynamics.strength.gain, row["id"]),
    )
    data = {"source_id": source_id, "weight": weight}
    data |= {"importance_before": row["importance"], "stability_before": row["stability"]}
    core.event(row["id"], at, "tag", data=data)


def active_tags(core: StoreCore, at: float) -> list[PendingTag]:
    """Pending forward-window tags of the namespace still open at ``at``."""
    rows = core.execute(
        "SELECT p.source_id, p.center, p.until, p.hours_forward, p.gain FROM pending_tags p"
        " JOIN memories m ON m.id = p.source_id"
        " WHERE p.until >= ? AND p.center <= ? AND m.namespace = ?",
        (at, at, core.namespace),
    ).fetchall()
    return [PendingTag(int(r[0]), float(r[1]), float(r[2]), float(r[3]), float(r[4])) for r in rows]


def apply_tags(
    core: StoreCore, memory_id: int, at: float, tags: list[PendingTag]
) -> tuple[int, ...]:
    """Tag a memory created at ``at`` with every open forward-window tag; returns the source ids."""
    applied = []
    for tag in tags:
        if tag.source_id == memory_id or not tag.center <= at <= tag.until:
            continue
        w = float(tag_weight(np.array([(at - tag.center) / 3600.0]), 0.0, tag.hours_forward)[0])
        if w > 0:
            boost(core, core.row(memory_id), w, tag.gain, at, tag.source_id)
            applied.append(tag.source_id)
    return tuple(applied)


def sentences(text: str) -> list[str]:
    """The sentences (or lines) of ``text``."""
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def compress_text(text: str, max_chars: int = 200) -> str:
    """The sweep's ``compress``: the leading whole sentences of ``text`` up to ``max_chars``
    (always at least the first one)."""
    parts = sentences(text)
    if not parts:
        return text
    kept = [parts[0]]
    for s in parts[1:]:
        if len(" ".join([*kept, s])) > max_chars:
            break
        kept.append(s)
    return " ".join(kept)


def summary(core: StoreCore, members: list[Any], max_sentences: int) -> tuple[str, list[Any]]:
    """The members (rows) whose every sentence is among the ``max_sentences`` distinct sentences
    of ``members`` nearest the mean of their vectors, and their sentences in their original
    order: ``(summary, those members)``. A member with a sentence left out is not merged, so
    no fact leaves search."""
    split = [sentences(m["content"]) for m in members]
    pieces = list(dict.fromkeys(s for texts in split for s in texts))
    centroid = np.mean([core.vector_of(m) for m in members], axis=0)  # only its direction counts
    centrality = core.embed(pieces) @ centroid
    chosen = {pieces[j] for j in np.argsort(-centrality, kind="stable")[:max_sentences]}
    whole = [i for i, texts in enumerate(split) if set(texts) <= chosen]
    text = " ".join(dict.fromkeys(s for i in whole for s in split[i]))
    return text, [members[i] for i in whole]
