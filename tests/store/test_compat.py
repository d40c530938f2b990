"""Store files written by the schema-6 code (tests/store/fixtures/make_v_current.py) open with
this code: every memory, version and event intact, every vector searchable."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from memlab.store import MemoryStore
from memlab.store.schema import TOKENIZER

FIXTURES = Path(__file__).parent / "fixtures"

#: Counts printed by make_v_current.py when it wrote the fixtures.
V6_STORE = {
    "memories": 34,
    "events": 55,
    "links": 2,
    "history_texts": 3,
    "superseded": 2,
    "archived": 1,
    "lab": 4,
    "observations": 1,
}
V6_HNSW = {"memories": 10, "events": 10}

_TABLES = {
    "memories": "SELECT * FROM memories ORDER BY id",
    "events": "SELECT * FROM events ORDER BY id",
    "links": "SELECT * FROM links ORDER BY source, target, kind",
    "history_texts": "SELECT * FROM history_texts ORDER BY event_id",
}


def _copy(name: str, tmp_path: Path) -> Path:
    for p in FIXTURES.glob(name + "*"):
        shutil.copy(p, tmp_path / p.name)
    return tmp_path / name


#: Columns schema 9 added (validity in time), left out of the comparison with the fixture.
_NEW = ("valid_from", "valid_until")


def _dump(path: Path) -> dict[str, list[tuple[object, ...]]]:
    con = sqlite3.connect(path)
    con.row_factory = sqlite3.Row
    try:
        return {
            t: [tuple(r[k] for k in r.keys() if k not in _NEW) for r in con.execute(sql)]
            for t, sql in _TABLES.items()
        }
    finally:
        con.close()


def _check_searchable(store: MemoryStore) -> None:
    """Every memory of the namespace is its own nearest neighbour by its stored vector."""
    for m in store.memories():
        vec = np.frombuffer(
            store.core.execute("SELECT embedding FROM memories WHERE id = ?", (m.id,)).fetchone()[
                0
            ],
            dtype="<f4",
        )
        _, hits = store.rankings(m.content, 3, query_vector=vec, include_archived=True)
        assert hits[0][0] == m.id and hits[0][1] > 0.999, m.content


def test_v6_store_opens_intact(tmp_path: Path) -> None:
    path = _copy("v6_store.sqlite", tmp_path)
    before = _dump(path)
    assert {t: len(rows) for t, rows in before.items()} == {t: V6_STORE[t] for t in _TABLES}
    with MemoryStore(path) as store:
        mems = store.memories()
        assert len(mems) == V6_STORE["memories"] - V6_STORE["lab"]
        statuses = [m.status for m in mems]
        assert statuses.count("superseded") == V6_STORE["superseded"]
        assert statuses.count("archived") == V6_STORE["archived"]
        current = [m for m in mems if m.content.startswith("The API rate limit is 1200")]
        assert len(current) == 1
        versions = store.versions(current[0].id)
        assert [c.split(" is ")[1].split()[0] for c in versions["content"]] == [
            "600",
            "900",
            "1200",
        ]
        n_events = sum(len(store.history(m.id)) for m in mems)
        observations = sum((store.history(m.id)["kind"] == "observation").sum() for m in mems)
        assert observations == V6_STORE["observations"]
        for m in mems:  # valid since created; a superseded version until its successor came
            assert m.valid_from == m.created_at
            if m.status == "superseded":
                links = store.links(m.id)
                by = links[(links["target"] == m.id) & (links["kind"] == "supersedes")]
                successor = store.get(int(by["source"].iloc[0]))
                assert m.valid_until == successor.created_at
            else:
                assert m.valid_until is None
        found = store.search("deploy script staging token", k=1, mark_accessed=False)
        assert found[0].memory.content.startswith("The deploy script")
        _check_searchable(store)
    with MemoryStore(path, namespace="lab") as lab:
        assert len(lab) == V6_STORE["lab"]
        n_events += sum(len(lab.history(m.id)) for m in lab.memories())
        _check_searchable(lab)
    assert n_events == V6_STORE["events"]
    assert _dump(path) == before  # opening and reading changed no memory, event or link


def test_store_that_used_hnsw_opens_with_the_index_rebuilt(tmp_path: Path) -> None:
    path = _copy("v6_hnsw.sqlite", tmp_path)
    assert Path(f"{path}.hnsw").exists() and Path(f"{path}.hnsw.json").exists()
    before = _dump(path)
    assert len(before["memories"]) == V6_HNSW["memories"]
    assert len(before["events"]) == V6_HNSW["events"]
    with MemoryStore(path) as store:
        assert len(store) == V6_HNSW["memories"]
        _check_searchable(store)
    assert not Path(f"{path}.hnsw").exists() and not Path(f"{path}.hnsw.json").exists()
    assert _dump(path) == before


def _schema(path: Path) -> dict[str, str]:
    con = sqlite3.connect(path)
    try:
        return {r[0]: r[1] for r in con.execute("SELECT name, sql FROM sqlite_master")}
    finally:
        con.close()


def test_migrations_drop_the_journal_and_rebuild_the_keyword_indexes_only(tmp_path: Path) -> None:
    path = _copy("v6_store.sqlite", tmp_path)
    before, rows = _schema(path), _dump(path)
    assert "keyword_changes" in before
    MemoryStore(path).close()
    after = _schema(path)
    assert _dump(path) == rows
    for table in ("memories_fts", "history_fts"):
        assert TOKENIZER.replace("'", "''") in after[table]
    rebuilt = ("memories_fts", "history_fts", "memories")  # memories: the validity columns
    unchanged = {k: v for k, v in before.items() if k != "keyword_changes" and k not in rebuilt}
    assert {k: v for k, v in after.items() if k not in rebuilt} == unchanged
    con = sqlite3.connect(path)
    assert all(f"ADD COLUMN {c}" not in after["memories"] for c in _NEW)
    assert all(c in after["memories"] for c in _NEW)
    assert [r[0] for r in con.execute("SELECT version FROM schema_version")] == list(range(1, 10))
    assert (
        con.execute(
            "SELECT COUNT(*) FROM memories m JOIN memories_fts f ON f.rowid = m.id"
            " WHERE m.status != 'superseded' AND f.content = m.content"
        ).fetchone()[0]
        == con.execute("SELECT COUNT(*) FROM memories WHERE status != 'superseded'").fetchone()[0]
    )
    assert (
        con.execute("SELECT COUNT(*) FROM history_fts").fetchone()[0] == V6_STORE["history_texts"]
    )
    con.close()


@pytest.mark.parametrize("name", ["v6_store.sqlite", "v6_hnsw.sqlite"])
def test_fixture_reopens_after_a_write(tmp_path: Path, name: str) -> None:
    path = _copy(name, tmp_path)
    with MemoryStore(path) as store:
        n = len(store)
        store.ingest("A brand new fact about the telescope schedule")
    with MemoryStore(path) as store:
        assert len(store) == n + 1
        assert store.search("telescope schedule", k=1)[0].memory.content.startswith("A brand")
