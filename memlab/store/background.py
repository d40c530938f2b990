"""One worker thread per store core, in which a search's vector side runs beside its keyword side.

A hybrid search has two independent parts: the query's embedding and vector-index query, and
the FTS5 keyword query on the SQLite connection. ONNX Runtime, annoy, faiss, numpy and SQLite
all release the GIL while they compute, so on two cores running the vector part in a worker
thread makes a search take about the longer of the two parts instead of their sum. Only what
touches no connection runs in the worker (the embedder and the index's in-memory query); the
caller keeps its read block open until the result is in, so the index is never refreshed,
rebuilt or unloaded under the query.

The pool is made lazily and again in a forked child (a thread does not survive ``fork``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


class Worker:
    """A single background thread, started on first use and shut down by :meth:`close`."""

    def __init__(self, name: str = "memlab-search") -> None:
        self.name = name
        self._pool: ThreadPoolExecutor | None = None
        self._pid: int | None = None
        self._lock = threading.Lock()

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Run ``fn`` in the worker thread; its result (or exception) comes from the future."""
        with self._lock:
            if self._pool is None or self._pid != os.getpid():
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=self.name)
                self._pid = os.getpid()
            return self._pool.submit(fn)

    def close(self) -> None:
        """Wait for the running task and stop the thread (a later :meth:`submit` starts one)."""
        with self._lock:
            pool, self._pool = self._pool, None
            if pool is not None and self._pid == os.getpid():
                pool.shutdown(wait=True)


__all__ = ["Worker"]
