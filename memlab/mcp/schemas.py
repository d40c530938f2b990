"""Typed results of the MCP tools (pydantic models: the SDK publishes their JSON schemas).

Pure conversions from the store's records (:class:`memlab.store.Memory`, ``SearchHit``,
``IngestResult``, the sweep's frame, the history frame) to JSON-ready models.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from pydantic import BaseModel, Field


def _num(value: Any) -> float | None:
    """A JSON-safe float (None for missing / NaN)."""
    if value is None:
        return None
    v = float(value)
    return None if math.isnan(v) else v


def _decision_name(decision: Any) -> str:
    """The gate decision as the store reports it (an enum's value, else its string)."""
    value = getattr(decision, "value", decision)
    return str(value).lower()


class MemoryOut(BaseModel):
    """One stored memory."""

    id: int
    content: str
    status: str = Field(description="active, superseded or archived")
    project: str | None
    topics: list[str]
    layer: str
    entity: str | None
    altitude: str
    importance: float
    stability: float = Field(description="FSRS-6 stability in days")
    difficulty: float
    storage: float = Field(description="storage strength (only grows)")
    retrieval: float = Field(description="retrieval strength just after the last access")
    access_count: int
    created_at: str
    updated_at: str
    last_access: str
    consolidated_into: int | None = None

    @classmethod
    def of(cls, memory: Any) -> MemoryOut:
        d = memory.to_dict()
        return cls(**{k: d.get(k) for k in cls.model_fields})


class IngestOut(BaseModel):
    """What ingest did with one text: the gate's decision and the memory it concerns."""

    decision: str = Field(
        description="the gate's decision: reinforce, supersede, related or create"
    )
    rule: str | None = Field(default=None, description="the gate rule that decided")
    similarity: float | None = Field(
        description="cosine similarity to the nearest memory in scope (None in an empty scope)"
    )
    memory_id: int = Field(
        description="the memory reinforced or written (the new one for supersede and related)"
    )
    nearest_id: int | None = Field(
        description="the memory reinforced, superseded or related to (the nearest for create)"
    )
    redacted: int = Field(description="secrets redacted from the text")
    tagged: list[int] = Field(description="memories whose importance flag tagged this one")

    @classmethod
    def of(cls, result: Any) -> IngestOut:
        return cls(
            decision=_decision_name(result.decision),
            rule=getattr(result, "rule", None),
            similarity=_num(result.similarity),
            memory_id=int(result.memory_id),
            nearest_id=None if result.nearest_id is None else int(result.nearest_id),
            redacted=int(getattr(result, "redacted", 0)),
            tagged=[int(t) for t in getattr(result, "tagged", ())],
        )


class IngestManyOut(BaseModel):
    """The results of a batch ingest, in the order of the items."""

    results: list[IngestOut]
    counts: dict[str, int] = Field(description="number of results per decision")


class HitOut(BaseModel):
    """A search hit and the parts of its score: score = rrf * time_factor * context."""

    memory_id: int
    content: str
    score: float
    rrf: float = Field(description="sum of 1/(60 + rank) over the keyword and vector rankings")
    keyword_rank: int | None = Field(description="rank in the BM25 ranking (None: absent)")
    vector_rank: int | None = Field(description="rank in the vector ranking (None: absent)")
    similarity: float | None = Field(description="cosine similarity to the query")
    retention: float = Field(description="FSRS-6 recall probability at search time")
    time_factor: float
    project_match: bool
    topic_overlap: float
    context: float
    project: str | None
    topics: list[str]
    layer: str
    status: str

    @classmethod
    def of(cls, hit: Any) -> HitOut:
        m = hit.memory
        return cls(
            memory_id=int(m.id),
            content=m.content,
            score=float(hit.score),
            rrf=float(hit.rrf),
            keyword_rank=hit.keyword_rank,
            vector_rank=hit.vector_rank,
            similarity=_num(hit.similarity),
            retention=float(hit.retention),
            time_factor=float(hit.time_factor),
            project_match=bool(hit.project_match),
            topic_overlap=float(hit.topic_overlap),
            context=float(hit.context),
            project=m.project,
            topics=list(m.topics),
            layer=m.layer,
            status=m.status,
        )


class SearchOut(BaseModel):
    """Search hits, best first."""

    query: str
    marked_accessed: bool = Field(description="whether the hits were strengthened (a review)")
    hits: list[HitOut]


class EventOut(BaseModel):
    """One event in a memory's history."""

    event_id: int
    at: str
    kind: str
    grade: int | None
    text: str | None
    data: dict[str, Any] | None


class HistoryOut(BaseModel):
    """A memory and its events, oldest first."""

    memory: MemoryOut
    events: list[EventOut]

    @classmethod
    def of(cls, memory: Any, frame: pd.DataFrame) -> HistoryOut:
        events = [
            EventOut(
                event_id=int(r.event_id),
                at=r.at.isoformat(),
                kind=str(r.kind),
                grade=None if pd.isna(r.grade) else int(r.grade),
                text=None if r.text is None or (isinstance(r.text, float)) else str(r.text),
                data=r.data if isinstance(r.data, dict) else None,
            )
            for r in frame.itertuples(index=False)
        ]
        return cls(memory=MemoryOut.of(memory), events=events)


class VersionOut(BaseModel):
    """One version of a fact."""

    version: int = Field(description="1 = the oldest")
    memory_id: int
    content: str
    status: str = Field(description="active for the current version, superseded before")
    created_at: str
    decision: str | None = Field(description="what made this version (the gate or explicit)")
    rule: str | None
    similarity: float | None
    current: bool


class VersionsOut(BaseModel):
    """The versions of the fact a memory belongs to, oldest first."""

    versions: list[VersionOut]

    @classmethod
    def of(cls, frame: pd.DataFrame) -> VersionsOut:
        return cls(
            versions=[
                VersionOut(
                    version=int(r["version"]),
                    memory_id=int(r["memory_id"]),
                    content=str(r["content"]),
                    status=str(r["status"]),
                    created_at=r["created_at"].isoformat(),
                    decision=None if r["decision"] is None else str(r["decision"]),
                    rule=None if r["rule"] is None else str(r["rule"]),
                    similarity=_num(r["similarity"]),
                    current=bool(r["current"]),
                )
                for r in frame.to_dict("records")
            ]
        )


class ImportanceOut(BaseModel):
    """The flagged memory after the flag, and the neighbours it strengthened."""

    memory: MemoryOut
    tagged: list[dict[str, float]] = Field(description="id, dt_hours and weight of each neighbour")
    event_type: str | None = None


class SweepRow(BaseModel):
    """The heat model's verdict on one active memory."""

    id: int
    layer: str
    heat: float
    band: str
    risk: float
    protected: bool
    action: str = Field(description="keep, compress or drop")
    reason: str = Field(description="'budget' when a budget drops it, else empty")
    keep_score: float | None = Field(description="the budget's keep score (higher = kept first)")
    state: str
    retention: float
    applied: bool


class SweepOut(BaseModel):
    """A forget sweep: every active memory assessed; actions applied unless dry_run."""

    dry_run: bool
    counts: dict[str, int] = Field(description="memories per action")
    applied: int = Field(description="actions applied (0 in a dry run)")
    rows: list[SweepRow]

    @classmethod
    def of(cls, frame: pd.DataFrame, dry_run: bool) -> SweepOut:
        rows = [
            SweepRow(
                id=int(r["id"]),
                layer=str(r["layer"]),
                heat=float(r["heat"]),
                band=str(r["band"]),
                risk=float(r["risk"]),
                protected=bool(r["protected"]),
                action=str(r["action"]),
                reason=str(r.get("reason") or ""),
                keep_score=_num(r.get("keep_score")),
                state=str(r["state"]),
                retention=float(r["retention"]),
                applied=bool(r["applied"]),
            )
            for r in frame.to_dict("records")
        ]
        counts: dict[str, int] = {}
        for row in rows:
            counts[row.action] = counts.get(row.action, 0) + 1
        return cls(dry_run=dry_run, counts=counts, applied=sum(r.applied for r in rows), rows=rows)


class ConsolidateOut(BaseModel):
    """The summaries consolidation created (their members are archived with a link)."""

    created: list[int]
    summaries: list[MemoryOut]


class StatusOut(BaseModel):
    """A memory after a status change (restore, forget)."""

    memory: MemoryOut


class StatsOut(BaseModel):
    """Counts by status, layer and event kind; embedder, schema and index state."""

    stats: dict[str, Any]


__all__ = [
    "ConsolidateOut",
    "EventOut",
    "HistoryOut",
    "HitOut",
    "ImportanceOut",
    "IngestManyOut",
    "IngestOut",
    "MemoryOut",
    "SearchOut",
    "StatsOut",
    "StatusOut",
    "SweepOut",
    "SweepRow",
    "VersionOut",
    "VersionsOut",
]
