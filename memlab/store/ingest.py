"""Gated ingest over a store core: validate and screen, embed, gate each text against its
nearest memory, apply the decision (see :meth:`memlab.store.MemoryStore.ingest`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memlab.gate import Decision, Gate
from memlab.store import lifecycle
from memlab.store.core import StoreCore
from memlab.store.records import IngestResult
from memlab.store.secrets import screen, screen_meta
from memlab.store.validation import check_content, check_count, check_items, check_meta

#: Keys an ingest item (a mapping) may carry.
INGEST_KEYS = frozenset(
    {"content", "project", "topics", "layer", "entity", "altitude", "importance"}
)

#: Vector candidates looked at per text.
N_CANDIDATES = 32


@dataclass(frozen=True)
class Prepared:
    """One validated, screened text with its metadata."""

    text: str
    meta: dict[str, Any]
    redacted: int


def prepare(
    items: Iterable[str | Mapping[str, Any]], defaults: Mapping[str, Any], secrets: str
) -> list[Prepared]:
    """Validate and screen every item before anything is written (one bad item raises)."""
    prepared: list[Prepared] = []
    default_meta: dict[str, Any] | None = None  # validated once, shared by plain-string items
    for i, item in enumerate(items):
        if isinstance(item, Mapping):
            unknown = set(item) - INGEST_KEYS
            if unknown:
                raise TypeError(
                    f"item {i}: unknown keys {sorted(unknown)}; allowed {sorted(INGEST_KEYS)}"
                )
            if "content" not in item:
                raise ValueError(f"item {i}: missing 'content'")
            raw = item["content"]
            meta_in: Mapping[str, Any] = {
                **defaults,
                **{k: v for k, v in item.items() if k != "content"},
            }
        else:
            raw, meta_in = item, defaults
        try:
            text = check_content(raw)
            if meta_in is defaults:
                if default_meta is None:
                    default_meta = check_meta(**defaults)
                meta = default_meta
            else:
                meta = check_meta(**meta_in)
            text, redacted = screen(text, secrets)
            meta, meta_redacted = screen_meta(meta, secrets)
            redacted += meta_redacted
        except (TypeError, ValueError) as error:
            raise type(error)(f"item {i}: {error}" if len(prepared) or i else str(error)) from error
        prepared.append(Prepared(text, meta, redacted))
    return prepared


def ingest_many(
    core: StoreCore,
    gate: Gate,
    items: Iterable[str | Mapping[str, Any]],
    defaults: Mapping[str, Any],
    *,
    secrets: str,
    now: datetime | None = None,
    batch_size: int = 100,
    progress: bool = False,
) -> list[IngestResult]:
    """Ingest ``items`` in order, each gated (see the facade's docstring).

    Everything is validated and screened first (one bad item: nothing written). Then each batch
    of ``batch_size`` texts is embedded with no lock held and written in its own transaction,
    so another process's writer waits at most one batch. An error in a batch rolls that batch
    back; the batches before it stay committed. The vector index is maintained after each
    commit: a failure to save it (e.g. an unwritable location) is a warning, never a rollback.
    """
    if isinstance(items, (str, bytes, Mapping)):
        check_items(items)  # raises the TypeError naming the fix
    at = core.now(now).timestamp()
    batch_size = check_count(batch_size, "batch_size")
    prepared = prepare(items, defaults, secrets)
    results: list[IngestResult] = []
    if not prepared:
        return results
    from memlab.progress import progress as progress_bar

    chunks = [prepared[i : i + batch_size] for i in range(0, len(prepared), batch_size)]
    with progress_bar(total=len(prepared), desc="ingest", unit="text", enabled=progress) as bar:
        for chunk in chunks:
            vectors = core.embed([p.text for p in chunk])  # outside the transaction
            with core.write():
                core.refresh_index()
                tags = lifecycle.active_tags(core, at)
                results.extend(_ingest_chunk(core, gate, chunk, vectors, at, tags))
            bar.update(len(chunk))
            core.maintain_index()
    return results


def _ingest_chunk(
    core: StoreCore,
    gate: Gate,
    chunk: list[Prepared],
    vectors: NDArray[np.float32],
    at: float,
    tags: list[lifecycle.PendingTag],
) -> list[IngestResult]:
    candidates = core.vector_candidates(vectors, N_CANDIDATES)
    within = vectors @ vectors.T
    # Memories created or re-embedded in this chunk -> the chunk row whose vector they have.
    latest: dict[int, int] = {}
    written_ids = np.zeros(len(chunk), dtype=np.int64)
    written_rows = np.zeros(len(chunk), dtype=np.int64)
    n_written = 0
    out: list[IngestResult] = []
    for i, (item, vec) in enumerate(zip(chunk, vectors, strict=True)):
        sims = {mid: s for mid, s in candidates[i] if mid not in latest}
        if n_written:
            row_sims = within[i, written_rows[:n_written]]
            top = (
                np.argsort(-row_sims)[: 2 * N_CANDIDATES]
                if n_written > 2 * N_CANDIDATES
                else np.arange(n_written)
            )
            for j in top:
                mid = int(written_ids[j])
                if latest.get(mid) == int(written_rows[j]):
                    sims[mid] = float(row_sims[j])
        nearest, sim = nearest_in_scope(core, gate, sims, vec, item.meta["project"])
        # the guard of the gate reads the nearest memory's text only when it would reinforce
        nearest_text = (
            core.row(nearest)["content"]
            if nearest is not None and sim is not None and sim > gate.reinforce
            else None
        )
        decision = gate.decide(sim, item.text, nearest_text)
        tagged: tuple[int, ...] = ()
        if decision is Decision.CREATE:
            memory_id = core.create(item.text, item.meta, vec, at)
            tagged = lifecycle.apply_tags_on_arrival(core, memory_id, at, tags)
            latest[memory_id] = i
            written_ids[n_written], written_rows[n_written] = memory_id, i
            n_written += 1
        else:
            assert nearest is not None
            memory_id = nearest
            row = core.row(memory_id)
            if decision is Decision.REINFORCE:
                core.review(row, at, source="reinforce", similarity=sim)
                core.event(memory_id, at, "observation", text=item.text, data={"similarity": sim})
            else:
                _update(core, row, item, vec, at, sim)
                latest[memory_id] = i
                written_ids[n_written], written_rows[n_written] = memory_id, i
                n_written += 1
        out.append(IngestResult(decision, sim, memory_id, nearest, item.redacted, tagged))
    return out


def _update(
    core: StoreCore,
    row: Any,
    item: Prepared,
    vec: NDArray[np.float32],
    at: float,
    sim: float | None,
) -> None:
    memory_id = int(row["id"])
    core.event(
        memory_id, at, "version", text=row["content"], data={"similarity": sim, "reason": "update"}
    )
    core.review(row, at, source="update", similarity=sim)
    topics = list(dict.fromkeys([*json.loads(row["topics"]), *item.meta["topics"]]))
    core.set_content(memory_id, item.text, vec, at)
    core.update(
        memory_id, topics=topics, importance=max(float(row["importance"]), item.meta["importance"])
    )


def nearest_in_scope(
    core: StoreCore,
    gate: Gate,
    sims: dict[int, float],
    vec: NDArray[np.float32],
    project: str | None,
) -> tuple[int | None, float | None]:
    """The most similar active memory of ``project`` among the candidates ``sims``."""
    if not np.any(vec):
        return None, None
    ordered = sorted(sims.items(), key=lambda kv: -kv[1])
    start = 0
    while start < len(ordered):  # check the best few first: usually the nearest is in scope
        batch = ordered[start : start + (4 if start == 0 else 64)]
        start += len(batch)
        scope = core.rows([m for m, _ in batch], "id, status, project")
        for mid, s in batch:
            r = scope.get(mid)
            if r is not None and r["status"] == "active" and r["project"] == project:
                return mid, float(min(max(s, -1.0), 1.0))
    # Candidates were all out of scope: if some might still pass the update threshold,
    # search the scope exactly (rare: many close memories in other projects).
    if len(ordered) >= N_CANDIDATES and ordered[-1][1] > gate.update:
        rows = core.execute(
            "SELECT id, embedding FROM memories WHERE status = 'active' AND project IS ?",
            (project,),
        ).fetchall()
        if rows:
            mat = np.stack([core.vector_of(r) for r in rows])
            scores = mat @ vec
            j = int(np.argmax(scores))
            return int(rows[j][0]), float(min(max(scores[j], -1.0), 1.0))
    return None, None


__all__ = [
    "INGEST_KEYS",
    "N_CANDIDATES",
    "Prepared",
    "ingest_many",
    "nearest_in_scope",
    "prepare",
]
