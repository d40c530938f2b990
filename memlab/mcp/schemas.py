"""Typed results of the MCP tools (pydantic models: the SDK publishes their JSON schemas).

Each is filled from the JSON an operation of :mod:`memlab.ops` returns (the same data the
``memlab store`` verbs print with ``--json``); keys a model does not declare are dropped.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


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
    valid_from: str | None = Field(default=None, description="when its fact holds from")
    valid_until: str | None = Field(
        default=None, description="when its successor took over (None while current)"
    )


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
    valid_from: str | None = None
    superseded_by: int | None = Field(default=None, description="the version that replaced it")
    possibly_outdated_by: int | None = Field(
        default=None, description="a newer memory that may revise it"
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


class VersionOut(BaseModel):
    """One version of a fact."""

    version: int = Field(description="1 = the oldest")
    memory_id: int
    content: str
    status: str = Field(description="active for the current version, superseded before")
    created_at: str
    valid_from: str | None = None
    valid_until: str | None = None
    decision: str | None = Field(description="what made this version (the gate or explicit)")
    rule: str | None
    similarity: float | None
    current: bool


class VersionsOut(BaseModel):
    """The versions of the fact a memory belongs to, oldest first."""

    versions: list[VersionOut]


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
