"""Vectors in inverted-file cells (faiss ``IndexIVF``): an insert is one look at the centroids.

An HNSW graph pays for its fast queries at every insert: each new vector walks the graph to
find its neighbours and rewires them. An inverted file (IVF) clusters a sample of the vectors
with k-means into ``cells`` centroids once; a new vector is appended to the list of its
nearest centroid, and a query scans the lists of its ``nprobe`` nearest centroids. faiss does
the clustering, the lists and the scan (8-bit scalar-quantised vectors by default, a quarter of
float32); :class:`IvfCells` keeps its keys, normalises to cosine and holds the vectors exactly
in one flat list until there are enough to cluster (:meth:`IvfCells.train`, called by
:class:`~memlab.store.ivf.IvfIndex`, which decides when).

Each held vector also has a bound on how far a score the cells return can be from the cosine
of the vector itself (:meth:`IvfCells.score_bounds`): with a unit query ``q``, a unit vector
``x`` and what the cells hold of it ``x'``, ``|q.x' - q.x| <= ||x' - x||`` (Cauchy-Schwarz), so
the bound is that reconstruction error (measured at :meth:`IvfCells.add` from faiss's own
reconstruction) plus :data:`BOUND_SLACK` for float32 rounding. The store uses it to re-score
only the candidates whose exact cosine can change a decision.

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
#: Added to every score bound: float32 rounding of a cosine of unit vectors (a few 1e-7 at
#: 384 dimensions), with room to spare.
BOUND_SLACK = 1e-4


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


class KeyedBounds:
    """A float per held key, NaN for a key not held: an array indexed by key up to
    :attr:`ARRAY_KEYS` (grown geometrically, 4 bytes a key), a dict for larger keys (ids given
    by hand), so that 1M memories take 4 MB rather than a dict's ~100 MB."""

    #: Keys below this are held in the array.
    ARRAY_KEYS = 1 << 26

    def __init__(self) -> None:
        self._array = np.full(0, np.nan, dtype=np.float32)
        self._large: dict[int, float] = {}

    def set(self, keys: NDArray[np.int64], values: NDArray[np.floating]) -> None:
        keys = np.asarray(keys, dtype=np.int64)
        values = np.broadcast_to(np.asarray(values, dtype=np.float32), keys.shape)
        small = (keys >= 0) & (keys < self.ARRAY_KEYS)
        if small.any():
            needed = int(keys[small].max()) + 1
            if needed > len(self._array):
                grown = np.full(max(needed, 2 * len(self._array), 1024), np.nan, dtype=np.float32)
                grown[: len(self._array)] = self._array
                self._array = grown
            self._array[keys[small]] = values[small]
        for key, value in zip(keys[~small].tolist(), values[~small].tolist(), strict=True):
            self._large[key] = value

    def get(self, keys: NDArray[np.int64]) -> NDArray[np.float32]:
        keys = np.asarray(keys, dtype=np.int64)
        out = np.full(keys.shape, np.nan, dtype=np.float32)
        small = (keys >= 0) & (keys < len(self._array))
        out[small] = self._array[keys[small]]
        if self._large:
            for i in np.flatnonzero(~small).tolist():
                out[i] = self._large.get(int(keys[i]), np.nan)
        return out

    def holds(self, key: int) -> bool:
        if 0 <= key < len(self._array):
            return not np.isnan(self._array[key])
        return key in self._large

    def discard(self, key: int) -> None:
        if 0 <= key < len(self._array):
            self._array[key] = np.nan
        else:
            self._large.pop(key, None)


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
        #: The score bound of every held key (inf: unknown); a removal of a key not held is
        #: answered here without a call to faiss (the flat list's removal scans it).
        self._bounds = KeyedBounds()
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
        self._bounds = KeyedBounds()
        self.cells = int(cells)

    def add(self, keys: NDArray[np.uint64], vectors: NDArray[np.floating]) -> None:
        """Add ``vectors`` under ``keys`` (not held yet)."""
        self._ready()
        ids = np.asarray(keys, dtype=np.int64)
        unit = _unit_rows(vectors)
        self._index.add_with_ids(unit, ids)
        self._bounds.set(ids, self._errors(ids, unit) + BOUND_SLACK)

    def _errors(self, ids: NDArray[np.int64], unit: NDArray[np.float32]) -> NDArray[np.float32]:
        """``||x' - x||`` of the vectors just added (0 where the cells hold them exactly)."""
        if not self.cells or self.dtype == "f32" or not len(ids):
            return np.zeros(len(ids), dtype=np.float32)
        held = self._index.reconstruct_batch(ids)
        return np.linalg.norm(held - unit, axis=1).astype(np.float32)

    def remove(self, key: int) -> None:
        """Remove ``key``'s vector if it is held."""
        if not self._bounds.holds(key):
            return
        self._bounds.discard(key)
        self._ready()
        self._index.remove_ids(np.array([key], dtype=np.int64))

    def score_bounds(self, keys: NDArray[np.int64]) -> NDArray[np.float32]:
        """For each key, a bound on ``|score - cosine|`` between a score :meth:`search` returns
        for it and the cosine of its vector itself, for any unit query (module docstring):
        inf when unknown (a loaded quantised file), NaN for a key not held."""
        return self._bounds.get(np.asarray(keys, dtype=np.int64))

    def search(
        self, queries: NDArray[np.floating], count: int, *, ef: int
    ) -> list[list[tuple[int, float]]]:
        """Up to ``count`` (key, cosine similarity of the held vectors) for each query row,
        best first, the lists of the ``ef`` nearest cells scanned (all vectors while
        untrained)."""
        m = len(queries)
        n = min(int(count), len(self))
        if n <= 0 or not m:
            return [[] for _ in range(m)]
        self._ready()
        if self.cells:
            self._index.nprobe = max(1, min(int(ef), self.cells))
        sims, ids = self._index.search(_unit_rows(queries), n)
        out: list[list[tuple[int, float]]] = []
        for row_ids, row_sims in zip(ids.tolist(), sims.tolist(), strict=True):
            out.append([(k, s) for k, s in zip(row_ids, row_sims, strict=True) if k >= 0])
        return out

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
            self._index, self.cells = index, 0
            self._bounds = KeyedBounds()
            self._bounds.set(keys, BOUND_SLACK)
            return
        kinds = {"i8": faiss.IndexIVFScalarQuantizer, "f32": faiss.IndexIVFFlat}
        if (
            not isinstance(index, kinds[self.dtype])
            or index.direct_map.type != faiss.DirectMap.Hashtable
        ):
            raise ValueError(f"{path} is not an inverted file of {self.dtype} vectors kept by key")
        keys = _held_keys(faiss, index)
        self._index, self.cells = index, int(index.nlist)
        self._bounds = KeyedBounds()
        # The file holds no bounds: unknown for quantised vectors (their candidates are
        # re-scored), exact for float32 ones.
        self._bounds.set(keys, np.inf if self.dtype == "i8" else BOUND_SLACK)

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


__all__ = ["BOUND_SLACK", "DTYPES", "KMEANS_ITERATIONS", "IvfCells", "KeyedBounds"]
