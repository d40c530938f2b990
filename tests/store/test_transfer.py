"""JSON-lines export and import: a round trip keeps every memory, field and event."""

from __future__ import annotations

import pytest
from store_helpers import Clock

from memlab.store import MemoryStore


def test_round_trip(tmp_path, clock: Clock) -> None:
    a = MemoryStore(clock=clock)
    a.ingest("Alice likes tea. She lives in Porto.", entity="alice", topics=["people"])
    a.ingest("Alice likes tea. She lives in Porto now.", entity="alice")  # update -> version event
    a.ingest("Alice works on the data team.", entity="alice")
    clock.advance(days=60)
    a.consolidate()
    a.search("Alice tea")
    out = tmp_path / "export.jsonl"
    assert a.export_jsonl(out) == len(a)
    b = MemoryStore(clock=clock)
    mapping = b.import_jsonl(out)
    assert mapping == {i: i for i in mapping}  # ids were free: kept
    cols = ["id", "content", "project", "topics", "layer", "entity", "importance", "stability",
            "status", "consolidated_into", "access_count", "created_at", "last_access"]  # fmt: skip
    da, db = a.to_dataframe()[cols], b.to_dataframe()[cols]
    assert da.equals(db)
    for mid in mapping:
        ha, hb = a.history(mid), b.history(mid)
        assert hb["kind"].iloc[-1] == "import"
        assert ha[["kind", "text"]].equals(hb[["kind", "text"]].iloc[:-1].reset_index(drop=True))
    assert b.search("Porto tea", mark_accessed=False)


def test_import_remaps_taken_ids(tmp_path, clock: Clock) -> None:
    a = MemoryStore(clock=clock)
    a.ingest("first memory about rivers")
    out = tmp_path / "e.jsonl"
    a.export_jsonl(out)
    mapping = a.import_jsonl(out)
    assert mapping == {1: 2} and a.get(2).content == a.get(1).content


def test_bad_file_changes_nothing(tmp_path, clock: Clock) -> None:
    s = MemoryStore(clock=clock)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "other"}\n')
    with pytest.raises(ValueError, match="not a memlab"):
        s.import_jsonl(bad)
    s.ingest("x memory")
    s.export_jsonl(tmp_path / "ok.jsonl")
    lines = (tmp_path / "ok.jsonl").read_text().splitlines()
    (tmp_path / "broken.jsonl").write_text(
        lines[0] + "\n" + lines[1].replace('"layer": "context"', '"layer": "zzz"')
    )
    with pytest.raises(ValueError, match="line 2"):
        s.import_jsonl(tmp_path / "broken.jsonl")
    assert len(s) == 1


def test_versions_links_and_history_survive_export_and_import(tmp_path, clock: Clock) -> None:
    a = MemoryStore(clock=clock)
    old = a.ingest("The nightly backup runs at 02:00 UTC.").memory_id
    a.ingest("Note: the nightly backup runs at 02:00 UTC!")  # an observation of `old`
    new = a.ingest("The nightly backup runs at 03:00 UTC.").memory_id
    assert a.get(old).status == "superseded"
    out = tmp_path / "v.jsonl"
    a.export_jsonl(out)
    b = MemoryStore(clock=clock)
    b.ingest("Something else entirely, about kites.")
    mapping = b.import_jsonl(out)
    assert b.versions(mapping[new])["memory_id"].tolist() == [mapping[old], mapping[new]]
    assert [h.memory.id for h in b.search("backup", mark_accessed=False)] == [mapping[new]]
    hits = b.search("Note: the nightly backup", include_history=True, mark_accessed=False)
    assert mapping[old] in [h.memory.id for h in hits]
    superseded = b.core.execute(
        "SELECT COUNT(*) FROM memories_fts WHERE rowid = ?", (mapping[old],)
    ).fetchone()[0]
    assert superseded == 0  # an old version stays out of the keyword index of current memories
