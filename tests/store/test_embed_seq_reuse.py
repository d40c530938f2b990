"""The embedding sequence is never reused, so another process's index never misses a vector."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlab.gate import Gate
from memlab.store import MemoryStore


def _vector_ids(store: MemoryStore, text: str) -> list[int]:
    """Ids the store's vector index returns for ``text`` (what search sees of vectors)."""
    hits = store.search(text, k=5, mark_accessed=False, include_archived=True)
    return [h.memory.id for h in hits if h.vector_rank is not None]


@pytest.mark.parametrize("index", ["annoy", "hnsw"])
def test_a_vector_written_after_purging_the_newest_is_seen_by_another_instance(
    tmp_path: Path, index: str
) -> None:
    if index == "hnsw":
        pytest.importorskip("usearch")
    path = tmp_path / "seq.db"
    writer = MemoryStore(path, gate=Gate.off(), index=index)
    reader = MemoryStore(path, gate=Gate.off(), index=index)
    try:
        writer.ingest("Alice prefers green tea in the morning.")
        newest = writer.ingest("Bob deployed the staging cluster on Friday.").memory_id
        assert newest in _vector_ids(reader, "Bob deployed the staging cluster on Friday.")
        seq_before = writer.core.next_seq()
        writer.purge(newest)
        assert writer.core.next_seq() == seq_before  # the purged value is not handed out again
        added = writer.ingest("Carol fixed the flaky integration test on the parser.").memory_id
        assert added in _vector_ids(reader, "Carol fixed the flaky integration test on the parser.")
        assert newest not in _vector_ids(reader, "Bob deployed the staging cluster on Friday.")
    finally:
        reader.close()
        writer.close()
