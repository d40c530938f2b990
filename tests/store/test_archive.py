"""archive(): a memory leaves default search, nothing is deleted, restore undoes it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memlab.store import MemoryStore

T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)


def test_archive_takes_a_memory_out_of_default_search_and_restore_undoes_it(tmp_path) -> None:
    with MemoryStore(tmp_path / "a.db") as store:
        kept = store.ingest("The release train leaves every Tuesday.", now=T0).memory_id
        gone = store.ingest("The coffee machine on floor 3 is broken.", now=T0).memory_id
        store.archive(gone, now=T0)
        assert store.get(gone).status == "archived" and store.get(gone).content.startswith("The")
        default = [h.memory.id for h in store.search("coffee machine", mark_accessed=False)]
        assert gone not in default
        every = store.search("coffee machine", include_archived=True, mark_accessed=False)
        assert gone in [h.memory.id for h in every]
        assert store.history(gone)["kind"].tolist()[-1] == "archive"
        store.archive(gone, now=T0)  # archiving again changes nothing
        assert store.history(gone)["kind"].tolist().count("archive") == 1
        store.restore(gone, now=T0)
        assert store.get(gone).status == "active"
        assert gone in [h.memory.id for h in store.search("coffee machine", mark_accessed=False)]
        assert store.get(kept).status == "active"


def test_archive_refuses_bad_and_foreign_ids(tmp_path) -> None:
    path = tmp_path / "ns.db"
    with MemoryStore(path, namespace="alpha") as alpha:
        theirs = alpha.ingest("Alpha's private fact.", now=T0).memory_id
    with MemoryStore(path, namespace="beta") as beta:
        with pytest.raises(KeyError):
            beta.archive(theirs, now=T0)
        with pytest.raises((TypeError, ValueError)):
            beta.archive("one", now=T0)
    with MemoryStore(path, namespace="alpha") as alpha:
        assert alpha.get(theirs).status == "active"
