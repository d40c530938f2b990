"""Export and import of a store as JSON lines: one header line, then one line per memory
with all its fields and its complete event history. Vectors are not exported: the
importing store embeds the content with its own embedder."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from memlab.store.core import RECORD_FIELDS, StoreCore
from memlab.store.records import MEMORY_FIELDS
from memlab.store.schema import EVENT_KINDS, LINK_KINDS, STATUSES
from memlab.store.validation import check_content, check_meta, check_positive

FORMAT = "memlab-store-jsonl"
FORMAT_VERSION = 1


def export_jsonl(core: StoreCore, path: str | Path) -> int:
    """Write ``path``; returns the number of memories written. Times are POSIX seconds (UTC)."""
    n = 0
    tmp = Path(str(path) + ".tmp")
    with core.read(), open(tmp, "w", encoding="utf-8") as fh:
        header = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "embedder": core.embedder.name,
            "dim": core.dim,
        }
        fh.write(json.dumps(header) + "\n")
        for row in core.execute("SELECT * FROM memories ORDER BY id").fetchall():
            record: dict[str, Any] = {k: row[k] for k in MEMORY_FIELDS}
            record["topics"] = json.loads(row["topics"])
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
    tmp.replace(path)
    return n


def _read(path: str | Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        lines = [line for line in fh if line.strip()]
    if not lines:
        raise ValueError(f"{path} is empty")
    header = json.loads(lines[0])
    if header.get("format") != FORMAT or header.get("version") != FORMAT_VERSION:
        raise ValueError(f"{path} is not a {FORMAT} v{FORMAT_VERSION} file (header {header!r})")
    records = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            record = json.loads(line)
            missing = [k for k in (*MEMORY_FIELDS, "events") if k not in record]
            if missing:
                raise ValueError(f"missing fields {missing}")
            check_content(record["content"])
            check_meta(
                **{
                    k: record[k]
                    for k in ("project", "topics", "layer", "entity", "altitude", "importance")
                }
            )
            for k in ("created_at", "updated_at", "last_access", "stability"):
                check_positive(float(record[k]), k)
            if record["status"] not in STATUSES:
                raise ValueError(f"unknown status {record['status']!r}")
            for e in record["events"]:
                if e.get("kind") not in EVENT_KINDS:
                    raise ValueError(f"unknown event kind {e.get('kind')!r}")
            for out in record.get("links") or []:
                if out.get("kind") not in LINK_KINDS or "target" not in out or "at" not in out:
                    raise ValueError(f"bad link {out!r}")
        except (TypeError, ValueError, KeyError) as error:
            raise ValueError(f"{path}, line {number}: {error}") from error
        records.append(record)
    return records


def import_jsonl(
    core: StoreCore, path: str | Path, *, now: datetime | None = None
) -> dict[int, int]:
    """Add every memory of an export, in one transaction; returns old id -> new id.

    A memory keeps its id when that id is free in this store; links between memories
    (``consolidated_into``) are remapped. Each imported memory gets an ``import`` event.
    Import is a restore, not an ingest: nothing is gated or merged.
    """
    at = core.now(now).timestamp()
    records = _read(path)
    vectors = core.embed([r["content"] for r in records]) if records else None
    mapping: dict[int, int] = {}
    with core.write():
        for record, vec in zip(records, vectors if vectors is not None else [], strict=False):
            old_id = int(record["id"])
            taken = core.execute("SELECT 1 FROM memories WHERE id = ?", (old_id,)).fetchone()
            fields = {k: record[k] for k in RECORD_FIELDS}
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
        core.maintain_index()
    core.backfill_history()  # the imported observations and versions, searchable with history
    return mapping


__all__ = ["FORMAT", "FORMAT_VERSION", "export_jsonl", "import_jsonl"]
