"""A search's vector side in the core's worker thread: same rankings as run one after the other,
errors raised to the caller with nothing written, the worker never left running, forks safe."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from store_helpers import dump

from memlab.embed import HashingEmbedder
from memlab.store import MemoryStore

TEXTS = [
    "the deploy pipeline uses blue green releases",
    "Ana prefers dark roast coffee in the morning",
    "the staging database migrated to postgres 16",
    "Ana reviewed the flaky integration tests on Friday",
    "latency of the search API doubled after the cache change",
    "the release plan moves the launch to March",
    "Bo owns the on-call rotation for the payments service",
    "the coffee machine on floor three is broken again",
]


class ThreadRecordingEmbedder(HashingEmbedder):
    """The hashing embedder, noting the thread each query is embedded in."""

    def __init__(self) -> None:
        super().__init__()
        self.query_threads: list[str] = []

    def embed_query(self, text: str):  # type: ignore[no-untyped-def]
        self.query_threads.append(threading.current_thread().name)
        return super().embed_query(text)


@pytest.fixture(params=["annoy", "ivf"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> MemoryStore:
    if request.param == "ivf":
        pytest.importorskip("faiss")
    s = MemoryStore(tmp_path / "m.db", embedder=ThreadRecordingEmbedder(), index=request.param)
    s.ingest_many(TEXTS)
    s.archive(s.search("coffee machine broken", k=1, mark_accessed=False)[0].memory.id)
    return s


@pytest.mark.parametrize("statuses", [("active",), ("active", "archived", "superseded")])
@pytest.mark.parametrize("min_similarity", [None, 0.2])
def test_started_search_equals_the_serial_one(
    store: MemoryStore, statuses: tuple[str, ...], min_similarity: float | None
) -> None:
    core = store.core
    for query in ("coffee", "who owns the on-call rotation", "release plan March", "zzz"):
        qvec = core.embed_query(query)
        with core.read():
            serial = core.vector_search(qvec, 5, statuses=statuses, min_similarity=min_similarity)
            started = core.start_vector_search(
                query, 5, statuses=statuses, min_similarity=min_similarity
            )
            got_vec, got = started.result()
        np.testing.assert_array_equal(got_vec, qvec)
        assert got == serial


@pytest.mark.parametrize("overlap", [True, False])
def test_the_query_is_embedded_in_the_worker_and_rankings_are_unchanged(
    store: MemoryStore, overlap: bool
) -> None:
    embedder = store.embedder
    assert isinstance(embedder, ThreadRecordingEmbedder)
    embedder.query_threads.clear()
    store.core.overlap_search = overlap
    keyword, vector = store.rankings("Ana coffee", 5)
    assert embedder.query_threads and all(
        name.startswith("memlab-search") == overlap for name in embedder.query_threads
    )
    core = store.core
    with core.read():
        assert keyword == core.keyword_search("Ana coffee", 5)
        qvec = core.embed_query("Ana coffee")
        floor = store.options.min_similarity
        assert vector == core.vector_search(qvec, 5, min_similarity=floor)


@pytest.mark.parametrize("overlap", [True, False])
def test_a_bad_query_vector_raises_and_writes_nothing(store: MemoryStore, overlap: bool) -> None:
    store.core.overlap_search = overlap
    before = dump(store)
    with pytest.raises(ValueError, match="query_vector must be a finite vector"):
        store.search("coffee", query_vector=np.ones(7))
    with pytest.raises(ValueError, match="query_vector must be a finite vector"):
        store.search("coffee", query_vector=np.full(store.embedder.dim, np.nan))
    assert dump(store) == before


def test_a_failing_keyword_side_waits_for_the_worker(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    core = store.core
    started: list = []
    real_start = core.start_vector_search

    def recording_start(*args, **kwargs):  # type: ignore[no-untyped-def]
        started.append(real_start(*args, **kwargs))
        return started[-1]

    def broken_keyword_search(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("keyword side failed")

    monkeypatch.setattr(core, "start_vector_search", recording_start)
    monkeypatch.setattr(core, "keyword_search", broken_keyword_search)
    with pytest.raises(RuntimeError, match="keyword side failed"):
        store.search("coffee")
    assert started and started[0]._future.done()  # the block ended after the worker


def test_close_stops_the_worker_and_a_reopened_store_searches(tmp_path: Path) -> None:
    # this store's worker only: a store another test left open keeps its own worker thread
    before = set(threading.enumerate())
    s = MemoryStore(tmp_path / "m.db")
    s.ingest_many(TEXTS)
    assert s.search("coffee", mark_accessed=False)
    assert [t for t in set(threading.enumerate()) - before if t.name.startswith("memlab-search")]
    s.close()
    assert not [
        t for t in set(threading.enumerate()) - before if t.name.startswith("memlab-search")
    ]
    again = MemoryStore(tmp_path / "m.db")
    assert again.search("coffee", mark_accessed=False)[0].memory.content == TEXTS[1]
    again.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_searches_with_its_own_worker(tmp_path: Path) -> None:
    s = MemoryStore(tmp_path / "m.db")
    s.ingest_many(TEXTS)
    expected = [h.memory.id for h in s.search("coffee", mark_accessed=False)]  # worker started
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        code = 1
        try:
            got = [h.memory.id for h in s.search("coffee", mark_accessed=False)]
            os.write(write_end, repr(got).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    deadline = time.monotonic() + 60
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if done[0] == 0:  # a child waiting on its parent's dead worker thread would hang
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child's search did not finish in 60 s")
    status = done[1]
    reported = os.read(read_end, 10_000).decode()
    os.close(read_end)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert reported == repr(expected)
    s.close()
