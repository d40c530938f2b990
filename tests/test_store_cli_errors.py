"""`memlab store VERB` under abuse: every error is one line on stderr and exit 2 (exit 1 stays
"nothing found"), nothing changed; stdin is read with a bound."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from test_store_cli import REPO, inproc, memlab

from memlab.store import MemoryStore


def _one_line(done: subprocess.CompletedProcess, verb: str, match: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"memlab store {verb}: error: "), done.stderr
    assert match in lines[0], lines[0]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "m.db"
    with MemoryStore(path) as s:
        s.ingest_many([f"note {i} about the kite festival in the harbour" for i in range(30)])
    return path


def test_a_store_of_a_newer_schema(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO schema_version (version, applied_at) VALUES (999, 0)")
    _one_line(inproc(db, "stats"), "stats", "newer than this memlab")


@pytest.mark.parametrize("now", ["9999-12-31T23:00:00-05:00", "3000-01-01T00:00:00+00:00"])
def test_now_out_of_range(db: Path, now: str) -> None:
    _one_line(inproc(db, "remember", "a fact", "--now", now), "remember", "outside the times")


@pytest.mark.parametrize(
    "error, match",
    [(PermissionError(errno.EACCES, "Permission denied"), "Permission denied"),
     (OSError(errno.ENOSPC, "No space left on device"), "No space left"),
     (MemoryError(), "MemoryError"), (OverflowError("too big"), "too big")],
)  # fmt: skip
def test_os_and_memory_errors(db: Path, monkeypatch: pytest.MonkeyPatch, error, match) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr(MemoryStore, "import_jsonl", fail)
    export = db.with_suffix(".jsonl")
    export.write_text("{}\n")
    _one_line(inproc(db, "import", str(export)), "import", match)


def test_export_into_a_full_disk_keeps_the_old_file(db: Path, monkeypatch) -> None:
    from memlab.store import files

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    target = db.with_suffix(".jsonl")
    target.write_text("old\n")
    monkeypatch.setattr(files.os, "fsync", full)
    _one_line(inproc(db, "export", str(target)), "export", "No space left on device")
    assert target.read_text() == "old\n"


def test_stdin_closed_and_unbounded(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memlab import shell

    closed = subprocess.run(
        [sys.executable, "-m", "memlab.cli", "store", "remember", "--db", str(db)],
        preexec_fn=lambda: os.close(0), capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    _one_line(closed, "remember", "stdin is closed")
    monkeypatch.setattr(shell, "STDIN_LIMIT", 1000)
    _one_line(inproc(db, "remember", stdin="y\n" * 600), "remember", "more than 1000 characters")
    assert len(MemoryStore(db)) == 30


def test_recall_into_a_closed_pipe(db: Path) -> None:
    """``memlab store recall ... | head``: the reader leaves early; one line, exit 2."""
    reader = subprocess.Popen(
        [sys.executable, "-m", "memlab.cli", "store", "recall", "kite", "harbour", "-k", "30",
         "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.close()  # the pipe's reader is gone before the first line
    err = reader.stderr.read().decode()
    assert reader.wait(timeout=120) == 2
    assert err.strip().splitlines() == ["memlab store recall: error: the output was closed"], err


def test_nothing_found_stays_exit_1(db: Path) -> None:
    done = memlab(db, "recall", "zyzzyva")
    assert done.returncode == 1 and done.stderr == ""


def test_a_missing_store_is_named_and_no_file_is_left(tmp_path: Path) -> None:
    """Only remember and import create a store; a refused first write leaves no file."""
    missing = tmp_path / "typo.db"
    for verb, *rest in (("recall", "kite"), ("get", "1"), ("stats",), ("sweep",)):
        _one_line(inproc(missing, verb, *rest), verb, f"no store at {missing}")
    notes = tmp_path / "notes.txt"
    notes.write_text("not an export\n")
    _one_line(inproc(missing, "import", str(notes)), "import", "not a memlab-store-jsonl")
    _one_line(inproc(missing, "remember", ""), "remember", "content is empty")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert inproc(missing, "remember", "the kite festival is in June").returncode == 0
    assert inproc(missing, "recall", "kite festival").returncode == 0


def test_bytes_that_are_not_utf8_are_named_in_shell_terms(db: Path) -> None:
    """argv and stdin bytes that are not UTF-8 reach Python as U+DC80-U+DCFF: named as such."""
    latin1 = b"caf\xe9 latte".decode("utf-8", "surrogateescape")
    before = MemoryStore(db).stats()["memories"]
    _one_line(inproc(db, "remember", latin1), "remember", "text: not UTF-8 (byte 0xe9")
    _one_line(inproc(db, "remember", stdin=latin1), "remember", "at character 3")
    _one_line(inproc(db, "remember", "ok", "--topic", latin1), "remember", "--topic: not UTF-8")
    _one_line(inproc(db, "recall", latin1), "recall", "not UTF-8")
    assert MemoryStore(db).stats()["memories"] == before


@pytest.mark.parametrize(
    "args, match",
    [(("remember", "--layer", "bad", "a fact"), "argument --layer: invalid choice: 'bad'"),
     (("recall", "-k", "ten", "kite"), "argument -k: invalid int value: 'ten'"),
     (("sweep", "--keep-by", "size", "--apply"), "argument --keep-by: invalid choice: 'size'"),
     (("get",), "the following arguments are required: id")],
)  # fmt: skip
def test_a_usage_error_is_one_line_too(db: Path, args: tuple[str, ...], match: str) -> None:
    """A value argparse refuses is one line on stderr with exit 2, as the help promises (not
    the verb's usage, a dozen lines, before it)."""
    before = db.read_bytes()
    _one_line(memlab(db, *args), args[0], match)
    assert db.read_bytes() == before
