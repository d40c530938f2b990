"""Helpers of the store tests: a simulated clock, an embedder with controlled vectors, db dumps."""

from __future__ import annotations

import re
import sqlite3
import zlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from memlab.store import MemoryStore

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


class Clock:
    """Simulated time: ``clock()`` returns the current instant, ``advance`` moves it."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now = self.now + timedelta(**delta)
        return self.now


class VecEmbedder:
    """Texts name their vector, so tests hit exact similarities.

    ``"base ..."`` embeds to e0; ``"sim=0.93 ..."`` to ``[0.93, sqrt(1 - 0.93**2), 0...]``
    (cosine 0.93 with e0); ``"axis=k <anything>"`` to e_k. Anything else: a hashed unit vector on
    axes 3.. (similar only to identical text).
    """

    name = "vec-test-v1"
    dim = 16

    def _one(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float64)
        m = re.match(r"sim=([0-9.]+)", text)
        if text.startswith("base"):
            v[0] = 1.0
        elif m:
            s = float(m.group(1))
            v[0], v[1] = s, np.sqrt(max(0.0, 1 - s * s))
        elif (a := re.match(r"axis=(\d+)", text)) is not None:
            v[int(a.group(1))] = 1.0
        else:
            rng = np.random.default_rng(zlib.crc32(text.encode()))
            v[3:] = rng.standard_normal(self.dim - 3)
            v /= np.linalg.norm(v)
        return v

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([self._one(t) for t in texts], dtype=np.float32).reshape(
            len(texts), self.dim
        )

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def dump(store: MemoryStore) -> list[str]:
    """Every table's content as SQL text (a full database dump, for before/after comparisons)."""
    with store.core.read():
        return list(store.core._conn.iterdump())


def dump_file(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()
