"""Bad input: a clear exception naming the problem, and the database unchanged."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest
from store_helpers import Clock, dump

from memlab.store import MAX_CONTENT_BYTES, MemoryStore


class WrongDim:
    name = "wrong-dim"
    dim = 8

    def embed_documents(self, texts):
        return np.ones((len(texts), 7), dtype=np.float32)

    def embed_query(self, text):
        return np.ones(7, dtype=np.float32)


class NaNEmbedder(WrongDim):
    name = "nan"

    def embed_documents(self, texts):
        return np.full((len(texts), 8), np.nan, dtype=np.float32)


BAD_INGEST = [
    ((None,), {}, TypeError, "content must be a str"),
    ((b"bytes",), {}, TypeError, "content must be a str"),
    (("",), {}, ValueError, "empty"),
    (("   \n",), {}, ValueError, "empty"),
    (("x" * (MAX_CONTENT_BYTES + 1),), {}, ValueError, "maximum"),
    (("ok",), {"now": datetime(2026, 1, 1)}, ValueError, "naive"),
    (("ok",), {"now": "2026-01-01"}, TypeError, "timezone-aware"),
    (("ok",), {"importance": float("nan")}, ValueError, "importance"),
    (("ok",), {"importance": 1.5}, ValueError, "importance"),
    (("ok",), {"importance": True}, TypeError, "importance"),
    (("ok",), {"layer": "dreams"}, ValueError, "layer"),
    (("ok",), {"altitude": "sky"}, ValueError, "altitude"),
    (("ok",), {"topics": "single"}, TypeError, "topics"),
    (("ok",), {"topics": ["a", 3]}, ValueError, "topic"),
    (("ok",), {"project": ""}, ValueError, "project"),
    (("ok",), {"colour": "red"}, TypeError, "colour"),
]


@pytest.mark.parametrize(("args", "kwargs", "error", "match"), BAD_INGEST)
def test_bad_ingest_changes_nothing(file_store: MemoryStore, args, kwargs, error, match) -> None:
    file_store.ingest("an existing memory")
    before = dump(file_store)
    with pytest.raises(error, match=match):
        file_store.ingest(*args, **kwargs)
    assert dump(file_store) == before


def test_ten_megabytes_rejected(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match=str(MAX_CONTENT_BYTES)):
        store.ingest("a" * 10_000_000)
    assert len(store) == 0


def test_bad_item_in_batch_stores_nothing(file_store: MemoryStore) -> None:
    before = dump(file_store)
    with pytest.raises(ValueError, match="item 2"):
        file_store.ingest_many(["fine", "also fine", ""])
    with pytest.raises(ValueError, match="^item 0: layer"):  # the first of several is named
        file_store.ingest_many([{"content": "x", "layer": "sky"}, "fine"])
    with pytest.raises(TypeError, match="unknown keys"):
        file_store.ingest_many([{"content": "x", "bogus": 1}])
    assert dump(file_store) == before


@pytest.mark.parametrize("embedder", [WrongDim(), NaNEmbedder()])
def test_bad_embedder_output(tmp_path, clock: Clock, embedder) -> None:
    s = MemoryStore(tmp_path / "w.db", embedder=embedder, clock=clock)
    before = dump(s)
    with pytest.raises(ValueError, match="returned"):
        s.ingest("anything")
    with pytest.raises(ValueError, match="returned"):
        s.search("anything")
    assert dump(s) == before and len(s) == 0
    s.close()


def test_wrong_query_vector(store: MemoryStore) -> None:
    store.ingest("something")
    with pytest.raises(ValueError, match="query_vector"):
        store.search("something", query_vector=np.ones(5))


BAD_SEARCH = [
    ((None,), {}, TypeError),
    (("",), {}, ValueError),
    (("q",), {"k": 0}, ValueError),
    (("q",), {"k": 2.5}, TypeError),
    (("q",), {"now": datetime(2026, 1, 1)}, ValueError),
    (("q",), {"time_weight": 2.0}, ValueError),
    (("q",), {"topic_weight": float("nan")}, ValueError),
    (("q",), {"topics": "t"}, TypeError),
    (("q",), {"limit": 3}, TypeError),
]


@pytest.mark.parametrize(("args", "kwargs", "error"), BAD_SEARCH)
def test_bad_search_changes_nothing(file_store: MemoryStore, args, kwargs, error) -> None:
    file_store.ingest("q memory")
    before = dump(file_store)
    with pytest.raises(error):
        file_store.search(*args, **kwargs)
    assert dump(file_store) == before


def test_bad_lifecycle_args(file_store: MemoryStore) -> None:
    mid = file_store.ingest("q memory").memory_id
    before = dump(file_store)
    with pytest.raises(ValueError, match="hours_back"):
        file_store.importance(mid, hours_back=-1)
    with pytest.raises(ValueError, match="level"):
        file_store.importance(mid, level=float("nan"))
    with pytest.raises(KeyError):
        file_store.importance(mid + 100)
    with pytest.raises(TypeError, match="memory_id"):
        file_store.purge("1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="dry_run"):
        file_store.forget_sweep(dry_run="no")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="naive"):
        file_store.consolidate(now=datetime(2026, 1, 1))
    assert dump(file_store) == before


@pytest.mark.parametrize(
    "kwargs",
    [
        {"secrets": "maybe"},
        {"time_weight": -0.1},
        {"candidates": 0},
        {"clock": 5},
        {"gate": 0.9},
        {"embedder": "bert"},
    ],
)
def test_bad_constructor_args(kwargs) -> None:
    with pytest.raises((TypeError, ValueError)):
        MemoryStore(**kwargs)


def test_a_closed_store_says_so(tmp_path) -> None:
    s = MemoryStore(tmp_path / "c.db")
    s.ingest("a fact kept before closing")
    s.close()
    s.close()  # a second close does nothing
    for call in (lambda: s.search("fact"), lambda: len(s), lambda: s.ingest("x"), s.stats):
        with pytest.raises(RuntimeError, match=r"this MemoryStore \(.*c\.db\) is closed"):
            call()
    with MemoryStore(tmp_path / "c.db") as again:
        assert [m.content for m in again.memories()] == ["a fact kept before closing"]


def test_an_infinite_weight_is_refused_as_not_finite(file_store: MemoryStore) -> None:
    """A weight or window >= 0 without an upper bound names finiteness as the rule it breaks
    ("must be in [0, inf], got inf" would contradict itself)."""
    mid = file_store.ingest("q memory").memory_id
    before = dump(file_store)
    with pytest.raises(ValueError, match=r"^topic_weight must be a finite number >= 0, got inf$"):
        file_store.search("q", topic_weight=float("inf"))
    with pytest.raises(ValueError, match=r"^hours_forward must be a finite number >= 0, got inf$"):
        file_store.importance(mid, hours_forward=float("inf"))
    with pytest.raises(ValueError, match=r"^hours_back must be a finite number >= 0, got -1.0$"):
        file_store.importance(mid, hours_back=-1.0)
    assert dump(file_store) == before
