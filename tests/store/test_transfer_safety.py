"""Exports never overwrite a database or the store's own files, are atomic and clean up after
themselves; imports validate every record before writing anything."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from store_helpers import Clock, dump

from memlab.store import IndexOptions, MemoryStore


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _filled(tmp_path: Path, clock: Clock) -> MemoryStore:
    s = MemoryStore(tmp_path / "live.db", clock=clock, index=IndexOptions(n_trees=4))
    rng = np.random.default_rng(11)
    s.ingest_many(
        [" ".join(f"w{int(w)}" for w in rng.integers(0, 10**6, size=8)) for _ in range(25)]
    )
    s.rebuild_index()
    return s


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", ".annoy", ".annoy.json"])
def test_export_refuses_the_stores_own_files(tmp_path: Path, clock: Clock, suffix: str) -> None:
    s = _filled(tmp_path, clock)
    target = Path(s.path + suffix)
    before = dump(s)
    with pytest.raises(ValueError, match="file of the store itself"):
        s.export_jsonl(target)
    assert dump(s) == before and len(s) == 25
    s.close()
    conn = sqlite3.connect(tmp_path / "live.db")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    with MemoryStore(tmp_path / "live.db", clock=clock, index=IndexOptions(n_trees=4)) as again:
        assert len(again) == 25 and again.index.last_load == "loaded"


def test_export_refuses_a_link_to_the_database(tmp_path: Path, clock: Clock) -> None:
    s = _filled(tmp_path, clock)
    link = tmp_path / "innocent.jsonl"
    link.symlink_to(tmp_path / "live.db")
    with pytest.raises(ValueError, match="symbolic link"):
        s.export_jsonl(link)
    assert link.is_symlink()
    assert len(s) == 25
    s.close()


def test_export_refuses_any_sqlite_database(tmp_path: Path, clock: Clock) -> None:
    other = tmp_path / "accounts.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    before = _digest(other)
    s = _filled(tmp_path, clock)
    with pytest.raises(ValueError, match="SQLite database"):
        s.export_jsonl(other)
    with pytest.raises(ValueError, match="directory"):
        s.export_jsonl(tmp_path)
    with pytest.raises(TypeError):
        s.export_jsonl(None)  # type: ignore[arg-type]
    s.close()
    assert _digest(other) == before


def test_failed_export_keeps_the_old_file_and_leaves_no_temp(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = _filled(tmp_path, clock)
    target = tmp_path / "backup.jsonl"
    assert s.export_jsonl(target) == 25
    before = _digest(target)
    s.ingest("one more memory to export")
    calls = {"n": 0}
    real_dumps = json.dumps

    def failing_dumps(obj: object, **kwargs: object) -> str:
        calls["n"] += 1
        if calls["n"] == 10:
            raise OSError(28, "No space left on device")
        return real_dumps(obj, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("memlab.store.transfer.json.dumps", failing_dumps)
    with pytest.raises(OSError, match="No space"):
        s.export_jsonl(target)
    monkeypatch.undo()
    assert _digest(target) == before
    assert sorted(p.name for p in tmp_path.iterdir() if ".tmp-" in p.name) == []
    s.close()


def test_killed_exports_temp_file_removed_by_the_next(tmp_path: Path, clock: Clock) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    pid = int(dead.stdout)
    target = tmp_path / "backup.jsonl"
    orphan = tmp_path / f"backup.jsonl.tmp-{pid}-deadbeef"
    orphan.write_text('{"format": "partial"}\n')
    s = _filled(tmp_path, clock)
    s.export_jsonl(target)
    s.close()
    assert not orphan.exists()
    assert target.read_text().count("\n") == 26


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("created_at", 1e20),
        ("last_access", -1e12),
        ("updated_at", float("inf")),
        ("id", 2**63),
        ("difficulty", 42.0),
        ("topics", ["ok", "bad\ud800"]),
        ("content", "nul\x00inside"),
    ],
)
def test_import_rejects_bad_records_unchanged(
    tmp_path: Path, clock: Clock, field: str, value: object
) -> None:
    s = _filled(tmp_path, clock)
    export = tmp_path / "e.jsonl"
    s.export_jsonl(export)
    lines = export.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[3])
    record[field] = value
    lines[3] = json.dumps(record)  # ASCII escapes: a lone surrogate survives the file
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    target = MemoryStore(tmp_path / "target.db", clock=clock)
    before = dump(target)
    with pytest.raises(ValueError, match="line 4"):
        target.import_jsonl(bad)
    assert dump(target) == before
    target.close()
    s.close()


def test_import_event_time_out_of_range_rejected(tmp_path: Path, clock: Clock) -> None:
    s = _filled(tmp_path, clock)
    export = tmp_path / "e.jsonl"
    s.export_jsonl(export)
    lines = export.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["events"][0]["at"] = 1e300
    lines[1] = json.dumps(record)
    export.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="event at"):
        s.import_jsonl(export)
    assert len(s) == 25
    s.memories()  # still readable
    s.close()


def test_import_screens_secrets_in_a_reject_store(tmp_path: Path, clock: Clock) -> None:
    src = MemoryStore(tmp_path / "src.db", clock=clock, secrets="allow")
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    src.ingest(f"the deploy token is {key}")
    src.export_jsonl(tmp_path / "e.jsonl")
    src.close()
    strict = MemoryStore(tmp_path / "strict.db", clock=clock, secrets="reject")
    with pytest.raises(ValueError, match="secret"):
        strict.import_jsonl(tmp_path / "e.jsonl")
    assert len(strict) == 0
    strict.close()
    redacting = MemoryStore(tmp_path / "red.db", clock=clock)
    redacting.import_jsonl(tmp_path / "e.jsonl")
    assert all(key not in m.content for m in redacting.memories())
    assert all(key not in str(t) for t in redacting.history(1)["text"])
    redacting.close()
