"""The store's edges: what export may replace, the one time range, and import held to the
rules of ingest (ids, sizes, times, secrets, all or nothing, streamed)."""

from __future__ import annotations

import errno
import json
import os
import signal
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import Clock, dump

from memlab.store import MemoryStore
from memlab.store import files as store_files
from memlab.store.transfer import IMPORT_BATCH
from memlab.store.validation import MAX_CONTENT_BYTES, MAX_ID, MAX_TIME, MIN_TIME

AWS = "AKIAIOSFODNN7EXAMPLE"


@pytest.fixture
def s(tmp_path: Path, clock: Clock):
    store = MemoryStore(tmp_path / "s.db", clock=clock)
    store.ingest("The staging database listens on port 5432.")
    yield store
    store.close()


def _no_temp(folder: Path) -> bool:
    return not [p for p in folder.iterdir() if ".tmp-" in p.name]


# ----------------------------------------------------------------------------- export targets
@pytest.mark.parametrize("device", ["/dev/null", "/dev/full"])
def test_export_never_replaces_a_character_device(s: MemoryStore, device: str) -> None:
    before = os.stat(device)
    with pytest.raises(ValueError, match="character device"):
        s.export_jsonl(device)
    after = os.lstat(device)
    assert (after.st_mode, after.st_rdev, after.st_ino) == (before.st_mode, before.st_rdev,
                                                           before.st_ino)  # fmt: skip


def test_export_to_a_fifo_fails_without_blocking(s: MemoryStore, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def hang(*_: object) -> None:
        raise TimeoutError("export blocked on the FIFO")

    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(10)
    try:
        with pytest.raises(ValueError, match="FIFO"):
            s.export_jsonl(fifo)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert fifo.is_fifo() and _no_temp(tmp_path)


def test_export_keeps_a_symlink_and_its_target(s: MemoryStore, tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text("keep me\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    with pytest.raises(ValueError, match="symbolic link"):
        s.export_jsonl(link)
    assert link.is_symlink() and real.read_text() == "keep me\n"


def test_export_refuses_a_directory(s: MemoryStore, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="directory"):
        s.export_jsonl(tmp_path)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EACCES, errno.EROFS])
def test_export_file_system_errors_keep_the_old_file(
    s: MemoryStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    """A full disk, a read-only folder (a stand-in: the tests run as root, which writes
    anyway): a clear OSError naming the target, the previous export intact, no temporary."""
    target = tmp_path / "e.jsonl"
    target.write_text("previous export\n")
    real_fsync = os.fsync

    def failing(fd: int) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(store_files.os, "fsync", failing)
    with pytest.raises(OSError, match=f"cannot write {target}") as caught:
        s.export_jsonl(target)
    monkeypatch.setattr(store_files.os, "fsync", real_fsync)
    assert caught.value.errno == code
    assert target.read_text() == "previous export\n" and _no_temp(tmp_path)
    assert s.export_jsonl(target) == 1  # the store still reads


# ----------------------------------------------------------------------------- one time range
@pytest.mark.parametrize(
    "now",
    [datetime(3000, 1, 1, tzinfo=UTC), datetime(1600, 1, 1, tzinfo=UTC),
     datetime.fromisoformat("9999-12-31T23:00:00-05:00"), MAX_TIME + timedelta(seconds=1)],
)  # fmt: skip
def test_times_out_of_range_refused_before_writing(s: MemoryStore, now: datetime) -> None:
    before = dump(s)
    for call in (lambda: s.ingest("a new fact about kites", now=now),
                 lambda: s.search("database", now=now),
                 lambda: s.ingest_many(["x y z"], now=now)):  # fmt: skip
        with pytest.raises(ValueError, match="outside the times a store holds"):
            call()
    assert dump(s) == before


@pytest.mark.parametrize("edge", [MIN_TIME, MAX_TIME])
def test_the_edges_of_the_range_read_back_everywhere(tmp_path: Path, edge: datetime) -> None:
    a = MemoryStore(clock=Clock(edge))
    first = a.ingest("The nightly backup runs at 02:00 UTC.").memory_id
    second = a.ingest("The nightly backup runs at 03:00 UTC.", now=edge).memory_id
    a.search("backup")
    frame = a.to_dataframe()
    assert set(frame["created_at"]) == {edge}
    assert set(a.history(first)["at"]) == {edge}
    assert set(a.versions(second)["created_at"]) == {edge}
    out = tmp_path / "edge.jsonl"
    a.export_jsonl(out)
    b = MemoryStore(clock=Clock(edge))
    b.import_jsonl(out)
    assert b.to_dataframe()["created_at"].equals(frame["created_at"])
    assert set(b.history(first)["at"]) == {edge}


# ----------------------------------------------------------------------------- import's rules
def _export(s: MemoryStore, path: Path) -> tuple[str, list[dict]]:
    s.export_jsonl(path)
    header, *lines = path.read_text().splitlines()
    return header, [json.loads(line) for line in lines]


def _write(path: Path, header: str, records: list[dict]) -> Path:
    path.write_text("\n".join([header, *(json.dumps(r) for r in records)]) + "\n")
    return path


@pytest.mark.parametrize(
    "change, match",
    [({"id": -5}, "id must be in"), ({"id": 0}, "id must be in"),
     ({"id": 2**63 - 1}, "id must be in"), ({"id": MAX_ID + 1}, "id must be in"),
     ({"id": 10**400}, "id must be in"),
     ({"content": "x" * (MAX_CONTENT_BYTES + 1)}, "maximum"),
     ({"created_at": 32503680000.0}, "POSIX seconds, 1678"),
     ({"events": [{"at": 1.7e9, "kind": "observation", "text": "y" * (MAX_CONTENT_BYTES + 1),
                   "grade": None, "data": None}]}, "content limit")],
)  # fmt: skip
def test_import_refuses_what_ingest_refuses(
    s: MemoryStore, tmp_path: Path, change: dict, match: str
) -> None:
    header, (good,) = _export(s, tmp_path / "e.jsonl")
    target = MemoryStore(tmp_path / "t.db")
    bad = {**good, **change}
    kept = {**good, "id": 10**6}
    path = _write(tmp_path / "bad.jsonl", header, [{**good, "id": 7}, bad, kept])
    before = dump(target)
    with pytest.raises(
        ValueError, match=f"1 line\\(s\\) refused, nothing imported: line 3: .*{match}"
    ):
        target.import_jsonl(path)
    assert dump(target) == before and len(target) == 0
    target.close()


def test_import_refuses_repeated_ids_and_reports_every_refused_line(
    s: MemoryStore, tmp_path: Path
) -> None:
    header, (good,) = _export(s, tmp_path / "e.jsonl")
    ids = [3, 3, 0, 9]
    path = _write(tmp_path / "d.jsonl", header, [{**good, "id": i} for i in ids])
    with pytest.raises(ValueError) as caught:
        s.import_jsonl(path)
    assert "2 line(s) refused" in str(caught.value)
    assert "line 3: id 3 repeats" in str(caught.value) and "line 4: id must be" in str(caught.value)
    assert len(s) == 1


def test_import_screens_events_and_links_data(tmp_path: Path, clock: Clock) -> None:
    a = MemoryStore(clock=clock, secrets="allow")
    one = a.ingest("The deploy key lives in the vault.").memory_id
    two = a.ingest("Kites fly best in steady wind.").memory_id
    header, records = _export(a, tmp_path / "e.jsonl")
    records[0]["events"][0]["data"] = {"note": f"aws_access_key_id = {AWS}"}
    records[0]["links"] = [{"target": two, "kind": "related", "at": records[0]["created_at"],
                            "data": {"why": f"key {AWS}"}}]  # fmt: skip
    path = _write(tmp_path / "s.jsonl", header, records)
    b = MemoryStore(tmp_path / "b.db", clock=clock)
    b.import_jsonl(path)
    b.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("b.db*") if p.is_file())
    assert AWS.encode() not in raw
    strict = MemoryStore(clock=clock, secrets="reject")
    with pytest.raises(ValueError, match="line 2"):
        strict.import_jsonl(path)
    assert len(strict) == 0 and one == 1


def _peak_over_final(path: Path) -> int:
    """What an import holds beyond what the store keeps afterwards (tracemalloc, bytes)."""
    with MemoryStore(path.with_suffix(".db")) as target:
        tracemalloc.start()
        target.import_jsonl(path)
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak - current


def test_import_streams_its_file(tmp_path: Path) -> None:
    """The transient memory of an import does not grow with the number of records: a file four
    times longer costs less than half the difference of the files' sizes more."""
    sizes, costs = [], []
    for n in (2 * IMPORT_BATCH, 8 * IMPORT_BATCH):
        path = tmp_path / f"n{n}.jsonl"
        header = {"format": "memlab-store-jsonl", "version": 1, "embedder": "x", "dim": 384}
        t = 1.77e9
        rows = [{"id": i + 1, "content": f"memory {i} " + "word " * 800, "created_at": t,
                 "updated_at": t, "project": None, "topics": [], "layer": "context",
                 "entity": None, "altitude": "implementation", "importance": 0.5,
                 "stability": 1.0, "difficulty": 5.0, "storage": 0.0, "retrieval": 1.0,
                 "access_count": 0, "last_access": t, "status": "active",
                 "consolidated_into": None, "events": []} for i in range(n)]  # fmt: skip
        _write(path, json.dumps(header), rows)
        sizes.append(path.stat().st_size)
        costs.append(_peak_over_final(path))
    assert costs[1] - costs[0] < (sizes[1] - sizes[0]) / 2, (costs, sizes)


_text = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"),
                min_size=1, max_size=60).filter(str.strip)  # fmt: skip


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(_text, min_size=1, max_size=5),
    days=st.lists(st.floats(0, 1e5), min_size=1, max_size=5),
    project=st.none() | _text,
    topics=st.lists(_text, max_size=3),
)
def test_import_round_trips_every_record_export_writes(
    tmp_path: Path, texts: list[str], days: list[float], project: str | None, topics: list[str]
) -> None:
    a = MemoryStore(clock=Clock(MIN_TIME), secrets="allow")
    for text, d in zip(texts, days * len(texts), strict=False):
        a.ingest(text, project=project, topics=topics, now=MIN_TIME + timedelta(days=d))
    a.search(texts[0])
    first = tmp_path / "a.jsonl"
    a.export_jsonl(first)
    b = MemoryStore(clock=Clock(MAX_TIME), secrets="allow")
    b.import_jsonl(first)
    second = tmp_path / "b.jsonl"
    b.export_jsonl(second)
    for x, y in zip(first.read_text().splitlines()[1:], second.read_text().splitlines()[1:],
                    strict=True):  # fmt: skip
        rx, ry = json.loads(x), json.loads(y)
        assert ry["events"][:-1] == rx["events"] and ry["events"][-1]["kind"] == "import"
        assert {**ry, "events": None} == {**rx, "events": None}
