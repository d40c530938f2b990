"""No text given to the store is ever lost, whatever the sequence of operations.

A hypothesis state machine drives ingest, bulk ingest, search, time, importance flags,
forget sweeps, consolidation and export/import round trips on a simulated clock. After
every step, each text ever given is still in the store: as the content of a memory
(active or archived), as a version event (replaced by an UPDATE or a compression) or as an
observation event (a REINFORCE). Creation events are not counted, so this checks the
paths that really move text.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from store_helpers import T0, Clock

from memlab.store import IndexOptions, MemoryStore

WORDS = [
    "alice",
    "bob",
    "tea",
    "coffee",
    "deploy",
    "server",
    "likes",
    "hates",
    "monday",
    "friday",
    "the",
    "red",
]
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
sentences_ = st.lists(texts, min_size=1, max_size=3).map(lambda xs: ". ".join(xs) + ".")


class StoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.clock = Clock(T0)
        self.store = MemoryStore(clock=self.clock, index=IndexOptions(switch_at=8, n_trees=3))
        self.given: set[str] = set()
        self.tmp = tempfile.TemporaryDirectory()

    @rule(
        text=sentences_,
        project=st.sampled_from([None, "p"]),
        entity=st.sampled_from([None, "e", "f"]),
        layer=st.sampled_from(["context", "implementation", "caveat"]),
        importance=st.floats(0, 1),
    )
    def ingest(self, text: str, project, entity, layer, importance: float) -> None:
        self.store.ingest(text, project=project, entity=entity, layer=layer, importance=importance)
        self.given.add(text)

    @rule(batch=st.lists(sentences_, min_size=1, max_size=5), entity=st.sampled_from([None, "e"]))
    def ingest_many(self, batch: list[str], entity) -> None:
        self.store.ingest_many(batch, entity=entity, importance=0.1, batch_size=2)
        self.given.update(batch)

    @rule(query=texts, mark=st.booleans())
    def search(self, query: str, mark: bool) -> None:
        self.store.search(query, k=3, mark_accessed=mark)

    @rule(days=st.floats(0, 120))
    def advance(self, days: float) -> None:
        self.clock.advance(days=days)

    @precondition(lambda self: len(self.store) > 0)
    @rule(data=st.data())
    def flag(self, data) -> None:
        ids = [m.id for m in self.store.memories()]
        self.store.importance(data.draw(st.sampled_from(ids)))

    @rule()
    def sweep(self) -> None:
        self.store.forget_sweep(dry_run=False)

    @rule()
    def consolidate(self) -> None:
        self.store.consolidate()

    @rule()
    def export_import(self) -> None:
        path = Path(self.tmp.name) / "x.jsonl"
        self.store.export_jsonl(path)
        fresh = MemoryStore(clock=self.clock, index=IndexOptions(switch_at=8, n_trees=3))
        fresh.import_jsonl(path)
        self.store.close()
        self.store = fresh

    @invariant()
    def nothing_lost(self) -> None:
        conn = self.store.core
        have = {r[0] for r in conn.execute("SELECT content FROM memories")}
        have |= {
            r[0]
            for r in conn.execute(
                "SELECT text FROM events WHERE kind IN ('observation', 'version')"
            )
        }
        missing = self.given - have
        assert not missing, missing

    @invariant()
    def keyword_index_in_step(self) -> None:
        conn = self.store.core
        rows = conn.execute(
            "SELECT m.content, f.content FROM memories m LEFT JOIN memories_fts f ON f.rowid = m.id"
            " WHERE m.status != 'superseded'"
        ).fetchall()
        assert all(a == b for a, b in rows)
        assert conn.execute("SELECT COUNT(*) FROM memories_fts").fetchone()[0] == len(rows)
        # a superseded content is in the history index instead (under the event that moved it
        # there: its supersession, a revert, or the import that brought it in superseded)
        superseded = conn.execute(
            "SELECT COUNT(*) FROM memories WHERE status = 'superseded'"
        ).fetchone()[0]
        indexed = conn.execute(
            "SELECT COUNT(*) FROM history_fts f JOIN events e ON e.id = f.rowid"
            " WHERE e.kind IN ('supersede', 'revert', 'import')"
        ).fetchone()[0]
        assert indexed >= superseded

    def teardown(self) -> None:
        self.store.close()
        self.tmp.cleanup()


StoreMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=25, deadline=None)
TestStoreMachine = StoreMachine.TestCase
