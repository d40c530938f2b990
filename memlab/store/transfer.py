"""Export and import of a store as JSON lines: one header line, then one line per memory with
all its fields, its complete event history and its outgoing links. Vectors are not exported:
the importing store embeds the content with its own embedder."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from memlab.secrets import SecretFoundError, screen, screen_meta
from memlab.store.core import RECORD_FIELDS, StoreCore
from memlab.store.files import atomic_text, check_replaceable, is_sqlite_file, same_file
from memlab.store.records import MEMORY_FIELDS
from memlab.store.schema import EVENT_KINDS, LINK_KINDS, STATUSES
from memlab.store.validation import (
    MAX_ID,
    check_content,
    check_epoch,
    check_meta,
    check_number,
    check_size,
)

FORMAT = "memlab-store-jsonl"
FORMAT_VERSION = 1
#: Records embedded and written together by an import (its memory is bounded by one batch).
IMPORT_BATCH = 256
#: Refused lines named in an import's error (all are counted).
REPORTED = 20


def export_jsonl(core: StoreCore, path: str | Path) -> int:
    """Write ``path``; returns the number of memories written. Times are POSIX seconds (UTC).

    Atomic (:func:`~memlab.store.files.atomic_text`): on any error ``path`` keeps its old
    content and no temporary file stays. ``TypeError`` when ``path`` is not a path;
    ``ValueError`` when it is empty, not an absent or regular file
    (:func:`~memlab.store.files.check_replaceable`), a file of the store itself or any SQLite
    database.
    """
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or Path, got {type(path).__name__}")
    if not str(path).strip():
        raise ValueError("path is empty")
    target = check_replaceable(Path(path))
    if any(same_file(target, own) for own in core.database_files()):
        raise ValueError(f"{target} is a file of the store itself; export to another path")
    if is_sqlite_file(target):
        raise ValueError(f"{target} is a SQLite database; refusing to overwrite it with an export")
    with atomic_text(target) as fh, core.read():
        header = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "embedder": core.embedder.name,
            "dim": core.dim,
        }
        fh.write(json.dumps(header) + "\n")
        rows = core.select()
        for row in rows:
            mid = int(row["id"])
            record: dict[str, Any] = {k: row[k] for k in MEMORY_FIELDS}
            record["topics"] = json.loads(row["topics"])
            record["importance_auto"] = bool(row["importance_auto"])
            record["events"] = [
                {k: e[k] for k in ("at", "kind", "grade", "text")} | {"data": _json(e["data"])}
                for e in core.events(mid)
            ]
            record["links"] = [
                {"target": int(r["target"]), "kind": r["kind"], "at": r["at"]}
                | {"data": _json(r["data"])}
                for r in core.links(mid)
                if int(r["source"]) == mid
            ]
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return len(rows)


def _json(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _check_data(data: Any, name: str) -> None:
    if not isinstance(data, Mapping | None):
        raise ValueError(f"{name} must be an object or null")
    check_size(json.dumps(data, ensure_ascii=False), name)


def _check_event(e: Any) -> None:
    if not isinstance(e, Mapping):
        raise ValueError(f"an event must be an object, got {type(e).__name__}")
    if e.get("kind") not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {e.get('kind')!r}")
    check_epoch(e.get("at"), "event at")
    if e.get("grade") is not None:
        check_number(e["grade"], "event grade", 1, 4, integer=True)
    if e.get("text") is not None:
        if not isinstance(e["text"], str):
            raise ValueError("event text must be a string or null")
        check_size(e["text"], "event text")
    _check_data(e.get("data"), "event data")


def check_record(record: Any) -> None:
    """Validate one exported memory (``ValueError`` naming the field) by the rules of ingest:
    every field present, of its type and range (ids in 1 .. 2**53, times within the store's
    range), texts valid Unicode within the content limit."""
    if not isinstance(record, Mapping):
        raise ValueError(f"a record must be an object, got {type(record).__name__}")
    record.setdefault("importance_auto", False)  # exports written before schema 5
    record.setdefault("own_chars", None)
    record.setdefault("valid_from", record.get("created_at"))  # before schema 9: valid since
    record.setdefault("valid_until", None)  # created, until superseded (not known: open)
    missing = [k for k in (*MEMORY_FIELDS, "events") if k not in record]
    if missing:
        raise ValueError(f"missing fields {missing}")
    check_number(record["id"], "id", 1, MAX_ID, integer=True)
    if record["consolidated_into"] is not None:
        check_number(record["consolidated_into"], "consolidated_into", 1, MAX_ID, integer=True)
    check_content(record["content"])
    check_meta(record)
    if record["importance_auto"] not in (True, False):  # bool, or 0/1
        raise ValueError(
            f"importance_auto must be true or false, got {record['importance_auto']!r}"
        )
    if record["own_chars"] is not None:
        check_number(record["own_chars"], "own_chars", 1, len(record["content"]), integer=True)
    for k in ("created_at", "updated_at", "last_access", "valid_from"):
        check_epoch(record[k], k)
    if record["valid_until"] is not None:
        check_epoch(record["valid_until"], "valid_until")
    check_number(record["stability"], "stability", 1e-9, 36500.0)
    check_number(record["difficulty"], "difficulty", 1.0, 10.0)
    check_number(record["storage"], "storage", 0.0, 1e12)
    check_number(record["retrieval"], "retrieval", 0.0, 1.0)
    check_number(record["access_count"], "access_count", 0, 2**62, integer=True)
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
        if not isinstance(out, Mapping) or out.get("kind") not in LINK_KINDS:
            raise ValueError(f"bad link {out!r}")
        check_number(out.get("target"), "link target", 1, MAX_ID, integer=True)
        check_epoch(out.get("at"), "link at")
        _check_data(out.get("data"), "link data")


def _screen_json(value: Any, mode: str) -> Any:
    """Every string of a JSON value (keys too) screened."""
    if isinstance(value, str):
        return screen(value, mode, field="data")[0]
    if isinstance(value, list):
        return [_screen_json(v, mode) for v in value]
    if isinstance(value, Mapping):
        return {_screen_json(k, mode): _screen_json(v, mode) for k, v in value.items()}
    return value


def _screened(record: dict[str, Any], mode: str) -> dict[str, Any]:
    """The record with every text it stores screened (own text and context apart, as on ingest:
    ``own_chars`` follows the redaction) and checked again, as a marker can lengthen a text."""
    own, content = record["own_chars"], record["content"]
    head, tail = (screen(t, mode)[0] for t in (content[:own], content[own:] if own else ""))
    content = check_content(head + tail, "the content with its secrets redacted")
    out, _ = screen_meta({**record, "content": content, "own_chars": own and len(head)}, mode)
    out["events"] = [
        {**e, "text": _screen_json(e.get("text"), mode), "data": _screen_json(e.get("data"), mode)}
        for e in record["events"]
    ]
    out["links"] = [
        {**k, "data": _screen_json(k.get("data"), mode)} for k in record.get("links") or []
    ]
    check_record(out)  # event texts and data, too, within the content limit
    return out


def _records(path: str | Path, mode: str, refused: list[tuple[str, Exception]]) -> Iterator[dict]:
    """The valid records of an export, screened, read line by line; a refused line goes to
    ``refused``. Ids must ascend (as export writes them), so they are unique."""
    with open(path, encoding="utf-8") as fh:
        first = fh.readline()
        try:
            header = json.loads(first)
        except ValueError:
            header = first[:80]
        wanted = {"format": FORMAT, "version": FORMAT_VERSION}
        if not isinstance(header, dict) or any(header.get(k) != v for k, v in wanted.items()):
            raise ValueError(f"{path} is not a {FORMAT} v{FORMAT_VERSION} file (header {header!r})")
        last = 0
        for number, line in enumerate(fh, start=2):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                check_record(record)
                if record["id"] <= last:
                    raise ValueError(f"id {record['id']} repeats or does not ascend")
                last = record["id"]
                yield _screened(record, mode)
            except (TypeError, ValueError, KeyError, RecursionError) as error:
                refused.append((f"line {number}: {error}", error))


def import_jsonl(
    core: StoreCore, path: str | Path, *, now: datetime | None = None, secrets: str = "redact"
) -> dict[int, int]:
    """Add every memory of an export, all or nothing; returns old id -> new id.

    Every record is validated (:func:`check_record`) and its texts screened for secrets with the
    store's mode; if any line is refused, ``ValueError`` lists the refused lines and the store is
    unchanged. The file is read line by line and written in batches of :data:`IMPORT_BATCH` in
    one transaction. A memory keeps its id when that id is free; links and ``consolidated_into``
    are remapped; each gets an ``import`` event. Nothing is gated or merged (a restore).
    """
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or Path, got {type(path).__name__}")
    at = core.now(now).timestamp()
    mapping: dict[int, int] = {}
    refused: list[tuple[str, Exception]] = []
    batch: list[dict[str, Any]] = []

    def write(records: list[dict[str, Any]]) -> None:
        vectors = core.embed([r["content"] for r in records])
        for record, vec in zip(records, vectors, strict=True):
            old_id = record["id"]
            taken = core.execute("SELECT 1 FROM memories WHERE id = ?", (old_id,)).fetchone()
            fields = {k: record[k] for k in RECORD_FIELDS}
            fields["importance_auto"] = int(bool(fields["importance_auto"]))
            new_id = mapping[old_id] = core.insert_memory(
                fields, vec, memory_id=None if taken else old_id
            )
            for e in record["events"]:
                given = {k: e.get(k) for k in ("grade", "text", "data")}
                core.event(new_id, e["at"], e["kind"], **given)
            event_id = core.event(
                new_id, at, "import", data={"source": str(path), "original_id": old_id}
            )
            if record["status"] == "superseded":
                core.move_to_history(new_id, event_id)
        records.clear()

    with core.write(), core.index.deferred():  # the vectors read at once after the commit
        for record in _records(path, secrets, refused):
            if not refused:
                batch.append(record)
            if len(batch) >= IMPORT_BATCH:
                write(batch)
        if refused:
            kinds = {type(e) for _, e in refused}
            kind = SecretFoundError if SecretFoundError in kinds else ValueError
            shown = "; ".join(m for m, _ in refused[:REPORTED])
            raise kind(f"{path}: {len(refused)} line(s) refused, nothing imported: {shown}")
        if batch:
            write(batch)
        for record in _records(path, "allow", refused):  # second pass: the links
            link = record["consolidated_into"]
            if link is not None:
                core.update(mapping[record["id"]], consolidated_into=mapping.get(link))
            for out in record.get("links") or []:
                target = mapping.get(out["target"])
                if target is not None:
                    data = _screen_json(out.get("data") or {}, secrets)
                    core.link(mapping[record["id"]], target, out["kind"], out["at"], **data)
    core.maintain_index()  # after the commit: the index is derived from what was written
    core.backfill_history()  # the imported observations and versions, searchable with history
    return mapping
