"""Durability as a setting, real SQLite errors surfaced (a full disk), a derived index that
cannot be saved never costs an acknowledged write."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from store_helpers import Clock, dump

from memlab.store import Durability, IndexOptions, MemoryStore


def _texts(seed: int, n: int, words: int = 8) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(f"d{int(w)}" for w in rng.integers(0, 10**6, size=words)) for _ in range(n)]


@pytest.mark.parametrize(("mode", "level"), [("FULL", 2), ("NORMAL", 1)])
def test_synchronous_setting(tmp_path: Path, mode: str, level: int) -> None:
    kwargs = {} if mode == "FULL" else {"durability": Durability(synchronous=mode)}
    with MemoryStore(tmp_path / "s.db", **kwargs) as s:  # FULL is the default
        assert s.core.execute("PRAGMA synchronous").fetchone()[0] == level
        assert s.core.execute("PRAGMA secure_delete").fetchone()[0] == 1
        s.ingest("durable enough")
    with MemoryStore(tmp_path / "s.db", **kwargs) as s:
        assert len(s) == 1


def test_a_large_batch_commit_leaves_the_checkpoint_for_later(tmp_path: Path, clock: Clock) -> None:
    """A commit of more than SQLite's default 1,000 log pages is not copied into the database
    at once (the store checkpoints at WAL_AUTOCHECKPOINT_PAGES); a checkpoint, or closing the
    store, copies it."""
    path = tmp_path / "wal.db"
    with MemoryStore(path, clock=clock) as s:
        s.ingest("a first memory, checkpointed with the new file")
        assert s.core.checkpoint()
        size = path.stat().st_size
        s.ingest_many(_texts(8, 3000, words=12), batch_size=3000)
        assert path.stat().st_size == size  # the commit left its pages in the log
        frames = s.core.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
        assert frames > 1000  # one commit, more pages than SQLite's default threshold
        assert path.stat().st_size > size  # the checkpoint copied them
    with MemoryStore(path, clock=clock) as s:
        assert len(s) == 3001


@pytest.mark.parametrize("bad", ["OFF", "full", "EXTRA", 2])
def test_synchronous_checked_before_opening(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ValueError, match="synchronous"):
        MemoryStore(tmp_path / "s.db", durability=Durability(synchronous=bad))  # type: ignore[arg-type]
    assert not (tmp_path / "s.db").exists()


def test_full_disk_reported_as_such_and_store_unchanged(tmp_path: Path, clock: Clock) -> None:
    s = MemoryStore(tmp_path / "full.db", clock=clock)
    s.ingest_many(_texts(1, 20))
    before = dump(s)
    pages = s.core.execute("PRAGMA page_count").fetchone()[0]
    s.core.execute(f"PRAGMA max_page_count = {pages + 2}")  # the disk is (nearly) full
    big = [" ".join(_texts(2, 1, words=4000)[0].split()) for _ in range(1)]
    with pytest.raises(sqlite3.OperationalError, match="full") as info:
        s.ingest_many(big + _texts(3, 200))
    assert "cannot rollback" not in str(info.value)
    assert dump(s) == before
    s.core.execute("PRAGMA max_page_count = 1073741823")  # space again: the store works
    s.ingest("after the disk was freed")
    assert len(s) == 21
    s.close()


def test_unsaveable_index_never_rolls_back_ingest(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "u.db"
    (tmp_path / "u.db.annoy").mkdir()  # the index file cannot be written at its place
    with pytest.warns(UserWarning, match="not saved"):
        s = MemoryStore(path, clock=clock, index=IndexOptions(switch_at=10, n_trees=4))
        texts = _texts(4, 60)
        results = s.ingest_many(texts, batch_size=20)  # rebuilds after batches: cannot save
    assert len(results) == 60 and len(s) == 60
    assert s.index.info()["last_error"] is not None and s.index.rebuilds >= 1
    assert s.rankings(texts[33], 1)[1][0][0] == results[33].memory_id
    with pytest.warns(UserWarning, match="not saved"):  # closing cannot save it either
        s.close()
    with pytest.warns(UserWarning, match="not saved"):
        with MemoryStore(path, clock=clock, index=IndexOptions(switch_at=10, n_trees=4)) as again:
            assert len(again) == 60
            assert again.rankings(texts[5], 1)[1][0][0] == results[5].memory_id
