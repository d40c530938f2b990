"""Gated ingest over a store core: validate and screen, embed, judge each text against its
nearest memories (:meth:`memlab.gate.Gate.judge`), apply the decision losslessly
(:meth:`memlab.store.MemoryStore.ingest`; metadata is merged upward, :func:`merged_meta`).

A SUPERSEDE links the new memory to the old both ways (``supersedes`` link, ``supersede``
events), a RELATED one to its neighbour (``related`` link, ``link`` events); every decision is
recorded with its rule, band and similarity (create / observation / supersede / link events)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TypedDict

import numpy as np
from numpy.typing import NDArray

from memlab.gate import Candidate, Decision, Gate, Verdict
from memlab.informativeness import content_importance
from memlab.models.heat import ALTITUDE_MULTIPLIERS, PROTECTED_LAYERS
from memlab.secrets import screen, screen_meta
from memlab.store import corpus, lifecycle
from memlab.store.core import StoreCore
from memlab.store.records import IngestResult
from memlab.store.validation import check_content, check_id, check_meta, check_now


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
    """One validated, screened text with its metadata (``own_chars``: the length of its own
    text when a context was appended, None: all its own)."""

    text: str
    meta: dict[str, Any]
    redacted: int
    supersedes: int | None = None

    @property
    def own_text(self) -> str:
        """The text without the context given on ingest."""
        return self.text[: self.meta["own_chars"]]


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
    for i, item in enumerate(items):
        given: Mapping[str, Any] = item if isinstance(item, Mapping) else {"content": item}
        unknown = set(given) - INGEST_KEYS
        if unknown:
            raise TypeError(
                f"item {i}: unknown keys {sorted(unknown)}; allowed {sorted(INGEST_KEYS)}"
            )
        if "content" not in given:
            raise ValueError(f"item {i}: missing 'content'")
        fields = {**defaults, **given}
        try:
            text = check_content(fields["content"])
            supersedes = fields.get("supersedes")
            supersedes = None if supersedes is None else check_id(supersedes)
            meta = _checked_meta(fields)
            text, redacted = screen(text, secrets)
            own_chars = None
            if fields.get("context") is not None:
                context = check_content(fields["context"], "context")
                context, context_redacted = screen(context, secrets)
                redacted += context_redacted
                own_chars = len(text)
                text = f"{text} (context: {context})"
            text = check_content(text, "the text to store (secrets redacted, context appended)")
            meta, meta_redacted = screen_meta(meta, secrets)
            redacted += meta_redacted
            if fields.get("observed_at") is not None:
                meta["valid_from"] = check_now(fields["observed_at"], "observed_at").timestamp()
        except (TypeError, ValueError) as error:
            raise type(error)(f"item {i}: {error}" if named else str(error)) from error
        meta["own_chars"] = own_chars
        prepared.append(Prepared(text, meta, redacted, supersedes))
    return prepared


#: The importance that asks the store to estimate it from the text (the default).
AUTO = "auto"


def _checked_meta(meta_in: Mapping[str, Any]) -> dict[str, Any]:
    """Validated metadata with ``importance_auto``: ``importance="auto"`` is estimated on
    ingest (:func:`with_auto_importance`; 0.0 until then), a number is given."""
    value = meta_in["importance"]
    auto = isinstance(value, str)
    if auto and value != AUTO:
        raise ValueError(f"importance must be a number in [0, 1] or {AUTO!r}, got {value!r}")
    meta = check_meta({**meta_in, "importance": 0.0 if auto else value})
    return {**meta, "importance_auto": auto}


def check_supersedes(core: StoreCore, prepared: list[Prepared], at: float | None) -> None:
    """Every explicit ``supersedes`` names an active memory holding from no later than its
    successor (``observed_at``, else ``at``), each at most once in a call (checked before writing:
    a second revision of a memory supersedes the first one's new memory, whose id is unknown)."""
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
        rows = core.rows(wanted, "id, status, valid_from")
    for memory_id in sorted(wanted):
        if memory_id not in rows:
            raise KeyError(f"supersedes: no memory with id {memory_id}")
        if rows[memory_id]["status"] != "active":
            raise ValueError(
                f"supersedes: memory {memory_id} is {rows[memory_id]['status']}; "
                "supersede its current version"
            )
        observed = prepared[first[memory_id]].meta.get("valid_from", at)
        if observed is not None and observed < rows[memory_id]["valid_from"]:
            raise ValueError(
                f"supersedes: memory {memory_id} holds from a later time than this text's "
                "observed_at (or now); a successor cannot take over before its predecessor began"
            )


#: Columns of a candidate's row the gate reads (scope and texts).
_CANDIDATE_COLUMNS = "id, status, project, content, entity"


def ingest_chunk(
    core: StoreCore, gate: Gate, chunk: list[Prepared], vectors: NDArray[np.float32], at: float
) -> list[IngestResult]:
    """Gate and write one batch of prepared texts with their vectors (inside a write): each
    text is judged against its in-scope vector candidates and the active memories of its
    project that the texts before it created (the index was searched before they were)."""
    tags = lifecycle.active_tags(core, at)
    chunk = with_auto_importance(core, chunk)
    scored = core.vector_candidates(vectors, N_CANDIDATES)
    within = vectors @ vectors.T
    created: dict[int, int] = {}  # memory id -> chunk row, of the active memories written here
    out: list[IngestResult] = []
    for i, (item, vec) in enumerate(zip(chunk, vectors, strict=True)):
        project = item.meta["project"]
        sims = dict(scored[i])
        sims.update(
            (m, float(within[i, j]))
            for m, j in created.items()
            if chunk[j].meta["project"] == project
        )
        scope = in_scope(core, gate, sims, vec, project)
        if item.supersedes is not None:
            check_supersedes(core, [item], at)  # again in the write: it may be superseded since
            similarity = next((c.similarity for c in scope if c.id == item.supersedes), None)
            verdict = Verdict(Decision.SUPERSEDE, None, similarity, "explicit", None)
            target: int | None = item.supersedes
        else:
            verdict = gate.judge(item.text, scope, entity=item.meta["entity"])
            target = None if verdict.index is None else scope[verdict.index].id
        observed, began = item.meta.get("valid_from", at), None  # ingested at an earlier now
        on_memory = verdict.decision in (Decision.SUPERSEDE, Decision.REINFORCE)
        if on_memory and verdict.rule != "explicit":
            row = core.row(target)
            if observed < row["valid_from"] or at < row["created_at"]:
                # said before the memory it matches: not its successor nor an access of it; both
                # stay in search, linked (the newer ranks first), an older value valid until the
                # newer began
                began = row["valid_from"] if observed < row["valid_from"] else None
                verdict = replace(verdict, decision=Decision.RELATED, rule="older")
        memory_id, tagged = apply(core, verdict, target, item, vec, at, tags)
        if began is not None:
            core.update(memory_id, valid_until=began)
        if verdict.decision is Decision.SUPERSEDE and target is not None:
            created.pop(target, None)
        if verdict.decision is not Decision.REINFORCE:  # a new memory
            created[memory_id] = i
        nearest = target if target is not None else (scope[0].id if scope else None)
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
            "own_chars": item.meta["own_chars"],
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
) -> list[Candidate]:
    """Up to :data:`N_JUDGED` active memories of ``project`` among the candidates ``sims``
    (id: similarity), most similar first, as the gate reads them."""
    if not np.any(vec):
        return []
    ordered = sorted(sims.items(), key=lambda kv: -kv[1])
    found: list[Candidate] = []
    start = 0
    while len(found) < N_JUDGED and start < len(ordered):  # the best few first: usually in scope
        batch = ordered[start : start + (8 if start == 0 else 64)]
        start += len(batch)
        scope = core.rows([m for m, _ in batch], _CANDIDATE_COLUMNS)
        for mid, s in batch:
            r = scope.get(mid)
            if r is not None and r["status"] == "active" and r["project"] == project:
                found.append(Candidate(float(np.clip(s, -1, 1)), r["content"], r["entity"], mid))
                if len(found) >= N_JUDGED:
                    break
    if found:
        return found
    # Candidates were all out of scope: if some might still be above the gate's floor, search
    # the scope exactly (rare: many close memories in other projects).
    if len(ordered) >= N_CANDIDATES and ordered[-1][1] > min(gate.floor, gate.update):
        rows = core.select("status = 'active' AND project IS ?", (project,))
        if rows:
            scores = np.stack([core.vector_of(r) for r in rows]) @ vec
            order = np.argsort(-scores, kind="stable")[:N_JUDGED]
            return [
                Candidate(float(np.clip(scores[j], -1, 1)), r["content"], r["entity"], int(r[0]))
                for j in order
                for r in [rows[j]]
            ]
    return []
