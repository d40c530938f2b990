"""purge() removes every text and vector of a memory's fact from the store's files."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from store_helpers import T0, Clock

from memlab.gate import Decision
from memlab.store import IndexOptions, MemoryStore
from memlab.store.schema import STATUSES

#: Marker words of the purged fact, one per place a text of it is kept.
CONTENT = ["alphamarkerone", "epsilonmarkerfive", "zetamarkersix", "etamarkerseven"]
OBSERVED = "ALPHAMARKERONE"  # the reinforcing text is the content in capitals
QUERY = "deltamarkerquery"
NEWER = "gammamarkerthree"
FILLER = [f"filler note number {i} about gardening keepword{i}" for i in range(20)]


def _store_files(path: Path) -> list[Path]:
    return [p for p in path.parent.iterdir() if p.name.startswith(path.name)]


def _found(path: Path, needles: list[bytes]) -> list[tuple[str, bytes]]:
    return [(p.name, n) for p in _store_files(path) for n in needles if n in p.read_bytes()]


def _vectors(store: MemoryStore, ids: list[int]) -> list[bytes]:
    marks = ",".join("?" for _ in ids)
    rows = store.core.execute(
        f"SELECT embedding FROM memories WHERE id IN ({marks}) UNION ALL"
        f" SELECT embedding FROM history_texts WHERE memory_id IN ({marks})",
        (*ids, *ids),
    ).fetchall()
    return [bytes(r[0]) for r in rows]


def _updated_reinforced_searched(store: MemoryStore, clock: Clock) -> tuple[int, int]:
    """A fact stored, reinforced, found by a search, compressed by a sweep (its full text kept
    as a version) and superseded; returns (old id, new id)."""
    store.ingest_many(FILLER)
    text = f"The courier code is {CONTENT[0]} for the north gate. " + " ".join(
        f"Sentence {w} of the first version is here." for w in CONTENT[1:]
    )
    old = store.ingest(text, importance=0.1).memory_id
    assert store.ingest(text.upper()).decision is Decision.REINFORCE
    hits = store.search(f"courier {CONTENT[0]} {QUERY} keepword3", k=3)
    assert old in [h.memory.id for h in hits] and len(hits) > 1  # the query kept on others too
    for days in range(5, 400, 5):
        clock.now = T0 + timedelta(days=days)
        if store.forget_sweep().set_index("id").loc[old, "action"] == "compress":
            break
    else:  # pragma: no cover - the heat law's thresholds moved
        pytest.fail("no time at which the memory is compressed")
    store.forget_sweep(dry_run=False)
    assert CONTENT[-1] not in store.get(old).content  # compressed: the full text is a version
    text = f"the courier code is now {NEWER} for the north gate"
    new = store.ingest(text, supersedes=old, importance=0.1).memory_id
    assert list(store.versions(new)["memory_id"]) == [old, new]
    return old, new


@pytest.mark.parametrize("kind", ["exact", "annoy"])
def test_purge_leaves_no_word_nor_vector_of_the_fact(
    tmp_path: Path, clock: Clock, kind: str
) -> None:
    path = tmp_path / "p.db"
    store = MemoryStore(path, clock=clock, index=IndexOptions(kind=kind, switch_at=8))
    old, new = _updated_reinforced_searched(store, clock)
    store.rebuild_index()  # the vectors are in the index file
    words = [w.encode() for w in [*CONTENT, OBSERVED, QUERY, NEWER]]
    vectors = _vectors(store, [old, new])
    assert len(vectors) == 5  # two memories, an observation, a version, a superseded content
    assert {n for _, n in _found(path, words)} == set(words)  # every text is in the file
    assert any(n in vectors for _, n in _found(path, vectors))

    assert store.purge(new) == [old, new]
    left = len(FILLER)
    assert len(store) == left and all(store.core.events(m) == [] for m in (old, new))
    assert _found(path, [*words, *vectors]) == []
    store.close()
    assert _found(path, [*words, *vectors]) == []

    with MemoryStore(path, clock=clock, index=IndexOptions(kind=kind, switch_at=8)) as s:
        assert s.index.last_load == "loaded"  # the rewritten index file is trusted
        assert len(s) == left and len(s.index.index) == left
        for word in ("keepword3", "gardening"):  # the other memories keep their words
            assert s.search(word, k=1, mark_accessed=False)
        assert s.search("keepword3", k=1, mark_accessed=False)[0].memory.content == FILLER[3]
        hits = s.search(CONTENT[0], include_history=True, mark_accessed=False)
        assert not {h.memory.id for h in hits} & {old, new}
        assert s.core.keyword_search(CONTENT[0], 5, statuses=STATUSES) == []
        searched = [
            json.loads(r[0])
            for r in s.core.execute(
                "SELECT data FROM events WHERE json_extract(data, '$.source') = 'search'"
            )
        ]
        assert searched and all(d["query"] is None for d in searched)  # blanked, not deleted


def test_purge_of_a_related_memory_keeps_the_other(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "r.db"
    store = MemoryStore(path, clock=clock)
    store.ingest_many(FILLER)
    first = store.ingest(f"the courier code is {CONTENT[0]} for the north gate")
    second = store.ingest(f"the courier code is {CONTENT[0]} for the north gate at dusk")
    assert second.decision is Decision.RELATED
    store.purge(first.memory_id)
    store.close()
    with MemoryStore(path, clock=clock) as s:
        kept = s.get(second.memory_id)
        assert kept.content == f"the courier code is {CONTENT[0]} for the north gate at dusk"
        assert s.links(second.memory_id).empty  # the link went with the purged memory
        assert s.search("dusk", k=1, mark_accessed=False)[0].memory.id == kept.id
        with pytest.raises(KeyError):
            s.get(first.memory_id)


def test_purge_is_one_transaction(tmp_path: Path, clock: Clock) -> None:
    """A failure inside the purge leaves the whole fact in place."""
    store = MemoryStore(tmp_path / "t.db", clock=clock)
    old, new = _updated_reinforced_searched(store, clock)
    before = store.core.execute("SELECT COUNT(*) FROM events").fetchone()[0]
    store.core.execute(
        "CREATE TRIGGER fail BEFORE DELETE ON memories WHEN old.id = ?"
        " BEGIN SELECT RAISE(ABORT, 'crash'); END".replace("?", str(new))
    )
    with pytest.raises(sqlite3.IntegrityError, match="crash"):
        store.purge(old)
    assert [store.get(m).id for m in (old, new)] == [old, new]
    assert store.core.execute("SELECT COUNT(*) FROM events").fetchone()[0] == before
    assert store.search(NEWER, k=1, mark_accessed=False)[0].memory.id == new
    assert store.search(OBSERVED.lower(), include_history=True, mark_accessed=False)
    store.close()


@pytest.mark.parametrize("kind", ["exact", "annoy"])
def test_a_purge_reaches_the_index_of_another_connection(
    tmp_path: Path, clock: Clock, kind: str
) -> None:
    """A store open elsewhere drops the purged vectors before it next searches or saves its
    index, so its save cannot write them back to the index file."""
    path = tmp_path / "two.db"
    options = IndexOptions(kind=kind, switch_at=8)
    first = MemoryStore(path, clock=clock, index=options)
    first.ingest_many(FILLER)
    mid = first.ingest(f"the courier code is {CONTENT[0]} for the north gate").memory_id
    vector = _vectors(first, [mid])[0]
    other = MemoryStore(path, clock=clock, index=options)
    assert mid in other.index.index.items()[0]
    first.purge(mid)
    first.close()
    other.ingest("one more note after the purge")  # the other store saves its index on close
    hits = other.search("courier north gate", k=5, mark_accessed=False)
    assert mid not in {h.memory.id for h in hits} and mid not in other.index.index.items()[0]
    other.close()
    assert _found(path, [vector, CONTENT[0].encode()]) == []
    with MemoryStore(path, clock=clock, index=options) as s:
        assert len(s.index.index) == len(FILLER) + 1
