"""Vector index option: an HNSW graph (usearch) that takes every vector as it is written.

The annoy index of :mod:`memlab.store.vectors` is immutable, so newer vectors wait in an exact
tail until a rebuild; an HNSW graph takes additions and removals in place, so there is no tail
and no rebuild while the store grows (``MemoryStore(..., index="hnsw")``, extra ``memlab[hnsw]``).
The journal, the refresh, the save policy and the trusted file are
:class:`~memlab.store.live_index.LiveIndex`'s, shared with the IVF cells of
:mod:`memlab.store.ivf`.
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

from pathlib import Path
from typing import Any

import numpy as np

from memlab.store.graph_shards import MAX_SHARDS, ShardedGraph, is_shard_count
from memlab.store.live_index import LiveIndex
from memlab.store.vectors import SHARED_MANIFEST_TYPES

#: 2: the graph may be split into shards (``shards``, ``shard_sizes``); a graph saved with
#: version 1 (one graph) is rebuilt once at the next open.
MANIFEST_VERSION = 2

#: Keys and types of a manifest; any other shape is "malformed" and the graph rebuilt.
_MANIFEST_TYPES: dict[str, type | tuple[type, ...]] = {
    **SHARED_MANIFEST_TYPES,
    "dtype": str,
    "connectivity": int,
    "shards": int,
    "shard_sizes": list,
}


def _is_degree(value: object) -> bool:
    """Whether ``value`` is a degree or construction breadth a graph may have: an integer in
    [2, 4096]."""
    return (
        isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 2 <= value <= 4096
    )


class HnswIndex(LiveIndex):
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
    manifest_version = MANIFEST_VERSION
    manifest_types = _MANIFEST_TYPES
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
        if dtype is not None and dtype not in self.DTYPES:
            raise ValueError(f"dtype must be one of {self.DTYPES}, got {dtype!r}")
        for label, v in (("connectivity", connectivity), ("expansion_add", expansion_add)):
            if v is None:
                continue
            if not _is_degree(v):
                raise ValueError(f"{label} must be an integer in [2, 4096], got {v!r}")
        if shards is not None and not is_shard_count(shards):
            raise ValueError(f"shards must be an integer in [1, {MAX_SHARDS}], got {shards!r}")
        super().__init__(
            dim,
            embedder_name,
            path,
            search_k=search_k,
            tail_min=tail_min,
            tail_fraction=tail_fraction,
            store_uid=store_uid,
        )
        #: Whether the degree and the dtype were given (a saved graph of another one is
        #: rebuilt) or are read from the saved graph's manifest at :meth:`open`.
        self.connectivity_given = connectivity is not None
        self.dtype_given = dtype is not None
        self.shards_given = shards is not None
        self.shards = int(shards or self.DEFAULT_SHARDS)
        self.connectivity = int(connectivity or self.DEFAULT_CONNECTIVITY)
        self._expansion_add = None if expansion_add is None else int(expansion_add)
        self.dtype = dtype or self.DEFAULT_DTYPE

    @property
    def scores_exact(self) -> bool:
        """Whether the similarities :meth:`query` returns are the stored vectors' cosines
        (float32 graph) or the quantised graph's, to be re-scored by the caller."""
        return self.dtype == "f32"

    @property
    def expansion_add(self) -> int:
        """Construction breadth of the graph's adds (given, else 4 x :attr:`connectivity`)."""
        return self._expansion_add or 4 * self.connectivity

    # -- the graph -----------------------------------------------------------------------------
    def _new_structure(self) -> ShardedGraph:
        return ShardedGraph(
            self.dim,
            dtype=self.dtype,
            connectivity=self.connectivity,
            expansion_add=self.expansion_add,
            shards=self.shards,
        )

    def _settings(self) -> dict[str, Any]:
        return {
            "dtype": self.dtype,
            "connectivity": self.connectivity,
            "shards": self.shards,
        }

    def _save_structure(self, structure: ShardedGraph, tmp: Path) -> dict[str, Any]:
        return {"shard_sizes": structure.save(tmp)}

    def _load_structure(self, path: Path, manifest: dict[str, Any]) -> ShardedGraph:
        graph = self._new_structure()
        graph.load(path, manifest["shard_sizes"])
        return graph

    def _saved_settings(self) -> dict[str, Any]:
        """The degree, dtype and shard count recorded in the saved graph's manifest (those
        readable)."""
        manifest = self._saved_manifest()
        out: dict[str, Any] = {}
        degree = manifest.get("connectivity")
        if _is_degree(degree):
            out["connectivity"] = degree
        if manifest.get("dtype") in self.DTYPES:
            out["dtype"] = manifest["dtype"]
        if is_shard_count(manifest.get("shards")):
            out["shards"] = manifest["shards"]
        return out

    def _adopt_saved_settings(self) -> None:
        saved = self._saved_settings()  # the saved graph's settings, kept by a rebuild too
        if not self.connectivity_given:
            self.connectivity = saved.get("connectivity", self.DEFAULT_CONNECTIVITY)
        if not self.dtype_given:
            self.dtype = saved.get("dtype", self.DEFAULT_DTYPE)
        if not self.shards_given:
            self.shards = saved.get("shards", self.DEFAULT_SHARDS)

    def _info_extra(self) -> dict[str, Any]:
        graph = self._structure
        return {
            # the graph's own degree (a loaded graph keeps the one it was built with)
            "connectivity": self.connectivity if graph is None else graph.connectivity,
            "shards": self.shards,
            "dtype": self.dtype,
        }


__all__ = ["MANIFEST_VERSION", "HnswIndex"]
