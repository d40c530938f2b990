"""Gated ingest over a store core: validate and screen, embed, judge each text against its
nearest memories (:meth:`memlab.gate.Gate.judge`), apply the decision losslessly.

- REINFORCE: an access of the memory (FSRS-6 review, dual-strength access), the text kept as an
  observation (history, searchable with ``include_history``), metadata merged upward: the
  higher importance, a protected layer, the higher altitude, new topics, an entity where there
  was none; nothing is ever lowered.
- SUPERSEDE: the new text becomes a new memory (its metadata merged upward with the old one's);
  the old memory's status becomes ``superseded`` (out of default search, found with
  ``include_history``), linked both ways (``supersedes`` link, ``supersede`` events).
- RELATED: a new memory linked to its neighbour (``related`` link, ``link`` events); both stay
  in default search.
- CREATE: a new memory.

Every decision is recorded with its rule, band and similarity (create / observation /
supersede / link events)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TypedDict

import numpy as np
from numpy.typing import NDArray

from memlab.gate import Candidate, Decision, Gate, Verdict
from memlab.informativeness import content_importance
from memlab.models.heat import ALTITUDE_MULTIPLIERS, PROTECTED_LAYERS
from memlab.store import corpus, lifecycle
from memlab.store.core import StoreCore
from memlab.store.records import IngestResult
from memlab.store.secrets import screen, screen_meta
from memlab.store.validation import (
    check_content,
    check_id,
    check_meta,
    check_now,
)


class IngestMeta(TypedDict, total=False):
    """The metadata of an ingested text: the keyword arguments of ``MemoryStore.ingest`` and
    ``ingest_many`` and the keys of an item mapping (beside ``content``); defaults in
    :data:`INGEST_DEFAULTS`."""

    project: str | None
    topics: Iterable[str]
    layer: str
    entity: str | None
    altitude: str
    importance: float | str
    supersedes: int | None
    context: str | None
    observed_at: datetime | None


#: What an ingested text's metadata is when not given.
INGEST_DEFAULTS: dict[str, Any] = {
    "project": None,
    "topics": (),
    "layer": "context",
    "entity": None,
    "altitude": "implementation",
    "importance": "auto",
    "supersedes": None,
    "context": None,
    "observed_at": None,
}
#: Keys an ingest item (a mapping) may carry.
INGEST_KEYS = frozenset({"content", *INGEST_DEFAULTS})


def ingest_meta(given: Mapping[str, Any]) -> dict[str, Any]:
    """:data:`INGEST_DEFAULTS` with ``given`` keyword arguments (unknown names: TypeError)."""
    unknown = set(given) - set(INGEST_DEFAULTS)
    if unknown:
        raise TypeError(
            f"unknown ingest arguments {sorted(unknown)}; allowed {sorted(INGEST_DEFAULTS)}"
        )
    return {**INGEST_DEFAULTS, **given}


#: Vector candidates looked at per text.
N_CANDIDATES = 32
#: In-scope candidates whose texts the gate compares.
N_JUDGED = 8


@dataclass(frozen=True, slots=True)
class Prepared:
    """One validated, screened text with its metadata."""

    text: str
    meta: dict[str, Any]
    redacted: int
    supersedes: int | None = None
    #: Length of the memory's own text when a context was appended (None: all its own).
    own_chars: int | None = None

    @property
    def own_text(self) -> str:
        """The text without the context given on ingest."""
        return self.text[: self.own_chars]


def prepare(
    items: Iterable[str | Mapping[str, Any]],
    defaults: Mapping[str, Any],
    secrets: str,
    *,
    name_items: bool | None = None,
) -> list[Prepared]:
    """Validate and screen every item before anything is written (one bad item raises; its
    error names the item when ``name_items``, by default when there are several)."""
    items = list(items)
    named = len(items) > 1 if name_items is None else name_items
    prepared: list[Prepared] = []
    default_meta: dict[str, Any] | None = None  # validated once, shared by plain-string items
    screened_default: tuple[dict[str, Any], int] | None = None
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
                **{k: v for k, v in item.items() if k not in _NOT_META},
            }
            supersedes = item.get("supersedes", defaults.get("supersedes"))
            context = item.get("context", defaults.get("context"))
            observed = item.get("observed_at", defaults.get("observed_at"))
        else:
            raw, meta_in = item, defaults
            supersedes = defaults.get("supersedes")
            context = defaults.get("context")
            observed = defaults.get("observed_at")
        try:
            text = check_content(raw)
            if supersedes is not None:
                supersedes = check_id(supersedes)
            if meta_in is defaults:
                meta = default_meta = default_meta or _checked_meta(defaults)
            else:
                meta = _checked_meta(meta_in)
            text, redacted = screen(text, secrets)
            own_chars = None
            if context is not None:
                context, context_redacted = screen(check_content(context, "context"), secrets)
                redacted += context_redacted
                own_chars = len(text)
                text = check_content(with_context(text, context))
            if meta is default_meta:  # the shared defaults are screened once
                screened_default = screened_default or screen_meta(meta, secrets)
                meta, meta_redacted = screened_default
            else:
                meta, meta_redacted = screen_meta(meta, secrets)
            redacted += meta_redacted
            if observed is not None:
                meta = {**meta, "valid_from": check_now(observed, "observed_at").timestamp()}
        except (TypeError, ValueError) as error:
            raise type(error)(f"item {i}: {error}" if named else str(error)) from error
        if own_chars is not None:  # else the metadata (own_chars None) is shared by the items
            meta = {**meta, "own_chars": own_chars}
        prepared.append(Prepared(text, meta, redacted, supersedes, own_chars))
    return prepared


_NOT_META = ("content", "supersedes", "context", "observed_at")


def with_context(text: str, context: str) -> str:
    """The content of a memory ingested with a context: ``"<text> (context: <context>)"``."""
    return f"{text} (context: {context})"


def _meta_keys(meta: Mapping[str, Any]) -> dict[str, Any]:
    return {k: meta[k] for k in ("project", "topics", "layer", "entity", "altitude", "importance")}


#: The importance that asks the store to estimate it from the text (the default).
AUTO = "auto"


def _checked_meta(meta_in: Mapping[str, Any]) -> dict[str, Any]:
    """Validated metadata with ``importance_auto``: ``importance="auto"`` is estimated on
    ingest (:func:`memlab.store.corpus.auto_importance`; 0.0 until then), a number is given."""
    keys = _meta_keys(meta_in)
    value = keys["importance"]
    auto = isinstance(value, str)
    if auto and value != AUTO:
        raise ValueError(f"importance must be a number in [0, 1] or {AUTO!r}, got {value!r}")
    meta = check_meta(**{**keys, "importance": 0.0 if auto else value})
    return {**meta, "importance_auto": auto, "own_chars": None}


def check_supersedes(core: StoreCore, prepared: list[Prepared]) -> None:
    """Every explicit ``supersedes`` names an active memory, each at most once in a call
    (checked before writing: a second revision of a memory supersedes the first one's new
    memory, whose id is not known yet)."""
    first: dict[int, int] = {}  # memory id -> the first item superseding it
    for i, p in enumerate(prepared):
        if p.supersedes in first:
            raise ValueError(
                f"supersedes: items {first[p.supersedes]} and {i} both supersede memory"
                f" {p.supersedes}; ingest the later revision after the earlier one"
            )
        if p.supersedes is not None:
            first[p.supersedes] = i
    wanted = set(first)
    if not wanted:
        return
    with core.read():
        rows = core.rows(wanted, "id, status")
    for memory_id in sorted(wanted):
        if memory_id not in rows:
            raise KeyError(f"supersedes: no memory with id {memory_id}")
        if rows[memory_id]["status"] != "active":
            raise ValueError(
                f"supersedes: memory {memory_id} is {rows[memory_id]['status']}; "
                "supersede its current version"
            )


#: Columns of a candidate's row the gate reads (scope and texts).
_CANDIDATE_COLUMNS = "id, status, project, content, entity"


class _ChunkRows:
    """The candidate rows of one ingest chunk, read once: the vector candidates' rows come
    with the candidates; a row written in the chunk is read again when next asked for."""

    def __init__(self, core: StoreCore, rows: Mapping[int, Any]) -> None:
        self.core = core
        self.known: dict[int, Any] = dict(rows)

    def get(self, ids: Iterable[int]) -> dict[int, Any]:
        ids = list(ids)
        missing = [m for m in ids if m not in self.known]
        if missing:
            self.known.update(self.core.rows(missing, _CANDIDATE_COLUMNS))
        return {m: self.known[m] for m in ids if m in self.known}

    def changed(self, *ids: int | None) -> None:
        for m in ids:
            if m is not None:
                self.known.pop(m, None)


def ingest_chunk(
    core: StoreCore,
    gate: Gate,
    chunk: list[Prepared],
    vectors: NDArray[np.float32],
    at: float,
) -> list[IngestResult]:
    """Gate and write one batch of prepared texts with their vectors (inside a write): each
    text is judged against its in-scope vector candidates and the texts before it."""
    tags = lifecycle.active_tags(core, at)
    chunk = with_auto_importance(core, chunk)
    scored, found_rows = core.vector_candidates(vectors, N_CANDIDATES, columns=_CANDIDATE_COLUMNS)
    rows_of = _ChunkRows(core, found_rows)
    within = vectors @ vectors.T
    # The memories created in this chunk (in order), the chunk row of each (whose project code
    # is its project's) and whether it is still active: candidates of the texts after them, by
    # their vectors' similarity (the index was searched before). Only a text's best N_JUDGED of
    # those in its scope can be among its judged candidates.
    codes: dict[str | None, int] = {}
    project_of = np.array([codes.setdefault(p.meta["project"], len(codes)) for p in chunk])
    written_ids = np.zeros(len(chunk), dtype=np.int64)
    written_rows = np.zeros(len(chunk), dtype=np.int64)
    written_active = np.zeros(len(chunk), dtype=bool)
    slot_of: dict[int, int] = {}
    n_written = 0
    out: list[IngestResult] = []
    for i, (item, vec) in enumerate(zip(chunk, vectors, strict=True)):
        sims = dict(scored[i])
        if n_written:
            in_project = project_of[written_rows[:n_written]] == project_of[i]
            mine = written_active[:n_written] & in_project
            slots = np.flatnonzero(mine)
            row_sims = within[i, written_rows[slots]]
            if len(slots) > N_JUDGED:
                top = np.argpartition(-row_sims, N_JUDGED)[:N_JUDGED]
                slots, row_sims = slots[top], row_sims[top]
            sims.update(zip(written_ids[slots].tolist(), row_sims.tolist(), strict=True))
        scope = in_scope(core, gate, sims, vec, item.meta["project"], rows_of.get)
        rows = rows_of.get(m for m, _ in scope)
        candidates_i = [Candidate(s, rows[m]["content"], rows[m]["entity"], m) for m, s in scope]
        if item.supersedes is not None:
            sim_of = dict(scope)
            verdict = Verdict(
                Decision.SUPERSEDE, None, sim_of.get(item.supersedes), "explicit", None
            )
            target: int | None = item.supersedes
        else:
            verdict = gate.judge(item.text, candidates_i, entity=item.meta["entity"])
            target = None if verdict.index is None else scope[verdict.index][0]
        memory_id, tagged = apply(core, verdict, target, item, vec, at, tags)
        rows_of.changed(target, memory_id)
        if verdict.decision is Decision.SUPERSEDE and target in slot_of:
            written_active[slot_of[target]] = False
        if verdict.decision is not Decision.REINFORCE:  # a new memory
            written_ids[n_written], written_rows[n_written] = memory_id, i
            written_active[n_written] = True
            slot_of[memory_id] = n_written
            n_written += 1
        nearest = target if target is not None else (scope[0][0] if scope else None)
        out.append(
            IngestResult(
                verdict.decision,
                verdict.similarity,
                memory_id,
                nearest,
                item.redacted,
                tagged,
                verdict.rule,
            )
        )
    return out


def with_auto_importance(core: StoreCore, chunk: list[Prepared]) -> list[Prepared]:
    """The chunk with every ``importance="auto"`` estimated from its text, against the store's
    corpus with the chunk's own texts counted in (:mod:`memlab.store.corpus`)."""
    auto = [i for i, p in enumerate(chunk) if p.meta["importance_auto"]]
    if not auto:
        return chunk
    texts = [p.own_text for p in chunk]
    stats = corpus.term_stats(core, texts).add(texts)
    values = content_importance([chunk[i].own_text for i in auto], stats)
    out = list(chunk)
    for i, value in zip(auto, values, strict=True):
        out[i] = replace(chunk[i], meta={**chunk[i].meta, "importance": float(value)})
    return out


def merged_meta(row: Any, meta: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata of a memory merged upward with a new text's: the higher importance (a given
    one over an estimate: :func:`merged_importance`), a protected layer over an unprotected
    one, the higher altitude, the union of the topics, the entity where there was none.
    Protection and a given importance are never lowered; two estimates keep the memory's (it
    is estimated again from its own content by sweeps)."""
    old_topics = json.loads(row["topics"]) if isinstance(row["topics"], str) else row["topics"]
    layer = row["layer"]
    if meta["layer"] in PROTECTED_LAYERS and layer not in PROTECTED_LAYERS:
        layer = meta["layer"]
    altitude = min(row["altitude"], meta["altitude"], key=lambda a: ALTITUDE_MULTIPLIERS[a])
    importance, auto = float(row["importance"]), bool(row["importance_auto"])
    if not meta.get("importance_auto", False):  # a given value wins over an estimate
        importance = (
            float(meta["importance"]) if auto else max(importance, float(meta["importance"]))
        )
        auto = False
    return {
        "project": row["project"],
        "topics": list(dict.fromkeys([*old_topics, *meta["topics"]])),
        "layer": layer,
        "entity": row["entity"] if row["entity"] is not None else meta["entity"],
        "altitude": altitude,
        "importance": importance,
        "importance_auto": auto,
    }


def apply(
    core: StoreCore,
    verdict: Verdict,
    target: int | None,
    item: Prepared,
    vec: NDArray[np.float32],
    at: float,
    tags: list[lifecycle.PendingTag],
) -> tuple[int, tuple[int, ...]]:
    """Carry out a verdict (inside a write); returns (the memory written or reinforced, the
    pending tags applied to a new memory)."""
    why = verdict.to_dict()
    if verdict.decision is Decision.REINFORCE:
        assert target is not None
        row = core.row(target)
        core.review(row, at, source="reinforce", similarity=verdict.similarity, rule=verdict.rule)
        merged = merged_meta(row, item.meta)
        before = {k: json.loads(row[k]) if k == "topics" else row[k] for k in merged}
        changed = {k: v for k, v in merged.items() if before[k] != v}
        data = {**why, "merged": {k: [before[k], v] for k, v in changed.items()}}
        event_id = core.event(target, at, "observation", text=item.text, data=data)
        core.add_history(event_id, target, item.text, vec)
        if changed:
            core.update(target, **changed)
        return target, ()
    if verdict.decision is Decision.SUPERSEDE:
        assert target is not None
        old = core.row(target)
        meta = merged_meta(old, item.meta) | {
            "project": item.meta["project"],
            "own_chars": item.own_chars,
            "valid_from": item.meta.get("valid_from"),
        }
        if meta["importance_auto"]:  # both estimated: the new text's own estimate
            meta["importance"] = item.meta["importance"]
        memory_id = core.create(item.text, meta, vec, at, **why, supersedes=target)
        core.set_status(target, "superseded", at, "supersede", **why, superseded_by=memory_id)
        core.update(target, valid_until=core.row(memory_id)["valid_from"])
        core.link(memory_id, target, "supersedes", at, rule=verdict.rule)
        core.event(memory_id, at, "supersede", data={**why, "supersedes": target})
    elif verdict.decision is Decision.RELATED:
        assert target is not None
        memory_id = core.create(item.text, item.meta, vec, at, **why, related_to=target)
        core.link(memory_id, target, "related", at, similarity=verdict.similarity)
        core.event(target, at, "link", data={**why, "related": memory_id})
        core.event(memory_id, at, "link", data={**why, "related": target})
    else:
        memory_id = core.create(item.text, item.meta, vec, at, **why)
    return memory_id, lifecycle.apply_tags(core, memory_id, at, tags)


def in_scope(
    core: StoreCore,
    gate: Gate,
    sims: dict[int, float],
    vec: NDArray[np.float32],
    project: str | None,
    rows_of: Callable[[Iterable[int]], Mapping[int, Any]],
    limit: int = N_JUDGED,
) -> list[tuple[int, float]]:
    """Up to ``limit`` (id, similarity) of active memories of ``project`` among the candidates
    ``sims``, most similar first (``rows_of`` reads the candidates' rows: id, status and
    project at least)."""
    if not np.any(vec):
        return []
    ordered = sorted(sims.items(), key=lambda kv: -kv[1])
    found: list[tuple[int, float]] = []
    start = 0
    while len(found) < limit and start < len(ordered):  # the best few first: usually in scope
        batch = ordered[start : start + (8 if start == 0 else 64)]
        start += len(batch)
        scope = rows_of([m for m, _ in batch])
        for mid, s in batch:
            r = scope.get(mid)
            if r is not None and r["status"] == "active" and r["project"] == project:
                found.append((mid, float(min(max(s, -1.0), 1.0))))
                if len(found) >= limit:
                    break
    if found:
        return found
    # Candidates were all out of scope: if some might still be above the gate's floor, search
    # the scope exactly (rare: many close memories in other projects).
    if len(ordered) >= N_CANDIDATES and ordered[-1][1] > min(gate.floor, gate.update):
        rows = core.select("status = 'active' AND project IS ?", (project,))
        if rows:
            mat = np.stack([core.vector_of(r) for r in rows])
            scores = mat @ vec
            order = np.argsort(-scores, kind="stable")[:limit]
            return [(int(rows[j][0]), float(min(max(scores[j], -1.0), 1.0))) for j in order]
    return []


__all__ = [
    "INGEST_DEFAULTS",
    "INGEST_KEYS",
    "IngestMeta",
    "N_CANDIDATES",
    "N_JUDGED",
    "Prepared",
    "apply",
    "check_supersedes",
    "in_scope",
    "ingest_chunk",
    "ingest_meta",
    "merged_meta",
    "prepare",
]
