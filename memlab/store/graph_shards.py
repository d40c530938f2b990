"""An HNSW graph split into shards that a query walks side by side (usearch graphs).

A single HNSW query is one thread walking one graph: on a machine of several cores the others
wait. :class:`ShardedGraph` keeps the vectors in ``shards`` graphs, a key always in shard
``key % shards``, and walks them in parallel threads for one query (usearch releases the GIL
while it searches); each shard's best are merged by similarity. A batch of queries (the gate's
candidates on ingest) and a batch of adds run shard after shard, each spread over the cores by
usearch itself.

Smaller graphs are walked at a narrower breadth for the same recall, and take adds faster, but
a query walks every shard, and a batch of queries searches every shard. Measured with
``experiments/bench_store.py`` (index-only kinds ``hnsws1``, ``hnsws2``, ``hnsws4``; degree 32,
construction breadth 128, 8-bit, top 50 re-scored; 2 cores), at 200k hashed vectors
(``experiments/results/bench_graph_shards_200k.md``):

- one graph: recall@10 0.945 at ``ef`` 512 in 3.59 ms, 0.986 at 1024 in 7.23 ms; 2,436 adds/s;
- two shards: 0.958 at ``ef`` 256 in 3.15 ms; 3,215 adds/s;
- four shards: 0.941 at ``ef`` 128 in 2.65 ms, 0.973 at 256 in 5.46 ms; 5,153 adds/s.

At 1M hashed vectors the query's gain was gone (about the same time at recall 0.95): in a run
of the same settings outside ``experiments/results`` (the graph alone, exact search 112 ms), one
graph reached 0.9575 at ``ef`` 2048 in 18.3 ms, two shards 0.9605 at 1536 in 19.7 ms, four
shards 0.947 at 512 in 15.8 ms and 0.9635 at 768 in 20.7 ms, while a batch of 1,000 gate
candidate searches (``ef`` 64) took 648, 1,059 and 1,421 ms. So the default is one graph.

Saved as one file: the shards' usearch files one after the other, their sizes in the caller's
manifest (:meth:`ShardedGraph.save` returns them); a one-shard graph's file is a plain usearch
file.
"""

from __future__ import annotations

import mmap
import os
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memlab.store.files import temp_name

#: Threads of a batched add and of a batched search (0: one per core, usearch's choice).
ADD_THREADS = 0
SEARCH_THREADS = 0
#: Most shards a graph may have.
MAX_SHARDS = 64


def is_shard_count(value: object) -> bool:
    """Whether ``value`` is a number of shards a graph may have: an integer in [1, 64]."""
    return (
        isinstance(value, (int, np.integer))
        and not isinstance(value, bool)
        and 1 <= value <= MAX_SHARDS
    )


def _usearch_index(dim: int, dtype: str, connectivity: int, expansion_add: int) -> Any:
    try:
        from usearch.index import Index
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(
            "index='hnsw' needs the usearch package: pip install 'memlab[hnsw]'"
        ) from error
    return Index(
        ndim=dim,
        metric="cos",
        dtype=dtype,
        connectivity=connectivity,
        expansion_add=expansion_add,
    )


def _matches(found: Any, m: int) -> tuple[list[list[int]], list[list[float]], list[int]]:
    """Keys, cosine similarities and counts of a usearch search of ``m`` queries, by query."""
    keys = np.asarray(found.keys).reshape(m, -1).tolist()
    with np.errstate(invalid="ignore"):  # slots past a row's count hold NaN
        distances = np.asarray(found.distances, dtype=np.float64)
    sims = (1.0 - distances).reshape(m, -1).tolist()
    counts = np.asarray(found.counts).reshape(-1).tolist() if m > 1 else [len(keys[0])]
    return keys, sims, counts


class ShardedGraph:
    """``shards`` usearch HNSW graphs holding the vectors of keys ``key % shards``.

    Parameters
    ----------
    dim : int
        Vector dimension.
    dtype : str
        How the graphs hold vectors (``"i8"``, ``"f16"``, ``"f32"``).
    connectivity, expansion_add : int
        Each graph's degree and construction breadth.
    shards : int
        Number of graphs (1 to :data:`MAX_SHARDS`).
    """

    def __init__(
        self, dim: int, *, dtype: str, connectivity: int, expansion_add: int, shards: int
    ) -> None:
        if not is_shard_count(shards):
            raise ValueError(f"shards must be an integer in [1, {MAX_SHARDS}], got {shards!r}")
        self.dim = int(dim)
        self.shards = int(shards)
        self._graphs = [
            _usearch_index(self.dim, dtype, connectivity, expansion_add) for _ in range(shards)
        ]
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid: int | None = None
        self._pool_lock = threading.Lock()

    @property
    def connectivity(self) -> int:
        """The graphs' degree (a loaded graph's own)."""
        return int(self._graphs[0].connectivity)

    @property
    def ndim(self) -> int:
        """The graphs' vector dimension (a loaded graph's own)."""
        return int(self._graphs[0].ndim)

    def __len__(self) -> int:
        return sum(len(g) for g in self._graphs)

    def shard_sizes(self) -> list[int]:
        """Vectors held by each shard."""
        return [len(g) for g in self._graphs]

    def _shard(self, key: int) -> Any:
        return self._graphs[int(key) % self.shards]

    def contains(self, key: int) -> bool:
        return bool(self._shard(key).contains(key))

    def remove(self, key: int) -> None:
        """Remove ``key``'s vector if the graph holds it."""
        graph = self._shard(key)
        if graph.contains(key):
            graph.remove(key)

    def add(self, keys: NDArray[np.uint64], vectors: NDArray[np.float32]) -> None:
        """Add ``vectors`` under ``keys`` (not held yet), each to its key's shard."""
        keys = np.asarray(keys, dtype=np.uint64)
        vectors = np.asarray(vectors, dtype=np.float32)
        if self.shards == 1:
            self._graphs[0].add(keys, vectors, threads=ADD_THREADS)
            return
        shard_of = keys % np.uint64(self.shards)
        for s, graph in enumerate(self._graphs):
            mine = np.flatnonzero(shard_of == s)
            if len(mine):
                graph.add(keys[mine], vectors[mine], threads=ADD_THREADS)

    def search(
        self, queries: NDArray[np.float32], count: int, *, ef: int
    ) -> list[list[tuple[int, float]]]:
        """Up to ``count`` (key, cosine similarity of the held vectors) for each query row,
        best first (ties by key), each shard searched at breadth ``max(ef, count)``.

        One query walks the shards in parallel threads; several are searched shard after
        shard, the queries spread over the cores by usearch.
        """
        q = np.asarray(queries, dtype=np.float32)
        m = len(q)
        if count <= 0 or not m:
            return [[] for _ in range(m)]
        parts: list[tuple[list[list[int]], list[list[float]], list[int]]] = []
        live = [g for g in self._graphs if len(g)]
        for g in live:
            g.expansion_search = max(int(ef), int(count))
        if m == 1 and len(live) > 1:
            pool = self._threads()
            futures = [pool.submit(g.search, q, min(count, len(g)), threads=1) for g in live[1:]]
            first = live[0].search(q, min(count, len(live[0])), threads=1)
            found = [first, *(f.result() for f in futures)]
            parts = [_matches(f, 1) for f in found]
        else:
            threads = SEARCH_THREADS if m > 1 else 1
            parts = [_matches(g.search(q, min(count, len(g)), threads=threads), m) for g in live]
        out: list[list[tuple[int, float]]] = []
        for r in range(m):
            hits = [
                (int(k), float(s))
                for keys, sims, counts in parts
                for k, s in zip(keys[r][: counts[r]], sims[r][: counts[r]], strict=True)
            ]
            if len(parts) > 1:
                hits.sort(key=lambda hit: (-hit[1], hit[0]))
            out.append(hits[:count])
        return out

    def _threads(self) -> ThreadPoolExecutor:
        """The threads of parallel queries, made lazily and again in a forked child (a thread
        does not survive ``fork``)."""
        with self._pool_lock:
            if self._pool is None or self._pool_pid != os.getpid():
                self._pool = ThreadPoolExecutor(
                    max_workers=self.shards - 1, thread_name_prefix="memlab-shard"
                )
                self._pool_pid = os.getpid()
            return self._pool

    # -- files ---------------------------------------------------------------------------------
    def save(self, path: Path) -> list[int]:
        """Write the graph to ``path`` (the shards' usearch files one after the other); return
        each shard's size in bytes, which :meth:`load` needs."""
        path = Path(path)
        if self.shards == 1:
            self._graphs[0].save(str(path))
            return [path.stat().st_size]
        sizes = []
        with open(path, "wb") as out:
            for graph in self._graphs:
                part = temp_name(path)
                try:
                    graph.save(str(part))
                    sizes.append(part.stat().st_size)
                    with open(part, "rb") as fh:
                        shutil.copyfileobj(fh, out, 1 << 22)
                finally:
                    part.unlink(missing_ok=True)
        return sizes

    def load(self, path: Path, sizes: list[int]) -> None:
        """Read a graph :meth:`save` wrote, with the shard sizes it returned.

        Raises ``ValueError`` when the sizes do not fit the shards or the file.
        """
        path = Path(path)
        if len(sizes) != self.shards or sum(sizes) != path.stat().st_size:
            raise ValueError(f"shard sizes {sizes} do not fit {self.shards} shards in {path}")
        if self.shards == 1:
            self._graphs[0].load(str(path))
            return
        with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            start = 0
            for graph, size in zip(self._graphs, sizes, strict=True):
                view = memoryview(mm)[start : start + size]
                try:
                    graph.load(view)
                finally:
                    view.release()
                start += size

    def close(self) -> None:
        """Stop the threads of parallel queries (the graphs stay usable)."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None and self._pool_pid == os.getpid():
            pool.shutdown(wait=True)


__all__ = ["MAX_SHARDS", "ShardedGraph", "is_shard_count"]
