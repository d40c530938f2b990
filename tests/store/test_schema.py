"""Schema: WAL, foreign keys, versions and migrations."""

from __future__ import annotations

import multiprocessing
import sqlite3
import sys

import pytest

from memlab.store import MemoryStore
from memlab.store.schema import SCHEMA_VERSION, connect, migrate, schema_version


def test_fresh_database(tmp_path) -> None:
    conn = connect(str(tmp_path / "s.db"))
    assert migrate(conn) == 0 and schema_version(conn) == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] > 0
    assert migrate(conn) == SCHEMA_VERSION  # idempotent
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {
        "meta",
        "memories",
        "events",
        "pending_tags",
        "memories_fts",
        "schema_version",
    } <= tables


def test_newer_schema_refused(tmp_path) -> None:
    conn = connect(str(tmp_path / "s.db"))
    migrate(conn)
    conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION + 1,))
    with pytest.raises(RuntimeError, match="newer"):
        migrate(conn)


def test_constraints(tmp_path) -> None:
    conn = connect(str(tmp_path / "s.db"))
    migrate(conn)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO events (memory_id, at, kind) VALUES (999, 0, 'access')"
        )  # no such memory
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO memories (content, created_at, updated_at, layer, altitude, importance,"
            " stability, difficulty, last_access, storage, retrieval, status, embedding, embed_seq)"
            " VALUES ('x', 0, 0, 'context', 'implementation', 2.0, 1, 5, 0, 0, 1, 'active',"
            " x'00', 1)"
        )


def test_migration_from_v1(tmp_path) -> None:
    from memlab.store.schema import MIGRATIONS

    conn = connect(str(tmp_path / "old.db"))
    conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at REAL)")
    for sql in MIGRATIONS[0][1]:  # a database as version 1 left it
        conn.execute(sql)
    conn.execute("INSERT INTO schema_version (version) VALUES (1)")
    conn.execute(
        "INSERT INTO memories (content, created_at, updated_at, layer, altitude, importance,"
        " stability, difficulty, last_access, storage, retrieval, embedding, embed_seq)"
        " VALUES ('old words 🚀', 0, 0, 'context', 'implementation', 0.5, 1, 5, 0, 0, 1, x'00', 1)"
    )
    conn.execute("INSERT INTO memories_fts(rowid, content) VALUES (1, 'old words 🚀')")
    assert migrate(conn) == 1 and schema_version(conn) == SCHEMA_VERSION
    vocab = dict(conn.execute("SELECT term, doc FROM memories_fts_vocab").fetchall())
    assert vocab == {"old": 1, "words": 1, "🚀": 1}  # rebuilt with the symbol tokenizer


def _open_new(path: str, whole_store: bool, barrier, results) -> None:
    barrier.wait()
    try:
        if whole_store:
            with MemoryStore(path) as store:
                results.put(store.stats()["schema_version"])
            return
        conn = connect(path, timeout=10.0)
        migrate(conn)
        results.put(schema_version(conn))
        conn.close()
    except BaseException as error:  # reported to the parent, which fails the test
        results.put(f"{type(error).__name__}: {error}")


@pytest.mark.skipif(sys.platform == "win32", reason="fork start method")
@pytest.mark.parametrize(("whole_store", "attempts"), [(False, 40), (True, 8)])
def test_processes_creating_one_store_at_once_all_succeed(
    tmp_path, whole_store: bool, attempts: int
) -> None:
    """Creation races (the switch to WAL is refused while another process reads the new
    file) are retried: every process opens the store, none gets StoreBusy."""
    ctx = multiprocessing.get_context("fork")
    n = 6
    for attempt in range(attempts):
        path = str(tmp_path / f"new{attempt}.db")
        barrier, results = ctx.Barrier(n), ctx.Queue()
        procs = [
            ctx.Process(target=_open_new, args=(path, whole_store, barrier, results))
            for _ in range(n)
        ]
        for p in procs:
            p.start()
        found = [results.get(timeout=120) for _ in procs]
        for p in procs:
            p.join()
        assert found == [SCHEMA_VERSION] * n, found
