"""Vector index option: faiss inverted-file cells that take every vector as it is written.

``MemoryStore(..., index="ivf")`` (extra ``memlab[ivf]``). It holds every stored vector and
takes additions and removals in place (:class:`~memlab.store.live_index.LiveIndex`); the
structure is :class:`~memlab.store.ivf_cells.IvfCells`: an insert costs one look at the
centroids.

- **When the cells are clustered.** Below :attr:`IvfIndex.TRAIN_MIN` vectors they are held in one
  exact list. From then on, :meth:`IvfIndex.maintain` (between writes) rebuilds the index from
  SQLite whenever it holds more than :attr:`IvfIndex.GROWTH` times the vectors it was clustered
  on: a seeded sample of ``SAMPLE_PER_CELL x cells`` stored vectors is clustered into
  :func:`cells_for` ``(n)`` cells (about ``2 sqrt(n)``, a power of two) and every vector added.
  The rebuilds grow geometrically, so they cost O(1) per vector, and a store that grows from 0
  to 1M is clustered at about 10k, 40k, 160k and 640k.
- **Search breadth.** ``search_k`` is the number of cells scanned ("nprobe"); -1 scans
  ``ceil(cells / 8)`` (:attr:`IvfIndex.DEFAULT_PROBE_FRACTION`). The gate's candidates on
  ingest scan :attr:`IvfIndex.CANDIDATE_EF` cells.
- The cells hold 8-bit scalar-quantised vectors (``dtype="i8"``) or float32 (``"f32"``); either
  way the store re-scores the candidates by the exact cosine of the stored vectors.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from memlab.store.ivf_cells import DTYPES, IvfCells
from memlab.store.live_index import LiveIndex
from memlab.store.schema import Executor
from memlab.store.vectors import SHARED_MANIFEST_TYPES

MANIFEST_VERSION = 1

_MANIFEST_TYPES: dict[str, type | tuple[type, ...]] = {
    **SHARED_MANIFEST_TYPES,
    "dtype": str,
    "cells": int,
    "trained_on": int,
}

#: Training vectors per cell (faiss asks for at least 39).
SAMPLE_PER_CELL = 40


def cells_for(n: int) -> int:
    """Number of cells to cluster ``n`` vectors into: the power of two nearest ``2 sqrt(n)``,
    at most ``n // SAMPLE_PER_CELL`` (each cell has its training vectors) and at least 1."""
    if n <= 0:
        return 1
    cells = 2 ** round(math.log2(2 * math.sqrt(n)))
    return max(1, min(cells, n // SAMPLE_PER_CELL))


class IvfIndex(LiveIndex):
    """Approximate nearest-neighbour search over every stored vector in faiss IVF cells.

    Parameters
    ----------
    dim, embedder_name, path, tail_min, tail_fraction, store_uid
        As :class:`~memlab.store.live_index.LiveIndex`.
    search_k : int
        Cells scanned by a search ("nprobe"); -1: ``ceil(cells * DEFAULT_PROBE_FRACTION)``.
    dtype : {"i8", "f32"}, optional
        How the cells hold vectors. None (the default): the saved index's, else ``"i8"``. A
        saved index of another dtype than the one given is rebuilt.
    """

    kind = "ivf"
    manifest_version = MANIFEST_VERSION
    manifest_types = _MANIFEST_TYPES
    DTYPES = DTYPES
    DEFAULT_DTYPE = "i8"
    #: Share of the cells a search scans when ``search_k`` is -1.
    DEFAULT_PROBE_FRACTION = 1 / 8
    #: Cells the gate's candidate searches scan (its near duplicates are in the nearest cells).
    CANDIDATE_EF = 8
    #: On 3,000 texts into 200k hashed memories the 8-bit cells' scores were 0.0005 from the
    #: cosine on average, 0.0017 at the 99th percentile (0.03 at most); with this margin every
    #: text's exact best 8 of its first 16 hits were among those read (12 of 16 on average),
    #: with 0.006 two texts' were not.
    SCORE_MARGIN = 0.01
    #: Vectors held exactly in one list before the first clustering.
    TRAIN_MIN = 10_000
    #: The index is clustered again once it holds this many times the vectors it was on.
    GROWTH = 4

    def __init__(
        self,
        dim: int,
        embedder_name: str,
        path: Path | None = None,
        *,
        search_k: int = -1,
        dtype: str | None = None,
        tail_min: int = 2000,
        tail_fraction: float = 0.5,
        store_uid: str | None = None,
    ) -> None:
        if dtype is not None and dtype not in self.DTYPES:
            raise ValueError(f"dtype must be one of {self.DTYPES}, got {dtype!r}")
        super().__init__(
            dim,
            embedder_name,
            path,
            search_k=search_k,
            tail_min=tail_min,
            tail_fraction=tail_fraction,
            store_uid=store_uid,
        )
        self.dtype_given = dtype is not None
        self.dtype = dtype or self.DEFAULT_DTYPE
        #: Vectors the cells were clustered on (0: not clustered).
        self.trained_on = 0
        self._retry_at = 0  # after a failed clustering: the count the next try waits for

    # -- the cells -----------------------------------------------------------------------------
    def _new_structure(self) -> IvfCells:
        return IvfCells(self.dim, dtype=self.dtype)

    def _settings(self) -> dict[str, Any]:
        return {"dtype": self.dtype}

    def _save_structure(self, structure: IvfCells, tmp: Path) -> dict[str, Any]:
        structure.save(tmp)
        return {"cells": structure.cells, "trained_on": self.trained_on}

    def _load_structure(self, path: Path, manifest: dict[str, Any]) -> IvfCells:
        cells = self._new_structure()
        cells.load(path)
        if cells.cells != manifest["cells"]:
            raise ValueError(f"{path} has {cells.cells} cells, its manifest {manifest['cells']}")
        self.trained_on = manifest["trained_on"]
        return cells

    def _adopt_saved_settings(self) -> None:
        if self.dtype_given:
            return
        saved = self._saved_manifest().get("dtype")
        self.dtype = saved if saved in self.DTYPES else self.DEFAULT_DTYPE

    def _prepare(self, structure: IvfCells, conn: Executor) -> None:
        """Cluster a seeded sample of the stored vectors when there are :attr:`TRAIN_MIN`."""
        ids = [int(r[0]) for r in conn.execute("SELECT id FROM memories")]
        self.trained_on = 0
        if len(ids) < self.TRAIN_MIN:
            return
        cells = cells_for(len(ids))
        rng = np.random.default_rng(len(ids))
        size = min(len(ids), SAMPLE_PER_CELL * cells)
        picked = sorted(rng.choice(np.asarray(ids), size=size, replace=False).tolist())
        sample = np.stack([vector for _, vector in self._read_vectors(conn, picked)])
        structure.train(sample, cells=cells)
        self.trained_on = len(ids)

    def outgrown(self) -> bool:
        """Whether the cells should be clustered (again): :attr:`TRAIN_MIN` vectors held and
        none clustered, or more than :attr:`GROWTH` times those they were clustered on."""
        n = self._len()
        if n < self._retry_at:  # a clustering failed: the next try waits
            return False
        if self.trained_on == 0:
            return n >= self.TRAIN_MIN
        return n > self.GROWTH * self.trained_on

    def maintain(self, conn: Executor) -> None:
        """Cluster again when :meth:`outgrown`, else save when enough changed (between writes).

        The current cells answer until the new ones are complete. A clustering that fails
        (e.g. out of memory) is a warning (:attr:`last_error`): the current cells, which hold
        every vector, stay, and the next try waits until the index has doubled.
        """
        if not self.outgrown():
            super().maintain(conn)
            return
        trained_on = self.trained_on
        try:
            self.rebuild(conn, keep_current=True)
        except Exception as error:  # the cells in place still hold every vector
            self.trained_on = trained_on
            self._retry_at = 2 * self._len()
            self.last_error = f"cells not clustered again: {error!r}"
            warnings.warn(f"{self.last_error}; the current cells stay in use", stacklevel=2)

    @property
    def cells(self) -> int:
        """Number of cells the vectors are in (0: not clustered, one exact list)."""
        return 0 if self._structure is None else self._structure.cells

    def default_ef(self) -> int:
        return max(1, math.ceil(self.cells * self.DEFAULT_PROBE_FRACTION))

    def _info_extra(self) -> dict[str, Any]:
        return {
            "cells": self.cells,
            "trained_on": self.trained_on,
            "dtype": self.dtype,
        }


__all__ = ["MANIFEST_VERSION", "IvfIndex", "cells_for"]
