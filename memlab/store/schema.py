"""SQLite schema of the memory store: DDL, schema version and migrations, connection setup.

The database is the source of truth. Times are stored as UTC POSIX seconds (REAL); topics
and event payloads as JSON text; embeddings as little-endian float32 BLOBs. Each
embedding change takes the next value of a store-wide sequence (``embed_seq``) so the
vector index knows which vectors it covers and which are newer (its exact-search tail).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

#: Version written by the newest migration.
SCHEMA_VERSION = 3

#: Memory statuses; only ``active`` memories are searched and gated against by default.
STATUSES: tuple[str, ...] = ("active", "superseded", "archived")

#: Event kinds of schema versions 1-2.
_EVENT_KINDS_V1: tuple[str, ...] = (
    "create",  # the memory was created (text = the content given)
    "access",  # retrieved (search) or reinforced: an FSRS-6 review with a grade
    "observation",  # a text that reinforced the memory (REINFORCE), kept verbatim
    "version",  # content replaced (UPDATE or compression); text = the previous content
    "importance",  # flagged important (data: previous importance)
    "tag",  # strengthened by a nearby flag (synaptic tagging and capture; data: weight, source)
    "consolidation",  # summary made from members (data: member ids) / member linked to it
    "archive",  # status set to archived (data: reason)
    "restore",  # status set back to active
    "import",  # imported from a JSON-lines export
)
#: Event kinds of the history table.
EVENT_KINDS: tuple[str, ...] = (
    *_EVENT_KINDS_V1,
    "supersede",  # superseded by / superseding another memory (data: rule, similarity, ids)
    "link",  # linked to a related memory (data: other id, rule, similarity)
    "revert",  # made current again / replaced by a reverted version (data: ids)
)
#: Kinds of links between memories (``source -> target``).
LINK_KINDS: tuple[str, ...] = ("supersedes", "related")
#: Event kinds whose text is kept in the history index (searchable with include_history).
HISTORY_KINDS: tuple[str, ...] = ("observation", "version")

_V1 = [
    """CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    f"""CREATE TABLE memories (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        content TEXT NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        project TEXT,
        topics TEXT NOT NULL DEFAULT '[]',
        layer TEXT NOT NULL,
        entity TEXT,
        altitude TEXT NOT NULL,
        importance REAL NOT NULL CHECK (importance BETWEEN 0 AND 1),
        stability REAL NOT NULL CHECK (stability > 0),
        difficulty REAL NOT NULL CHECK (difficulty BETWEEN 1 AND 10),
        last_access REAL NOT NULL,
        storage REAL NOT NULL CHECK (storage >= 0),
        retrieval REAL NOT NULL CHECK (retrieval BETWEEN 0 AND 1),
        access_count INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN {STATUSES!r}),
        consolidated_into INTEGER REFERENCES memories(id) ON DELETE SET NULL,
        embedding BLOB NOT NULL,
        embed_seq INTEGER NOT NULL UNIQUE
    )""",
    "CREATE INDEX memories_status_project ON memories(status, project)",
    "CREATE INDEX memories_created ON memories(created_at)",
    f"""CREATE TABLE events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        at REAL NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN {_EVENT_KINDS_V1!r}),
        grade INTEGER,
        text TEXT,
        data TEXT
    )""",
    "CREATE INDEX events_memory ON events(memory_id, id)",
    """CREATE TABLE pending_tags (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        source_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        center REAL NOT NULL,
        until REAL NOT NULL,
        hours_forward REAL NOT NULL,
        gain REAL NOT NULL
    )""",
    "CREATE INDEX pending_tags_until ON pending_tags(until)",
    """CREATE VIRTUAL TABLE memories_fts
        USING fts5(content, tokenize = 'unicode61 remove_diacritics 2')""",
]

# v2: term -> document count of the keyword index, to drop very common query terms.
_V2 = ["CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, 'row')"]

# v3 (lossless gating): the new event kinds (the events table rebuilt with its rows and ids),
# links between memories (supersedes / related), and the history index: the texts of
# observation and version events with their vectors and an FTS5 table, so that
# search(include_history=True) finds every text ever given to the store. The gate's settings
# live in meta (key "gate").
_V3 = [
    f"""CREATE TABLE events_v3 (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        at REAL NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN {EVENT_KINDS!r}),
        grade INTEGER,
        text TEXT,
        data TEXT
    )""",
    "INSERT INTO events_v3 (id, memory_id, at, kind, grade, text, data)"
    " SELECT id, memory_id, at, kind, grade, text, data FROM events",
    "DROP TABLE events",
    "ALTER TABLE events_v3 RENAME TO events",
    "CREATE INDEX events_memory ON events(memory_id, id)",
    f"""CREATE TABLE links (
        source INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        target INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN {LINK_KINDS!r}),
        at REAL NOT NULL,
        data TEXT,
        PRIMARY KEY (source, target, kind)
    )""",
    "CREATE INDEX links_target ON links(target)",
    """CREATE TABLE history_texts (
        event_id INTEGER PRIMARY KEY REFERENCES events(id) ON DELETE CASCADE,
        memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        embedding BLOB NOT NULL
    )""",
    "CREATE INDEX history_texts_memory ON history_texts(memory_id)",
    """CREATE VIRTUAL TABLE history_fts
        USING fts5(content, tokenize = 'unicode61 remove_diacritics 2')""",
]

#: Migrations: (version reached, statements). Append new ones; never edit applied ones.
MIGRATIONS: list[tuple[int, list[str]]] = [(1, _V1), (2, _V2), (3, _V3)]


class Executor(Protocol):
    """What runs SQL: a :class:`~memlab.store.core.StoreCore` (or a connection)."""

    def execute(
        self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ..., /
    ) -> sqlite3.Cursor: ...


def connect(path: str, *, timeout: float = 30.0) -> sqlite3.Connection:
    """Open ``path`` in autocommit mode with WAL, foreign keys and a busy timeout."""
    conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    conn.execute("PRAGMA foreign_keys = ON")
    if path != ":memory:":
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":  # pragma: no cover - e.g. a read-only medium
            raise sqlite3.OperationalError(
                f"could not switch {path} to WAL journal mode (got {mode})"
            )
        conn.execute("PRAGMA synchronous = NORMAL")
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction (``BEGIN IMMEDIATE``): committed on success, rolled back on error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


def schema_version(conn: sqlite3.Connection) -> int:
    """The schema version of an open database (0 for an empty one)."""
    has = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_version'"
    ).fetchone()
    if not has:
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(conn: sqlite3.Connection, on_version: Callable[[int], None] | None = None) -> int:
    """Bring the database up to :data:`SCHEMA_VERSION`; returns the version found before.

    A database newer than this code raises ``RuntimeError`` rather than being touched.
    """
    with transaction(conn):
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version"
            " (version INTEGER PRIMARY KEY, applied_at REAL)"
        )
        found = schema_version(conn)
        if found > SCHEMA_VERSION:
            raise RuntimeError(
                f"database schema version {found} is newer than this memlab ({SCHEMA_VERSION});"
                " upgrade memlab"
            )
        for version, statements in MIGRATIONS:
            if version <= found:
                continue
            for sql in statements:
                conn.execute(sql)
            conn.execute(
                "INSERT INTO schema_version (version, applied_at) VALUES (?, strftime('%s','now'))",
                (version,),
            )
            if on_version is not None:
                on_version(version)
    return found


__all__ = [
    "EVENT_KINDS",
    "Executor",
    "HISTORY_KINDS",
    "LINK_KINDS",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "STATUSES",
    "connect",
    "migrate",
    "schema_version",
    "transaction",
]
