"""What a vector index that takes every vector as it is written needs (the IVF cells).

The annoy index of :mod:`memlab.store.vectors` is immutable, so newer vectors wait in an exact
tail until a rebuild. A live index holds every stored vector in a structure that takes
additions and removals in place (:mod:`memlab.store.ivf`'s faiss cells); :class:`LiveIndex`
owns:

- :meth:`LiveIndex.put` adds a vector (a re-embedded memory's key is removed and added again),
  :meth:`LiveIndex.drop` removes a purged one; vectors written by other processes are added by
  :meth:`LiveIndex.refresh` (rows with a newer ``embed_seq``). The vectors put in one write are
  added in one batch before the structure is next read.
- Changes since the last :meth:`LiveIndex.committed` are journalled: a rolled-back write
  (:meth:`LiveIndex.invalidate_tail`) takes them out and the next refresh reloads those
  memories' stored vectors from SQLite.
- The structure only finds the candidates: the store re-scores them by the exact cosine of
  their stored float32 vectors when :attr:`LiveIndex.scores_exact` is False.
- It is saved to ``<db><suffix>`` with a manifest ``<db><suffix>.json`` (temporary files renamed
  into place) once the changes since the last save exceed ``max(tail_min, tail_fraction *
  saved count)`` (geometric, so the saves cost O(1) per vector), and on :meth:`LiveIndex.close`.
  At open the file is trusted under the checks of
  :func:`~memlab.store.vectors.trusted_manifest`; otherwise it is rebuilt from SQLite. A file
  that cannot be saved is a warning (:attr:`LiveIndex.last_error`); the database stays the
  source of truth.

A subclass states its structure: :meth:`LiveIndex._new_structure`, the manifest's
:attr:`LiveIndex.manifest_types` and :attr:`LiveIndex.manifest_version`, the settings a saved
file must have (:meth:`LiveIndex._settings`), how its file is written and read
(:meth:`LiveIndex._save_structure`, :meth:`LiveIndex._load_structure`), the search breadth
(:meth:`LiveIndex.default_ef`, :attr:`LiveIndex.CANDIDATE_EF`) and optionally what a rebuild
does before adding the vectors (:meth:`LiveIndex._prepare`). The structure has ``add(keys,
vectors)``, ``remove(key)``, ``search(queries, count, *, ef)``, ``len()``, ``ndim`` and
``close()``, and may have ``search_arrays(queries, count, *, ef)``, the search as arrays
(:meth:`LiveIndex.query_arrays`).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memlab.store.files import remove_orphans, temp_name
from memlab.store.schema import Executor
from memlab.store.validation import check_save_policy, check_search_k
from memlab.store.vectors import (
    blob_to_vector,
    content_checksum,
    publish_index,
    trusted_manifest,
)

#: Rows read from SQLite per block when building (bounds the memory the build takes).
BUILD_BLOCK = 10_000


def hits_to_arrays(
    lists: list[list[tuple[int, float]]], n: int
) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """Lists of (memory id, similarity) hits as two arrays of ``n`` columns, one row per list:
    ids (-1 past a list's end) and similarities."""
    keys = np.full((len(lists), n), -1, dtype=np.int64)
    sims = np.zeros((len(lists), n), dtype=np.float32)
    for r, hits in enumerate(lists):
        if hits:
            keys[r, : len(hits)] = [m for m, _ in hits[:n]]
            sims[r, : len(hits)] = [s for _, s in hits[:n]]
    return keys, sims


class LiveIndex:
    """Approximate nearest-neighbour search over every stored vector, changed in place.

    Parameters
    ----------
    dim : int
        Vector dimension.
    embedder_name : str
        Recorded in the manifest; a file of another embedder is never used.
    path : Path, optional
        Where to save the structure; None keeps it in memory only.
    search_k : int
        The search breadth (the subclass's meaning); -1: the subclass's default.
    tail_min, tail_fraction : int, float
        Save policy: the structure is saved once more than ``max(tail_min, tail_fraction *
        saved count)`` vectors changed since the last save.
    store_uid : str, optional
        The store's identity, recorded in the manifest; a file of another store is not used.
    """

    kind = "live"
    #: Search breadth of :meth:`query` when ``search_k`` is -1.
    DEFAULT_EF = 256
    #: Search breadth of :meth:`query_many` (the gate's candidates on ingest).
    CANDIDATE_EF = 64
    manifest_version = 1
    #: Keys and types of a manifest; any other shape is "malformed" and the index rebuilt.
    manifest_types: dict[str, type | tuple[type, ...]] = {}

    def __init__(
        self,
        dim: int,
        embedder_name: str,
        path: Path | None = None,
        *,
        search_k: int = -1,
        tail_min: int = 2000,
        tail_fraction: float = 0.5,
        store_uid: str | None = None,
    ) -> None:
        search_k = check_search_k(search_k)
        tail_min, tail_fraction = check_save_policy(tail_min, tail_fraction)
        self.dim = int(dim)
        self.embedder_name = embedder_name
        self.path = Path(path) if path is not None else None
        self.search_k = int(search_k)
        self.tail_min = int(tail_min)
        self.tail_fraction = float(tail_fraction)
        self.store_uid = store_uid
        self.n_trees = 0  # annoy's parameter; not used here (kept for info())
        self._structure: Any = None
        self.max_seq = 0  # embed_seq of the saved file
        self.indexed = 0  # vectors in the saved file
        self._seen_seq = 0  # highest embed_seq added
        self._committed_seq = 0
        self._journal: set[int] = set()  # ids changed since the last commit
        # Vectors put in this write, added in one batch before the structure is next read (one
        # multi-threaded ``add`` per ingest chunk instead of one call per vector).
        self._pending: dict[int, NDArray[np.float32]] = {}
        self._restore: set[int] = set()  # ids to reload from SQLite (after a rollback)
        self._unsaved = 0
        self.rebuilds = 0
        self.saves = 0
        self.last_load: str = "none"
        self.last_error: str | None = None

    #: A margin on the structure's scores, chosen from a measurement of how far they lie from
    #: the stored vectors' cosines: ingest does not read up front a candidate whose score
    #: trails its judged rank's by more (:meth:`~memlab.store.core.StoreCore.vector_candidates`);
    #: None: not measured, every one of the first candidates is read.
    SCORE_MARGIN: float | None = None

    # -- what a subclass states ----------------------------------------------------------------
    @property
    def scores_exact(self) -> bool:
        """Whether the similarities :meth:`query` returns are the stored vectors' cosines (else
        the caller re-scores the candidates)."""
        return False

    def _new_structure(self) -> Any:
        raise NotImplementedError

    def _expected(self) -> dict[str, Any]:
        """Manifest entries a saved file must have to be used (besides the shared checks)."""
        return {
            "version": self.manifest_version,
            "embedder": self.embedder_name,
            "dim": self.dim,
            **self._settings(),
        }

    def _settings(self) -> dict[str, Any]:
        """The structure's settings a saved file must have (its manifest records them)."""
        return {}

    def _save_structure(self, structure: Any, tmp: Path) -> dict[str, Any]:
        """Write ``structure`` to ``tmp``; return the manifest entries :meth:`_load_structure`
        needs besides :meth:`_expected`."""
        raise NotImplementedError

    def _load_structure(self, path: Path, manifest: dict[str, Any]) -> Any:
        """The structure saved at ``path`` with ``manifest``; raises ``OSError``,
        ``RuntimeError``, ``ValueError`` or ``TypeError`` when it cannot be read."""
        raise NotImplementedError

    def _adopt_saved_settings(self) -> None:
        """Take the settings not given from the saved manifest (before a load or rebuild)."""

    def _prepare(self, structure: Any, conn: Executor) -> None:
        """What a rebuild does to the new, empty structure before the vectors are added."""

    def _info_extra(self) -> dict[str, Any]:
        return {}

    def default_ef(self) -> int:
        """Search breadth of :meth:`query` when ``search_k`` is -1 (:attr:`DEFAULT_EF`)."""
        return self.DEFAULT_EF

    # -- paths ---------------------------------------------------------------------------------
    @property
    def manifest_path(self) -> Path | None:
        return None if self.path is None else self.path.with_name(self.path.name + ".json")

    def _saved_manifest(self) -> dict[str, Any]:
        """The saved manifest as it reads ({} when there is none or it is not a JSON object)."""
        if self.manifest_path is None:
            return {}
        try:
            manifest = json.loads(self.manifest_path.read_text())
        except (OSError, ValueError):
            return {}
        return manifest if isinstance(manifest, dict) else {}

    def _read_vectors(
        self, conn: Executor, ids: list[int]
    ) -> Iterator[tuple[int, NDArray[np.float32]]]:
        """(id, stored vector) of those ``ids`` that are memories, in blocks of 500 ids."""
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ",".join("?" for _ in part)
            for memory_id, blob in conn.execute(
                f"SELECT id, embedding FROM memories WHERE id IN ({marks})", part
            ):
                yield int(memory_id), blob_to_vector(blob, self.dim)

    # -- open / load / rebuild / save ----------------------------------------------------------
    def open(self, conn: Executor) -> None:
        """Load the saved file if it can be trusted, else rebuild; then add newer vectors."""
        if self.path is not None:
            remove_orphans(self.path)
        self._adopt_saved_settings()
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
            types=self.manifest_types,
            expected=self._expected(),
            mismatch="manifest of another embedder, version or index setting",
            store_uid=self.store_uid,
            conn=conn,
            db_max=db_max,
        )
        if problem is not None:
            return problem
        assert manifest is not None and self.path is not None
        try:
            structure = self._load_structure(self.path, manifest)
        except (OSError, RuntimeError, ValueError, TypeError):
            return "unloadable"
        if len(structure) != manifest["count"] or structure.ndim != self.dim:
            structure.close()
            return "unloadable (wrong size)"
        self._replace(structure)
        self._pending = {}
        self.max_seq = self._seen_seq = self._committed_seq = int(manifest["max_seq"])
        self.indexed = manifest["count"]
        self._unsaved = 0
        self._journal, self._restore = set(), set()
        return "loaded"

    def rebuild(self, conn: Executor, *, keep_current: bool = False) -> None:
        """Build anew from every stored vector (in blocks), then save when file-backed.

        ``keep_current``: the current structure answers until the new one is complete (twice
        the memory for the time of the build; a build that raises leaves it in place), else
        it is freed first.
        """
        if not keep_current:
            self._replace(None)
        self._pending = {}
        structure = self._new_structure()
        self._prepare(structure, conn)
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
            structure.add(keys, mat)
            seen = max(seen, max(int(r[2]) for r in rows))
            last_id = int(rows[-1][0])
        self._replace(structure)
        self._seen_seq = self._committed_seq = seen
        self._journal, self._restore = set(), set()
        self.max_seq = 0
        self.indexed = 0
        self._unsaved = len(structure)
        self.rebuilds += 1
        self.save(conn)

    def save(self, conn: Executor) -> None:
        """Write the structure and its manifest (temporary files renamed into place).

        Called between writes (nothing journalled). A failure to write (``OSError``) is a
        warning: the structure stays in memory and :attr:`last_error` says why.
        """
        self._flush()
        if self.path is None or self._structure is None:
            self.max_seq, self.indexed, self._unsaved = self._seen_seq, self._len(), 0
            return
        if not len(self._structure):
            self._remove_files()
            self.max_seq, self.indexed, self._unsaved = self._seen_seq, 0, 0
            return
        max_seq = self._seen_seq
        digest, count = content_checksum(conn, max_seq)
        tmp = temp_name(self.path)
        assert self.manifest_path is not None
        try:
            entries = self._save_structure(self._structure, tmp)
            manifest = {
                **self._expected(),
                **entries,
                "store_uid": self.store_uid,
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
                f"{self.last_error}; the index is kept in memory and rebuilt at the next open",
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
        """Whether enough changed since the last save to save again."""
        return self._unsaved > max(self.tail_min, self.tail_fraction * self.indexed)

    def maintain(self, conn: Executor) -> None:
        """Save when :meth:`needs_rebuild` (between writes)."""
        if self.needs_rebuild():
            self.save(conn)

    def close(self, conn: Executor | None = None) -> None:
        """Save unsaved changes (when a connection is given), then free the structure."""
        self._flush()
        if conn is not None and self._structure is not None and self._unsaved and not self._journal:
            try:
                self.save(conn)
            except Exception as error:  # the database is the truth: never fail a close
                self.last_error = f"index not saved at close: {error}"
        self._replace(None)

    def _replace(self, structure: Any) -> None:
        """Put ``structure`` in place of the current one, which is closed."""
        if self._structure is not None and self._structure is not structure:
            self._structure.close()
        self._structure = structure

    # -- changes -------------------------------------------------------------------------------
    def _len(self) -> int:
        self._flush()
        return 0 if self._structure is None else len(self._structure)

    def _remove(self, memory_id: int) -> None:
        if self._structure is not None:
            self._structure.remove(memory_id)

    def _flush(self) -> None:
        """Add the vectors put since the structure was last read, in one batch."""
        if not self._pending:
            return
        if self._structure is None:
            self._structure = self._new_structure()
        keys = np.fromiter(self._pending, dtype=np.uint64, count=len(self._pending))
        self._structure.add(keys, np.stack(list(self._pending.values())))
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
            for memory_id, vector in self._read_vectors(conn, sorted(self._restore)):
                self._remove(memory_id)
                self._pending[memory_id] = vector
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
        self._flush()  # committed rows: in the index now, never dropped by a rollback
        if not self._journal:
            self._committed_seq = self._seen_seq
        return n + len(rows)

    # -- queries -------------------------------------------------------------------------------
    def query(self, vector: NDArray[np.float32], n: int) -> list[tuple[int, float]]:
        """Up to ``n`` (memory id, cosine similarity), best first (breadth ``search_k``): the
        cosine of the vectors as the structure holds them (see :attr:`scores_exact`)."""
        ef = self.default_ef() if self.search_k < 0 else self.search_k
        return self.query_many(np.asarray(vector, dtype=np.float32)[None, :], n, ef=ef)[0]

    def query_many(
        self, vectors: NDArray[np.float32], n: int, *, ef: int | None = None
    ) -> list[list[tuple[int, float]]]:
        """:meth:`query` for each row of ``vectors`` (``ef``: search breadth, default
        :attr:`CANDIDATE_EF`: the gate's candidates are the near neighbours, which a narrow
        search finds)."""
        q, rows = self._query_rows(vectors, n)
        out: list[list[tuple[int, float]]] = [[] for _ in range(len(q))]
        if len(rows):
            ef = self.CANDIDATE_EF if ef is None else ef
            found = self._structure.search(q[rows], n, ef=ef)
            for r, hits in zip(rows.tolist(), found, strict=True):
                out[r] = hits
        return out

    def query_arrays(
        self, vectors: NDArray[np.float32], n: int, *, ef: int | None = None
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """:meth:`query_many` as two arrays of one row per query: memory ids (-1 past a row's
        hits) and similarities, best first; the structure's own arrays when it gives them
        (``search_arrays``), else its lists laid out so."""
        search_arrays = getattr(self._structure, "search_arrays", None)
        if search_arrays is None:
            return hits_to_arrays(self.query_many(vectors, n, ef=ef), max(n, 0))
        q, rows = self._query_rows(vectors, n)
        keys = np.full((len(q), max(n, 0)), -1, dtype=np.int64)
        sims = np.zeros((len(q), max(n, 0)), dtype=np.float32)
        if len(rows):
            ef = self.CANDIDATE_EF if ef is None else ef
            found_keys, found_sims = search_arrays(q[rows], n, ef=ef)
            keys[rows, : found_keys.shape[1]] = found_keys
            sims[rows, : found_sims.shape[1]] = found_sims
        return keys, sims

    def _query_rows(
        self, vectors: NDArray[np.float32], n: int
    ) -> tuple[NDArray[np.float32], NDArray[np.intp]]:
        """The query vectors (checked) and the rows of them to search, after the pending
        vectors are added: none when the index is empty or ``n`` is not positive, and never a
        zero vector (it has no neighbours)."""
        q = np.asarray(vectors, dtype=np.float32)
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise ValueError(f"query vectors must have shape (m, {self.dim}), got {q.shape}")
        self._flush()
        if self._structure is None or not len(self._structure) or n <= 0 or not len(q):
            return q, np.zeros(0, dtype=np.intp)
        return q, np.flatnonzero(np.any(q != 0, axis=1))

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
            **self._info_extra(),
            "rebuilds": self.rebuilds,
            "saves": self.saves,
            "last_load": self.last_load,
            "last_error": self.last_error,
            "path": None if self.path is None else str(self.path),
        }


__all__ = ["BUILD_BLOCK", "LiveIndex"]
