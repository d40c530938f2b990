"""Corrupt, foreign and malformed files: rebuilt from the database when derived, refused
untouched when another application's."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import warnings
from pathlib import Path

import numpy as np
import pytest
from store_helpers import Clock

from memlab.store import IndexOptions, MemoryStore


def _texts(seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(f"s{seed}w{int(w)}" for w in rng.integers(0, 10**5, size=7)) for _ in range(n)]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("manifest", ["[]", "{}", '{"version": 2, "dim": "384"}', "null", "7"])
def test_malformed_manifest_rebuilt(tmp_path: Path, clock: Clock, manifest: str) -> None:
    path = tmp_path / "m.db"
    with MemoryStore(path, clock=clock, index=IndexOptions(n_trees=4)) as s:
        ids = [r.memory_id for r in s.ingest_many(_texts(1, 40))]
        s.rebuild_index()
        text = s.get(ids[11]).content
    (tmp_path / "m.db.annoy.json").write_text(manifest)
    with MemoryStore(path, clock=clock, index=IndexOptions(n_trees=4)) as s:
        assert s.index.last_load != "loaded" and s.index.rebuilds == 1
        assert s.rankings(text, 1)[1][0][0] == ids[11]


def test_index_of_another_store_not_used(tmp_path: Path, clock: Clock) -> None:
    """Two stores with the same first and last rows, different rows between: the index of one
    copied beside the other is refused and rebuilt (it would answer with the wrong ids)."""
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    edge_first, edge_last = _texts(2, 4), _texts(3, 4)
    for path, middle_seed in ((a, 4), (b, 5)):
        with MemoryStore(path, clock=clock, index=IndexOptions(n_trees=4)) as s:
            s.ingest_many(edge_first + _texts(middle_seed, 40) + edge_last)
            s.rebuild_index()
    for suffix in (".annoy", ".annoy.json"):
        shutil.copyfile(str(a) + suffix, str(b) + suffix)
    with MemoryStore(b, clock=clock, index=IndexOptions(n_trees=4)) as s:
        assert s.index.last_load != "loaded" and s.index.rebuilds == 1
        for mid in (10, 20, 30):
            assert s.rankings(s.get(mid).content, 1)[1][0][0] == mid


def test_truncated_vector_recomputed(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "t.db"
    with MemoryStore(path, clock=clock) as s:
        ids = [r.memory_id for r in s.ingest_many(_texts(6, 30))]
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE memories SET embedding = substr(embedding, 1, 100) WHERE id = ?", (ids[5],)
    )
    conn.commit()
    conn.close()
    with pytest.warns(UserWarning, match="repaired"):
        s = MemoryStore(path, clock=clock)
    assert s.core.open_report["vectors_recomputed"] == [ids[5]]
    assert s.rankings(s.get(ids[5]).content, 1)[1][0][0] == ids[5]
    s.close()


@pytest.mark.parametrize("damage", ["drop_vocab", "drop_fts", "delete_row", "foreign_row"])
def test_keyword_index_checked_and_rebuilt(tmp_path: Path, clock: Clock, damage: str) -> None:
    path = tmp_path / "k.db"
    with MemoryStore(path, clock=clock) as s:
        ids = [r.memory_id for r in s.ingest_many(_texts(7, 30))]
        word = s.get(ids[3]).content.split()[2]
    conn = sqlite3.connect(path)
    if damage == "drop_vocab":
        conn.execute("DROP TABLE memories_fts_vocab")
    elif damage == "drop_fts":
        conn.execute("DROP TABLE memories_fts_vocab")
        conn.execute("DROP TABLE memories_fts")
    elif damage == "delete_row":
        conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (ids[3],))
    else:
        conn.execute("INSERT INTO memories_fts(rowid, content) VALUES (9999, 'ghost words')")
    conn.commit()
    conn.close()
    with pytest.warns(UserWarning, match="repaired"):
        s = MemoryStore(path, clock=clock)
    assert s.core.open_report["keyword_index"]
    keyword, _ = s.rankings(word, 5)
    assert keyword and keyword[0][0] == ids[3]
    assert not s.rankings("ghost", 5)[0]
    s.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # sound now: nothing to repair at the next open
        MemoryStore(path, clock=clock).close()


def test_symbols_stay_searchable_after_reopening(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "m.db"
    with MemoryStore(path, clock=clock) as s:
        memory_id = s.ingest("Paid €250 for Zyxware™ licences").memory_id
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a symbol's spaced keyword text is no damage to repair
        s = MemoryStore(path, clock=clock)
    assert [i for i, _ in s.rankings("™", 5)[0]] == [memory_id]
    s.close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE memories_fts_vocab")
    conn.commit()
    conn.close()
    with pytest.warns(UserWarning, match="repaired"):
        s = MemoryStore(path, clock=clock)
    assert [i for i, _ in s.rankings("€", 5)[0]] == [memory_id]  # rebuilt as it was written
    s.close()


def _foreign_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO users (name) VALUES ('ada')")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("kind", ["other_app", "other_app_with_meta", "not_sqlite"])
def test_foreign_file_refused_untouched(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "other.db"
    if kind == "not_sqlite":
        path.write_text("name,score\nada,3\n" * 50)
    else:
        _foreign_db(path)
        if kind == "other_app_with_meta":
            conn = sqlite3.connect(path)
            conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
            conn.execute("PRAGMA application_id = 1234")
            conn.commit()
            conn.close()
    from memlab.store import ForeignDatabaseError

    before = _digest(path)
    with pytest.raises(ForeignDatabaseError, match="other.db"):
        MemoryStore(path)
    assert _digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]  # no -wal, no index
    if kind != "not_sqlite":
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        conn.close()


def test_store_without_application_id_adopted(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "old.db"
    with MemoryStore(path, clock=clock) as s:
        mid = s.ingest("an old memory about the boiler").memory_id
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 0")  # as stores written before the id
    conn.commit()
    conn.close()
    with MemoryStore(path, clock=clock) as s:
        assert s.get(mid).content == "an old memory about the boiler"
    from memlab.store.schema import APPLICATION_ID

    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.close()


def test_manifest_records_store_and_content(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "c.db"
    with MemoryStore(path, clock=clock, index=IndexOptions(n_trees=4)) as s:
        s.ingest_many(_texts(8, 20))
        s.rebuild_index()
        uid = s.core.meta("store_uid")
    manifest = json.loads((tmp_path / "c.db.annoy.json").read_text())
    assert manifest["store_uid"] == uid and len(manifest["content_checksum"]) == 32
    # a covered vector changed behind the index's back: stale, rebuilt
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE memories SET embedding = ? WHERE id = 9",
        ((np.ones(384) / np.sqrt(384)).astype("<f4").tobytes(),),
    )
    conn.commit()
    conn.close()
    with MemoryStore(path, clock=clock, index=IndexOptions(n_trees=4)) as s:
        assert s.index.last_load.startswith("stale") and s.index.rebuilds == 1


def _file_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (path, Path(str(path) + "-wal")) if p.exists())


def test_purged_text_leaves_the_file(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "p.db"
    marker = "quixoticzanzibarmarker"
    s = MemoryStore(path, clock=clock)
    s.ingest_many(_texts(9, 30))
    mid = s.ingest(f"the vault phrase is {marker} for the archive room").memory_id
    s.ingest_many(_texts(10, 30))
    assert marker.encode() in _file_bytes(path)
    s.purge(mid)
    assert marker.encode() not in _file_bytes(path)
    s.close()
    assert marker.encode() not in _file_bytes(path)


def test_no_secret_in_the_file_from_metadata_queries_or_imports(
    tmp_path: Path, clock: Clock
) -> None:
    key = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    src = MemoryStore(tmp_path / "src.db", clock=clock, secrets="allow")
    src.ingest(f"deploy with {key} tonight", topics=[f"token {key}"])
    src.export_jsonl(tmp_path / "e.jsonl")
    src.close()
    path = tmp_path / "clean.db"
    s = MemoryStore(path, clock=clock)  # the default: redact
    s.ingest("the deploy runs tonight", project=f"proj {key}", entity=f"bot {key}")
    s.ingest("the pump runs at night", topics=["ops", f"key {key}"])
    assert s.search(f"deploy {key}", k=2)  # the query kept in access events
    s.import_jsonl(tmp_path / "e.jsonl")
    s.close()
    assert key.encode() not in _file_bytes(path)
