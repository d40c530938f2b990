"""Bad arguments stop at the store's boundary with a clear error, and change nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_helpers import Clock, dump

from memlab.store import IndexOptions, MemoryStore


@pytest.fixture
def filled(tmp_path: Path, clock: Clock) -> MemoryStore:
    s = MemoryStore(tmp_path / "b.db", clock=clock)
    s.ingest_many(["the boiler pressure is 2 bar", "the pump runs at night", "valve seven leaks"])
    return s


@pytest.mark.parametrize("items", ["a whole text", {"content": "x"}, b"bytes"])
def test_ingest_many_refuses_a_single_text_or_mapping(filled: MemoryStore, items: object) -> None:
    before = dump(filled)
    with pytest.raises(TypeError, match="not a single"):
        filled.ingest_many(items)  # type: ignore[arg-type]
    assert dump(filled) == before


@pytest.mark.parametrize("memory_id", [2**63, 2**64 + 5, -(2**63) - 1])
def test_ids_out_of_range(filled: MemoryStore, memory_id: int) -> None:
    before = dump(filled)
    for call in (filled.get, filled.history, filled.access, filled.purge, filled.restore):
        with pytest.raises(ValueError, match="memory_id"):
            call(memory_id)
    with pytest.raises(ValueError, match="memory_id"):
        filled.importance(memory_id)
    assert dump(filled) == before


@pytest.mark.parametrize("k", [2**31, 2**63, 10_001])
def test_result_counts_bounded(filled: MemoryStore, k: int) -> None:
    with pytest.raises(ValueError, match="at most"):
        filled.search("pump", k=k)
    with pytest.raises(ValueError, match="at most"):
        filled.rankings("pump", k=k)
    assert filled.search("pump", k=10_000, mark_accessed=False)


def test_a_query_over_the_content_limit_is_refused(filled: MemoryStore) -> None:
    """A query is held to the content limit: longer than any memory, it would only be echoed
    back (the MCP result repeats it) beyond what one result may carry."""
    from memlab.store import MAX_CONTENT_BYTES

    before = dump(filled)
    query = "pump " * (MAX_CONTENT_BYTES // 5 + 1)
    for call in (filled.search, filled.rankings):
        with pytest.raises(ValueError, match="query is .* bytes; the maximum is the content limit"):
            call(query)
    assert dump(filled) == before
    assert filled.search(query[:MAX_CONTENT_BYTES], mark_accessed=False)


def test_path_none_is_a_type_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError, match="path"):
        MemoryStore(path=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="directory"):
        MemoryStore(tmp_path)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "kwargs",
    [{"n_trees": 0}, {"n_trees": -3}, {"search_k": 0}, {"search_k": -7}, {"switch_at": -1}],
)
def test_index_parameters_checked_before_any_file(tmp_path: Path, kwargs: dict) -> None:
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        MemoryStore(tmp_path / "p.db", index=IndexOptions(**kwargs))
    assert not (tmp_path / "p.db").exists()


BAD_TEXTS = ["lone \ud800 surrogate", "nul \x00 inside", "\udfff"]


@pytest.mark.parametrize("bad", BAD_TEXTS)
def test_invalid_unicode_refused_everywhere(tmp_path: Path, filled: MemoryStore, bad: str) -> None:
    before = dump(filled)
    calls = [
        lambda: filled.ingest(bad),
        lambda: filled.ingest("fine text here", topics=[bad]),
        lambda: filled.ingest("fine text here", project=bad),
        lambda: filled.ingest("fine text here", entity=bad),
        lambda: filled.ingest_many(["ok text one", {"content": "ok", "topics": ["a", bad]}]),
        lambda: filled.search(bad),
        lambda: filled.search("pump", topics=[bad]),
        lambda: filled.search("pump", project=bad),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="surrogate|NUL"):
            call()
    assert dump(filled) == before
    assert filled.export_jsonl(tmp_path / "e.jsonl") == 3  # exports keep working


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1))
def test_no_surrogate_reaches_the_database(surrogates: str) -> None:
    with MemoryStore(":memory:") as s:
        with pytest.raises(ValueError):
            s.ingest(f"text with {surrogates} inside")
        with pytest.raises(ValueError):
            s.search(f"query {surrogates}")
        assert len(s) == 0
