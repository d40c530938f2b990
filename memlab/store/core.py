"""The store's database layer: connection, transactions, rows, events and indexes.

Threads: every ``write()`` / ``read()`` block (and bare ``execute``) holds one re-entrant lock;
embedding runs outside it. Processes: each has its own connection (WAL); a writer waits at most
``busy_timeout`` seconds before :class:`StoreBusy`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memlab.embed import Embedder, l2_normalise, make_embedder
from memlab.models.fsrs6 import Rating
from memlab.store import fts, schema
from memlab.store.dynamics import Dynamics, days_between
from memlab.store.index import INDEX_KINDS, IndexFile, IndexOptions
from memlab.store.records import MEMORY_FIELDS, blob_to_vector, vector_to_blob
from memlab.store.schema import (
    HISTORY_KINDS,
    STATUSES,
    Durability,
    busy_error,
    connect,
    fts_text,
    is_busy,
    migrate,
    rollback,
)
from memlab.store.validation import check_now, check_path

#: Index files of kinds memlab does not read, removed on opening (the index is rebuilt).
_RETIRED_INDEX_FILES = (".hnsw", ".hnsw.json")

#: Columns a record gives :meth:`StoreCore.insert_memory` (all but id, consolidation and vector).
RECORD_FIELDS: tuple[str, ...] = tuple(
    f for f in MEMORY_FIELDS if f not in ("id", "consolidated_into")
)
#: Columns :meth:`StoreCore.update` may set (content and vector change through set_content).
_UPDATABLE = frozenset(MEMORY_FIELDS) - {"id", "content", "created_at"}


class EmbedderMismatchError(ValueError):
    """The database was written with another embedder (name or dimension)."""


def _written_with(path: str) -> str:
    """The embedder a store file names ("hashing" for a new file or a custom embedder)."""
    try:
        with closing(sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'embedder_name'").fetchone()
    except sqlite3.Error:  # no file yet, or not a store (opening it says so)
        return "hashing"
    return row[0] if row and str(row[0]).startswith("fastembed:") else "hashing"


class StoreCore:
    """Connection, transactions, clock, embedding, rows, events and indexes of one store.

    The parameters are :class:`~memlab.store.MemoryStore`'s, checked there; every row this core
    reads or writes is of its ``namespace``.
    """

    def __init__(
        self,
        path: str | Path,
        embedder: str | Embedder | None,
        *,
        clock: Callable[[], datetime] | None,
        dynamics: Dynamics | None,
        index: IndexOptions,
        durability: Durability,
        namespace: str,
    ) -> None:
        self.namespace = namespace
        self.path = str(check_path(path))
        self.embedder: Embedder = make_embedder(embedder or _written_with(self.path))
        self.dim = int(self.embedder.dim)
        self.clock = clock
        self.set_dynamics(dynamics or Dynamics())
        memory = self.path == ":memory:"
        self.index = IndexFile(index, self.dim, self.embedder.name, None if memory else self.path)
        self.busy_timeout = float(durability.busy_timeout)
        self._lock = threading.RLock()
        self._closed = False
        self._depth = 0  # nesting of write()/read() blocks
        self._writing = False
        self._seq_in_write: int | None = None  # the highest embed_seq, known in this write
        #: What the checks on opening found and repaired (empty lists when all was sound).
        self.open_report: dict[str, Any] = {}
        self._conn = connect(
            self.path, timeout=self.busy_timeout, synchronous=durability.synchronous
        )
        try:
            with self._busy_as_store_busy():
                migrate(self._conn)
            self._check_embedder()
            if durability.verify:
                self._verify()
            for suffix in _RETIRED_INDEX_FILES if not memory else ():
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            self.index.store_uid = self.meta("store_uid")
            with self.read():
                self.index.open(self)
            self.backfill_history()
        except BaseException:
            self._conn.close()
            raise

    # ------------------------------------------------------------------ connection
    def _check_embedder(self) -> None:
        with self.read():  # a write only for a new store (or one without a store id yet)
            name, dim, uid = (self.meta(k) for k in ("embedder_name", "embedder_dim", "store_uid"))
        if name is None or uid is None:
            with self.write():
                name, dim = self.meta("embedder_name"), self.meta("embedder_dim")
                if name is None:
                    name, dim = self.embedder.name, str(self.dim)
                    self.set_meta("embedder_name", name)
                    self.set_meta("embedder_dim", dim)
                if self.meta("store_uid") is None:
                    self.set_meta("store_uid", uuid.uuid4().hex)
        if name != self.embedder.name or int(dim or 0) != self.dim:
            raise EmbedderMismatchError(
                f"{self.path} was written with embedder {name!r} (dim {dim}); opened with "
                f"{self.embedder.name!r} (dim {self.dim}). Open it with the same embedder, or "
                "export to JSON lines and import into a new store."
            )

    def _verify(self) -> None:
        """Checks on opening: the file (quick_check), stored vectors, the keyword index."""
        with self.read():
            problems = schema.quick_check(self._conn)
        if problems:
            with self._lock:
                self._conn.execute("REINDEX")  # damaged SQL indexes are rebuilt from the tables
                problems_after = schema.quick_check(self._conn)
            if problems_after:
                raise sqlite3.DatabaseError(
                    f"{self.path} is damaged (PRAGMA quick_check: {problems_after[:5]}); export "
                    "what can be read (sqlite3 .recover) into a new store"
                )
        self.open_report["quick_check"] = problems
        self.open_report["vectors_recomputed"] = self._repair_vectors()
        with self.read():
            fts_problems = schema.keyword_index_problems(self._conn)
        if not fts_problems:
            with self._lock:
                fts_problems = schema.fts_integrity_problems(self._conn)
        if fts_problems:
            with self._lock:
                schema.rebuild_keyword_index(self._conn)
        self.open_report["keyword_index"] = fts_problems
        if problems or fts_problems or self.open_report["vectors_recomputed"]:
            warnings.warn(f"{self.path}: repaired on opening: {self.open_report}", stacklevel=3)

    def _repair_vectors(self) -> list[int]:
        """Recompute stored vectors of the wrong size (e.g. a truncated blob); returns the ids."""
        sql = "SELECT id, content FROM memories WHERE length(embedding) IS NOT ?"
        with self.read():
            bad = self.execute(sql, (4 * self.dim,)).fetchall()
        if not bad:
            return []
        vectors = self.embed([r["content"] for r in bad])
        with self.write():
            for r, vec in zip(bad, vectors, strict=True):
                self.execute(
                    "UPDATE memories SET embedding = ?, embed_seq = ? WHERE id = ?",
                    (vector_to_blob(vec), self._take_seq(), r["id"]),
                )
        return [int(r["id"]) for r in bad]

    @contextmanager
    def _busy_as_store_busy(self) -> Iterator[None]:
        """Raise a lock timeout as :class:`StoreBusy` naming the connection's actual timeout."""
        try:
            yield
        except sqlite3.OperationalError as error:
            if not is_busy(error):
                raise
            try:
                timeout = int(self._conn.execute("PRAGMA busy_timeout").fetchone()[0]) / 1000
            except sqlite3.Error:  # pragma: no cover - the connection is unusable
                timeout = self.busy_timeout
            raise busy_error(error, self.path, timeout) from error

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> sqlite3.Cursor:
        """Run one SQL statement; rows come as :class:`sqlite3.Row` (by name or position)."""
        with self._lock, self._busy_as_store_busy():
            return self._conn.execute(sql, params)

    def database_files(self) -> list[Path]:
        """The database, its WAL, shared-memory and journal files, the vector index and its
        manifest (none for ``:memory:``)."""
        if self.path == ":memory:":
            return []
        index_files = [f".{kind}{ext}" for kind in INDEX_KINDS for ext in ("", ".json")]
        return [Path(self.path + s) for s in ("", "-wal", "-shm", "-journal", *index_files)]

    @contextmanager
    def write(self) -> Iterator[StoreCore]:
        """One write transaction (``BEGIN IMMEDIATE``): committed on success, rolled back (with
        what the vector index took from it) on error. Nested blocks join the outermost one,
        which must then be a write. A lock wait beyond ``busy_timeout`` raises :class:`StoreBusy`.
        """
        with self._lock:
            self._check_open()
            if self._depth and not self._writing:
                raise RuntimeError("a write cannot start inside a read() block")
            if self._depth:
                with self.read():  # joins the open write transaction
                    yield self
                return
            with self._busy_as_store_busy():
                self._conn.execute("BEGIN IMMEDIATE")
            self._depth, self._writing, self._seq_in_write = 1, True, None
            try:
                with self._busy_as_store_busy():
                    try:
                        yield self
                        self._conn.execute("COMMIT")
                        self.index.committed()
                    except BaseException:
                        self._depth, self._writing = 0, False
                        rollback(self._conn)
                        with suppress(sqlite3.Error):  # the database is unusable: keep the original
                            self.index.rolled_back(self)
                        raise
            finally:
                self._depth, self._writing, self._seq_in_write = 0, False, None

    @contextmanager
    def read(self) -> Iterator[StoreCore]:
        """A consistent read: one snapshot for the whole block (joins an open transaction)."""
        with self._lock:
            self._check_open()
            if self._depth:
                self._depth += 1
                try:
                    yield self
                finally:
                    self._depth -= 1
                return
            self._conn.execute("BEGIN")
            self._depth = 1
            try:
                yield self
            finally:
                self._depth = 0
                try:
                    self._conn.execute("COMMIT")  # ends the read snapshot
                except sqlite3.Error:
                    rollback(self._conn)
                    raise

    def checkpoint(self) -> bool:
        """Checkpoint and truncate the write-ahead log; returns whether it was complete."""
        if self.path == ":memory:":
            return True
        with self._lock:
            if self._depth:
                raise RuntimeError("checkpoint() cannot run inside a read() or write() block")
            busy = self.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        return not busy

    def close(self) -> None:
        """Unload the index and close the database (waits for other threads' blocks); a
        second call does nothing."""
        with self._lock:
            if self._closed:
                return
            try:
                self.index.close(self)
            finally:
                self._closed = True
                self._conn.close()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"this MemoryStore ({self.path}) is closed; open the file again")

    # ------------------------------------------------------------------ meta, clock, embedding
    def meta(self, key: str) -> str | None:
        """A value of the store's ``meta`` table (None when unset)."""
        row = self.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a value of the ``meta`` table (inside a write)."""
        self.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def set_dynamics(self, dynamics: Dynamics) -> None:
        """Run ``dynamics`` from now on (the caller persists them)."""
        self.dynamics = dynamics
        self.initial_state: tuple[float, float] = dynamics.initial()

    def schema_version(self) -> int:
        """The database's schema version."""
        return schema.schema_version(self._conn)

    def now(self, now: datetime | None = None) -> datetime:
        """``now`` checked (timezone-aware), or the clock's time when None."""
        if now is None:
            t = self.clock() if self.clock is not None else datetime.now(UTC)
            return check_now(t, "clock()")
        return check_now(now)

    def _checked(self, vectors: Any, shape: tuple[int, ...], what: str) -> NDArray[np.float32]:
        """The embedder's output as unit vectors, or a ``ValueError`` naming what is wrong."""
        vectors = np.asarray(vectors)
        if vectors.shape != shape:
            raise ValueError(
                f"embedder {self.embedder.name!r} returned {what}shape {vectors.shape}, "
                f"expected {shape}"
            )
        if not np.isfinite(vectors).all():
            raise ValueError(f"embedder {self.embedder.name!r} returned non-finite values")
        return l2_normalise(vectors.reshape(-1, self.dim))

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Unit document vectors of ``texts``, shape (n, dim)."""
        vectors = self.embedder.embed_documents(list(texts))
        return self._checked(vectors, (len(texts), self.dim), "")

    def query_vector(
        self, query: str, vector: NDArray[np.floating] | None = None
    ) -> NDArray[np.float32]:
        """The query's unit vector: ``vector`` checked and normalised, else ``query`` embedded."""
        if vector is None:
            return self._checked(self.embedder.embed_query(query), (self.dim,), "query ")[0]
        qvec = np.asarray(vector, dtype=np.float32)
        if qvec.shape != (self.dim,) or not np.isfinite(qvec).all():
            raise ValueError(
                f"query_vector must be a finite vector of shape ({self.dim},), got {qvec.shape}"
            )
        return l2_normalise(qvec[None, :])[0]

    def vector_of(self, row: Mapping[str, Any] | sqlite3.Row) -> NDArray[np.float32]:
        """The stored vector of a memory row."""
        return blob_to_vector(row["embedding"], self.dim)

    # ------------------------------------------------------------------ rows
    def count(self) -> int:
        """How many memories the namespace holds."""
        sql = "SELECT COUNT(*) FROM memories WHERE namespace = ?"
        return int(self.execute(sql, (self.namespace,)).fetchone()[0])

    def select(self, where: str = "", params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """Full rows of the namespace's memories (``where``: an extra SQL condition), by id."""
        cond = f"AND {where}" if where else ""
        sql = f"SELECT * FROM memories WHERE namespace = ? {cond} ORDER BY id"
        return self.execute(sql, (self.namespace, *params)).fetchall()

    def row(self, memory_id: int) -> sqlite3.Row:
        """The full row of a memory of the namespace (``KeyError`` if there is none)."""
        row = self.rows([memory_id]).get(memory_id)
        if row is None:
            raise KeyError(f"no memory with id {memory_id}")
        return row

    def rows(
        self, ids: Iterable[int], columns: str = "*", statuses: Sequence[str] | None = None
    ) -> dict[int, sqlite3.Row]:
        """``columns`` (with ``id``) of the memories ``ids`` of the namespace (and of one of
        ``statuses`` unless None), by id. The unary ``+`` keeps SQLite on the primary key (the
        namespace and status indexes can make it scan every memory of a status)."""
        ids = list(ids)
        if not ids:
            return {}
        sql = (
            f"SELECT {columns} FROM memories WHERE id IN ({','.join('?' for _ in ids)})"
            " AND +namespace = ?"
        )
        params: list[Any] = [*ids, self.namespace]
        if statuses is not None:
            sql += f" AND +status IN ({','.join('?' for _ in statuses)})"
            params += list(statuses)
        return {int(r["id"]): r for r in self.execute(sql, params)}

    def update(self, memory_id: int, **fields: Any) -> None:
        """Set columns of one memory (not its content: see :meth:`set_content`)."""
        bad = set(fields) - _UPDATABLE
        if bad:
            raise ValueError(f"cannot update {sorted(bad)} of a memory")
        if "topics" in fields and not isinstance(fields["topics"], str):
            fields["topics"] = json.dumps(list(fields["topics"]))
        sets = ", ".join(f"{k} = ?" for k in fields)
        self.execute(
            f"UPDATE memories SET {sets} WHERE id = ? AND +namespace = ?",
            (*fields.values(), memory_id, self.namespace),
        )

    def next_seq(self) -> int:
        """The next value of the store-wide embedding sequence, never reused (a purge of the
        highest records it as ``embed_seq_purged``, so other processes' indexes see the next
        vector). Read once per write, which holds the file's lock, then counted on."""
        if self._writing and self._seq_in_write is not None:
            return self._seq_in_write + 1
        value = int(
            self.execute(
                "SELECT MAX(COALESCE((SELECT MAX(embed_seq) FROM memories), 0),"
                " COALESCE((SELECT CAST(value AS INTEGER) FROM meta"
                " WHERE key = 'embed_seq_purged'), 0)) + 1"
            ).fetchone()[0]
        )
        if self._writing:
            self._seq_in_write = value - 1
        return value

    def _take_seq(self) -> int:
        seq = self.next_seq()
        if self._writing:
            self._seq_in_write = seq
        return seq

    def insert_memory(
        self,
        record: Mapping[str, Any],
        vector: NDArray[np.float32],
        *,
        memory_id: int | None = None,
    ) -> int:
        """Insert one memory (every field of :data:`RECORD_FIELDS`) with its keyword entry and
        vector, as ``memory_id`` when given; returns its id."""
        missing = [k for k in RECORD_FIELDS if k not in record]
        if missing:
            raise ValueError(f"record misses {missing}")
        seq = self._take_seq()
        values = [
            json.dumps(list(record[k])) if k == "topics" else record[k] for k in RECORD_FIELDS
        ]
        cols = [*RECORD_FIELDS, "embedding", "embed_seq", "namespace"]
        values += [vector_to_blob(vector), seq, self.namespace]
        if memory_id is not None:
            cols, values = ["id", *cols], [memory_id, *values]
        marks = ",".join("?" for _ in cols)
        cur = self.execute(f"INSERT INTO memories ({', '.join(cols)}) VALUES ({marks})", values)
        assert cur.lastrowid is not None
        new_id = int(cur.lastrowid)
        fts.fts_insert(self, new_id, record["content"])
        self.index.put(new_id, vector, seq)
        return new_id

    def create(
        self,
        text: str,
        meta: Mapping[str, Any],
        vector: NDArray[np.float32],
        at: float,
        **event_data: Any,
    ) -> int:
        """Insert a new memory with ``meta``, the models' initial state at ``at`` and its
        ``create`` event; returns its id."""
        s0, d0 = self.initial_state
        record = {
            **{k: meta[k] for k in ("project", "layer", "entity", "altitude", "importance")},
            "content": text,
            "created_at": at,
            "updated_at": at,
            "topics": list(meta["topics"]),
            "importance_auto": int(bool(meta.get("importance_auto", False))),
            "own_chars": meta.get("own_chars"),
            "stability": s0,
            "difficulty": d0,
            "last_access": at,
            "storage": 0.0,
            "retrieval": 1.0,
            "access_count": 0,
            "status": "active",
            "valid_from": at if meta.get("valid_from") is None else meta["valid_from"],
            "valid_until": None,
        }
        memory_id = self.insert_memory(record, vector)
        self.event(memory_id, at, "create", text=text, data=event_data or None)
        return memory_id

    def set_content(
        self, memory_id: int, text: str, vector: NDArray[np.float32] | None, at: float
    ) -> None:
        """Replace a memory's content, vector and keyword entry (callers keep the old content)."""
        if vector is None:
            vector = self.embed([text])[0]
        seq = self._take_seq()
        self.execute(
            "UPDATE memories SET content = ?, embedding = ?, embed_seq = ?, updated_at = ?,"
            " own_chars = NULL WHERE id = ?",
            (text, vector_to_blob(vector), seq, at, memory_id),
        )
        fts.fts_delete(self, memory_id)
        fts.fts_insert(self, memory_id, text)
        self.index.put(memory_id, vector, seq)

    def purge(self, ids: Sequence[int]) -> None:
        """Hard-delete memories (inside a write) with every text they left in the file
        (``MemoryStore.purge``); both keyword indexes are merged so no segment keeps a token."""
        marks = ",".join("?" for _ in ids)
        self.execute(
            "UPDATE events SET data = json_set(data, '$.query', NULL)"
            f" WHERE kind = 'access' AND memory_id NOT IN ({marks}) AND json_extract(data,"
            " '$.query') IN (SELECT json_extract(data, '$.query') FROM events"
            f" WHERE kind = 'access' AND memory_id IN ({marks}))",
            (*ids, *ids),
        )
        self.execute(
            "DELETE FROM history_fts WHERE rowid IN"
            f" (SELECT event_id FROM history_texts WHERE memory_id IN ({marks}))",
            tuple(ids),
        )
        top = self.next_seq() - 1
        for memory_id, seq in self.execute(
            f"SELECT id, embed_seq FROM memories WHERE id IN ({marks})", tuple(ids)
        ).fetchall():
            fts.fts_delete(self, memory_id)
            if int(seq) == top:
                self.set_meta("embed_seq_purged", str(top))
            self.index.drop(memory_id)
        self.execute(f"DELETE FROM memories WHERE id IN ({marks})", tuple(ids))
        self.index.purges = int(self.meta("purges") or 0) + 1  # other connections' indexes
        self.set_meta("purges", str(self.index.purges))  # rebuild when they see it
        for table in ("memories_fts", "history_fts"):
            self.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")

    # ------------------------------------------------------------------ events and links
    def event(
        self,
        memory_id: int,
        at: float,
        kind: str,
        *,
        grade: int | None = None,
        text: str | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> int:
        """Append one event to a memory's history; returns the event id."""
        cur = self.execute(
            "INSERT INTO events (memory_id, at, kind, grade, text, data) VALUES (?, ?, ?, ?, ?, ?)",
            (
                memory_id,
                at,
                kind,
                None if grade is None else int(grade),
                text,
                None if data is None else json.dumps(dict(data)),
            ),
        )
        assert cur.lastrowid is not None
        return int(cur.lastrowid)

    def events(self, memory_id: int, kinds: Sequence[str] | None = None) -> list[sqlite3.Row]:
        """Events of one memory, oldest first (only ``kinds`` when given)."""
        kinds = tuple(kinds) if kinds is not None else ()
        cond = f" AND kind IN ({','.join('?' for _ in kinds)})" if kinds else ""
        return self.execute(
            f"SELECT * FROM events WHERE memory_id = ?{cond} ORDER BY id", (memory_id, *kinds)
        ).fetchall()

    def link(self, source: int, target: int, kind: str, at: float, **data: Any) -> None:
        """Record a link ``source -> target`` of ``kind`` (``supersedes``, ``related``)."""
        self.execute(
            "INSERT OR IGNORE INTO links (source, target, kind, at, data) VALUES (?, ?, ?, ?, ?)",
            (source, target, kind, at, json.dumps(data) if data else None),
        )

    def links(self, memory_id: int) -> list[sqlite3.Row]:
        """Links from or to a memory, oldest first: source, target, kind, at, data."""
        return self.execute(
            "SELECT source, target, kind, at, data FROM links"
            " WHERE source = ? OR target = ? ORDER BY at, source, target",
            (memory_id, memory_id),
        ).fetchall()

    def set_status(self, memory_id: int, status: str, at: float, kind: str, **data: Any) -> None:
        """Change a memory's status, recorded as an event of ``kind``. A superseded memory's
        content moves from the keyword index to the history index, and back when it leaves
        ``superseded``."""
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}")
        row = self.row(memory_id)
        before = row["status"]
        self.update(memory_id, status=status)
        if status == "active":  # current again: valid until a successor comes
            self.update(memory_id, valid_until=None)
        event_id = self.event(memory_id, at, kind, data={"status_before": before, **data})
        if status == "superseded" and before != "superseded":
            self.move_to_history(memory_id, event_id)
        elif before == "superseded" and status != "superseded":
            fts.fts_insert(self, memory_id, row["content"])

    def move_to_history(self, memory_id: int, event_id: int) -> None:
        """Move a memory's content from the keyword index to the history index."""
        row = self.row(memory_id)
        fts.fts_delete(self, memory_id)
        self.add_history(event_id, memory_id, row["content"], self.vector_of(row))

    # ------------------------------------------------------------------ history index
    def add_history(
        self, event_id: int, memory_id: int, text: str, vector: NDArray[np.float32]
    ) -> None:
        """Index the text of one event for ``include_history`` searches."""
        self.execute(
            "INSERT INTO history_texts (event_id, memory_id, embedding) VALUES (?, ?, ?)",
            (event_id, memory_id, vector_to_blob(vector)),
        )
        self.execute(
            "INSERT INTO history_fts (rowid, content) VALUES (?, ?)", (event_id, fts_text(text))
        )

    def backfill_history(self, batch: int = 512) -> int:
        """Index history texts not indexed yet (older or imported); returns how many."""
        marks = ",".join("?" for _ in HISTORY_KINDS)
        sql = (
            "SELECT e.id, e.memory_id, e.text FROM events e"
            " LEFT JOIN history_texts h ON h.event_id = e.id"
            f" WHERE e.kind IN ({marks}) AND e.text IS NOT NULL AND h.event_id IS NULL"
            " ORDER BY e.id LIMIT ?"
        )
        added = 0
        while True:
            with self.read():
                rows = self.execute(sql, (*HISTORY_KINDS, batch)).fetchall()
            if not rows:
                return added
            vectors = self.embed([r["text"] for r in rows])
            with self.write():
                for r, v in zip(rows, vectors, strict=True):
                    self.add_history(int(r["id"]), int(r["memory_id"]), r["text"], v)
            added += len(rows)

    def history_keyword_search(self, query: str, n: int) -> list[tuple[int, float]]:
        """Up to ``n`` (memory id, best bm25 of its history texts) for ``query``, best first."""
        match = fts.match_query(query)
        if match is None:
            return []
        rows = self.execute(
            "SELECT h.memory_id, f.rank FROM history_fts f"
            " JOIN history_texts h ON h.event_id = f.rowid"
            " JOIN memories m ON m.id = h.memory_id"
            " WHERE history_fts MATCH ? AND +m.namespace = ? ORDER BY f.rank LIMIT ?",
            (match, self.namespace, 4 * n),
        ).fetchall()
        best: dict[int, float] = {}
        for memory_id, rank in rows:
            best.setdefault(int(memory_id), float(rank))
        return list(best.items())[:n]

    def history_vector_search(self, vector: NDArray[np.float32], n: int) -> list[tuple[int, float]]:
        """Up to ``n`` (memory id, best cosine of its history texts), best first (exact)."""
        rows = self.execute(
            "SELECT h.memory_id, h.embedding FROM history_texts h"
            " JOIN memories m ON m.id = h.memory_id WHERE m.namespace = ?",
            (self.namespace,),
        ).fetchall()
        if not rows or not np.any(vector):
            return []
        sims = np.stack([blob_to_vector(r[1], self.dim) for r in rows]) @ vector
        best: dict[int, float] = {}
        for j in np.argsort(-sims, kind="stable"):
            best.setdefault(int(rows[j][0]), float(sims[j]))
            if len(best) >= n:
                break
        return list(best.items())

    # ------------------------------------------------------------------ dynamics
    def review(
        self,
        row: Mapping[str, Any],
        at: float,
        *,
        source: str,
        grade: int = Rating.Good,
        **data: Any,
    ) -> None:
        """One access of a memory: an FSRS-6 review with ``grade``, a dual-strength access and
        an ``access`` event."""
        t = float(days_between(at, row["last_access"]))
        s, d, ss, rs = self.dynamics.access(
            row["stability"], row["difficulty"], row["storage"], row["retrieval"], t, int(grade)
        )
        self.execute(
            """UPDATE memories SET stability = ?, difficulty = ?, storage = ?, retrieval = ?,
               last_access = MAX(last_access, ?), access_count = access_count + 1 WHERE id = ?""",
            (float(s), float(d), float(ss), float(rs), at, row["id"]),
        )
        data = {"source": source, "elapsed_days": t, "stability_before": row["stability"], **data}
        self.event(row["id"], at, "access", grade=int(grade), data=data)

    # ------------------------------------------------------------------ indexes
    def keyword_search(
        self,
        query: str,
        n: int,
        *,
        statuses: Sequence[str] = ("active",),
        max_df: float | None = fts.MAX_DF,
        max_postings: int | None = fts.MAX_POSTINGS,
    ) -> list[tuple[int, float]]:
        """Up to ``n`` (id, bm25) of ``statuses``, best first (:func:`fts.keyword_search`)."""
        return fts.keyword_search(
            self,
            query,
            n,
            statuses=tuple(statuses),
            max_df=max_df,
            namespace=self.namespace,
            max_postings=max_postings,
        )

    def vector_search(
        self,
        vector: NDArray[np.float32],
        n: int,
        *,
        statuses: Sequence[str] = ("active",),
        min_similarity: float | None = None,
    ) -> list[tuple[int, float]]:
        """Up to ``n`` (memory id, cosine) above ``min_similarity`` (:meth:`vector_candidates`)."""
        if not np.any(vector):
            return []
        floor = -np.inf if min_similarity is None else min_similarity
        self.index.refresh(self)
        return self.vector_candidates(vector[None, :], n, statuses, floor)[0]

    def vector_candidates(
        self,
        vectors: NDArray[np.float32],
        n: int,
        statuses: Sequence[str] | None = None,
        floor: float = -np.inf,
    ) -> list[list[tuple[int, float]]]:
        """For each row of ``vectors``, up to ``n`` (memory id, cosine) of the namespace (of
        ``statuses``; None: any), above ``floor``, best first. The index is the file's: this
        over-fetches, and fetches more while a result is short and the index has more."""
        fetch = n if statuses is None or tuple(statuses) == STATUSES else 3 * n
        total: int | None = None  # counted only when a short result asks for more
        while True:
            found = [
                [(m, s) for m, s in hits if s > floor]
                for hits in self.index.query_many(vectors, fetch)
            ]
            mine = set(self.rows({m for hits in found for m, _ in hits}, "id", statuses))
            kept = [[(m, s) for m, s in hits if m in mine][:n] for hits in found]
            short = any(len(k) < n and len(h) >= fetch for k, h in zip(kept, found, strict=True))
            if short and total is None:
                total = int(self.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
            if not short or total is None or fetch >= total:
                return kept
            fetch = min(4 * fetch, total)

    def maintain_index(self) -> None:
        """The vectors written and not yet read into the index, the index's deferred work and
        its save (a failure to save is a warning)."""
        with self.read():
            self.index.refresh(self)
            self.index.maintain(self)
