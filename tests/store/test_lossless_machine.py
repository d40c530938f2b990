"""A hypothesis state machine over the lossless gate: every text given stays findable with
``include_history``, and a distinct fact leaves default search only by SUPERSEDE (or a revert,
which supersedes the versions it replaces)."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from memlab.gate import Decision
from memlab.store import MemoryStore

SUBJECTS = ("Alice", "Bob", "The backup", "The staging database", "My daughter")
PREDICATES = (
    "runs at {n}:00",
    "prefers tabs",
    "prefers spaces",
    "uses port 54{n}",
    "is allergic to peanuts",
    "costs ${n}",
)
PREFIXES = ("", "Note: ", "Correction: now ", "Never mind, ")


@st.composite
def texts(draw: st.DrawFn) -> str:
    subject = draw(st.sampled_from(SUBJECTS))
    predicate = draw(st.sampled_from(PREDICATES)).format(n=draw(st.integers(1, 4)))
    negated = draw(st.booleans())
    body = f"{subject} {'does not say it ' if negated else ''}{predicate}"
    return draw(st.sampled_from(PREFIXES)) + body + draw(st.sampled_from(("", ".", "!")))


class LosslessMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.store = MemoryStore(secrets="allow")
        self.given: list[str] = []
        self.active: set[int] = set()  # memories that must be in default search

    @rule(text=texts(), entity=st.sampled_from((None, "ops", "home")))
    def ingest(self, text: str, entity: str | None) -> None:
        r = self.store.ingest(text, entity=entity)
        self.given.append(text)
        if r.decision is Decision.REINFORCE:
            assert r.memory_id in self.active  # only an active memory is reinforced
            return
        assert r.memory_id not in self.active
        self.active.add(r.memory_id)
        if r.decision is Decision.SUPERSEDE:
            assert r.nearest_id in self.active
            self.active.discard(r.nearest_id)

    @precondition(lambda self: self.active)
    @rule(data=st.data(), text=texts())
    def supersede(self, data: st.DataObject, text: str) -> None:
        old = data.draw(st.sampled_from(sorted(self.active)))
        r = self.store.ingest(text, supersedes=old, entity=self.store.get(old).entity)
        self.given.append(text)
        assert r.decision is Decision.SUPERSEDE and r.rule == "explicit"
        self.active.discard(old)
        self.active.add(r.memory_id)

    @rule(query=texts())
    def search(self, query: str) -> None:
        self.store.search(query, k=3)  # accesses change strengths, never what is findable

    @invariant()
    def distinct_facts_stay_in_default_search(self) -> None:
        assert {m.id for m in self.store.memories(include_archived=False)} == self.active
        for m in self.store.memories(include_archived=False):
            hits = self.store.search(m.content, k=10, mark_accessed=False)
            assert m.id in {h.memory.id for h in hits}, m.content

    @invariant()
    def every_text_is_findable_with_history(self) -> None:
        for text in set(self.given):
            hits = self.store.search(text, k=10, include_history=True, mark_accessed=False)
            ids = [h.memory.id for h in hits]
            held = {h.memory.content for h in hits}
            marks = ",".join("?" for _ in ids)
            held |= {
                r[0]
                for r in self.store.core.execute(
                    f"SELECT text FROM events WHERE memory_id IN ({marks}) AND text IS NOT NULL",
                    ids,
                )
            }
            assert text in held, text

    def teardown(self) -> None:
        self.store.close()


LosslessMachine.TestCase.settings = settings(max_examples=20, stateful_step_count=15, deadline=None)
TestLosslessMachine = LosslessMachine.TestCase
