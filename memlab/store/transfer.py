"""Export and import of a store as JSON lines: one header line, then one line per memory
with all its fields and its complete event history. Vectors are not exported: the
importing store embeds the content with its own embedder."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from memlab.store.core import RECORD_FIELDS, StoreCore
from memlab.store.files import atomic_text, is_sqlite_file, same_file
from memlab.store.records import MEMORY_FIELDS
from memlab.store.schema import EVENT_KINDS, LINK_KINDS, STATUSES
from memlab.store.secrets import screen
from memlab.store.validation import (
    check_chars,
    check_content,
    check_epoch,
    check_id,
    check_meta,
    check_positive,
)

FORMAT = "memlab-store-jsonl"
FORMAT_VERSION = 1


def export_target(core: StoreCore, path: str | Path) -> Path:
    """``path`` as an export target, refused (``ValueError``) when it is one of the store's own
    files (database, WAL, shared memory, journal, vector index, manifest), any SQLite database,
    or a directory; ``TypeError`` when it is not a path."""
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or Path, got {type(path).__name__}")
    target = Path(path)
    if not str(path).strip():
        raise ValueError("path is empty")
    if target.is_dir():
        raise ValueError(f"{target} is a directory; give a file name for the export")
    for own in core.database_files():
        if same_file(target, own):
            raise ValueError(f"{target} is a file of the store itself; export to another path")
    if is_sqlite_file(target):
        raise ValueError(f"{target} is a SQLite database; refusing to overwrite it with an export")
    return target


def export_jsonl(core: StoreCore, path: str | Path) -> int:
    """Write ``path``; returns the number of memories written. Times are POSIX seconds (UTC).

    Atomic: written to a temporary file beside ``path`` and renamed over it on success; on
    any error (or a kill) ``path`` keeps its old content and the temporary file is removed
    (a killed export's, at the next export). See :func:`export_target` for refused paths.
    """
    target = export_target(core, path)
    n = 0
    with core.read(), atomic_text(target) as fh:
        header = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "embedder": core.embedder.name,
            "dim": core.dim,
        }
        fh.write(json.dumps(header) + "\n")
        rows = core.execute(
            "SELECT * FROM memories WHERE namespace = ? ORDER BY id", (core.namespace,)
        ).fetchall()
        for row in rows:
            record: dict[str, Any] = {k: row[k] for k in MEMORY_FIELDS}
            record["topics"] = json.loads(row["topics"])
            record["importance_auto"] = bool(row["importance_auto"])
            record["events"] = [
                {
                    "at": e["at"],
                    "kind": e["kind"],
                    "grade": e["grade"],
                    "text": e["text"],
                    "data": None if e["data"] is None else json.loads(e["data"]),
                }
                for e in core.events(int(row["id"]))
            ]
            record["links"] = [
                {
                    "target": int(r["target"]),
                    "kind": r["kind"],
                    "at": r["at"],
                    "data": None if r["data"] is None else json.loads(r["data"]),
                }
                for r in core.links(int(row["id"]))
                if int(r["source"]) == int(row["id"])
            ]
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            n += 1
    return n


def _check_int(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")
    return value


def _check_range(value: Any, name: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or not low <= v <= high:
        raise ValueError(f"{name} must be a finite number in [{low}, {high}], got {value!r}")
    return v


def _check_event(e: Any) -> None:
    if not isinstance(e, Mapping):
        raise ValueError(f"an event must be an object, got {type(e).__name__}")
    if e.get("kind") not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {e.get('kind')!r}")
    check_epoch(e.get("at"), "event at")
    if e.get("grade") is not None:
        _check_int(e["grade"], "event grade", 1, 4)
    if e.get("text") is not None:
        if not isinstance(e["text"], str):
            raise ValueError("event text must be a string or null")
        check_chars(e["text"], "event text")
    if e.get("data") is not None:
        if not isinstance(e["data"], Mapping):
            raise ValueError("event data must be an object or null")
        check_chars(json.dumps(e["data"], ensure_ascii=False), "event data")


def check_record(record: Any) -> None:
    """Validate one exported memory (``ValueError`` naming the field): every field present,
    of its type and range (times within what a store can hold), texts valid Unicode."""
    if not isinstance(record, Mapping):
        raise ValueError(f"a record must be an object, got {type(record).__name__}")
    if "importance_auto" not in record:  # exports written before schema 5: a given value
        record["importance_auto"] = False
    record.setdefault("own_chars", None)  # and all of the content the memory's own
    record.setdefault("valid_from", record.get("created_at"))  # before schema 9: valid since
    record.setdefault("valid_until", None)  # created, until superseded (not known: open)
    missing = [k for k in (*MEMORY_FIELDS, "events") if k not in record]
    if missing:
        raise ValueError(f"missing fields {missing}")
    if isinstance(record["id"], bool) or not isinstance(record["id"], int):
        raise ValueError(f"id must be an integer, got {record['id']!r}")
    check_id(record["id"], "id")
    if record["consolidated_into"] is not None:
        if not isinstance(record["consolidated_into"], int):
            raise ValueError("consolidated_into must be an integer or null")
        check_id(record["consolidated_into"], "consolidated_into")
    check_content(record["content"])
    check_meta(
        **{k: record[k] for k in ("project", "topics", "layer", "entity", "altitude", "importance")}
    )
    if record["importance_auto"] not in (True, False):  # bool, or 0/1
        raise ValueError(
            f"importance_auto must be true or false, got {record['importance_auto']!r}"
        )
    own = record["own_chars"]
    if own is not None and (
        isinstance(own, bool) or not isinstance(own, int) or not 0 < own <= len(record["content"])
    ):
        raise ValueError(f"own_chars must be null or a length within the content, got {own!r}")
    for k in ("created_at", "updated_at", "last_access", "valid_from"):
        check_epoch(record[k], k)
    if record["valid_until"] is not None:
        check_epoch(record["valid_until"], "valid_until")
    check_positive(record["stability"], "stability")
    _check_range(record["stability"], "stability", 0.0, 36500.0)
    _check_range(record["difficulty"], "difficulty", 1.0, 10.0)
    _check_range(record["storage"], "storage", 0.0, 1e12)
    _check_range(record["retrieval"], "retrieval", 0.0, 1.0)
    _check_int(record["access_count"], "access_count", 0, 2**62)
    if record["status"] not in STATUSES:
        raise ValueError(f"unknown status {record['status']!r}")
    if not isinstance(record["events"], list):
        raise ValueError("events must be a list")
    for e in record["events"]:
        _check_event(e)
    links = record.get("links") or []
    if not isinstance(links, list):
        raise ValueError("links must be a list")
    for out in links:
        if (
            not isinstance(out, Mapping)
            or out.get("kind") not in LINK_KINDS
            or "target" not in out
            or "at" not in out
        ):
            raise ValueError(f"bad link {out!r}")
        if isinstance(out["target"], bool) or not isinstance(out["target"], int):
            raise ValueError(f"link target must be an integer, got {out['target']!r}")
        check_epoch(out["at"], "link at")


def _read(path: str | Path) -> list[dict[str, Any]]:
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or Path, got {type(path).__name__}")
    with open(path, encoding="utf-8") as fh:
        lines = [line for line in fh if line.strip()]
    if not lines:
        raise ValueError(f"{path} is empty")
    try:
        header = json.loads(lines[0])
    except ValueError as error:
        raise ValueError(f"{path}, line 1: not a {FORMAT} header ({error})") from error
    if (
        not isinstance(header, dict)
        or header.get("format") != FORMAT
        or header.get("version") != FORMAT_VERSION
    ):
        raise ValueError(f"{path} is not a {FORMAT} v{FORMAT_VERSION} file (header {header!r})")
    records = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            record = json.loads(line)
            check_record(record)
        except (TypeError, ValueError, KeyError) as error:
            raise ValueError(f"{path}, line {number}: {error}") from error
        records.append(record)
    ids = [r["id"] for r in records]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: the same memory id appears on two lines")
    return records


def _screened(record: dict[str, Any], mode: str) -> dict[str, Any]:
    """The record with its content, metadata and event texts screened for secrets (``reject``
    raises, ``redact`` replaces the secret spans)."""
    out = dict(record)
    out["content"] = screen(record["content"], mode)[0]
    for key in ("project", "entity"):
        if record[key] is not None:
            out[key] = screen(record[key], mode)[0]
    out["topics"] = list(dict.fromkeys(screen(t, mode)[0] for t in record["topics"]))
    out["events"] = [
        {**e, "text": screen(e["text"], mode)[0]} if e.get("text") else e for e in record["events"]
    ]
    return out


def import_jsonl(
    core: StoreCore, path: str | Path, *, now: datetime | None = None, secrets: str = "redact"
) -> dict[int, int]:
    """Add every memory of an export, in one transaction; returns old id -> new id.

    Every record is validated (:func:`check_record`) and screened for secrets with the store's
    mode before anything is written: one bad record raises ``ValueError`` naming its line and
    the store is unchanged. A memory keeps its id when that id is free in this store; links
    between memories (``consolidated_into``) are remapped. Each imported memory gets an
    ``import`` event. Import is a restore, not an ingest: nothing is gated or merged.
    """
    at = core.now(now).timestamp()
    records = [_screened(r, secrets) for r in _read(path)]
    vectors = core.embed([r["content"] for r in records]) if records else None
    mapping: dict[int, int] = {}
    with core.write():
        for record, vec in zip(records, vectors if vectors is not None else [], strict=False):
            old_id = int(record["id"])
            taken = core.execute("SELECT 1 FROM memories WHERE id = ?", (old_id,)).fetchone()
            fields = {k: record[k] for k in RECORD_FIELDS}
            fields["importance_auto"] = int(bool(fields["importance_auto"]))
            new_id = core.insert_memory(fields, vec, memory_id=None if taken else old_id)
            mapping[old_id] = new_id
            core.executemany(
                "INSERT INTO events (memory_id, at, kind, grade, text, data)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        new_id,
                        e["at"],
                        e["kind"],
                        e.get("grade"),
                        e.get("text"),
                        None if e.get("data") is None else json.dumps(e["data"]),
                    )
                    for e in record["events"]
                ],
            )
            event_id = core.event(
                new_id, at, "import", data={"source": str(path), "original_id": old_id}
            )
            if record["status"] == "superseded":
                core.move_to_history(new_id, event_id)
        for record in records:
            link = record["consolidated_into"]
            if link is not None:
                core.update(mapping[int(record["id"])], consolidated_into=mapping.get(int(link)))
            for out in record.get("links") or []:  # files written before links have none
                target = mapping.get(int(out["target"]))
                if target is not None:
                    core.link(
                        mapping[int(record["id"])], target, out["kind"], out["at"],
                        **(out.get("data") or {}),
                    )  # fmt: skip
    core.maintain_index()  # after the commit: the index is derived from what was written
    core.backfill_history()  # the imported observations and versions, searchable with history
    return mapping


__all__ = ["FORMAT", "FORMAT_VERSION", "export_jsonl", "import_jsonl"]
