"""SQLite schema of the memory store: DDL, migrations, connection setup, open-time checks.

The database is the source of truth. Times are UTC POSIX seconds; topics and event payloads
JSON text; embeddings little-endian float32 BLOBs, each change taking the next ``embed_seq`` so
the vector index knows which vectors it covers.
"""

from __future__ import annotations

import functools
import random
import sqlite3
import time
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any, Protocol

#: Version written by the newest migration.
SCHEMA_VERSION = 9

#: Memory statuses; only ``active`` memories are searched and gated against by default.
STATUSES: tuple[str, ...] = ("active", "superseded", "archived")

_EVENT_KINDS_V1: tuple[str, ...] = (
    "create",
    "access",  # a search hit or a reinforcement: an FSRS-6 review with a grade
    "observation",  # a reinforcing text, kept verbatim
    "version",  # content replaced; text = the previous content
    "importance",
    "tag",  # synaptic tagging and capture (data: weight, source)
    "consolidation",
    "archive",
    "restore",
    "import",
)
#: Event kinds of the history table.
EVENT_KINDS: tuple[str, ...] = (*_EVENT_KINDS_V1, "supersede", "link", "revert")
#: Kinds of links between memories (``source -> target``).
LINK_KINDS: tuple[str, ...] = ("supersedes", "related")
#: Event kinds whose text is kept in the history index (searchable with include_history).
HISTORY_KINDS: tuple[str, ...] = ("observation", "version")

#: The keyword index's tokenizer (schema 8): unicode61's letters, numbers and private-use
#: characters plus symbols (emoji, ™, €, ✓, arrows), so a user can search for them; the ASCII
#: symbols stay separators, so ``<div>``, ``$HOME`` or ``x=1`` keep their words apart.
TOKENIZER = "unicode61 remove_diacritics 2 categories 'L* N* Co S*' separators '$+<=>^`|~'"


@functools.lru_cache(maxsize=65536)
def _is_symbol(ch: str) -> bool:
    return not ch.isascii() and unicodedata.category(ch)[0] == "S"


def fts_text(text: str | None) -> str | None:
    """The text the keyword index tokenizes: each symbol it keeps (:data:`TOKENIZER`) set apart,
    so a symbol is a token of its own and never joins the word beside it (``"Memlab™"`` holds
    the tokens ``memlab`` and ``™``, ``"€100"`` holds ``€`` and ``100``)."""
    if text is None or text.isascii():  # None: a row without text (SQL NULL)
        return text
    return "".join(f" {ch} " if _is_symbol(ch) else ch for ch in text)


def _fts(table: str, tokenizer: str = TOKENIZER) -> str:
    quoted = "'" + tokenizer.replace("'", "''") + "'"
    return f"CREATE VIRTUAL TABLE {table} USING fts5(content, tokenize = {quoted})"


def _events(table: str, kinds: tuple[str, ...]) -> str:
    return f"""CREATE TABLE {table} (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        at REAL NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN {kinds!r}),
        grade INTEGER,
        text TEXT,
        data TEXT
    )"""


_OLD_TOKENIZER = "unicode61 remove_diacritics 2"
_VOCAB = "CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, 'row')"

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
    _events("events", _EVENT_KINDS_V1),
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
    _fts("memories_fts", _OLD_TOKENIZER),
]
# v2: term -> document count of the keyword index, to drop very common query terms.
_V2 = [_VOCAB]
# v3 (lossless gating): the new event kinds (the events table rebuilt), links between
# memories, and the history index (texts of observation and version events with their
# vectors and an FTS5 table) that search(include_history=True) reads.
_V3 = [
    _events("events_v3", EVENT_KINDS),
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
    _fts("history_fts", _OLD_TOKENIZER),
]
# v4: namespaces, a hard partition of one file (memories written before are in 'default').
_V4 = [
    "ALTER TABLE memories ADD COLUMN namespace TEXT NOT NULL DEFAULT 'default'",
    "CREATE INDEX memories_namespace ON memories(namespace, status)",
]

# v5: importance_auto (1: estimated from the content on ingest, judged again by sweeps; older
# memories are marked given) and own_chars (a memory ingested with context= holds
# "text (context: ...)"; its own text is content[:own_chars], NULL: all of it).
_V5 = [
    "ALTER TABLE memories ADD COLUMN importance_auto INTEGER NOT NULL DEFAULT 0"
    " CHECK (importance_auto IN (0, 1))",
    "ALTER TABLE memories ADD COLUMN own_chars INTEGER CHECK (own_chars IS NULL OR own_chars > 0)",
]

# v6: a journal of keyword index changes; v7 drops it again (FTS5 ranks on its own).
_V6 = [
    "CREATE TABLE IF NOT EXISTS keyword_changes (seq INTEGER PRIMARY KEY, memory_id INTEGER"
    " NOT NULL)"
]
_V7 = ["DROP TABLE IF EXISTS keyword_changes"]
# v8: symbols are searchable (TOKENIZER); both keyword indexes are rebuilt from the rows they
# index, nothing else changes.
_V8 = [
    "DROP TABLE memories_fts_vocab",
    "DROP TABLE memories_fts",
    "DROP TABLE history_fts",
    _fts("memories_fts"),
    _VOCAB,
    _fts("history_fts"),
    "INSERT INTO memories_fts(rowid, content) SELECT id, memlab_fts_text(content) FROM memories"
    " WHERE status != 'superseded'",
    "INSERT INTO history_fts(rowid, content) SELECT h.event_id, memlab_fts_text(e.text)"
    " FROM history_texts h"
    " JOIN events e ON e.id = h.event_id",
]

# v9: validity in time. valid_from is the event time a memory states (its creation time unless
# given); valid_until the time its successor took over (NULL while current).
_V9 = [
    "ALTER TABLE memories ADD COLUMN valid_from REAL",
    "ALTER TABLE memories ADD COLUMN valid_until REAL",
    "UPDATE memories SET valid_from = created_at",
    "UPDATE memories SET valid_until = (SELECT MIN(s.created_at) FROM links l"
    " JOIN memories s ON s.id = l.source WHERE l.target = memories.id AND l.kind = 'supersedes')"
    " WHERE status = 'superseded'",
]

#: Migrations: (version reached, statements). Append new ones; never edit applied ones.
MIGRATIONS: list[tuple[int, list[str]]] = list(
    enumerate([_V1, _V2, _V3, _V4, _V5, _V6, _V7, _V8, _V9], start=1)
)


class Executor(Protocol):
    """What runs SQL: a :class:`~memlab.store.core.StoreCore` (or a connection)."""

    def execute(
        self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ..., /
    ) -> sqlite3.Cursor: ...


#: ``PRAGMA application_id`` of a memlab store ("MLab"): a SQLite file with another id (or
#: with none and tables that are not memlab's) is another application's and is not touched.
APPLICATION_ID = 0x4D4C6162

#: Values of ``synchronous=`` (see :class:`Durability`).
SYNCHRONOUS_MODES: tuple[str, ...] = ("FULL", "NORMAL")

#: ``PRAGMA wal_autocheckpoint`` in pages (64 MiB at 4 KiB pages; SQLite's default is 1,000,
#: less than one batch of 1,000 ingested texts writes). Durability is unchanged.
WAL_AUTOCHECKPOINT_PAGES = 16_384
#: ``PRAGMA journal_size_limit`` in bytes: the log file left after a checkpoint.
WAL_SIZE_LIMIT = 4 * 1024 * 1024

#: SQLite error names that mean "another connection holds the lock".
_BUSY_NAMES = frozenset({"SQLITE_BUSY", "SQLITE_BUSY_SNAPSHOT", "SQLITE_BUSY_RECOVERY"})


@dataclass(frozen=True)
class Durability:
    """How a store's connection waits, syncs and checks.

    Parameters
    ----------
    busy_timeout : float
        Seconds a write waits for another connection's write before :class:`StoreBusy` is raised
        (nothing is written then).
    synchronous : {"FULL", "NORMAL"}
        FULL keeps every acknowledged write through a power loss; NORMAL is faster and keeps
        them through a crash of the process, not of the machine.
    verify : bool
        Check the file on opening (``PRAGMA quick_check``, keyword index, stored vectors) and
        repair what can be rebuilt (``store.core.open_report``).
    """

    busy_timeout: float = 10.0
    synchronous: str = "FULL"
    verify: bool = True

    def __post_init__(self) -> None:
        t = self.busy_timeout
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t < 10**6:
            raise ValueError(f"busy_timeout must be seconds in [0, 1e6), got {t!r}")
        if self.synchronous not in SYNCHRONOUS_MODES:
            raise ValueError(
                f"synchronous must be one of {SYNCHRONOUS_MODES}, got {self.synchronous!r}"
            )
        if not isinstance(self.verify, bool):
            raise TypeError("verify must be True or False")


class StoreBusy(sqlite3.OperationalError):
    """Another connection held the database lock for longer than the store's ``busy_timeout``.

    A subclass of :class:`sqlite3.OperationalError` (code catching SQLite's own "database is
    locked" keeps working). Nothing of the failed operation was written; retry it later.
    """


class ForeignDatabaseError(ValueError):
    """The file is not a memlab store (another application's SQLite database, or not SQLite);
    it was opened read-only and left untouched."""


def is_busy(error: BaseException) -> bool:
    """Whether a SQLite error means the database was locked by another connection."""
    if not isinstance(error, sqlite3.OperationalError) or isinstance(error, StoreBusy):
        return False
    name = getattr(error, "sqlite_errorname", None)
    return name in _BUSY_NAMES or "database is locked" in str(error)


def busy_error(error: sqlite3.OperationalError, path: str, timeout: float) -> StoreBusy:
    """The :class:`StoreBusy` naming the store and the time waited, for a busy SQLite error."""
    return StoreBusy(
        f"{path}: the database stayed locked by another connection (a writer in this or another"
        f" process) for more than busy_timeout={timeout:g} s; nothing was written, retry later"
        f" ({error})"
    )


def check_identity(conn: sqlite3.Connection, path: str) -> None:
    """Raise :class:`ForeignDatabaseError`, reading only, unless the file is a memlab store (our
    application id, or none on a store written before it) or empty."""
    try:
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as error:
        if getattr(error, "sqlite_errorname", None) == "SQLITE_NOTADB":
            raise ForeignDatabaseError(f"{path} is not a SQLite database ({error})") from error
        raise
    ours = not tables or {"meta", "memories", "schema_version"} <= tables
    if app_id == APPLICATION_ID or app_id == 0 and ours:
        return
    raise ForeignDatabaseError(
        f"{path} is a SQLite database of another application (application_id {app_id:#x},"
        f" tables {sorted(tables)[:8]}); a memlab store has application_id {APPLICATION_ID:#x}."
        " It was not modified; give a new path for a memlab store"
    )


def connect(path: str, *, timeout: float = 30.0, synchronous: str = "FULL") -> sqlite3.Connection:
    """Open ``path`` in autocommit mode with WAL, foreign keys, a busy timeout and
    ``synchronous`` (:data:`SYNCHRONOUS_MODES`), after :func:`check_identity` (reads only)."""
    Durability(timeout, synchronous)  # checks both
    conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    conn.create_function("memlab_fts_text", 1, fts_text, deterministic=True)
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        check_identity(conn, path)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA secure_delete = ON")  # deleted content is zeroed, not left behind
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES}")
        conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")
        if path != ":memory:":
            mode = _to_wal(conn, timeout)
            if mode != "wal":  # pragma: no cover - e.g. a read-only medium
                raise sqlite3.OperationalError(
                    f"could not switch {path} to WAL journal mode (got {mode})"
                )
    except BaseException as error:
        conn.close()
        if is_busy(error):
            raise busy_error(error, path, timeout) from error  # type: ignore[arg-type]
        raise
    return conn


def _to_wal(conn: sqlite3.Connection, timeout: float) -> str:
    """Switch to WAL unless the file is in WAL already (so opening a store takes no lock); the
    journal mode after. SQLite refuses the switch at once while another connection reads the
    file (processes creating one store together), so it is retried until ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
            if mode == "wal":
                return mode
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]).lower()
        except sqlite3.OperationalError as error:
            if not is_busy(error) or time.monotonic() > deadline:
                raise
            time.sleep(random.uniform(0.001, 0.02))


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction (``BEGIN IMMEDIATE``): committed on success, rolled back on error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back the open transaction unless SQLite already did (it does on some errors, e.g. a
    full disk): the error that caused it is the one to report, never a failed ``ROLLBACK``."""
    if conn.in_transaction:
        with suppress(sqlite3.Error):  # the connection is unusable: keep the cause
            conn.execute("ROLLBACK")


def schema_version(conn: sqlite3.Connection) -> int:
    """The schema version of an open database (0 for an empty one)."""
    has = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_version'"
    ).fetchone()
    if not has:
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def _checked_version(conn: sqlite3.Connection) -> int:
    """:func:`schema_version`, refusing versions this code cannot open."""
    found = schema_version(conn)
    if found > SCHEMA_VERSION:
        raise RuntimeError(
            f"database schema version {found} is newer than this memlab ({SCHEMA_VERSION});"
            " upgrade memlab"
        )
    return found


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the database up to :data:`SCHEMA_VERSION`; returns the version found before.

    A database newer than this code raises ``RuntimeError`` untouched. An up-to-date database is
    only read (no write lock); otherwise the migrations and the application id are written in
    one transaction (the version is read again inside it: another process may have migrated).
    """
    found = _checked_version(conn)
    if (
        found == SCHEMA_VERSION
        and conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    ):
        return found
    with transaction(conn):
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version"
            " (version INTEGER PRIMARY KEY, applied_at REAL)"
        )
        found = _checked_version(conn)
        for version, statements in MIGRATIONS[found:]:  # versions 1, 2, ... in order
            for sql in statements:
                conn.execute(sql)
            conn.execute(
                "INSERT INTO schema_version (version, applied_at) VALUES (?, strftime('%s','now'))",
                (version,),
            )
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    return found


# ---------------------------------------------------------------------- open-time checks
#: Tables the keyword search needs (created again, and the keyword index rebuilt, if missing).
KEYWORD_TABLES: dict[str, str] = {
    "memories_fts": _fts("memories_fts"),
    "memories_fts_vocab": _VOCAB,
}


def quick_check(conn: sqlite3.Connection) -> list[str]:
    """Problems ``PRAGMA quick_check`` reports (an empty list when the file is sound)."""
    rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check").fetchall()]
    return [] if rows == ["ok"] else rows


def keyword_index_problems(conn: sqlite3.Connection) -> list[str]:
    """What is wrong with the FTS5 keyword index, read without writing (empty when sound):
    a missing table, or a current memory (any status but ``superseded``, whose texts live in the
    history index) whose content the index lacks or differs from, or an indexed row of none."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    missing = [t for t in KEYWORD_TABLES if t not in tables]
    if missing:
        return [f"missing table {t}" for t in missing]
    problems = []
    n_bad = conn.execute(
        "SELECT COUNT(*) FROM memories m LEFT JOIN memories_fts_content c ON c.id = m.id"
        " WHERE m.status != 'superseded'"
        " AND (c.id IS NULL OR c.c0 IS NOT m.content AND c.c0 IS NOT memlab_fts_text(m.content))"
    ).fetchone()[0]
    if n_bad:
        problems.append(f"{n_bad} memories missing from or different in the keyword index")
    n_orphan = conn.execute(
        "SELECT COUNT(*) FROM memories_fts_content c LEFT JOIN memories m ON m.id = c.id"
        " WHERE m.id IS NULL OR m.status = 'superseded'"
    ).fetchone()[0]
    if n_orphan:
        problems.append(f"{n_orphan} keyword rows without a current memory")
    return problems


def fts_integrity_problems(conn: sqlite3.Connection) -> list[str]:
    """FTS5's own ``integrity-check`` of the index against its content (empty when sound;
    call outside a transaction).

    The check is an INSERT command that needs the write lock (it is rolled back); when another
    connection holds the lock it is skipped (an empty list) and runs at a later open.
    """
    timeout = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            if is_busy(error):
                return []  # a writer is at work: checked at a later open
            raise
        try:
            conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')")
        except sqlite3.DatabaseError as error:
            return [f"keyword index integrity-check failed: {error}"]
        finally:
            rollback(conn)
    finally:
        conn.execute(f"PRAGMA busy_timeout = {timeout}")
    return []


def rebuild_keyword_index(conn: sqlite3.Connection) -> int:
    """Make the keyword tables again and refill them from the current memories (every status
    but ``superseded``) in one transaction; returns the number of memories indexed."""
    with transaction(conn):  # dropped, not emptied: a damaged FTS5 index may refuse deletes
        conn.execute("DROP TABLE IF EXISTS memories_fts_vocab")
        conn.execute("DROP TABLE IF EXISTS memories_fts")
        for sql in KEYWORD_TABLES.values():
            conn.execute(sql)
        current = "FROM memories WHERE status != 'superseded'"
        conn.execute(
            "INSERT INTO memories_fts(rowid, content)"
            f" SELECT id, memlab_fts_text(content) {current}"
        )
        return int(conn.execute(f"SELECT COUNT(*) {current}").fetchone()[0])
