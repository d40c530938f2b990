"""Vector index option: an HNSW graph (usearch) that takes every vector as it is written.

The annoy index of :mod:`memlab.store.vectors` is immutable, so newer vectors wait in an exact
tail until a rebuild; an HNSW graph takes additions and removals in place, so there is no tail
and no rebuild while the store grows (``MemoryStore(..., index="hnsw")``, extra ``memlab[hnsw]``).
The graph may be split into shards that one query walks side by side
(``hnsw_shards``, :mod:`memlab.store.graph_shards`; one by default).

- Every stored vector is in the graph: :meth:`HnswIndex.put` adds it (a re-embedded memory's
  key is removed and added again), :meth:`HnswIndex.drop` removes a purged one; vectors written
  by other processes are added by :meth:`HnswIndex.refresh` (rows with a newer ``embed_seq``).
- Vectors are held in the graph quantised to 8-bit integers (``dtype="i8"``: 384 bytes per 384-d
  vector, a quarter of the float32 matrix); ``"f16"`` and ``"f32"`` can be chosen. The graph
  only finds the candidates: the store re-scores them by the exact cosine of their stored
  float32 vectors (:attr:`HnswIndex.scores_exact` is False), so a search's similarities, and
  the gate's, are the same whatever the graph holds. On the bench's 100k MiniLM vectors at
  degree 16 (``experiments/results/bench_store_minilm.md`` as of commit ``ce7f6fd``), the 8-bit
  graph re-scored reached about the recall@10 of the half-precision one at each breadth (0.958
  against 0.961 at ``ef`` 512), in a vector side of 6.0 ms against 6.9; it was built in 29 s
  against 48 s and takes 52 MB on disk against 89 MB.
- Changes since the last :meth:`HnswIndex.committed` are journalled: a rolled-back write
  (:meth:`HnswIndex.invalidate_tail`) takes them out and the next refresh reloads those
  memories' stored vectors from SQLite.
- The graph is saved to ``<db>.hnsw`` with a manifest ``<db>.hnsw.json`` (temporary files
  renamed into place) once the changes since the last save exceed
  ``max(tail_min, tail_fraction * saved count)`` (geometric, so the saves cost O(1) per
  vector), and on :meth:`HnswIndex.close`. At open the file is trusted under the same checks
  as the annoy index (embedder and dimension, ``store_uid``, file size and blake2b checksum,
  ``max_seq`` not beyond the database, content checksum of the covered rows); otherwise it is
  rebuilt from SQLite. A file that cannot be saved is a warning (:attr:`last_error`); the
  database stays the source of truth. The file holds the shards one after the other (the
  manifest records their sizes); a graph saved before shards existed (manifest version 1) is
  rebuilt once.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memlab.store.files import remove_orphans, temp_name
from memlab.store.graph_shards import MAX_SHARDS, ShardedGraph, is_shard_count
from memlab.store.schema import Executor
from memlab.store.validation import check_search_k
from memlab.store.vectors import (
    blob_to_vector,
    content_checksum,
    publish_index,
    trusted_manifest,
)

#: 2: the graph may be split into shards (``shards``, ``shard_sizes``); a graph saved with
#: version 1 (one graph) is rebuilt once at the next open.
MANIFEST_VERSION = 2

#: Keys and types of a manifest; any other shape is "malformed" and the graph rebuilt.
_MANIFEST_TYPES: dict[str, type | tuple[type, ...]] = {
    "version": int,
    "embedder": str,
    "dim": int,
    "store_uid": (str, type(None)),
    "dtype": str,
    "connectivity": int,
    "shards": int,
    "shard_sizes": list,
    "count": int,
    "max_seq": int,
    "size": int,
    "checksum": str,
    "content_checksum": str,
}

#: Rows read from SQLite per block when building (bounds the memory the build takes).
BUILD_BLOCK = 10_000


def _is_degree(value: object) -> bool:
    """Whether ``value`` is a degree or construction breadth a graph may have: an integer in
    [2, 4096]."""
    return (
        isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 2 <= value <= 4096
    )


class HnswIndex:
    """Approximate nearest-neighbour search over every stored vector in an HNSW graph (of shards).

    Parameters
    ----------
    dim : int
        Vector dimension.
    embedder_name : str
        Recorded in the manifest; a graph of another embedder is never used.
    path : Path, optional
        Where to save the graph (``<db>.hnsw``); None keeps it in memory only.
    search_k : int
        The graph's search breadth (``expansion_search``, "ef"); -1: :attr:`DEFAULT_EF`.
        Queries asking for more neighbours search at least that broadly.
    connectivity : int, optional
        HNSW graph degree ("M"). None (the default): the degree recorded with the saved graph
        (a rebuild keeps it), else :attr:`DEFAULT_CONNECTIVITY`. A saved graph of another
        degree than the one given is rebuilt.
    expansion_add : int, optional
        Construction breadth ("ef_construction"); None: 4 x ``connectivity``.
    dtype : {"i8", "f16", "f32"}, optional
        How vectors are held in the graph. None (the default): the saved graph's, else
        :attr:`DEFAULT_DTYPE`. A saved graph of another one than the one given is rebuilt.
    shards : int, optional
        Number of graphs the vectors are split into, walked side by side by one query
        (:class:`~memlab.store.graph_shards.ShardedGraph`). None (the default): the saved
        graph's, else :attr:`DEFAULT_SHARDS`. A saved graph of another count than the one
        given is rebuilt.
    tail_min, tail_fraction : int, float
        Save policy: the graph is saved once more than ``max(tail_min, tail_fraction *
        saved count)`` vectors changed since the last save.
    """

    DEFAULT_EF = 256
    #: Graph degree of a new graph when none is given. 32: against 16 it reaches a recall
    #: at a far narrower search, at about twice the time per add (its construction breadth is
    #: 4 x the degree). In the store at 1M hashed vectors recall@10 0.958 at ``ef`` 2048 where
    #: degree 16 needed 8192 in an earlier run (28.5 against 84.9 ms); at 100k MiniLM 0.968
    #: at ``ef`` 256, where degree 16 needed 512 (vector side 1.95 against 4.56 ms);
    #: ``experiments/results/bench_store_1m_degree32.md``, ``bench_store_minilm_degree32.md``.
    DEFAULT_CONNECTIVITY = 32
    #: How a new graph holds vectors when nothing is given (8-bit: the candidates are
    #: re-scored from the stored float32 vectors, see the module's notes).
    DEFAULT_DTYPE = "i8"
    DTYPES = ("i8", "f16", "f32")
    #: Graphs a new graph is split into when nothing is given: 1. Shards walked side by side
    #: did not pay at 1M hashed vectors on 2 cores (see :mod:`memlab.store.graph_shards`).
    DEFAULT_SHARDS = 1
    #: Search breadth of :meth:`query_many` (the gate's candidates on ingest).
    CANDIDATE_EF = 64
    kind = "hnsw"

    def __init__(
        self,
        dim: int,
        embedder_name: str,
        path: Path | None = None,
        *,
        search_k: int = -1,
        connectivity: int | None = None,
        expansion_add: int | None = None,
        dtype: str | None = None,
        shards: int | None = None,
        tail_min: int = 2000,
        tail_fraction: float = 0.5,
        store_uid: str | None = None,
    ) -> None:
        search_k = check_search_k(search_k)
        if dtype is not None and dtype not in self.DTYPES:
            raise ValueError(f"dtype must be one of {self.DTYPES}, got {dtype!r}")
        for label, v in (("connectivity", connectivity), ("expansion_add", expansion_add)):
            if v is None:
                continue
            if not _is_degree(v):
                raise ValueError(f"{label} must be an integer in [2, 4096], got {v!r}")
        if shards is not None and not is_shard_count(shards):
            raise ValueError(f"shards must be an integer in [1, {MAX_SHARDS}], got {shards!r}")
        if (
            isinstance(tail_min, bool)
            or not isinstance(tail_min, (int, np.integer))
            or tail_min < 0
        ):
            raise ValueError(f"tail_min must be an integer >= 0, got {tail_min!r}")
        if isinstance(tail_fraction, bool) or not 0 <= float(tail_fraction) <= 100:
            raise ValueError(f"tail_fraction must be a number in [0, 100], got {tail_fraction!r}")
        self.dim = int(dim)
        self.embedder_name = embedder_name
        self.path = Path(path) if path is not None else None
        self.search_k = int(search_k)
        #: Whether the degree and the dtype were given (a saved graph of another one is
        #: rebuilt) or are read from the saved graph's manifest at :meth:`open`.
        self.connectivity_given = connectivity is not None
        self.dtype_given = dtype is not None
        self.shards_given = shards is not None
        self.shards = int(shards or self.DEFAULT_SHARDS)
        self.connectivity = int(connectivity or self.DEFAULT_CONNECTIVITY)
        self._expansion_add = None if expansion_add is None else int(expansion_add)
        self.dtype = dtype or self.DEFAULT_DTYPE
        self.tail_min = int(tail_min)
        self.tail_fraction = float(tail_fraction)
        self.store_uid = store_uid
        self.n_trees = 0  # annoy's parameter; not used by a graph (kept for info())
        self._graph: ShardedGraph | None = None
        self.max_seq = 0  # embed_seq of the saved graph
        self.indexed = 0  # vectors in the saved graph
        self._seen_seq = 0  # highest embed_seq added to the graph
        self._committed_seq = 0
        self._journal: set[int] = set()  # ids changed since the last commit
        # Vectors put in this write, added to the graph in one batch before the graph is next
        # read (one multi-threaded ``add`` per ingest chunk instead of one call per vector).
        self._pending: dict[int, NDArray[np.float32]] = {}
        self._restore: set[int] = set()  # ids to reload from SQLite (after a rollback)
        self._unsaved = 0
        self.rebuilds = 0
        self.saves = 0
        self.last_load: str = "none"
        self.last_error: str | None = None

    @property
    def scores_exact(self) -> bool:
        """Whether the similarities :meth:`query` returns are the stored vectors' cosines
        (float32 graph) or the quantised graph's, to be re-scored by the caller."""
        return self.dtype == "f32"

    @property
    def expansion_add(self) -> int:
        """Construction breadth of the graph's adds (given, else 4 x :attr:`connectivity`)."""
        return self._expansion_add or 4 * self.connectivity

    # -- paths ---------------------------------------------------------------------------------
    @property
    def manifest_path(self) -> Path | None:
        return None if self.path is None else self.path.with_name(self.path.name + ".json")

    def _new_graph(self) -> ShardedGraph:
        return ShardedGraph(
            self.dim,
            dtype=self.dtype,
            connectivity=self.connectivity,
            expansion_add=self.expansion_add,
            shards=self.shards,
        )

    def _saved_settings(self) -> dict[str, Any]:
        """The degree, dtype and shard count recorded in the saved graph's manifest (those
        readable)."""
        if self.manifest_path is None:
            return {}
        try:
            manifest = json.loads(self.manifest_path.read_text())
        except (OSError, ValueError):
            return {}
        if not isinstance(manifest, dict):
            return {}
        out: dict[str, Any] = {}
        degree = manifest.get("connectivity")
        if _is_degree(degree):
            out["connectivity"] = degree
        if manifest.get("dtype") in self.DTYPES:
            out["dtype"] = manifest["dtype"]
        if is_shard_count(manifest.get("shards")):
            out["shards"] = manifest["shards"]
        return out

    # -- open / load / rebuild / save ----------------------------------------------------------
    def open(self, conn: Executor) -> None:
        """Load the saved graph if it can be trusted, else rebuild it; then add newer vectors."""
        if self.path is not None:
            remove_orphans(self.path)
        saved = self._saved_settings()  # the saved graph's settings, kept by a rebuild too
        if not self.connectivity_given:
            self.connectivity = saved.get("connectivity", self.DEFAULT_CONNECTIVITY)
        if not self.dtype_given:
            self.dtype = saved.get("dtype", self.DEFAULT_DTYPE)
        if not self.shards_given:
            self.shards = saved.get("shards", self.DEFAULT_SHARDS)
        db_max = int(conn.execute("SELECT COALESCE(MAX(embed_seq), 0) FROM memories").fetchone()[0])
        reason = self._try_load(conn, db_max)
        self.last_load = reason
        if reason != "loaded":
            self.rebuild(conn)
        else:
            self.refresh(conn)
            self._committed_seq = self._seen_seq

    def _try_load(self, conn: Executor, db_max: int) -> str:
        problem, manifest = trusted_manifest(
            self.path,
            self.manifest_path,
            types=_MANIFEST_TYPES,
            expected={
                "version": MANIFEST_VERSION,
                "embedder": self.embedder_name,
                "dim": self.dim,
                "dtype": self.dtype,
                "connectivity": self.connectivity,
                "shards": self.shards,
            },
            mismatch="manifest of another embedder, version or graph setting",
            store_uid=self.store_uid,
            conn=conn,
            db_max=db_max,
        )
        if problem is not None:
            return problem
        assert manifest is not None
        max_seq = int(manifest["max_seq"])
        graph = self._new_graph()
        try:
            graph.load(self.path, manifest["shard_sizes"])
        except (OSError, RuntimeError, ValueError, TypeError):
            return "unloadable"
        if len(graph) != manifest["count"] or graph.ndim != self.dim:
            return "unloadable (wrong size)"
        self._replace_graph(graph)
        self._pending = {}
        self.max_seq = self._seen_seq = self._committed_seq = max_seq
        self.indexed = manifest["count"]
        self._unsaved = 0
        self._journal, self._restore = set(), set()
        return "loaded"

    def rebuild(self, conn: Executor) -> None:
        """Build a new graph from every stored vector (in blocks), then save it when file-backed."""
        self._replace_graph(None)
        self._pending = {}
        graph = self._new_graph()
        seen = 0
        last_id = -1
        while True:
            rows = conn.execute(
                "SELECT id, embedding, embed_seq FROM memories WHERE id > ? ORDER BY id LIMIT ?",
                (last_id, BUILD_BLOCK),
            ).fetchall()
            if not rows:
                break
            keys = np.fromiter((r[0] for r in rows), dtype=np.uint64, count=len(rows))
            mat = np.stack([blob_to_vector(r[1], self.dim) for r in rows])
            graph.add(keys, mat)
            seen = max(seen, max(int(r[2]) for r in rows))
            last_id = int(rows[-1][0])
        self._replace_graph(graph)
        self._seen_seq = self._committed_seq = seen
        self._journal, self._restore = set(), set()
        self.max_seq = 0
        self.indexed = 0
        self._unsaved = len(graph)
        self.rebuilds += 1
        self.save(conn)

    def save(self, conn: Executor) -> None:
        """Write the graph and its manifest (temporary files renamed into place).

        Called between writes (nothing journalled). A failure to write (``OSError``) is a
        warning: the graph stays in memory and :attr:`last_error` says why.
        """
        self._flush()
        if self.path is None or self._graph is None:
            self.max_seq, self.indexed, self._unsaved = self._seen_seq, self._len(), 0
            return
        if not len(self._graph):
            self._remove_files()
            self.max_seq, self.indexed, self._unsaved = self._seen_seq, 0, 0
            return
        max_seq = self._seen_seq
        digest, count = content_checksum(conn, max_seq)
        tmp = temp_name(self.path)
        assert self.manifest_path is not None
        try:
            shard_sizes = self._graph.save(tmp)
            manifest = {
                "version": MANIFEST_VERSION,
                "embedder": self.embedder_name,
                "dim": self.dim,
                "store_uid": self.store_uid,
                "dtype": self.dtype,
                "connectivity": self.connectivity,
                "shards": self.shards,
                "shard_sizes": shard_sizes,
                "count": count,
                "max_seq": max_seq,
                "content_checksum": digest,
            }
            publish_index(tmp, self.path, self.manifest_path, manifest)
            self.last_error = None
            self.saves += 1
        except (OSError, RuntimeError) as error:
            self.last_error = f"index not saved to {self.path}: {error}"
            warnings.warn(
                f"{self.last_error}; the graph is kept in memory and rebuilt at the next open",
                stacklevel=3,
            )
        finally:
            tmp.unlink(missing_ok=True)
        self.max_seq, self.indexed, self._unsaved = max_seq, count, 0

    def _remove_files(self) -> None:
        for p in (self.path, self.manifest_path):
            if p is not None and p.exists():
                try:
                    p.unlink()
                except OSError as error:
                    self.last_error = f"could not remove the index files: {error}"

    def needs_rebuild(self) -> bool:
        """Whether enough changed since the last save to save the graph again."""
        return self._unsaved > max(self.tail_min, self.tail_fraction * self.indexed)

    def maintain(self, conn: Executor) -> None:
        """Save the graph when :meth:`needs_rebuild` (between writes)."""
        if self.needs_rebuild():
            self.save(conn)

    def close(self, conn: Executor | None = None) -> None:
        """Save unsaved changes (when a connection is given), then free the graph."""
        self._flush()
        if conn is not None and self._graph is not None and self._unsaved and not self._journal:
            try:
                self.save(conn)
            except Exception as error:  # the database is the truth: never fail a close
                self.last_error = f"index not saved at close: {error}"
        self._replace_graph(None)

    def _replace_graph(self, graph: ShardedGraph | None) -> None:
        """Put ``graph`` in place of the current one, whose query threads are stopped."""
        if self._graph is not None and self._graph is not graph:
            self._graph.close()
        self._graph = graph

    # -- changes -------------------------------------------------------------------------------
    def _len(self) -> int:
        self._flush()
        return 0 if self._graph is None else len(self._graph)

    def _remove(self, memory_id: int) -> None:
        if self._graph is not None:
            self._graph.remove(memory_id)

    def _flush(self) -> None:
        """Add the vectors put since the graph was last read, in one batch."""
        if not self._pending:
            return
        if self._graph is None:
            self._graph = self._new_graph()
        keys = np.fromiter(self._pending, dtype=np.uint64, count=len(self._pending))
        self._graph.add(keys, np.stack(list(self._pending.values())))
        self._pending = {}

    def put(self, memory_id: int, vector: NDArray[np.float32], seq: int) -> None:
        """Add or replace one vector (just written with ``embed_seq = seq``)."""
        self._pending.pop(memory_id, None)
        self._remove(memory_id)
        self._pending[memory_id] = np.asarray(vector, dtype=np.float32)
        self._journal.add(memory_id)
        self._seen_seq = max(self._seen_seq, seq)
        self._unsaved += 1

    def drop(self, memory_id: int) -> None:
        """Remove a purged memory's vector."""
        self._pending.pop(memory_id, None)
        self._remove(memory_id)
        self._journal.add(memory_id)
        self._unsaved += 1

    def committed(self) -> None:
        """The write that made the journalled changes committed: forget the journal."""
        self._flush()
        self._journal = set()
        self._committed_seq = self._seen_seq

    def invalidate_tail(self) -> None:
        """Undo the journalled changes of a rolled-back write (the next refresh reloads them)."""
        self._pending = {}
        for memory_id in self._journal:
            self._remove(memory_id)
        self._restore |= self._journal
        self._journal = set()
        self._seen_seq = self._committed_seq

    @property
    def tail_size(self) -> int:
        return 0

    def refresh(self, conn: Executor) -> int:
        """Add vectors newer than those seen (own or other processes' writes); return the count."""
        n = 0
        if self._restore:
            wanted = sorted(self._restore)
            for i in range(0, len(wanted), 500):
                part = wanted[i : i + 500]
                marks = ",".join("?" for _ in part)
                for memory_id, blob in conn.execute(
                    f"SELECT id, embedding FROM memories WHERE id IN ({marks})", part
                ):
                    self._remove(int(memory_id))
                    self._pending[int(memory_id)] = blob_to_vector(blob, self.dim)
                    n += 1
            self._flush()
            self._restore = set()
        rows = conn.execute(
            "SELECT id, embedding, embed_seq FROM memories WHERE embed_seq > ? ORDER BY embed_seq",
            (self._seen_seq,),
        ).fetchall()
        for memory_id, blob, seq in rows:
            self._remove(int(memory_id))
            self._pending[int(memory_id)] = blob_to_vector(blob, self.dim)
            self._seen_seq = max(self._seen_seq, int(seq))
            self._unsaved += 1
        self._flush()  # committed rows: in the graph now, never dropped by a rollback
        if not self._journal:
            self._committed_seq = self._seen_seq
        return n + len(rows)

    # -- queries -------------------------------------------------------------------------------
    def query(self, vector: NDArray[np.float32], n: int) -> list[tuple[int, float]]:
        """Up to ``n`` (memory id, cosine similarity), best first (breadth ``search_k``): the
        cosine of the vectors as the graph holds them (see :attr:`scores_exact`)."""
        ef = self.DEFAULT_EF if self.search_k < 0 else self.search_k
        return self.query_many(np.asarray(vector, dtype=np.float32)[None, :], n, ef=ef)[0]

    def query_many(
        self, vectors: NDArray[np.float32], n: int, *, ef: int | None = None
    ) -> list[list[tuple[int, float]]]:
        """:meth:`query` for each row of ``vectors`` (``ef``: search breadth, default
        :attr:`CANDIDATE_EF`: the gate's candidates are the near neighbours, which a narrow
        search finds)."""
        q = np.asarray(vectors, dtype=np.float32)
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise ValueError(f"query vectors must have shape (m, {self.dim}), got {q.shape}")
        self._flush()
        if self._graph is None or not len(self._graph) or n <= 0 or not len(q):
            return [[] for _ in range(len(q))]
        if ef is None:
            ef = self.CANDIDATE_EF
        out: list[list[tuple[int, float]]] = [[] for _ in range(len(q))]
        rows = np.flatnonzero(np.any(q != 0, axis=1))  # a zero query vector has no neighbours
        if not len(rows):
            return out
        found = self._graph.search(q[rows], n, ef=ef)
        for r, hits in zip(rows.tolist(), found, strict=True):
            out[r] = hits
        return out

    def info(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "indexed": self._len(),
            "saved": self.indexed,
            "unsaved": self._unsaved,
            "tail": 0,
            "max_seq": self.max_seq,
            "n_trees": self.n_trees,
            "search_k": self.search_k,
            # the graph's own degree (a loaded graph keeps the one it was built with)
            "connectivity": self.connectivity if self._graph is None else self._graph.connectivity,
            "shards": self.shards,
            "dtype": self.dtype,
            "rebuilds": self.rebuilds,
            "saves": self.saves,
            "last_load": self.last_load,
            "last_error": self.last_error,
            "path": None if self.path is None else str(self.path),
        }


__all__ = ["MANIFEST_VERSION", "HnswIndex"]
