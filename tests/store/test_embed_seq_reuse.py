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


@pytest.mark.parametrize("index", ["annoy", "ivf"])
def test_a_vector_written_after_purging_the_newest_is_seen_by_another_instance(
    tmp_path: Path, index: str
) -> None:
    if index == "ivf":
        pytest.importorskip("faiss")
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


def test_within_one_write_the_sequence_counts_on_and_a_rollback_forgets_it(
    tmp_path: Path,
) -> None:
    """The sequence is read once per write and counted on: consecutive values for the vectors
    of one write, the purged newest never handed out again, nothing kept after a rollback."""
    store = MemoryStore(tmp_path / "seq.db", gate=Gate.off())
    try:
        store.ingest_many([f"note {i} about topic {i}" for i in range(5)], batch_size=5)
        seqs = [int(r[0]) for r in store.core.execute("SELECT embed_seq FROM memories")]
        assert sorted(seqs) == list(range(1, 6))
        with store.core.write():
            assert store.core.next_seq() == 6 == store.core.next_seq()  # a look takes nothing
            newest = int(
                store.core.execute("SELECT id FROM memories WHERE embed_seq = 5").fetchone()[0]
            )
            store.core.purge([newest])
            assert store.core.next_seq() == 6
        with pytest.raises(RuntimeError, match="undone"):
            with store.core.write():
                store.ingest_many(["a note written and rolled back"])
                assert store.core.next_seq() == 7
                raise RuntimeError("undone")
        assert store.core.next_seq() == 6
        store.ingest_many(["two more notes", "and the last of them"], batch_size=2)
        seqs = [int(r[0]) for r in store.core.execute("SELECT embed_seq FROM memories")]
        assert sorted(seqs) == [1, 2, 3, 4, 6, 7]
    finally:
        store.close()
