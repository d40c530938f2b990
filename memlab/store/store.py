"""MemoryStore: the facade over SQLite, FTS5, the vector index and the models."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from memlab.embed import Embedder, l2_normalise, make_embedder
from memlab.gate import Decision, Gate
from memlab.store import fts, lifecycle
from memlab.store.dynamics import GOOD, Dynamics, days_between
from memlab.store.records import (
    MEMORY_COLUMNS,
    MEMORY_FIELDS,
    IngestResult,
    Memory,
    SearchHit,
    to_datetime,
)
from memlab.store.schema import (
    SCHEMA_VERSION,
    STATUSES,
    connect,
    migrate,
    schema_version,
    transaction,
)
from memlab.store.secrets import SECRET_MODES, screen
from memlab.store.validation import (
    check_content,
    check_count,
    check_id,
    check_meta,
    check_now,
    check_optional_str,
    check_topics,
    check_unit,
)
from memlab.store.vectors import VectorIndex, blob_to_vector, vector_to_blob

#: Reciprocal-rank-fusion constant: ``score = sum 1 / (RRF_K + rank)``.
RRF_K = 60

_INGEST_KEYS = frozenset(
    {"content", "project", "topics", "layer", "entity", "altitude", "importance"}
)


class EmbedderMismatchError(ValueError):
    """The database was written with another embedder (name or dimension)."""


class MemoryStore:
    """A persistent memory store in which the models decide what is strong and what fades.

    Parameters
    ----------
    path : str or Path
        SQLite file (created if absent) or ``":memory:"``. A file store keeps its annoy index
        beside it as ``<path>.annoy`` with a manifest ``<path>.annoy.json``.
    embedder : {"hashing", "fastembed"} or Embedder
        How texts become vectors. Its name and dimension are recorded in the database;
        reopening with another embedder raises :class:`EmbedderMismatchError`.
    clock : callable returning a tz-aware datetime, optional
        Time source for operations called without ``now=`` (simulated time); defaults to
        the UTC wall clock.
    gate : Gate
        Prediction-error gate of ingest (reinforce > 0.92, update > 0.75 by default).
    secrets : {"redact", "reject", "allow"}
        Secret screening of ingested text (see :mod:`memlab.store.secrets`).
    model_path : str or Path, optional
        Local model folder for ``embedder="fastembed"`` (loaded offline).
    dynamics : Dynamics, optional
        FSRS-6 weights, dual-strength and heat parameters.
    n_trees, search_k : int
        annoy parameters (see :class:`memlab.store.vectors.VectorIndex`).
    candidates : int
        Candidates taken from each ranking (keyword, vector) before fusion: ``max(candidates, 5k)``.
    time_weight, topic_weight, project_weight : float
        Search weighting (see :meth:`search`).
    min_similarity : float
        Vector candidates must be more similar than this to enter the vector ranking
        (default 0: orthogonal or opposite vectors are not matches).
    keyword_max_df : float or None
        Query terms found in more than this share of memories are left out of the keyword
        query (default 0.1; stop words measured on the data: almost no BM25 weight, most of
        the FTS5 cost). None keeps every term.

    Notes
    -----
    Every operation runs in one SQLite transaction (WAL mode, so readers never block) and
    takes an optional ``now=`` (a timezone-aware datetime; naive ones raise ``ValueError``).
    """

    def __init__(
        self,
        path: str | Path = ":memory:",
        embedder: str | Embedder = "hashing",
        clock: Callable[[], datetime] | None = None,
        gate: Gate | None = None,
        secrets: str = "redact",
        *,
        model_path: str | Path | None = None,
        dynamics: Dynamics | None = None,
        n_trees: int = 50,
        search_k: int = -1,
        tail_min: int = 2000,
        candidates: int = 50,
        time_weight: float = 0.5,
        topic_weight: float = 0.5,
        project_weight: float = 0.5,
        min_similarity: float = 0.0,
        keyword_max_df: float | None = fts.MAX_DF,
    ) -> None:
        if secrets not in SECRET_MODES:
            raise ValueError(f"secrets must be one of {SECRET_MODES}, got {secrets!r}")
        if clock is not None and not callable(clock):
            raise TypeError("clock must be a callable returning a timezone-aware datetime")
        if gate is not None and not isinstance(gate, Gate):
            raise TypeError(f"gate must be a memlab.gate.Gate, got {type(gate).__name__}")
        self.time_weight = check_unit(time_weight, "time_weight")
        self.topic_weight = _non_negative(topic_weight, "topic_weight")
        self.project_weight = _non_negative(project_weight, "project_weight")
        self.candidates = check_count(candidates, "candidates")
        if (
            isinstance(min_similarity, bool)
            or not isinstance(min_similarity, (int, float))
            or not -1 <= min_similarity < 1
        ):
            raise ValueError(f"min_similarity must be a number in [-1, 1), got {min_similarity!r}")
        self.min_similarity = float(min_similarity)
        if keyword_max_df is not None:
            keyword_max_df = check_unit(keyword_max_df, "keyword_max_df")
        self.keyword_max_df = keyword_max_df
        self.path = str(path)
        self.embedder: Embedder = (
            make_embedder(embedder, model_path=model_path)
            if isinstance(embedder, str)
            else make_embedder(embedder)
        )
        self.dim = int(self.embedder.dim)
        self.clock = clock
        self.gate = gate or Gate()
        self.secrets = secrets
        self.dynamics = dynamics or Dynamics()
        self._initial_state = self.dynamics.initial()
        self._conn = connect(self.path)
        migrate(self._conn)
        self._check_embedder()
        index_path = None if self.path == ":memory:" else Path(self.path + ".annoy")
        self._index = VectorIndex(
            self.dim,
            self.embedder.name,
            index_path,
            n_trees=n_trees,
            search_k=search_k,
            tail_min=tail_min,
        )
        self._index.open(self._conn)

    # ------------------------------------------------------------------ setup and plumbing
    def _check_embedder(self) -> None:
        with transaction(self._conn):
            rows = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
            if "embedder_name" not in rows:
                self._conn.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [("embedder_name", self.embedder.name), ("embedder_dim", str(self.dim))],
                )
                return
        if rows["embedder_name"] != self.embedder.name or int(rows["embedder_dim"]) != self.dim:
            self._conn.close()
            raise EmbedderMismatchError(
                f"{self.path} was written with embedder {rows['embedder_name']!r} "
                f"(dim {rows['embedder_dim']}); opened with {self.embedder.name!r} "
                f"(dim {self.dim}). "
                "Open it with the same embedder, or export "
                "to JSON lines and import into a new store."
            )

    def close(self) -> None:
        """Close the database and unload the index."""
        self._index.close()
        self._conn.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])

    def __repr__(self) -> str:
        name = self.embedder.name
        return f"MemoryStore(path={self.path!r}, embedder={name!r}, memories={len(self)})"

    def _repr_html_(self) -> str:
        s = self.stats()
        rows = "".join(
            f"<tr><th style='text-align:left'>{k}</th><td>{v}</td></tr>" for k, v in s.items()
        )
        return f"<b>MemoryStore</b><table>{rows}</table>"

    def _now(self, now: datetime | None) -> datetime:
        if now is None:
            now = self.clock() if self.clock is not None else datetime.now(timezone.utc)
            return check_now(now, "clock()")
        return check_now(now)

    def _embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        vectors = np.asarray(self.embedder.embed_documents(list(texts)))
        if vectors.ndim != 2 or vectors.shape != (len(texts), self.dim):
            raise ValueError(
                f"embedder {self.embedder.name!r} returned shape {vectors.shape}, "
                f"expected ({len(texts)}, {self.dim})"
            )
        if not np.isfinite(vectors).all():
            raise ValueError(f"embedder {self.embedder.name!r} returned non-finite values")
        return l2_normalise(vectors)

    def _embed_query(self, text: str) -> NDArray[np.float32]:
        vector = np.asarray(self.embedder.embed_query(text))
        if vector.shape != (self.dim,):
            raise ValueError(
                f"embedder {self.embedder.name!r} returned query shape {vector.shape}, "
                f"expected ({self.dim},)"
            )
        if not np.isfinite(vector).all():
            raise ValueError(f"embedder {self.embedder.name!r} returned non-finite values")
        return l2_normalise(vector[None, :])[0]

    def _next_seq(self) -> int:
        return int(
            self._conn.execute("SELECT COALESCE(MAX(embed_seq), 0) + 1 FROM memories").fetchone()[0]
        )

    def _event(
        self,
        memory_id: int,
        at: float,
        kind: str,
        *,
        grade: int | None = None,
        text: str | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        self._conn.execute(
            "INSERT INTO events (memory_id, at, kind, grade, text, data) VALUES (?, ?, ?, ?, ?, ?)",
            (memory_id, at, kind, grade, text, None if data is None else json.dumps(dict(data))),
        )

    def _write(self) -> Any:
        """A write transaction that resets the in-memory vector tail if it rolls back."""
        store = self

        class _Tx:
            def __enter__(self) -> sqlite3.Connection:
                self._cm = transaction(store._conn)
                return self._cm.__enter__()

            def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool | None:
                try:
                    return self._cm.__exit__(exc_type, exc, tb)
                finally:
                    if exc_type is not None:
                        store._index.open(store._conn)

        return _Tx()

    def _row(self, memory_id: int) -> sqlite3.Row:
        row = self._conn.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if row is None:
            raise KeyError(f"no memory with id {memory_id}")
        return row

    def _access(
        self, row: sqlite3.Row, at: float, *, source: str, grade: int = GOOD, **data: Any
    ) -> None:
        """One access of a memory: FSRS-6 review + dual-strength access + an access event."""
        t = float(days_between(at, row["last_access"]))
        s, d, ss, rs = self.dynamics.access(
            row["stability"], row["difficulty"], row["storage"], row["retrieval"], t, grade
        )
        self._conn.execute(
            """UPDATE memories SET stability = ?, difficulty = ?, storage = ?, retrieval = ?,
               last_access = MAX(last_access, ?), access_count = access_count + 1 WHERE id = ?""",
            (float(s), float(d), float(ss), float(rs), at, row["id"]),
        )
        self._event(
            row["id"],
            at,
            "access",
            grade=grade,
            data={
                "source": source,
                "elapsed_days": t,
                "stability_before": row["stability"],
                **data,
            },
        )

    # ------------------------------------------------------------------ reading
    def get(self, memory_id: int) -> Memory:
        """The memory with this id (``KeyError`` if there is none)."""
        return Memory.from_row(self._row(check_id(memory_id)))

    def memories(self, *, include_archived: bool = True) -> list[Memory]:
        sql = (
            "SELECT * FROM memories"
            + ("" if include_archived else " WHERE status = 'active'")
            + " ORDER BY id"
        )
        return [Memory.from_row(r) for r in self._conn.execute(sql)]

    def history(self, memory_id: int) -> pd.DataFrame:
        """Events of one memory, oldest first: at, kind, grade, text, data."""
        memory_id = check_id(memory_id)
        self._row(memory_id)
        rows = self._conn.execute(
            "SELECT id, at, kind, grade, text, data FROM events WHERE memory_id = ? ORDER BY id",
            (memory_id,),
        ).fetchall()
        return pd.DataFrame(
            {
                "event_id": [r["id"] for r in rows],
                "at": pd.to_datetime([r["at"] for r in rows], unit="s", utc=True),
                "kind": [r["kind"] for r in rows],
                "grade": pd.array([r["grade"] for r in rows], dtype="Int64"),
                "text": [r["text"] for r in rows],
                "data": [None if r["data"] is None else json.loads(r["data"]) for r in rows],
            }
        )

    def to_dataframe(
        self, *, now: datetime | None = None, include_archived: bool = True
    ) -> pd.DataFrame:
        """One row per memory: stored fields and, at ``now``, retention, accessibility, state."""
        at = self._now(now).timestamp()
        sql = (
            "SELECT * FROM memories"
            + ("" if include_archived else " WHERE status = 'active'")
            + " ORDER BY id"
        )
        rows = self._conn.execute(sql).fetchall()
        columns = list(MEMORY_FIELDS)
        df = pd.DataFrame([{c: r[c] for c in columns} for r in rows], columns=columns)
        df["topics"] = [json.loads(t) for t in df["topics"]]
        for c in ("created_at", "updated_at", "last_access"):
            df[c] = pd.to_datetime(df[c].astype(float), unit="s", utc=True)
        if len(df):
            t = days_between(at, [r["last_access"] for r in rows])
            r, acc, state = self.dynamics.accessibility(
                t, df["stability"], df["retrieval"], df["storage"]
            )
            df["elapsed_days"] = t
            df["retention"] = r
            df["accessibility"] = acc
            df["state"] = state
        else:
            for c in ("elapsed_days", "retention", "accessibility", "state"):
                df[c] = pd.Series(dtype=float if c != "state" else object)
        return df

    def stats(self) -> dict[str, Any]:
        """Counts by status and layer, events, index state, embedder and schema version."""
        c = self._conn
        by_status = dict(
            c.execute("SELECT status, COUNT(*) FROM memories GROUP BY status").fetchall()
        )
        by_layer = dict(c.execute("SELECT layer, COUNT(*) FROM memories GROUP BY layer").fetchall())
        by_event = dict(c.execute("SELECT kind, COUNT(*) FROM events GROUP BY kind").fetchall())
        return {
            "memories": len(self),
            "by_status": {s: int(by_status.get(s, 0)) for s in STATUSES},
            "by_layer": by_layer,
            "events": by_event,
            "embedder": self.embedder.name,
            "dim": self.dim,
            "schema_version": schema_version(c),
            "index": self._index.info(),
        }

    # ------------------------------------------------------------------ ingest
    def ingest(
        self,
        content: str,
        *,
        project: str | None = None,
        topics: Iterable[str] = (),
        layer: str = "context",
        entity: str | None = None,
        altitude: str = "implementation",
        importance: float = 0.5,
        now: datetime | None = None,
    ) -> IngestResult:
        """Store one text, gated against the nearest active memory of the same project.

        The gate compares the text with its nearest *active* memory in the same project
        scope (``project=None`` compares with memories without a project): a similarity
        above ``gate.reinforce`` REINFORCEs it (an access: FSRS-6 review with grade 3 at
        the elapsed days, dual-strength access; the text kept as an observation event) unless
        the gate's guard sees a contradiction (a negation or a number that differs), which
        UPDATEs instead,
        above ``gate.update`` UPDATEs it (an access as well; the old content kept as a
        version event, content replaced and re-embedded, topics merged, importance the
        larger), otherwise CREATEs a memory. Secrets are screened first (``secrets=``).

        Returns
        -------
        IngestResult
        """
        return self.ingest_many(
            [content],
            project=project,
            topics=topics,
            layer=layer,
            entity=entity,
            altitude=altitude,
            importance=importance,
            now=now,
        )[0]

    def ingest_many(
        self,
        items: Iterable[str | Mapping[str, Any]],
        *,
        project: str | None = None,
        topics: Iterable[str] = (),
        layer: str = "context",
        entity: str | None = None,
        altitude: str = "implementation",
        importance: float = 0.5,
        now: datetime | None = None,
        batch_size: int = 1000,
        progress: bool = False,
    ) -> list[IngestResult]:
        """Ingest many texts in one transaction, in order, each gated as by :meth:`ingest`.

        ``items`` are strings or mappings with ``content`` and any of the metadata keys
        (``project``, ``topics``, ``layer``, ``entity``, ``altitude``, ``importance``)
        overriding the keyword defaults. Every item is validated (and screened) before
        anything is written: one bad item raises and stores nothing. Texts are embedded in
        batches of ``batch_size``; each is gated against the index, the exact tail and the
        texts before it. ``progress=True`` shows a bar (:mod:`memlab.progress`).
        """
        at_dt = self._now(now)
        at = at_dt.timestamp()
        batch_size = check_count(batch_size, "batch_size")
        defaults = {
            "project": project,
            "topics": topics,
            "layer": layer,
            "entity": entity,
            "altitude": altitude,
            "importance": importance,
        }
        prepared: list[tuple[str, dict[str, Any], int]] = []
        default_meta: dict[str, Any] | None = None  # validated once, shared by plain-string items
        for i, item in enumerate(items):
            if isinstance(item, Mapping):
                unknown = set(item) - _INGEST_KEYS
                if unknown:
                    raise TypeError(
                        f"item {i}: unknown keys {sorted(unknown)}; allowed {sorted(_INGEST_KEYS)}"
                    )
                if "content" not in item:
                    raise ValueError(f"item {i}: missing 'content'")
                raw = item["content"]
                meta_in = {**defaults, **{k: v for k, v in item.items() if k != "content"}}
            else:
                raw, meta_in = item, defaults
            try:
                text = check_content(raw)
                if meta_in is defaults:
                    if default_meta is None:
                        default_meta = check_meta(**defaults)
                    meta = default_meta
                else:
                    meta = check_meta(**meta_in)
                text, redacted = screen(text, self.secrets)
            except (TypeError, ValueError) as error:
                raise type(error)(
                    f"item {i}: {error}" if len(prepared) or i else str(error)
                ) from error
            prepared.append((text, meta, redacted))
        results: list[IngestResult] = []
        if not prepared:
            return results
        from memlab.progress import progress as progress_bar

        # Embed the first batch before opening the write transaction (checks the embedder's output).
        chunks = [prepared[i : i + batch_size] for i in range(0, len(prepared), batch_size)]
        first_vectors = self._embed([p[0] for p in chunks[0]])
        with progress_bar(total=len(prepared), desc="ingest", unit="text", enabled=progress) as bar:
            with self._write():
                self._index.refresh(self._conn)
                tags = lifecycle.active_tags(self, at)
                for c, chunk in enumerate(chunks):
                    vectors = first_vectors if c == 0 else self._embed([p[0] for p in chunk])
                    results.extend(self._ingest_chunk(chunk, vectors, at, tags))
                    bar.update(len(chunk))
                    if self._index.needs_rebuild():
                        self._index.rebuild(self._conn)
        return results

    def _ingest_chunk(
        self,
        chunk: list[tuple[str, dict[str, Any], int]],
        vectors: NDArray[np.float32],
        at: float,
        tags: list[lifecycle.PendingTag],
    ) -> list[IngestResult]:
        n_cand = 32
        candidates = self._index.query_many(vectors, n_cand)
        within = vectors @ vectors.T
        # Memories created or re-embedded in this chunk -> the chunk row whose vector they have.
        latest: dict[int, int] = {}
        written_ids = np.zeros(len(chunk), dtype=np.int64)
        written_rows = np.zeros(len(chunk), dtype=np.int64)
        n_written = 0
        out: list[IngestResult] = []
        for i, ((text, meta, redacted), vec) in enumerate(zip(chunk, vectors, strict=False)):
            sims = {mid: s for mid, s in candidates[i] if mid not in latest}
            if n_written:
                row_sims = within[i, written_rows[:n_written]]
                top = (
                    np.argsort(-row_sims)[: 2 * n_cand]
                    if n_written > 2 * n_cand
                    else np.arange(n_written)
                )
                for j in top:
                    mid = int(written_ids[j])
                    if latest.get(mid) == int(written_rows[j]):
                        sims[mid] = float(row_sims[j])
            nearest, sim = self._nearest_in_scope(sims, vec, meta["project"], n_cand)
            # the guard of the gate reads the nearest memory's text only when it would reinforce
            nearest_text = (
                self._row(nearest)["content"]
                if nearest is not None and sim is not None and sim > self.gate.reinforce
                else None
            )
            decision = self.gate.decide(sim, text, nearest_text)
            tagged: tuple[int, ...] = ()
            if decision is Decision.CREATE:
                memory_id = self._create(text, meta, vec, at)
                tagged = lifecycle.apply_tags_on_arrival(self, memory_id, at, tags)
                latest[memory_id] = i
                written_ids[n_written], written_rows[n_written] = memory_id, i
                n_written += 1
            else:
                assert nearest is not None
                memory_id = nearest
                row = self._row(memory_id)
                if decision is Decision.REINFORCE:
                    self._access(row, at, source="reinforce", similarity=sim)
                    self._event(memory_id, at, "observation", text=text, data={"similarity": sim})
                else:
                    self._update(row, text, meta, vec, at, sim)
                    latest[memory_id] = i
                    written_ids[n_written], written_rows[n_written] = memory_id, i
                    n_written += 1
            out.append(IngestResult(decision, sim, memory_id, nearest, redacted, tagged))
        return out

    def _nearest_in_scope(
        self, sims: dict[int, float], vec: NDArray[np.float32], project: str | None, n_cand: int
    ) -> tuple[int | None, float | None]:
        if not np.any(vec):
            return None, None
        ordered = sorted(sims.items(), key=lambda kv: -kv[1])
        start = 0
        while start < len(ordered):  # check the best few first: usually the nearest is in scope
            batch = ordered[start : start + (4 if start == 0 else 64)]
            start += len(batch)
            marks = ",".join("?" for _ in batch)
            scope = {
                int(r[0]): (r[1], r[2])
                for r in self._conn.execute(
                    f"SELECT id, status, project FROM memories WHERE id IN ({marks})",
                    [m for m, _ in batch],
                )
            }
            for mid, s in batch:
                status_project = scope.get(mid)
                if (
                    status_project is not None
                    and status_project[0] == "active"
                    and status_project[1] == project
                ):
                    return mid, float(min(max(s, -1.0), 1.0))
        # Candidates were all out of scope: if some might still pass the update threshold,
        # search the scope exactly (rare: many close memories in other projects).
        if len(ordered) >= n_cand and ordered[-1][1] > self.gate.update:
            rows = self._conn.execute(
                "SELECT id, embedding FROM memories WHERE status = 'active' AND project IS ?",
                (project,),
            ).fetchall()
            if rows:
                mat = np.stack([blob_to_vector(r[1], self.dim) for r in rows])
                scores = mat @ vec
                j = int(np.argmax(scores))
                return int(rows[j][0]), float(min(max(scores[j], -1.0), 1.0))
        return None, None

    def _create(self, text: str, meta: dict[str, Any], vec: NDArray[np.float32], at: float) -> int:
        s0, d0 = self._initial_state
        seq = self._next_seq()
        cur = self._conn.execute(
            """INSERT INTO memories (content, created_at, updated_at, project, topics, layer,
               entity, altitude, importance, stability, difficulty, last_access, storage, retrieval,
               access_count, status, embedding, embed_seq)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0.0, 1.0, 0, 'active', ?, ?)""",
            (
                text,
                at,
                at,
                meta["project"],
                json.dumps(list(meta["topics"])),
                meta["layer"],
                meta["entity"],
                meta["altitude"],
                meta["importance"],
                s0,
                d0,
                at,
                vector_to_blob(vec),
                seq,
            ),
        )
        assert cur.lastrowid is not None
        memory_id = int(cur.lastrowid)
        fts.fts_insert(self._conn, memory_id, text)
        self._event(memory_id, at, "create", text=text)
        self._index.put(memory_id, vec, seq)
        return memory_id

    def _update(
        self,
        row: sqlite3.Row,
        text: str,
        meta: dict[str, Any],
        vec: NDArray[np.float32],
        at: float,
        sim: float | None,
    ) -> None:
        memory_id = int(row["id"])
        self._event(
            memory_id,
            at,
            "version",
            text=row["content"],
            data={"similarity": sim, "reason": "update"},
        )
        self._access(row, at, source="update", similarity=sim)
        topics = list(dict.fromkeys([*json.loads(row["topics"]), *meta["topics"]]))
        self._set_content(memory_id, text, vec, at)
        self._conn.execute(
            "UPDATE memories SET topics = ?, importance = MAX(importance, ?) WHERE id = ?",
            (json.dumps(topics), meta["importance"], memory_id),
        )

    def _set_content(
        self, memory_id: int, text: str, vec: NDArray[np.float32] | None, at: float
    ) -> None:
        """Replace content (and its vector and FTS row); callers record the old content first."""
        if vec is None:
            vec = self._embed([text])[0]
        seq = self._next_seq()
        self._conn.execute(
            "UPDATE memories SET content = ?, embedding = ?, embed_seq = ?, updated_at = ?"
            " WHERE id = ?",
            (text, vector_to_blob(vec), seq, at, memory_id),
        )
        fts.fts_replace(self._conn, memory_id, text)
        self._index.put(memory_id, vec, seq)

    # ------------------------------------------------------------------ search
    def search(
        self,
        query: str,
        k: int = 10,
        *,
        project: str | None = None,
        topics: Iterable[str] = (),
        mark_accessed: bool = True,
        include_archived: bool = False,
        now: datetime | None = None,
        query_vector: NDArray[np.floating] | None = None,
        time_weight: float | None = None,
        topic_weight: float | None = None,
        project_weight: float | None = None,
    ) -> list[SearchHit]:
        """Hybrid search: BM25 and vector rankings fused by RRF, weighted by retention and context.

        ``rrf = sum over rankings of 1 / (60 + rank)`` (ranks from 1, top ``max(candidates, 5k)``
        of each ranking). The score is ``rrf * time_factor * context`` with
        ``time_factor = (1 - time_weight) + time_weight * R`` (R the FSRS-6 retention now) and
        ``context = 1 + project_weight * [memory.project == project] + topic_weight * overlap``,
        ``overlap`` the share of the query's ``topics`` the memory carries (Tulving's encoding
        specificity: a cue matching the encoding context helps recall). Project and topics
        re-rank; they do not filter.

        The returned memories are accessed (FSRS-6 review with grade 3, dual-strength
        access, an access event) unless ``mark_accessed=False``, a preview that writes
        nothing. Hits carry the memory as it was when ranked. Superseded and archived
        memories are excluded unless ``include_archived=True``. ``query_vector`` skips
        embedding the query (it must be the embedder's vector of ``query``).
        """
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        if not query.strip():
            raise ValueError("query is empty")
        k = check_count(k, "k")
        project = check_optional_str(project, "project")
        topic_set = set(check_topics(topics))
        tw = self.time_weight if time_weight is None else check_unit(time_weight, "time_weight")
        pw = (
            self.project_weight
            if project_weight is None
            else _non_negative(project_weight, "project_weight")
        )
        ow = (
            self.topic_weight
            if topic_weight is None
            else _non_negative(topic_weight, "topic_weight")
        )
        at = self._now(now).timestamp()
        n = max(self.candidates, 5 * k)
        keyword, vector = self._rankings(query, n, query_vector, include_archived)
        keyword_rank = {mid: r for r, (mid, _) in enumerate(keyword, start=1)}
        vector_rank = {mid: r for r, (mid, _) in enumerate(vector, start=1)}
        similarity = dict(vector)
        pool = set(keyword_rank) | set(vector_rank)
        if not pool:
            return []
        marks = ",".join("?" for _ in pool)
        rows = {
            int(r[0]): r
            for r in self._conn.execute(
                "SELECT id, project, topics, stability, last_access FROM memories"
                f" WHERE id IN ({marks})",
                list(pool),
            )
        }
        ids = [m for m in pool if m in rows]
        elapsed = days_between(at, [rows[m]["last_access"] for m in ids])
        retention = np.clip(
            self.dynamics.retention(elapsed, [rows[m]["stability"] for m in ids]), 0.0, 1.0
        )
        parts = []
        for m, r_now in zip(ids, retention, strict=False):
            rrf = sum(1.0 / (RRF_K + rank[m]) for rank in (keyword_rank, vector_rank) if m in rank)
            time_factor = (1.0 - tw) + tw * float(r_now)
            overlap = (
                len(topic_set & set(json.loads(rows[m]["topics"]))) / len(topic_set)
                if topic_set
                else 0.0
            )
            pmatch = project is not None and rows[m]["project"] == project
            context = 1.0 + pw * float(pmatch) + ow * overlap
            parts.append(
                (
                    rrf * time_factor * context,
                    m,
                    rrf,
                    float(r_now),
                    time_factor,
                    bool(pmatch),
                    overlap,
                    context,
                )
            )
        parts.sort(key=lambda p: (-p[0], p[1]))
        parts = parts[:k]
        marks = ",".join("?" for _ in parts)
        full = {
            int(r["id"]): Memory.from_row(r)
            for r in self._conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({marks})",
                [p[1] for p in parts],
            )
        }
        scored = [
            SearchHit(
                memory=full[m],
                score=score,
                rrf=rrf,
                keyword_rank=keyword_rank.get(m),
                vector_rank=vector_rank.get(m),
                similarity=similarity.get(m),
                retention=r_now,
                time_factor=time_factor,
                project_match=pmatch,
                topic_overlap=overlap,
                context=context,
            )
            for score, m, rrf, r_now, time_factor, pmatch, overlap, context in parts
        ]
        top = scored
        if mark_accessed and top:
            with self._write():
                for hit in top:
                    row = self._conn.execute(
                        "SELECT * FROM memories WHERE id = ?", (hit.memory.id,)
                    ).fetchone()
                    if row is not None:
                        self._access(
                            row, at, source="search", query=query[:200], rank=top.index(hit) + 1
                        )
        return top

    def rankings(
        self,
        query: str,
        n: int = 50,
        *,
        query_vector: NDArray[np.floating] | None = None,
        include_archived: bool = False,
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """The two rankings :meth:`search` fuses, without fusing them; reads only.

        Returns ``(keyword, vector)``: up to ``n`` ``(memory id, bm25)`` from FTS5 (lower bm25 is
        better) and up to ``n`` ``(memory id, cosine)`` from the vector index (cosine above
        ``min_similarity``), each best first, among active memories (all with
        ``include_archived``).
        """
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        if not query.strip():
            raise ValueError("query is empty")
        return self._rankings(query, check_count(n, "n"), query_vector, include_archived)

    def _rankings(
        self,
        query: str,
        n: int,
        query_vector: NDArray[np.floating] | None,
        include_archived: bool,
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        if query_vector is None:
            qvec = self._embed_query(query)
        else:
            qvec = np.asarray(query_vector, dtype=np.float32)
            if qvec.shape != (self.dim,) or not np.isfinite(qvec).all():
                raise ValueError(
                    f"query_vector must be a finite vector of shape ({self.dim},), got {qvec.shape}"
                )
            qvec = l2_normalise(qvec[None, :])[0]
        statuses = STATUSES if include_archived else ("active",)
        keyword = fts.keyword_search(
            self._conn, query, n, statuses=statuses, max_df=self.keyword_max_df
        )
        vector: list[tuple[int, float]] = []
        if np.any(qvec):
            self._index.refresh(self._conn)
            hits = self._index.query(qvec, n if include_archived else 3 * n)
            allowed = self._ids_with_status([m for m, _ in hits], statuses)
            vector = [(m, s) for m, s in hits if m in allowed and s > self.min_similarity][:n]
        return keyword, vector

    def access(self, memory_id: int, grade: int = GOOD, *, now: datetime | None = None) -> Memory:
        """Record one access (retrieval) of a memory, as a search hit does; returns it after.

        An FSRS-6 review with ``grade`` (1 Again, 2 Hard, 3 Good, 4 Easy) at the elapsed days
        since the last access, a dual-strength access and an access event, in one transaction.
        """
        memory_id = check_id(memory_id)
        if (
            isinstance(grade, bool)
            or not isinstance(grade, (int, np.integer))
            or not 1 <= grade <= 4
        ):
            raise ValueError(f"grade must be an integer 1-4, got {grade!r}")
        at = self._now(now).timestamp()
        with self._write():
            self._access(self._row(memory_id), at, source="api", grade=int(grade))
        return self.get(memory_id)

    def _ids_with_status(self, ids: list[int], statuses: tuple[str, ...]) -> set[int]:
        if not ids:
            return set()
        marks = ",".join("?" for _ in ids)
        # Look rows up by primary key and filter in Python (a status condition in SQL can make
        # SQLite scan the status index instead).
        return {
            int(r[0])
            for r in self._conn.execute(
                f"SELECT id, status FROM memories WHERE id IN ({marks})", ids
            )
            if r[1] in statuses
        }

    def nearest(
        self, text: str, n: int = 5, *, include_archived: bool = False
    ) -> list[tuple[int, float]]:
        """The ``n`` memories most similar to ``text`` by vector (id, cosine); reads only."""
        qvec = self._embed_query(check_content(text, "text"))
        n = check_count(n, "n")
        statuses = STATUSES if include_archived else ("active",)
        self._index.refresh(self._conn)
        hits = self._index.query(qvec, 3 * n)
        allowed = self._ids_with_status([m for m, _ in hits], statuses)
        return [(m, s) for m, s in hits if m in allowed][:n]

    # ------------------------------------------------------------------ index
    def rebuild_index(self) -> None:
        """Rebuild the annoy index from SQLite now (written to a new file, renamed into place)."""
        self._index.rebuild(self._conn)

    @property
    def index(self) -> VectorIndex:
        return self._index

    # ------------------------------------------------------------------ lifecycle (lifecycle.py)
    def importance(
        self,
        memory_id: int,
        hours_back: float = 9.0,
        hours_forward: float = 2.0,
        *,
        level: float = 0.95,
        gain: float = 0.5,
        now: datetime | None = None,
    ) -> pd.DataFrame:
        """Flag a memory important and strengthen the memories encoded around it (synaptic tagging).

        See :func:`memlab.store.lifecycle.flag_importance`. Returns the strengthened memories
        with their weights.
        """
        return lifecycle.flag_importance(
            self,
            memory_id,
            hours_back=hours_back,
            hours_forward=hours_forward,
            level=level,
            gain=gain,
            now=now,
        )

    def forget_sweep(self, now: datetime | None = None, dry_run: bool = True) -> pd.DataFrame:
        """Heat, band, risk, protection, action and state of every active memory.

        Applies the actions (compress, drop as archive) unless ``dry_run``.
        """
        return lifecycle.forget_sweep(self, now=now, dry_run=dry_run)

    def consolidate(
        self, now: datetime | None = None, *, min_group: int = 2, max_sentences: int = 3
    ) -> list[int]:
        """Merge cold unprotected memories by (entity, layer) into learning-layer summaries.

        Returns the ids of the new summaries.
        """
        return lifecycle.consolidate(
            self, now=now, min_group=min_group, max_sentences=max_sentences
        )

    def purge(self, memory_id: int) -> None:
        """Delete a memory and its history for good: the only hard delete."""
        lifecycle.purge(self, memory_id)

    def restore(self, memory_id: int, now: datetime | None = None) -> None:
        """Make an archived (or superseded) memory active again."""
        lifecycle.restore(self, memory_id, now=now)

    # ------------------------------------------------------------------ export / import
    def export_jsonl(self, path: str | Path) -> int:
        """Write every memory with its full event history as JSON lines; returns the count."""
        from memlab.store.transfer import export_jsonl

        return export_jsonl(self, path)

    def import_jsonl(self, path: str | Path, now: datetime | None = None) -> dict[int, int]:
        """Add the memories of an export (re-embedded, events kept); returns old id -> new id."""
        from memlab.store.transfer import import_jsonl

        return import_jsonl(self, path, now=now)


def _non_negative(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return v


__all__ = ["EmbedderMismatchError", "MemoryStore", "RRF_K", "SCHEMA_VERSION", "to_datetime"]
