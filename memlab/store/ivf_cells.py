"""Vectors in inverted-file cells (faiss ``IndexIVF``): an insert is one look at the centroids.

An HNSW graph pays for its fast queries at every insert: each new vector walks the graph to
find its neighbours and rewires them. An inverted file (IVF) clusters a sample of the vectors
with k-means into ``cells`` centroids once; a new vector is appended to the list of its
nearest centroid, and a query scans the lists of its ``nprobe`` nearest centroids. faiss does
the clustering, the lists and the scan (8-bit scalar-quantised vectors by default, a quarter of
float32); :class:`IvfCells` keeps its keys, normalises to cosine and holds the vectors exactly
in one flat list until there are enough to cluster (:meth:`IvfCells.train`, called by
:class:`~memlab.store.ivf.IvfIndex`, which decides when).

faiss computes with OpenMP threads, and an OpenMP call in a child forked after the parent used
them hangs (libgomp's pool does not survive ``fork``; checked with faiss-cpu 1.15.1): in a
forked child faiss is set to one thread before its first call.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

#: How the cells hold vectors: 8-bit scalar-quantised (the default) or float32.
DTYPES = ("i8", "f32")
#: k-means iterations of a training (faiss's default is 25; 10 clustered 1M hashed vectors
#: into 2,048 cells in 12 s on 2 cores, about a quarter of 25's time, see memlab.store.ivf).
KMEANS_ITERATIONS = 10


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(
            "index='ivf' needs the faiss-cpu package: pip install 'memlab[ivf]'"
        ) from error
    return faiss


def _unit_rows(vectors: NDArray[np.floating]) -> NDArray[np.float32]:
    """A float32 copy of ``vectors`` with rows of unit length (zero rows stay zero)."""
    x = np.array(vectors, dtype=np.float32, order="C", copy=True)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    np.divide(x, norms, out=x, where=norms > 0)
    return x


class HeldKeys:
    """The set of keys the cells hold, as a bitmap indexed by key up to :attr:`ARRAY_KEYS`
    (grown geometrically: 1 byte a key, 1 MB at 1M memories, where a Python set of ints
    takes about 60 MB) and a set for larger keys (ids given by hand)."""

    #: Keys below this are held in the bitmap.
    ARRAY_KEYS = 1 << 26

    def __init__(self, keys: NDArray[np.int64] | None = None) -> None:
        self._bits = np.zeros(0, dtype=bool)
        self._large: set[int] = set()
        if keys is not None:
            self.add(keys)

    def add(self, keys: NDArray[np.int64]) -> None:
        keys = np.asarray(keys, dtype=np.int64)
        small = (keys >= 0) & (keys < self.ARRAY_KEYS)
        if small.any():
            needed = int(keys[small].max()) + 1
            if needed > len(self._bits):
                grown = np.zeros(max(needed, 2 * len(self._bits), 1024), dtype=bool)
                grown[: len(self._bits)] = self._bits
                self._bits = grown
            self._bits[keys[small]] = True
        self._large.update(keys[~small].tolist())

    def __contains__(self, key: int) -> bool:
        if 0 <= key < len(self._bits):
            return bool(self._bits[key])
        return key in self._large

    def discard(self, key: int) -> None:
        if 0 <= key < len(self._bits):
            self._bits[key] = False
        else:
            self._large.discard(key)


class IvfCells:
    """Keyed vectors in faiss inverted-file cells, searched by cosine.

    Parameters
    ----------
    dim : int
        Vector dimension.
    dtype : {"i8", "f32"}
        How the trained cells hold the vectors (before :meth:`train` they are held exactly).
    """

    def __init__(self, dim: int, *, dtype: str = "i8") -> None:
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
        self.dim = int(dim)
        self.dtype = dtype
        faiss = _faiss()
        self._pid = os.getpid()
        self._index: Any = faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))
        #: The keys held: a removal of a key not held (every new memory's, see
        #: LiveIndex.put) is answered here, without a call to faiss (the flat list's removal
        #: scans it; the cells' costs about 70 microseconds).
        self._held = HeldKeys()
        #: Number of cells (0: untrained, one exact list).
        self.cells = 0

    @property
    def ndim(self) -> int:
        return self.dim

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def _ready(self) -> Any:
        """faiss, set to one thread in a child forked after this process used it."""
        faiss = _faiss()
        if os.getpid() != self._pid:
            faiss.omp_set_num_threads(1)
            self._pid = os.getpid()
        return faiss

    def train(self, sample: NDArray[np.floating], *, cells: int) -> None:
        """Cluster ``sample`` into ``cells`` centroids; the cells must be empty.

        Raises ``ValueError`` when vectors are held already, ``cells`` is not an integer of at
        least 1 or the sample has fewer rows than cells or another dimension.
        """
        if len(self):
            raise ValueError(f"train needs empty cells ({len(self)} vectors are held)")
        x = _unit_rows(sample)
        if isinstance(cells, bool) or not isinstance(cells, (int, np.integer)) or cells < 1:
            raise ValueError(f"cells must be an integer >= 1, got {cells!r}")
        if x.ndim != 2 or x.shape[1] != self.dim or len(x) < cells:
            raise ValueError(
                f"a sample of at least {cells} rows of dimension {self.dim} is needed, "
                f"got {x.shape}"
            )
        faiss = self._ready()
        quantizer = faiss.IndexFlatIP(self.dim)
        if self.dtype == "i8":
            index = faiss.IndexIVFScalarQuantizer(
                quantizer,
                self.dim,
                int(cells),
                faiss.ScalarQuantizer.QT_8bit,
                faiss.METRIC_INNER_PRODUCT,
            )
        else:
            index = faiss.IndexIVFFlat(quantizer, self.dim, int(cells), faiss.METRIC_INNER_PRODUCT)
        index.cp.niter = KMEANS_ITERATIONS
        index.cp.seed = 1234
        index.train(x)
        index.set_direct_map_type(faiss.DirectMap.Hashtable)  # removal by key without a scan
        self._index = index
        self._quantizer = quantizer  # the index refers to it: kept alive with it
        self.cells = int(cells)

    def add(self, keys: NDArray[np.uint64], vectors: NDArray[np.floating]) -> None:
        """Add ``vectors`` under ``keys`` (not held yet)."""
        self._ready()
        ids = np.asarray(keys, dtype=np.int64)
        self._index.add_with_ids(_unit_rows(vectors), ids)
        self._held.add(ids)

    def remove(self, key: int) -> None:
        """Remove ``key``'s vector if it is held."""
        if key not in self._held:
            return
        self._held.discard(key)
        self._ready()
        self._index.remove_ids(np.array([key], dtype=np.int64))

    def search(
        self, queries: NDArray[np.floating], count: int, *, ef: int
    ) -> list[list[tuple[int, float]]]:
        """Up to ``count`` (key, cosine similarity of the held vectors) for each query row,
        best first, the lists of the ``ef`` nearest cells scanned (all vectors while
        untrained)."""
        keys, sims = self.search_arrays(queries, count, ef=ef)
        return [
            [(k, s) for k, s in zip(row_keys, row_sims, strict=True) if k >= 0]
            for row_keys, row_sims in zip(keys.tolist(), sims.tolist(), strict=True)
        ]

    def search_arrays(
        self, queries: NDArray[np.floating], count: int, *, ef: int
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """:meth:`search` as two arrays of one row per query: the keys (-1 past a row's hits)
        and their similarities, best first (no Python object per hit)."""
        m = len(queries)
        n = min(int(count), len(self))
        if n <= 0 or not m:
            return np.full((m, 0), -1, dtype=np.int64), np.zeros((m, 0), dtype=np.float32)
        self._ready()
        if self.cells:
            self._index.nprobe = max(1, min(int(ef), self.cells))
        sims, keys = self._index.search(_unit_rows(queries), n)
        return keys.astype(np.int64, copy=False), sims

    # -- files ---------------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        """Write the cells to ``path`` (faiss's index file)."""
        self._ready().write_index(self._index, str(path))

    def load(self, path: Path) -> None:
        """Read cells :meth:`save` wrote. Raises ``ValueError`` when the file holds another
        kind of index, dimension or dtype, ``RuntimeError`` when faiss cannot read it."""
        faiss = self._ready()
        index = faiss.read_index(str(path))
        if index.d != self.dim:
            raise ValueError(f"{path} holds vectors of dimension {index.d}, not {self.dim}")
        if isinstance(index, faiss.IndexIDMap2):
            keys = faiss.vector_to_array(index.id_map).astype(np.int64)
            self._index, self._held, self.cells = index, HeldKeys(keys), 0
            return
        kinds = {"i8": faiss.IndexIVFScalarQuantizer, "f32": faiss.IndexIVFFlat}
        if (
            not isinstance(index, kinds[self.dtype])
            or index.direct_map.type != faiss.DirectMap.Hashtable
        ):
            raise ValueError(f"{path} is not an inverted file of {self.dtype} vectors kept by key")
        self._index, self._held = index, HeldKeys(_held_keys(faiss, index))
        self.cells = int(index.nlist)

    def close(self) -> None:
        """Nothing to stop (faiss's threads are its own); the cells stay usable."""


def _held_keys(faiss: Any, index: Any) -> NDArray[np.int64]:
    """The keys an inverted file holds, read from its lists."""
    lists = index.invlists
    parts = [np.zeros(0, dtype=np.int64)]
    for cell in range(index.nlist):
        size = lists.list_size(cell)
        if size:
            parts.append(faiss.rev_swig_ptr(lists.get_ids(cell), size).astype(np.int64))
    return np.concatenate(parts)


__all__ = ["DTYPES", "HeldKeys", "KMEANS_ITERATIONS", "IvfCells"]
