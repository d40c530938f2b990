"""Vector search: the :class:`VectorIndex` protocol, three indexes, and :class:`IndexFile`,
which keeps one in step with SQLite.

:class:`ExactIndex` is one float32 matrix product (exact; fastest while the store is small).
:class:`AnnoyIndex` adds annoy trees once its exact tail outgrows :attr:`IndexOptions.switch_at`.
:class:`IvfIndex` (extra ``memlab[ivf]``) holds faiss inverted-file cells of float32 vectors for
a million memories.

SQLite is the source of truth: each vector write takes the next ``embed_seq``, and the index
reads newer rows (other processes' writes) before a query. Building trees or cells reads the
vectors back from SQLite in blocks rather than copying them out of the index, and a bulk write
(an import) leaves its vectors to one build after it commits. The index is saved to
``<db>.<kind>`` with a manifest ``<db>.<kind>.json`` and trusted on opening only when the
manifest matches the embedder, the store, the file's checksum and a checksum of every row it
covers; otherwise it is rebuilt from SQLite.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from memlab.store.files import remove_orphans, temp_name
from memlab.store.schema import Executor
from memlab.store.validation import check_count

Ids = NDArray[np.int64]
Vectors = NDArray[np.float32]
#: Reads every vector an index holds again, in blocks (from SQLite, the source of truth).
Stored = Callable[[], Iterable[tuple[Ids, Vectors]]]

#: Vector index kinds.
INDEX_KINDS = ("exact", "annoy", "ivf")
MANIFEST_VERSION = 3
#: Nodes an annoy query inspects by default.
ANNOY_SEARCH_K = 80_000
#: Rows read from SQLite per block when building.
BUILD_BLOCK = 10_000


@dataclass(frozen=True)
class IndexOptions:
    """How the store searches vectors.

    Parameters
    ----------
    kind : {"annoy", "exact", "ivf"}
        ``"annoy"`` (default): exact search until ``switch_at`` vectors, annoy trees plus an exact
        tail beyond; ``"exact"``: always exact; ``"ivf"``: faiss cells (extra ``memlab[ivf]``).
    n_trees : int
        annoy trees (more: better recall, a larger file and a slower build).
    search_k : int
        annoy's nodes inspected per query, or the IVF cells scanned; -1 for the default
        (annoy: :data:`ANNOY_SEARCH_K`, the breadth the switch point was chosen at; IVF: an
        eighth of the cells).
    switch_at : int
        Vectors at which annoy trees are first built (the rule: :mod:`memlab.store.index`).
    """

    kind: str = "annoy"
    n_trees: int = 50
    search_k: int = -1
    switch_at: int = 30_000

    def __post_init__(self) -> None:
        if self.kind not in INDEX_KINDS:
            raise ValueError(f"index kind must be one of {INDEX_KINDS}, got {self.kind!r}")
        check_count(self.n_trees, "n_trees")
        check_count(self.switch_at, "switch_at")
        if self.search_k != -1:
            check_count(self.search_k, "search_k (-1 for the default)")

    def make(self, dim: int) -> VectorIndex:
        """A new, empty index of this kind."""
        if self.kind == "exact":
            return ExactIndex(dim)
        if self.kind == "ivf":
            return IvfIndex(dim, nprobe=self.search_k)
        search_k = ANNOY_SEARCH_K if self.search_k == -1 else self.search_k
        return AnnoyIndex(dim, self.n_trees, search_k, self.switch_at)


class VectorIndex(Protocol):
    """What the store needs of a vector index (unit vectors; cosine = inner product)."""

    def add(self, ids: Ids, vectors: Vectors) -> None:
        """Add vectors under ``ids`` (an id already held is replaced)."""

    def remove(self, ids: Ids) -> None:
        """Remove ``ids`` (ids not held are ignored)."""

    def query(self, vector: Vectors, k: int) -> tuple[Ids, Vectors]:
        """Up to ``k`` ids and their exact cosines with ``vector``, best first, ties by id."""

    def query_many(self, vectors: Vectors, k: int) -> list[tuple[Ids, Vectors]]:
        """:meth:`query` of each row of ``vectors`` (a batch: one matrix product)."""

    def maintain(self, stored: Stored) -> bool:
        """Deferred work between writes (build trees, cluster cells); whether it did any. The
        vectors are read again from ``stored`` rather than copied out of the index."""

    def build(self, stored: Stored, n: int) -> None:
        """Hold exactly the ``n`` vectors of ``stored()``, in place of any held."""

    def save(self, path: Path) -> None:
        """Write the index to ``path``."""

    def load(self, path: Path) -> None:
        """Read an index written by :meth:`save`."""

    def __len__(self) -> int: ...


def _best(ids: Ids, sims: Vectors, k: int) -> tuple[Ids, Vectors]:
    """The ``k`` best of (ids, sims): highest similarity first, ties by id."""
    if k < len(ids):
        keep = np.argpartition(-sims, k - 1)[:k] if k > 0 else np.zeros(0, dtype=np.int64)
        kth = sims[keep].min() if k > 0 else np.inf
        keep = np.flatnonzero(sims >= kth)  # with every tie of the k-th
        ids, sims = ids[keep], sims[keep]
    order = np.lexsort((ids, -sims))[:k]
    return ids[order], sims[order]


def _is_exact_file(path: Path) -> bool:
    """Whether ``path`` holds an :class:`ExactIndex` (saved before trees or cells were built)."""
    with open(path, "rb") as fh:
        return fh.read(6) == b"\x93NUMPY"


def _query_one(index: VectorIndex, vector: Vectors, k: int) -> tuple[Ids, Vectors]:
    return index.query_many(np.asarray(vector, dtype=np.float32)[None, :], k)[0]


class ExactIndex:
    """Every vector in one float32 matrix; a query is one matrix product."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._ids = np.zeros(0, dtype=np.int64)
        self._mat = np.zeros((0, dim), dtype=np.float32)
        self._n = 0
        self._row: dict[int, int] = {}

    def __len__(self) -> int:
        return self._n

    def __contains__(self, memory_id: int) -> bool:
        return memory_id in self._row

    def items(self) -> tuple[Ids, Vectors]:
        """(ids, vectors) held, a view."""
        return self._ids[: self._n], self._mat[: self._n]

    def add(self, ids: Ids, vectors: Vectors) -> None:
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        need = self._n + len(ids)
        if need > len(self._mat):
            cap = max(64, need, len(self._mat) * 3 // 2)
            self._mat, self._ids = np.resize(self._mat, (cap, self.dim)), np.resize(self._ids, cap)
        for memory_id, vec in zip(ids.tolist(), vectors, strict=True):
            row = self._row.get(memory_id)
            if row is None:
                row = self._row[memory_id] = self._n
                self._ids[row] = memory_id
                self._n += 1
            self._mat[row] = vec

    def remove(self, ids: Ids) -> None:
        for memory_id in np.asarray(ids, dtype=np.int64).reshape(-1).tolist():
            row = self._row.pop(memory_id, None)
            if row is None:
                continue
            last = self._n - 1
            if row != last:  # the last row moves into the gap
                self._ids[row], self._mat[row] = self._ids[last], self._mat[last]
                self._row[int(self._ids[row])] = row
            self._n = last

    query = _query_one

    def query_many(self, vectors: Vectors, k: int) -> list[tuple[Ids, Vectors]]:
        ids, mat = self.items()
        blocks = (vectors[start : start + 64] @ mat.T for start in range(0, len(vectors), 64))
        return [_best(ids, row, k) for sims in blocks for row in sims]

    def maintain(self, stored: Stored) -> bool:
        return False

    def build(self, stored: Stored, n: int) -> None:
        self.__init__(self.dim)  # type: ignore[misc]
        for ids, vectors in stored():
            self.add(ids, vectors)

    def save(self, path: Path) -> None:
        with open(path, "wb") as fh:
            np.save(fh, self._ids[: self._n])
            np.save(fh, self._mat[: self._n])

    def load(self, path: Path) -> None:
        with open(path, "rb") as fh:
            ids, mat = np.load(fh), np.load(fh)
        if mat.shape != (len(ids), self.dim):
            raise ValueError(f"{path}: vectors of shape {mat.shape}, expected dim {self.dim}")
        self.__init__(self.dim)  # type: ignore[misc]
        self.add(ids, mat)


class AnnoyIndex:
    """annoy trees over the vectors held when they were built, an exact tail of the rest.

    An annoy index takes no vector once built, so a vector added later (or replacing one in the
    trees) goes to the tail, and the trees' copy of a replaced or removed id is ignored. The
    cosine of unit vectors at annoy's angular distance ``d`` is ``1 - d**2 / 2``.
    """

    def __init__(self, dim: int, n_trees: int = 50, search_k: int = -1, switch_at: int = 30_000):
        self.dim, self.n_trees, self.search_k, self.switch_at = dim, n_trees, search_k, switch_at
        self._trees: Any = None
        self._in_trees: set[int] = set()
        self._ignored: set[int] = set()  # ids in the trees that were replaced or removed
        self.tail = ExactIndex(dim)

    def __len__(self) -> int:
        return len(self._in_trees) - len(self._ignored) + len(self.tail)

    def add(self, ids: Ids, vectors: Vectors) -> None:
        self._ignored |= self._in_trees.intersection(np.ravel(ids).tolist())
        self.tail.add(ids, vectors)

    def remove(self, ids: Ids) -> None:
        self._ignored |= self._in_trees.intersection(np.ravel(ids).tolist())
        self.tail.remove(ids)

    def query(self, vector: Vectors, k: int) -> tuple[Ids, Vectors]:
        ids, sims = self.tail.query(vector, k)
        if self._trees is not None and k > 0:
            found, dists = self._trees.get_nns_by_vector(
                vector, k + len(self._ignored), search_k=self.search_k, include_distances=True
            )
            keep = [i for i, m in enumerate(found) if m not in self._ignored and m not in self.tail]
            d = np.asarray(dists, dtype=np.float32)[keep]
            ids = np.concatenate([ids, np.asarray(found, dtype=np.int64)[keep]])
            sims = np.concatenate([sims, 1 - d * d / 2])
        return _best(ids, sims, k)

    def query_many(self, vectors: Vectors, k: int) -> list[tuple[Ids, Vectors]]:
        return [self.query(v, k) for v in vectors]

    def items(self) -> tuple[Ids, Vectors]:
        """(ids, vectors) of every vector held (the trees' read back, then the tail's)."""
        kept = sorted(self._in_trees - self._ignored)
        ids, mat = self.tail.items()
        vecs = np.zeros((len(kept) + len(ids), self.dim), np.float32)
        for row, memory_id in enumerate(kept):  # a row at a time: no Python list of them all
            vecs[row] = self._trees.get_item_vector(memory_id)
        vecs[len(kept) :] = mat
        return np.concatenate([np.asarray(kept, dtype=np.int64), ids]), vecs

    def maintain(self, stored: Stored) -> bool:
        """Build the trees again once the tail and the ignored ids outgrow
        ``max(switch_at, trees / 4)``."""
        if len(self.tail) + len(self._ignored) <= max(self.switch_at, len(self._in_trees) // 4):
            return False
        self._build(stored())
        return True

    def build(self, stored: Stored, n: int) -> None:
        self.__init__(self.dim, self.n_trees, self.search_k, self.switch_at)  # type: ignore[misc]
        self.tail.build(stored, n)
        self.maintain(stored)

    def _build(self, blocks: Iterable[tuple[Ids, Vectors]]) -> None:
        from annoy import AnnoyIndex as Annoy

        trees, held = Annoy(self.dim, "angular"), set()
        trees.set_seed(0)
        for ids, vectors in blocks:
            for memory_id, vec in zip(ids.tolist(), vectors, strict=True):
                trees.add_item(memory_id, vec)
            held.update(ids.tolist())
        trees.build(self.n_trees, n_jobs=1)
        if self._trees is not None:
            self._trees.unload()
        self._trees, self._in_trees, self._ignored = trees, held, set()
        self.tail = ExactIndex(self.dim)

    def save(self, path: Path) -> None:
        """The trees (built over the tail first), or an exact file while there are none."""
        if self._trees is None:
            self.tail.save(path)
            return
        if len(self.tail) or self._ignored:
            self._build([self.items()])
        self._trees.save(str(path))

    def load(self, path: Path) -> None:
        self.__init__(self.dim, self.n_trees, self.search_k, self.switch_at)  # type: ignore[misc]
        if _is_exact_file(path):  # no trees yet: annoy (extra ``ann``) is not needed
            self.tail.load(path)
            return
        from annoy import AnnoyIndex as Annoy

        trees = Annoy(self.dim, "angular")
        if not trees.load(str(path)):
            raise OSError(f"{path}: not an annoy index")
        self._trees = trees
        # annoy allocates every id up to the highest; one never added holds a zero vector
        self._in_trees = {m for m in range(trees.get_n_items()) if any(trees.get_item_vector(m))}


class IvfIndex:
    """faiss inverted-file cells of float32 vectors (extra ``memlab[ivf]``), beside an exact
    tail of the vectors added since the cells were clustered.

    Appending to a cell's list grows it by doubling, which can hold the vectors' size again,
    so vectors are not appended: the tail is searched exactly, and the cells are clustered
    again from the stored vectors once it outgrows ``max(TRAIN_MIN, len / TAIL_SHARE)`` (the
    first time at :attr:`TRAIN_MIN` vectors), each cell's list allocated once at its size.
    """

    #: Vectors held before the cells are first clustered.
    TRAIN_MIN = 10_000
    #: The tail is clustered into the cells once it holds this share of the vectors.
    TAIL_SHARE = 32
    #: Training vectors per cell (faiss asks for at least 39).
    SAMPLE_PER_CELL = 40

    def __init__(self, dim: int, nprobe: int = -1) -> None:
        self.dim, self.nprobe = dim, nprobe
        self.tail = ExactIndex(dim)
        self._ivf: Any = None
        self._held: set[int] = set()  # the ids in the cells

    @staticmethod
    def cells_for(n: int) -> int:
        """The power of two nearest ``2 sqrt(n)``, with :attr:`SAMPLE_PER_CELL` vectors each."""
        cells = 2 ** round(math.log2(2 * math.sqrt(max(n, 1))))
        return max(1, min(cells, n // IvfIndex.SAMPLE_PER_CELL))

    @property
    def cells(self) -> int:
        return 0 if self._ivf is None else int(self._ivf.nlist)

    def __len__(self) -> int:
        return len(self._held) + len(self.tail)

    def add(self, ids: Ids, vectors: Vectors) -> None:
        self._uncell(ids)  # a replaced vector leaves its cell
        self.tail.add(ids, vectors)

    def remove(self, ids: Ids) -> None:
        self._uncell(ids)
        self.tail.remove(ids)

    def _uncell(self, ids: Ids) -> None:
        held = [m for m in np.asarray(ids, dtype=np.int64).reshape(-1).tolist() if m in self._held]
        if held:
            import faiss

            self._ivf.remove_ids(faiss.IDSelectorBatch(np.asarray(held, dtype=np.int64)))
            self._held.difference_update(held)

    query = _query_one

    def query_many(self, vectors: Vectors, k: int) -> list[tuple[Ids, Vectors]]:
        found = self.tail.query_many(vectors, k)
        if k <= 0 or not self._held:
            return found
        nlist = int(self._ivf.nlist)
        self._ivf.nprobe = math.ceil(nlist / 8) if self.nprobe == -1 else min(self.nprobe, nlist)
        sims, ids = self._ivf.search(np.ascontiguousarray(vectors, dtype=np.float32), k)
        return [
            _best(np.concatenate([t_ids, i[i >= 0]]), np.concatenate([t_sims, s[i >= 0]]), k)
            for (t_ids, t_sims), i, s in zip(found, ids, sims, strict=True)
        ]

    def items(self) -> tuple[Ids, Vectors]:
        """(ids, vectors) held: the cells' lists read back, then the tail."""
        ids, vecs = self._read_cells(vectors=True)
        if not len(self.tail):
            return ids, vecs
        t_ids, t_vecs = self.tail.items()
        return np.concatenate([ids, t_ids]), np.concatenate([vecs, t_vecs])

    def _read_cells(self, vectors: bool) -> tuple[Ids, Vectors]:
        """The cells' ids (and vectors), copied once into one array: the cells can be most of
        a process's memory."""
        import faiss

        if self._ivf is None:
            return np.zeros(0, np.int64), np.zeros((0, self.dim), np.float32)
        lists, n = self._ivf.invlists, int(self._ivf.ntotal)
        ids, vecs, at = np.zeros(n, np.int64), np.zeros((n if vectors else 0, self.dim), "f4"), 0
        for cell in range(lists.nlist):
            size = lists.list_size(cell)
            if not size:
                continue
            ids[at : at + size] = faiss.rev_swig_ptr(lists.get_ids(cell), size)
            if vectors:
                codes = faiss.rev_swig_ptr(lists.get_codes(cell), size * lists.code_size)
                vecs[at : at + size] = codes.view(np.float32).reshape(size, self.dim)
            at += size
        return ids, vecs

    def maintain(self, stored: Stored) -> bool:
        """Cluster the cells again (:class:`IvfIndex`) once the tail outgrows
        ``max(TRAIN_MIN, len / TAIL_SHARE)``."""
        n = len(self)
        if len(self.tail) < max(self.TRAIN_MIN, n // self.TAIL_SHARE):
            return False
        self._train(stored, n)
        return True

    def build(self, stored: Stored, n: int) -> None:
        self.__init__(self.dim, self.nprobe)  # type: ignore[misc]
        if n >= self.TRAIN_MIN:
            self._train(stored, n)
            return
        self.tail.build(stored, n)

    def _train(self, stored: Stored, n: int) -> None:
        """New cells clustered from a seeded sample of the ``n`` vectors of ``stored()`` and
        filled with all of them; the old cells and the tail go first."""
        import faiss

        self.__init__(self.dim, self.nprobe)  # type: ignore[misc]
        cells = self.cells_for(n)
        picks = np.sort(np.random.default_rng(0).permutation(n)[: cells * self.SAMPLE_PER_CELL])
        sample, at = np.zeros((len(picks), self.dim), np.float32), 0
        for ids, vectors in stored():
            lo, hi = np.searchsorted(picks, [at, at + len(ids)])
            sample[lo:hi] = vectors[picks[lo:hi] - at]
            at += len(ids)
        quantizer = faiss.IndexFlatIP(self.dim)
        ivf = faiss.IndexIVFFlat(quantizer, self.dim, cells, faiss.METRIC_INNER_PRODUCT)
        ivf.cp.seed = 0
        ivf.train(sample[: np.searchsorted(picks, at)])
        del sample
        cell = np.concatenate(
            [quantizer.assign(np.ascontiguousarray(v, np.float32), 1).ravel() for _, v in stored()]
        )
        lists, filled = ivf.invlists, np.zeros(cells, np.int64)
        for c, size in enumerate(np.bincount(cell, minlength=cells).tolist()):
            lists.resize(c, size)
        at, held = 0, set()
        for ids, vectors in stored():
            mine, at = cell[at : at + len(ids)], at + len(ids)
            order = np.argsort(mine, kind="stable")
            ids_in, codes = ids[order], np.ascontiguousarray(vectors[order], np.float32).view("u1")
            found, starts, sizes = np.unique(mine[order], return_index=True, return_counts=True)
            for c, i, k in zip(found.tolist(), starts.tolist(), sizes.tolist(), strict=True):
                ptrs = faiss.swig_ptr(ids_in[i : i + k]), faiss.swig_ptr(codes[i : i + k])
                lists.update_entries(c, int(filled[c]), k, *ptrs)
                filled[c] += k
            held.update(ids.tolist())
        ivf.ntotal = at
        self._ivf, self._held = ivf, held
        self._quantizer = quantizer  # kept alive beside the index that points to it

    def save(self, path: Path) -> None:
        """The cells (faiss's format), then the tail's ids and vectors; an exact file while
        there are no cells."""
        if self._ivf is None:
            self.tail.save(path)
            return
        import faiss

        ids, vectors = self.tail.items()
        with open(path, "wb") as fh:
            faiss.write_index(self._ivf, faiss.PyCallbackIOWriter(fh.write))
            np.save(fh, ids)
            np.save(fh, vectors)

    def load(self, path: Path) -> None:
        self.__init__(self.dim, self.nprobe)  # type: ignore[misc]
        if _is_exact_file(path):
            self.tail.load(path)
            return
        import faiss

        with open(path, "rb") as fh:
            ivf = faiss.read_index(faiss.PyCallbackIOReader(fh.read))
            if ivf.d != self.dim:
                raise ValueError(f"{path}: cells of dim {ivf.d}, expected {self.dim}")
            tail = None
            if fh.read(1):  # a file written before the tail was saved has none
                fh.seek(-1, os.SEEK_CUR)
                tail = np.load(fh), np.load(fh)
        self._ivf = ivf
        self._held = set(self._read_cells(vectors=False)[0].tolist())
        if tail is not None:
            self.tail.add(*tail)


def _blob_sum(conn: Executor, max_seq: int) -> dict[str, Any]:
    """The manifest's blake2b over (id, embed_seq, vector) of the rows up to ``max_seq``, and
    their count."""
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
    return {"content_checksum": h.hexdigest(), "count": n}


def _file_sum(path: Path) -> dict[str, Any]:
    """The manifest's size and blake2b checksum of the file at ``path``."""
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            h.update(chunk)
    return {"size": path.stat().st_size, "checksum": h.hexdigest()}


class IndexFile:
    """A :class:`VectorIndex` kept in step with the store's SQLite file (module docstring):
    vectors are put in as they are written and taken back when their write rolls back."""

    def __init__(self, options: IndexOptions, dim: int, embedder: str, db_path: str | None) -> None:
        self.options, self.dim, self.embedder = options, dim, embedder
        self.path = None if db_path is None else Path(f"{db_path}.{options.kind}")
        self.manifest_path = None if db_path is None else Path(f"{self.path}.json")
        self.index: VectorIndex = options.make(dim)
        self.store_uid: str | None = None
        self.seq = 0  # the highest embed_seq the index holds
        self.saved_seq = -1  # the seq of the file on disk (-1: none)
        self._touched: set[int] = set()  # ids changed in the open write
        self._seq_before = 0
        self.last_load = "not opened"
        self.last_error: str | None = None
        self.rebuilds = 0
        self.purges: int | None = None  # the store's purge count when the index last looked
        self._deferring = False

    def _manifest(self) -> dict[str, Any]:
        o = self.options
        return {
            "version": MANIFEST_VERSION,
            "kind": o.kind,
            "embedder": self.embedder,
            "dim": self.dim,
            "store_uid": self.store_uid,
            "n_trees": o.n_trees if o.kind == "annoy" else None,
        }

    def open(self, conn: Executor) -> None:
        """Load the saved index if it can be trusted, else rebuild it from SQLite."""
        if self.path is not None:
            remove_orphans(self.path)
        self.last_load = self._try_load(conn)
        if self.last_load != "loaded":
            self.rebuild(conn)
        else:
            self.refresh(conn)

    def _try_load(self, conn: Executor) -> str:
        if self.path is None or self.manifest_path is None:
            return "in-memory"
        if not self.path.exists() or not self.manifest_path.exists():
            return "missing"
        try:
            manifest = json.loads(self.manifest_path.read_text())
            if not isinstance(manifest, dict):
                return "malformed manifest"
            if any(manifest.get(k) != v for k, v in self._manifest().items()):
                return "manifest of another store, embedder, kind or version"
            if any(manifest.get(k) != v for k, v in _file_sum(self.path).items()):
                return "checksum mismatch"
            covered = _blob_sum(conn, int(manifest["max_seq"]))
            if any(manifest[k] != v for k, v in covered.items()):
                return "stale (covered rows changed)"
            self.index.load(self.path)
        except (OSError, ValueError, KeyError, TypeError, RuntimeError, OverflowError) as error:
            self.index = self.options.make(self.dim)
            return f"unloadable ({type(error).__name__})"
        self.seq = self.saved_seq = int(manifest["max_seq"])
        return "loaded"

    def rebuild(self, conn: Executor) -> None:
        """Build the index again from every stored vector, and save it."""
        self.index = self.options.make(self.dim)
        self._touched = set()
        sql = "SELECT COUNT(*), COALESCE(MAX(embed_seq), 0) FROM memories"
        n, self.seq = (int(x) for x in conn.execute(sql).fetchone())
        with self._or_reset():
            self.index.build(self._stored(conn), n)
        self.rebuilds += 1
        self.save(conn)

    def save(self, conn: Executor) -> None:
        """Write the index and its manifest (temporary files renamed into place); a failure is
        a warning, since the database stays the source of truth."""
        if self.path is None or self.manifest_path is None:
            return
        if self.purged_elsewhere(conn):
            self.rebuild(conn)  # which saves
            return
        tmp, mtmp = temp_name(self.path), temp_name(self.manifest_path)
        try:
            if not len(self.index):
                for p in (self.path, self.manifest_path):
                    p.unlink(missing_ok=True)
                self.saved_seq = self.seq
                return
            self.index.save(tmp)
            manifest = {
                **self._manifest(),
                "max_seq": self.seq,
                **_blob_sum(conn, self.seq),
                **_file_sum(tmp),
            }
            mtmp.write_text(json.dumps(manifest, indent=1))
            os.replace(tmp, self.path)
            os.replace(mtmp, self.manifest_path)
            self.saved_seq, self.last_error = self.seq, None
        except OSError as error:
            self.last_error = f"index not saved to {self.path}: {error}"
            warnings.warn(f"{self.last_error}; it is rebuilt at the next open", stacklevel=3)
        finally:
            tmp.unlink(missing_ok=True)
            mtmp.unlink(missing_ok=True)

    def maintain(self, conn: Executor) -> None:
        """The index's deferred work, then a save when it restructured or when the vectors
        since the last save exceed ``max(switch_at, len / 4)``."""
        with self._or_reset():
            changed = self.index.maintain(self._stored(conn))
        save_every = max(self.options.switch_at, len(self.index) // 4)
        if changed or self.saved_seq < self.seq and self.seq - max(self.saved_seq, 0) > save_every:
            self.save(conn)

    @contextmanager
    def _or_reset(self) -> Iterator[None]:
        """A build or restructuring that fails leaves an empty index that the next
        :meth:`refresh` builds again from SQLite, never one half built."""
        try:
            yield
        except BaseException:
            self.index, self.seq = self.options.make(self.dim), 0
            raise

    def close(self, conn: Executor) -> None:
        """Save the index if it changed since it was last saved."""
        if self.saved_seq < self.seq:
            self.save(conn)

    def purged_elsewhere(self, conn: Executor) -> bool:
        """Whether a purge this index has not seen was committed (the ``purges`` count of the
        ``meta`` table moved); the count is taken as seen."""
        row = conn.execute("SELECT value FROM meta WHERE key = 'purges'").fetchone()
        purges = 0 if row is None else int(row[0])
        moved = self.purges is not None and purges != self.purges
        self.purges = purges
        return moved

    def refresh(self, conn: Executor) -> int:
        """Add the vectors written since the index last looked (any process); their count.
        After another connection's purge the index is rebuilt instead, so that no purged
        vector stays in it or in a file it saves, and when more vectors wait than it holds.
        Nothing is read inside a :meth:`deferred` block."""
        if self._deferring:
            return 0
        if self.purged_elsewhere(conn):
            self.rebuild(conn)
            return len(self.index)
        n = 0
        for ids, vectors, seq in self._blocks(conn, self.seq, 2**63 - 1):
            if not n and len(ids) == BUILD_BLOCK and self._pending(conn) > len(self.index):
                self.rebuild(conn)  # more to read than held: built at once, not appended to
                return len(self.index)
            self.index.add(ids, vectors)
            self.seq, n = seq, n + len(ids)
        return n

    def _pending(self, conn: Executor) -> int:
        """Stored vectors the index has not read."""
        sql = "SELECT COUNT(*) FROM memories WHERE embed_seq > ?"
        return int(conn.execute(sql, (self.seq,)).fetchone()[0])

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """Vectors put inside the block are left to the first :meth:`refresh` after it, which
        reads them from SQLite at once (a bulk write: no vector appended one at a time). The
        block spans a whole write (``with core.write(), index.deferred():``), so nothing of
        it is in the index if it rolls back."""
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False

    def _blocks(self, conn: Executor, after: int, upto: int) -> Iterator[tuple[Ids, Vectors, int]]:
        """The stored vectors with ``after < embed_seq <= upto``, in ``embed_seq`` order,
        :data:`BUILD_BLOCK` at a time, each block with its last seq."""
        while rows := conn.execute(
            "SELECT id, embedding, embed_seq FROM memories WHERE embed_seq > ? AND embed_seq <= ?"
            " ORDER BY embed_seq LIMIT ?",
            (after, upto, BUILD_BLOCK),
        ).fetchall():
            after = int(rows[-1][2])
            blob = b"".join(r[1] for r in rows)
            vectors = np.frombuffer(blob, dtype="<f4").reshape(len(rows), self.dim)
            yield np.array([r[0] for r in rows], dtype=np.int64), vectors, after

    def _stored(self, conn: Executor) -> Stored:
        """Every vector the index holds, read again from SQLite."""
        seq = self.seq
        return lambda: ((ids, vectors) for ids, vectors, _ in self._blocks(conn, 0, seq))

    def put(self, memory_id: int, vector: Vectors, seq: int) -> None:
        """Add a vector just written (inside a write) with ``embed_seq = seq``. The index's
        seq moves only from the seq before it: past a gap (vectors another connection or a
        :meth:`deferred` block wrote) the next :meth:`refresh` reads from before the gap."""
        if self._deferring:
            return
        self._touch(memory_id)
        self.index.add(np.array([memory_id]), np.asarray(vector, dtype=np.float32)[None, :])
        if seq == self.seq + 1:
            self.seq = seq

    def drop(self, memory_id: int) -> None:
        """Remove a purged memory's vector (inside a write)."""
        self._touch(memory_id)
        self.index.remove(np.array([memory_id]))

    def _touch(self, memory_id: int) -> None:
        if not self._touched:
            self._seq_before = self.seq
        self._touched.add(memory_id)

    def committed(self) -> None:
        self._touched = set()

    def rolled_back(self, conn: Executor) -> None:
        """Put back the committed vectors of the ids the rolled-back write changed."""
        touched, self._touched = sorted(self._touched), set()
        if not touched:
            return
        self.seq = self._seq_before
        found = {
            int(r[0]): r[1]
            for r in conn.execute(
                f"SELECT id, embedding FROM memories WHERE id IN ({','.join('?' * len(touched))})"
                " AND embed_seq <= ?",
                (*touched, self.seq),
            )
        }
        self.index.remove(np.array([m for m in touched if m not in found], dtype=np.int64))
        for memory_id, blob in found.items():
            self.index.add(np.array([memory_id]), np.frombuffer(blob, dtype="<f4")[None, :])

    def query_many(self, vectors: Vectors, n: int) -> list[list[tuple[int, float]]]:
        """For each row of ``vectors``, up to ``n`` (memory id, cosine), best first, ties by id."""
        q = np.asarray(vectors, dtype=np.float32)
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise ValueError(f"query vectors must have shape (m, {self.dim}), got {q.shape}")
        found = self.index.query_many(q, n)
        return [list(zip(i.tolist(), s.tolist(), strict=True)) for i, s in found]

    def info(self) -> dict[str, Any]:
        return {
            "kind": self.options.kind,
            "vectors": len(self.index),
            "max_seq": self.seq,
            "saved": self.saved_seq == self.seq,
            "last_load": self.last_load,
            "last_error": self.last_error,
            "rebuilds": self.rebuilds,
            "path": None if self.path is None else str(self.path),
        }
