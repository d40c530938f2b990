"""Vector index: annoy for the bulk, an exact numpy tail for everything newer.

An annoy index is immutable once built (``add_item`` on a built index silently corrupts
it, and a loaded one refuses adds), so:

- the index is built from the vectors stored in SQLite and covers every memory whose
  ``embed_seq`` is at most the manifest's ``max_seq``;
- vectors written later (new memories, re-embedded updates, rows written by another
  process) live in an in-memory *tail* searched exactly, refreshed from SQLite before each
  query; annoy hits for ids that are in the tail are ignored (their annoy vector is stale);
- a rebuild writes ``<db>.annoy`` and its manifest ``<db>.annoy.json`` to temporary files
  and renames them into place (``os.replace``);
- at open, the file is trusted only if the manifest (a JSON object of the expected shape)
  matches: same embedder name and dimension, the same store (the ``store_uid`` of the
  database's meta table: an index copied from another store is never used), the file's size
  and blake2b checksum, ``max_seq`` not beyond the database, and the *content checksum* —
  blake2b over (id, embed_seq, vector) of every row the index covers — equal to the same
  checksum computed from the database now. Otherwise (missing, malformed, foreign, damaged or
  stale: a covered row was re-embedded or purged since) it is rebuilt from SQLite;
- an index that cannot be saved (unwritable location, full disk) is built in memory and the
  store keeps working (the database is the source of truth); the failure is reported in
  :meth:`VectorIndex.info` and a warning.

Annoy's angular distance ``d`` between unit vectors gives the cosine ``1 - d**2 / 2``.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memlab.store.files import remove_orphans, temp_name
from memlab.store.schema import Executor
from memlab.store.validation import check_n_trees, check_save_policy, check_search_k

MANIFEST_VERSION = 2

#: Keys and types every saved index's manifest has (what :func:`trusted_manifest` checks).
SHARED_MANIFEST_TYPES: dict[str, type | tuple[type, ...]] = {
    "version": int,
    "embedder": str,
    "dim": int,
    "store_uid": (str, type(None)),
    "count": int,
    "max_seq": int,
    "size": int,
    "checksum": str,
    "content_checksum": str,
}

#: Keys and types of a manifest; any other shape is "malformed" and the index rebuilt.
_MANIFEST_TYPES: dict[str, type | tuple[type, ...]] = {
    **SHARED_MANIFEST_TYPES,
    "n_trees": int,
    "max_rowid": int,
}


def blob_to_vector(blob: bytes, dim: int) -> NDArray[np.float32]:
    vec = np.frombuffer(blob, dtype="<f4")
    if vec.shape != (dim,):
        raise ValueError(f"stored vector has {vec.size} values, expected {dim}")
    return vec


def vector_to_blob(vec: NDArray[np.floating]) -> bytes:
    return np.ascontiguousarray(vec, dtype="<f4").tobytes()


def content_checksum(conn: Executor, max_seq: int) -> tuple[str, int]:
    """blake2b over (id, embed_seq, vector bytes) of the rows with ``embed_seq <= max_seq``, in
    sequence order, and their count: what an index built at ``max_seq`` covers."""
    h = hashlib.blake2b(digest_size=16)
    n = 0
    for memory_id, seq, blob in conn.execute(
        "SELECT id, embed_seq, embedding FROM memories WHERE embed_seq <= ? ORDER BY embed_seq",
        (max_seq,),
    ):
        h.update(int(memory_id).to_bytes(8, "little", signed=True))
        h.update(int(seq).to_bytes(8, "little", signed=True))
        h.update(bytes(blob))
        n += 1
    return h.hexdigest(), n


def file_checksum(path: Path) -> str:
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def publish_index(tmp: Path, path: Path, manifest_path: Path, manifest: dict[str, Any]) -> None:
    """Put a saved index file ``tmp`` in place at ``path`` with its manifest.

    The manifest gets the file's ``size`` and ``checksum`` (what :func:`trusted_manifest`
    checks), is written to a temporary file, and both are renamed into place, the index first.
    The temporary manifest never outlives the call; ``tmp`` is the caller's to remove on error.
    """
    manifest = {**manifest, "size": tmp.stat().st_size, "checksum": file_checksum(tmp)}
    mtmp = temp_name(manifest_path)
    try:
        mtmp.write_text(json.dumps(manifest, indent=1))
        os.replace(tmp, path)
        os.replace(mtmp, manifest_path)
    finally:
        mtmp.unlink(missing_ok=True)


def trusted_manifest(
    path: Path | None,
    manifest_path: Path | None,
    *,
    types: dict[str, type | tuple[type, ...]],
    expected: dict[str, Any],
    mismatch: str,
    store_uid: str | None,
    conn: Executor,
    db_max: int,
) -> tuple[str | None, dict[str, Any] | None]:
    """(None, manifest) when a saved index file can be trusted, else (the reason, None).

    The checks every saved vector index shares (annoy's and HNSW's): both files present, the
    manifest a JSON object of the expected ``types``, its ``expected`` settings equal (else
    ``mismatch``), the same store, the file's size and checksum, ``max_seq`` not beyond the
    database and the content checksum of the covered rows equal to the database's now.
    """
    if path is None:
        return "in-memory", None
    assert manifest_path is not None
    if not path.exists() or not manifest_path.exists():
        return "missing", None
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError):
        return "corrupt manifest", None
    if not isinstance(manifest, dict) or any(
        not isinstance(manifest.get(k), t) or isinstance(manifest.get(k), bool)
        for k, t in types.items()
    ):
        return "malformed manifest", None
    if any(manifest[k] != v for k, v in expected.items()):
        return mismatch, None
    if manifest["store_uid"] != store_uid:
        return "index of another store", None
    try:
        if path.stat().st_size != manifest["size"] or file_checksum(path) != manifest["checksum"]:
            return "checksum mismatch", None
    except OSError:
        return "unreadable", None
    max_seq = manifest["max_seq"]
    if max_seq < 0 or max_seq > db_max:
        return "stale (index newer than database)", None
    if content_checksum(conn, max_seq) != (manifest["content_checksum"], manifest["count"]):
        return "stale (covered rows changed)", None
    return None, manifest


class VectorIndex:
    """Approximate (annoy) + exact (tail) nearest-neighbour search over stored vectors.

    Parameters
    ----------
    dim : int
        Vector dimension.
    embedder_name : str
        Recorded in the manifest; an index of another embedder is never used.
    path : Path, optional
        Where to save the annoy file (``<db>.annoy``); None keeps the index in memory only.
    n_trees : int
        annoy trees (more: better recall, bigger file, slower build).
    search_k : int
        Nodes annoy inspects per query (-1: annoy's default ``n_trees * n``).
    tail_min, tail_fraction : int, float
        :meth:`needs_rebuild` is true once the tail holds more than
        ``max(tail_min, tail_fraction * indexed)`` vectors.
    """

    #: The similarities returned are the stored float32 vectors' cosines (annoy holds them
    #: as they are, the tail is exact): nothing to re-score.
    scores_exact = True

    def __init__(
        self,
        dim: int,
        embedder_name: str,
        path: Path | None = None,
        *,
        n_trees: int = 50,
        search_k: int = -1,
        tail_min: int = 2000,
        tail_fraction: float = 0.5,
        seed: int = 20261130,
        store_uid: str | None = None,
    ) -> None:
        n_trees = check_n_trees(n_trees)
        search_k = check_search_k(search_k)
        tail_min, tail_fraction = check_save_policy(tail_min, tail_fraction)
        self.store_uid = store_uid
        self.dim = int(dim)
        self.embedder_name = embedder_name
        self.path = Path(path) if path is not None else None
        self.n_trees = int(n_trees)
        self.search_k = int(search_k)
        self.tail_min = int(tail_min)
        self.tail_fraction = float(tail_fraction)
        self.seed = int(seed)
        self._annoy: Any = None
        self.max_seq = 0  # embed_seq covered by the annoy index
        self.indexed = 0
        self._seen_seq = 0  # highest embed_seq loaded into the tail
        self._ids = np.zeros(0, dtype=np.int64)
        self._buf = np.zeros((0, self.dim), dtype=np.float32)
        self._n = 0
        self._pos: dict[int, int] = {}
        self.rebuilds = 0
        self.last_load: str = "none"
        self.last_error: str | None = None  # why the last index could not be saved

    # -- paths ---------------------------------------------------------------------------------
    @property
    def manifest_path(self) -> Path | None:
        return None if self.path is None else self.path.with_name(self.path.name + ".json")

    # -- open / load / rebuild -----------------------------------------------------------------
    def open(self, conn: Executor) -> None:
        """Load the saved index if it can be trusted, else rebuild it; then load the tail."""
        self._remove_orphans()
        db_max = int(conn.execute("SELECT COALESCE(MAX(embed_seq), 0) FROM memories").fetchone()[0])
        reason = self._try_load(conn, db_max)
        self.last_load = reason
        if reason != "loaded":
            self.rebuild(conn)
        else:
            self._reset_tail()
            self.refresh(conn)

    def _try_load(self, conn: Executor, db_max: int) -> str:
        problem, manifest = trusted_manifest(
            self.path,
            self.manifest_path,
            types=_MANIFEST_TYPES,
            expected={
                "version": MANIFEST_VERSION,
                "embedder": self.embedder_name,
                "dim": self.dim,
            },
            mismatch="manifest of another embedder or version",
            store_uid=self.store_uid,
            conn=conn,
            db_max=db_max,
        )
        if problem is not None:
            return problem
        assert manifest is not None
        max_seq = int(manifest["max_seq"])
        count = manifest["count"]
        if count == 0:
            return "empty"
        from annoy import AnnoyIndex

        index = AnnoyIndex(self.dim, "angular")
        try:
            index.load(str(self.path))
        except OSError:
            return "unloadable"
        if index.get_n_items() <= int(manifest["max_rowid"]) or index.f != self.dim:
            index.unload()
            return "unloadable (wrong size)"
        # A sample of covered rows must hold the same vectors as the database.
        sample = conn.execute(
            "SELECT id, embedding FROM memories WHERE embed_seq <= ?"
            " ORDER BY embed_seq DESC LIMIT 4",
            (max_seq,),
        ).fetchall()
        sample += conn.execute(
            "SELECT id, embedding FROM memories WHERE embed_seq <= ? ORDER BY embed_seq LIMIT 4",
            (max_seq,),
        ).fetchall()
        n_items = index.get_n_items()
        for row in sample:
            if int(row[0]) >= n_items:
                index.unload()
                return "stale (row missing from index)"
            stored = np.asarray(index.get_item_vector(int(row[0])), dtype=np.float32)
            if not np.allclose(stored, blob_to_vector(row[1], self.dim), atol=1e-6):
                index.unload()
                return "stale (vectors differ)"
        self._annoy = index
        self.max_seq = max_seq
        self.indexed = count
        return "loaded"

    def rebuild(self, conn: Executor) -> None:
        """Build a new annoy index from every stored vector; save it atomically when file-backed.

        When the file cannot be written (``OSError``: unwritable location, full disk), the
        index is built in memory instead, with a warning; :attr:`last_error` says why.
        """
        count, max_rowid = conn.execute("SELECT COUNT(*), MAX(id) FROM memories").fetchone()
        old = self._annoy
        if not count:
            self._annoy = None
            self.max_seq = 0
            self.indexed = 0
            self._reset_tail()
            try:
                self._remove_files()
            except OSError as error:
                self.last_error = f"could not remove the index files: {error}"
            if old is not None:
                old.unload()
            return
        # Unload the old index and free the tail first (the build reads every vector from
        # SQLite, and the tail is emptied after it anyway): holding them while building would
        # add their memory to the new index's.
        if old is not None:
            old.unload()
            self._annoy = None
        self.max_seq = 0
        self.indexed = 0
        self._reset_tail()
        try:
            try:
                self._build(conn, int(max_rowid), save=self.path is not None)
                self.last_error = None
            except OSError as error:
                if self.path is None:
                    raise
                self.last_error = f"index not saved to {self.path}: {error}"
                warnings.warn(
                    f"{self.last_error}; the index is kept in memory and rebuilt at the next open",
                    stacklevel=3,
                )
                self._build(conn, int(max_rowid), save=False)
        except BaseException:
            # No index: every vector goes to the exact tail until the next successful build.
            self.max_seq = 0
            self.indexed = 0
            self._reset_tail()
            raise

    def _build(self, conn: Executor, max_rowid: int, *, save: bool) -> None:
        from annoy import AnnoyIndex

        index = AnnoyIndex(self.dim, "angular")
        index.set_seed(self.seed)
        tmp = None
        if save:
            assert self.path is not None
            tmp = temp_name(self.path)
            index.on_disk_build(str(tmp))  # built straight into the file: less memory than save()
        try:
            max_seq = 0
            n_rows = 0
            h = hashlib.blake2b(digest_size=16)  # the content checksum (see content_checksum)
            # Streamed row by row (no list of every vector in memory), in sequence order.
            for memory_id, blob, seq in conn.execute(
                "SELECT id, embedding, embed_seq FROM memories ORDER BY embed_seq"
            ):
                index.add_item(int(memory_id), blob_to_vector(blob, self.dim))
                h.update(int(memory_id).to_bytes(8, "little", signed=True))
                h.update(int(seq).to_bytes(8, "little", signed=True))
                h.update(bytes(blob))
                max_seq = max(max_seq, int(seq))
                n_rows += 1
            index.build(self.n_trees, n_jobs=1)
            if tmp is not None:
                manifest = {
                    "version": MANIFEST_VERSION,
                    "embedder": self.embedder_name,
                    "dim": self.dim,
                    "store_uid": self.store_uid,
                    "n_trees": self.n_trees,
                    "count": n_rows,
                    "max_seq": max_seq,
                    "max_rowid": max_rowid,
                    "content_checksum": h.hexdigest(),
                }
                assert self.path is not None and self.manifest_path is not None
                publish_index(tmp, self.path, self.manifest_path, manifest)
        except BaseException:
            index.unload()
            raise
        finally:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
        self._annoy = index
        self.max_seq = max_seq
        self.indexed = n_rows
        self.rebuilds += 1
        self._reset_tail()
        self.refresh(conn)

    def _remove_orphans(self) -> None:
        """Delete temporary files left by builds of processes that no longer run (killed)."""
        if self.path is not None:
            remove_orphans(self.path)

    def _remove_files(self) -> None:
        for p in (self.path, self.manifest_path):
            if p is not None and p.exists():
                p.unlink()

    def maintain(self, conn: Executor) -> None:
        """Rebuild when the exact tail has grown too large (:meth:`needs_rebuild`)."""
        if self.needs_rebuild():
            self.rebuild(conn)

    def committed(self) -> None:
        """A write committed (the tail is reloaded from SQLite after a rollback instead)."""

    def close(self, conn: Executor | None = None) -> None:
        """Unload the index (``conn`` is unused: an annoy file is saved when built)."""
        if self._annoy is not None:
            self._annoy.unload()
            self._annoy = None

    # -- tail ----------------------------------------------------------------------------------
    def _reset_tail(self) -> None:
        self._ids = np.zeros(0, dtype=np.int64)
        self._buf = np.zeros((0, self.dim), dtype=np.float32)
        self._n = 0
        self._pos = {}
        self._seen_seq = self.max_seq

    def invalidate_tail(self) -> None:
        """Forget the tail (after a rolled-back write); the next refresh reloads it from SQLite."""
        self._reset_tail()

    @property
    def tail_size(self) -> int:
        return self._n

    def needs_rebuild(self) -> bool:
        return self._n > max(self.tail_min, self.tail_fraction * self.indexed)

    def refresh(self, conn: Executor) -> int:
        """Load vectors newer than those seen (own or other processes' writes); return the count."""
        rows = conn.execute(
            "SELECT id, embedding, embed_seq FROM memories WHERE embed_seq > ? ORDER BY embed_seq",
            (self._seen_seq,),
        ).fetchall()
        for memory_id, blob, seq in rows:
            self.put(int(memory_id), blob_to_vector(blob, self.dim), int(seq))
        return len(rows)

    def put(self, memory_id: int, vector: NDArray[np.float32], seq: int) -> None:
        """Add or replace one vector in the tail (just written with ``embed_seq = seq``)."""
        row = self._pos.get(memory_id)
        if row is None:
            if self._n == len(self._buf):
                cap = max(64, len(self._buf) * 3 // 2)
                buf = np.zeros((cap, self.dim), dtype=np.float32)
                buf[: self._n] = self._buf[: self._n]
                ids = np.full(cap, -1, dtype=np.int64)
                ids[: self._n] = self._ids[: self._n]
                self._buf, self._ids = buf, ids
            row = self._n
            self._n += 1
            self._pos[memory_id] = row
            self._ids[row] = memory_id
        self._buf[row] = vector
        self._seen_seq = max(self._seen_seq, seq)

    def drop(self, memory_id: int) -> None:
        """Remove a purged memory from the tail (annoy hits for it are filtered by the store)."""
        row = self._pos.pop(memory_id, None)
        if row is not None:
            self._ids[row] = -1
            self._buf[row] = 0.0

    # -- queries -------------------------------------------------------------------------------
    def query(self, vector: NDArray[np.float32], n: int) -> list[tuple[int, float]]:
        """Up to ``n`` (memory id, cosine similarity), best first."""
        return self.query_many(np.asarray(vector, dtype=np.float32)[None, :], n)[0]

    def query_many(self, vectors: NDArray[np.float32], n: int) -> list[list[tuple[int, float]]]:
        """:meth:`query` for each row of ``vectors`` (tail scored with one matrix product)."""
        q = np.asarray(vectors, dtype=np.float32)
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise ValueError(f"query vectors must have shape (m, {self.dim}), got {q.shape}")
        out: list[list[tuple[int, float]]] = []
        tail_sims = None
        block = 64  # queries per matrix product with the tail (bounds the memory it takes)
        for i in range(len(q)):
            if self._n and i % block == 0:
                tail_sims = q[i : i + block] @ self._buf[: self._n].T
            found: dict[int, float] = {}
            if self._annoy is not None and n > 0:
                ids, dists = self._annoy.get_nns_by_vector(
                    q[i], n, search_k=self.search_k, include_distances=True
                )
                for memory_id, dist in zip(ids, dists, strict=False):
                    if memory_id not in self._pos:
                        found[memory_id] = 1.0 - dist * dist / 2.0
            if tail_sims is not None and n > 0:
                sims = tail_sims[i % block]
                top = (
                    np.argpartition(-sims, min(n, len(sims) - 1))[:n]
                    if len(sims) > n
                    else np.arange(len(sims))
                )
                for j in top:
                    memory_id = int(self._ids[j])
                    if memory_id >= 0:
                        found[memory_id] = float(sims[j])
            ranked = sorted(found.items(), key=lambda kv: -kv[1])[:n]
            out.append(ranked)
        return out

    def info(self) -> dict[str, Any]:
        return {
            "kind": "annoy",
            "indexed": self.indexed,
            "tail": self._n,
            "max_seq": self.max_seq,
            "n_trees": self.n_trees,
            "search_k": self.search_k,
            "rebuilds": self.rebuilds,
            "last_load": self.last_load,
            "last_error": self.last_error,
            "path": None if self.path is None else str(self.path),
        }


__all__ = [
    "publish_index",
    "trusted_manifest",
    "MANIFEST_VERSION",
    "VectorIndex",
    "blob_to_vector",
    "content_checksum",
    "file_checksum",
    "vector_to_blob",
]
