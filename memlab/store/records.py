"""Plain records returned by the store: a memory, a search hit, an ingest result."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memlab.gate import Decision


def blob_to_vector(blob: bytes, dim: int) -> NDArray[np.float32]:
    """A stored vector (little-endian float32) as an array."""
    vec = np.frombuffer(blob, dtype="<f4")
    if vec.shape != (dim,):
        raise ValueError(f"stored vector has {vec.size} values, expected {dim}")
    return vec


def vector_to_blob(vec: NDArray[np.floating]) -> bytes:
    return np.ascontiguousarray(vec, dtype="<f4").tobytes()


@dataclass(frozen=True, slots=True)
class Memory:
    """One stored memory, as read from the database (times in UTC).

    ``stability`` (days) and ``difficulty`` are the FSRS-6 state and ``storage`` and
    ``retrieval`` the dual strengths just after the last access. ``importance_auto``: estimated
    from the text. ``own_chars``: the length of the memory's own text when it was ingested with
    a ``context`` (:attr:`own_text`). ``valid_from``: when its fact holds from (``observed_at``,
    else its creation); ``valid_until``: when its successor took over (None while current).
    """

    id: int
    content: str
    created_at: datetime
    updated_at: datetime
    project: str | None
    topics: tuple[str, ...]
    layer: str
    entity: str | None
    altitude: str
    importance: float
    importance_auto: bool
    own_chars: int | None
    stability: float
    difficulty: float
    last_access: datetime
    storage: float
    retrieval: float
    access_count: int
    status: str
    consolidated_into: int | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None

    @classmethod
    def from_row(cls, row: Any) -> Memory:
        """The memory of a ``memories`` row."""
        values = {f: row[f] for f in MEMORY_FIELDS}
        for key in _TIMES:
            t = values[key]
            values[key] = None if t is None else datetime.fromtimestamp(t, tz=UTC)
        values["topics"] = tuple(json.loads(values["topics"]))
        values["importance_auto"] = bool(values["importance_auto"])
        return cls(**values)

    @property
    def own_text(self) -> str:
        """The memory's own text: its content without the context given on ingest."""
        return self.content[: self.own_chars]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key in _TIMES:
            out[key] = None if out[key] is None else out[key].isoformat()
        out["topics"] = list(self.topics)
        return out


_TIMES = ("created_at", "updated_at", "last_access", "valid_from", "valid_until")
#: Fields of ``memories`` that make a :class:`Memory` (everything but the vector), in order.
MEMORY_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Memory))


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A search result and why it ranked: ``score = rrf * time_factor * context``
    (:meth:`MemoryStore.search`; a rank is None when absent from its ranking).

    ``superseded_by`` is the memory that replaced a superseded hit; ``possibly_outdated_by`` a
    newer hit that may revise this one (the gate's judge, or :func:`memlab.revision.outdates`).
    """

    memory: Memory
    score: float
    rrf: float
    keyword_rank: int | None
    vector_rank: int | None
    similarity: float | None
    retention: float
    time_factor: float
    project_match: bool
    topic_overlap: float
    context: float
    superseded_by: int | None = None
    possibly_outdated_by: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {key: getattr(self, key) for key in self.__dataclass_fields__ if key != "memory"}
        out["memory_id"] = self.memory.id
        out["content"] = self.memory.content
        return out


@dataclass(frozen=True, slots=True)
class IngestResult:
    """What ingest did with one text.

    ``decision`` and ``rule`` are the gate's (:class:`memlab.gate.Verdict`), ``similarity`` the
    cosine to the memory acted on (the nearest for CREATE; None in an empty scope),
    ``memory_id`` the memory reinforced or written, ``nearest_id`` the memory reinforced,
    superseded or related to (the nearest for CREATE), ``redacted`` the secrets redacted,
    ``tagged`` the flagged memories whose forward window tagged the new memory.
    """

    decision: Decision
    similarity: float | None
    memory_id: int
    nearest_id: int | None = None
    redacted: int = 0
    tagged: tuple[int, ...] = field(default_factory=tuple)
    rule: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["decision"] = self.decision.value
        out["tagged"] = list(self.tagged)
        return out
