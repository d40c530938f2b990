"""Argument validators of the store's boundary (memlab.store.validation) and bad input at the store.

The pure validators are tested directly; the store-level tests check that bad input is a clear
error that changes nothing.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from store_helpers import Clock, dump

from memlab.store import MemoryStore
from memlab.store.validation import (
    MAX_CONTENT_BYTES,
    MAX_COUNT,
    MAX_EPOCH,
    MAX_ID,
    MIN_EPOCH,
    check_chars,
    check_content,
    check_count,
    check_epoch,
    check_id,
    check_items,
    check_optional_str,
    check_path,
    check_topics,
)

# ----------------------------------------------------------------------------- pure validators


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        ("a\x00b", ValueError, "NUL"),
        ("lone \ud800 high", ValueError, "lone surrogate"),
        ("lone \udfff low", ValueError, "lone surrogate"),
        (b"bytes", TypeError, "must be a str"),
        (None, TypeError, "must be a str"),
        ("   ", ValueError, "empty"),
    ],
)
def test_check_content_refuses(value, error, match) -> None:
    with pytest.raises(error, match=match):
        check_content(value, "query")
    with pytest.raises(error, match=match):
        check_content(value)


def test_check_content_names_the_argument_and_the_position() -> None:
    with pytest.raises(ValueError, match=r"query contains a lone surrogate .* at index 3"):
        check_content("abc\udc80", "query")
    with pytest.raises(ValueError, match=f"the content limit, {MAX_CONTENT_BYTES} bytes"):
        check_content("a" * (MAX_CONTENT_BYTES + 1), "query")


@given(st.text(min_size=1).filter(str.strip))
def test_valid_text_passes_and_encodes(text: str) -> None:
    if "\x00" in text:
        with pytest.raises(ValueError):
            check_content(text, "t")
    else:
        assert check_content(text, "t") == text
        text.encode("utf-8")  # what every later export does


def test_metadata_strings_refuse_surrogates_and_nul() -> None:
    with pytest.raises(ValueError, match="project contains a NUL"):
        check_optional_str("a\x00", "project")
    with pytest.raises(ValueError, match="entity contains a lone surrogate"):
        check_optional_str("x\ud83d", "entity")
    with pytest.raises(ValueError, match="topic contains a lone surrogate"):
        check_topics(["ok", "t\ud800"])
    assert check_topics(["a", "b", "a"]) == ("a", "b")
    assert check_chars("emoji 🙂 ok", "x") == "emoji 🙂 ok"  # a surrogate *pair* is not lone


@pytest.mark.parametrize("good", [1, 42, MAX_ID, np.int64(7), -1])
def test_check_id_accepts(good) -> None:
    assert check_id(good) == int(good)


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (2**63, ValueError),
        (2**64, ValueError),
        (-(2**63) - 1, ValueError),
        ("1", TypeError),
        (1.0, TypeError),
        (True, TypeError),
        (None, TypeError),
    ],
)
def test_check_id_refuses(bad, error) -> None:
    with pytest.raises(error, match="memory_id"):
        check_id(bad)


def test_check_count_bounds() -> None:
    assert check_count(MAX_COUNT, "k") == MAX_COUNT
    for bad in (0, -1, 2**31):
        with pytest.raises(ValueError, match="k must be a positive integer of at most 2147483647"):
            check_count(bad, "k")
    for wrong_type in (2.5, True, "3", None):  # a wrong type is a TypeError, as check_number's
        with pytest.raises(TypeError, match="k must be an integer"):
            check_count(wrong_type, "k")
    with pytest.raises(ValueError, match="at most 10"):
        check_count(11, "n", maximum=10)


def test_check_path(tmp_path: Path) -> None:
    assert check_path(":memory:") == ":memory:"
    assert check_path(tmp_path / "a.db") == str(tmp_path / "a.db")
    with pytest.raises(ValueError, match="its folder .* does not exist"):
        check_path(str(tmp_path / "new" / "b.db"))
    with pytest.raises(ValueError, match="not a regular file"):
        check_path("/dev/null")  # nor a journal file created beside a device
    assert not Path("/dev/null-journal").exists()
    with pytest.raises(TypeError, match="got None"):
        check_path(None)
    with pytest.raises(TypeError, match="bytes"):
        check_path(b"/tmp/x.db")
    with pytest.raises(TypeError, match="int"):
        check_path(3)
    with pytest.raises(ValueError, match="empty"):
        check_path("")
    with pytest.raises(ValueError, match="NUL"):
        check_path("a\x00.db")
    with pytest.raises(ValueError, match="is a directory"):
        check_path(tmp_path)


def test_check_items() -> None:
    assert check_items(["a", {"content": "b"}]) == ["a", {"content": "b"}]
    assert check_items(t for t in ("x", "y")) == ["x", "y"]
    assert check_items([]) == []
    with pytest.raises(TypeError, match="not a single str"):
        check_items("text")
    with pytest.raises(TypeError, match="not a single bytes"):
        check_items(b"text")
    with pytest.raises(TypeError, match="not a single mapping"):
        check_items({"content": "x"})
    with pytest.raises(TypeError, match="got int"):
        check_items(5)
    with pytest.raises(TypeError, match="item 1: must be a str or a dict, got int"):
        check_items(["ok", 3])


def test_check_epoch() -> None:
    now = datetime(2026, 1, 5, tzinfo=UTC).timestamp()
    assert check_epoch(now, "created_at") == now
    assert datetime.fromtimestamp(MIN_EPOCH, tz=UTC).year == 1678
    assert datetime.fromtimestamp(MAX_EPOCH, tz=UTC).year == 2261
    for bad in (1e300, -1e300, float("nan"), float("inf"), MAX_EPOCH + 1, MIN_EPOCH - 1):
        with pytest.raises(ValueError, match="created_at"):
            check_epoch(bad, "created_at")
    for bad in ("2026", None, True):
        with pytest.raises(TypeError, match="created_at"):
            check_epoch(bad, "created_at")


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_accepted_epochs_convert(value: float) -> None:
    try:
        v = check_epoch(value, "t")
    except ValueError:
        return
    datetime.fromtimestamp(v, tz=UTC)  # never raises for an accepted value
    pd.Timestamp(v, unit="s", tz="UTC")  # nor in pandas' nanosecond range


# ----------------------------------------------------------------------------- at the store


@pytest.fixture
def filled(tmp_path: Path):
    s = MemoryStore(tmp_path / "v.db", clock=Clock())
    s.ingest("an existing memory about the deploy")
    yield s
    s.close()


def test_huge_ids_are_clear_errors(filled: MemoryStore) -> None:
    before = dump(filled)
    for call in (filled.get, filled.purge, filled.access):
        with pytest.raises(ValueError, match="64-bit"):
            call(2**63)
    assert dump(filled) == before


def test_k_beyond_a_c_int_is_a_clear_error(filled: MemoryStore) -> None:
    before = dump(filled)
    with pytest.raises(ValueError, match="at most"):
        filled.search("deploy", k=2**31)
    assert dump(filled) == before


def test_surrogate_or_nul_in_metadata_refused(filled: MemoryStore) -> None:
    before = dump(filled)
    with pytest.raises(ValueError, match="surrogate"):
        filled.ingest("another memory", topics=["ops\ud800"])
    with pytest.raises(ValueError, match="surrogate"):
        filled.ingest("bad \udc80 text")
    with pytest.raises(ValueError, match="NUL"):
        filled.ingest("fine text", entity="a\x00b")
    assert dump(filled) == before


def test_surrogate_in_query_refused(filled: MemoryStore, tmp_path: Path) -> None:
    before = dump(filled)
    with pytest.raises(ValueError, match="surrogate"):
        filled.search("deploy \ud800")
    assert dump(filled) == before


@pytest.mark.parametrize("items", ["text", {"content": "x"}])
def test_ingest_many_refuses_a_lone_text_or_mapping(filled: MemoryStore, items) -> None:
    before = dump(filled)
    with pytest.raises(TypeError, match="not a single"):
        filled.ingest_many(items)
    assert dump(filled) == before


def test_path_none_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError, match="None"):
        MemoryStore(None)  # type: ignore[arg-type]
    assert not (tmp_path / "None").exists()


@pytest.mark.parametrize("kind", ["hnsw", ""])
def test_index_kind_refused(kind) -> None:
    with pytest.raises(ValueError, match="kind"):
        MemoryStore(":memory:", index=kind)


def test_import_with_out_of_range_time_refused(tmp_path: Path) -> None:
    src = MemoryStore(tmp_path / "src.db", clock=Clock())
    src.ingest("a memory to export")
    src.export_jsonl(tmp_path / "d.jsonl")
    src.close()
    lines = (tmp_path / "d.jsonl").read_text().splitlines()
    record = json.loads(lines[-1])
    record["created_at"] = 1e15  # year ~31 million
    lines[-1] = json.dumps(record)
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n")
    dest = MemoryStore(tmp_path / "dst.db", clock=Clock())
    with pytest.raises(ValueError, match="created_at"):
        dest.import_jsonl(tmp_path / "d.jsonl")
    assert len(dest) == 0
    dest.memories()
    dest.close()
