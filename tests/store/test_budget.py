"""Forgetting budgets in the store: forget_sweep(keep=, keep_by=), MemoryStore(budget=)."""

from __future__ import annotations

import math
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from store_helpers import T0, Clock, dump

from memlab.gate import Gate
from memlab.keep import KEEP_SCORES
from memlab.store import Budget, MemoryStore
from memlab.store.sweep import use_history

WORDS = (
    "harbour lantern quartz meadow violin copper saffron glacier orchid falcon cobalt juniper "
    "marble tundra velvet walnut canyon ember pepper silver thistle bramble cedar delta"
).split()


def _texts(n: int) -> list[str]:
    """Distinct texts of growing length (text i has i + 2 content words)."""
    return [
        f"note {i}: " + " ".join(WORDS[j % len(WORDS)] for j in range(i, 2 * i + 2))
        for i in range(n)
    ]


def _store(n: int = 20, **kwargs: object) -> MemoryStore:
    s = MemoryStore(gate=Gate.off(), **kwargs)  # type: ignore[arg-type]
    for i, t in enumerate(_texts(n)):
        s.ingest(t, now=T0 + timedelta(hours=i))
    return s


LATER = T0 + timedelta(days=30)


@pytest.mark.parametrize(
    "keep, expected", [(0.25, 5), (0.5, 10), (1.0, 20), (7, 7), (1, 1), (50, 20)]
)
def test_budget_keeps_exactly_the_share_or_count(keep: float | int, expected: int) -> None:
    s = _store()
    dry = s.forget_sweep(now=LATER, keep=keep)
    assert (dry["action"] == "keep").sum() == expected
    assert set(dry.loc[dry["action"] == "drop", "reason"]) <= {"budget"}
    assert dry["keep_score"].notna().all() and not dry["applied"].any()
    s.forget_sweep(now=LATER, keep=keep, dry_run=False)
    active = s.to_dataframe(include_archived=False)
    assert len(active) == expected
    assert set(active["id"]) == set(dry.loc[dry["action"] == "keep", "id"])


def test_protected_memories_are_kept_and_count_toward_the_budget() -> None:
    s = _store(10)
    pinned = [
        s.ingest("goal: ship it", layer="goal", now=T0).memory_id,
        s.ingest("caveat: never on fridays", layer="caveat", now=T0).memory_id,
        s.ingest("an important pinned fact", importance=0.95, now=T0).memory_id,
    ]
    dry = s.forget_sweep(now=LATER, keep=5, keep_by="random").set_index("id")
    assert (dry["action"] == "keep").sum() == 5  # 3 protected + the 2 best others
    assert (dry.loc[pinned, "action"] == "keep").all() and dry.loc[pinned, "protected"].all()
    assert (dry.loc[pinned, "reason"] == "protected").all()
    # a budget smaller than the protected memories keeps them all, and only them
    small = s.forget_sweep(now=LATER, keep=2, keep_by="length").set_index("id")
    assert set(small.index[small["action"] == "keep"]) == set(pinned)


@pytest.mark.parametrize("name", KEEP_SCORES)
def test_every_keep_score_name_works(name: str) -> None:
    s = _store()
    dry = s.forget_sweep(now=LATER, keep=0.5, keep_by=name)
    assert (dry["action"] == "keep").sum() == 10 and np.isfinite(dry["keep_score"]).all()
    kept = dry[dry["action"] == "keep"]
    dropped = dry[dry["action"] == "drop"]
    assert kept["keep_score"].min() >= dropped["keep_score"].max()  # the best are kept


def test_keep_scores_follow_their_definition() -> None:
    s = _store()
    frame = s.to_dataframe().set_index("id")
    length = s.forget_sweep(now=LATER, keep=5, keep_by="length").set_index("id")
    longest = frame["content"].str.len().sort_values().index[-5:]
    assert set(length.index[length["action"] == "keep"]) == set(longest)
    recency = s.forget_sweep(now=LATER, keep=5, keep_by="recency").set_index("id")
    newest = frame["created_at"].sort_values().index[-5:]
    assert set(recency.index[recency["action"] == "keep"]) == set(newest)


def test_the_default_keep_score_counts_explicit_uses() -> None:
    s = MemoryStore(gate=Gate.off())
    texts = [f"fact number {i} about the {w} project" for i, w in enumerate(WORDS[:10])]
    ids = [s.ingest(t, now=T0).memory_id for t in texts]
    used = ids[3]
    for day in range(1, 20):
        s.feedback(used, now=T0 + timedelta(days=day))
    dry = s.forget_sweep(now=LATER, keep=1).set_index("id")  # default keep_by: memlab
    assert dry.loc[used, "action"] == "keep" and (dry["action"] == "keep").sum() == 1


def test_a_real_sweep_archives_with_its_reason_and_restore_undoes_it() -> None:
    s = _store()
    before = s.to_dataframe()
    swept = s.forget_sweep(now=LATER, keep=0.5, keep_by="idf", dry_run=False)
    gone = swept.loc[swept["action"] == "drop", "id"].tolist()
    assert len(gone) == 10 and swept.loc[swept["action"] == "drop", "applied"].all()
    event = s.history(gone[0]).iloc[-1]
    assert event["kind"] == "archive"
    assert event["data"]["reason"] == "budget" and event["data"]["keep_by"] == "idf"
    score = swept.set_index("id").loc[gone[0], "keep_score"]
    assert event["data"]["keep_score"] == pytest.approx(score) and event["data"]["keep"] == 0.5
    hits = s.search(s.get(gone[0]).content, mark_accessed=False)
    assert gone[0] not in {h.memory.id for h in hits}  # out of default search
    assert gone[0] in {
        h.memory.id
        for h in s.search(s.get(gone[0]).content, include_archived=True, mark_accessed=False)
    }
    for m in gone:
        s.restore(m, now=LATER)
    after = s.to_dataframe()
    cols = ["id", "content", "status", "importance", "stability", "access_count"]
    assert after[cols].equals(before[cols])  # lossless: everything back


def test_a_dry_run_changes_nothing(file_store: MemoryStore) -> None:
    for t in _texts(12):
        file_store.ingest(t)
    file_store.budget = Budget(0.5)
    before = dump(file_store)
    for keep_by in KEEP_SCORES:
        file_store.forget_sweep(keep=0.5, keep_by=keep_by)
    file_store.forget_sweep()  # the stored budget, dry
    assert dump(file_store) == before


def test_the_budget_is_persisted_and_a_given_one_wins(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "b.db"
    with MemoryStore(path, clock=clock, gate=Gate.off()) as s:  # ten memories, none merged
        s.budget = Budget(0.5, "recency")
        for t in _texts(10):
            s.ingest(t)
    with MemoryStore(path, clock=clock) as s:
        assert s.budget == Budget(0.5, "recency")
        dry = s.forget_sweep(now=LATER)  # applies the stored budget
        assert (dry["action"] == "keep").sum() == 5 and set(dry["reason"]) <= {"", "budget"}
        own = s.forget_sweep(now=LATER, keep=3)  # keep given: the budget's keep score
        assert (own["action"] == "keep").sum() == 3
        by = s.forget_sweep(now=LATER, keep_by="length")  # keep_by given: the budget's share
        assert (by["action"] == "keep").sum() == 5
    with MemoryStore(path, clock=clock) as s:
        s.budget = Budget(3, "length")
        assert s.budget == Budget(3, "length")
    with MemoryStore(path, clock=clock) as s:
        assert s.budget == Budget(3, "length") and isinstance(s.budget.keep, int)
        s.budget = None
    with MemoryStore(path, clock=clock) as s:
        assert s.budget is None
        assert s.forget_sweep(now=LATER)["keep_score"].isna().all()  # the heat law decides


@pytest.mark.parametrize(
    "keep, keep_by, error",
    [
        (0, "memlab", ValueError),
        (-3, "memlab", ValueError),
        (1.5, "memlab", ValueError),
        (0.0, "memlab", ValueError),
        (math.nan, "memlab", ValueError),
        (math.inf, "memlab", ValueError),
        (True, "memlab", TypeError),
        ("half", "memlab", TypeError),
        (0.5, "lfu", ValueError),
        (0.5, 3, ValueError),
    ],
)
def test_a_bad_budget_raises_and_changes_nothing(
    tmp_path: Path, keep: object, keep_by: object, error: type[Exception]
) -> None:
    path = tmp_path / "bad.db"
    with MemoryStore(path) as s:
        s.budget = Budget(0.5)
        for t in _texts(6):
            s.ingest(t)
        before = dump(s)
        with pytest.raises(error, match="keep"):
            s.forget_sweep(keep=keep, keep_by=keep_by, dry_run=False)  # type: ignore[arg-type]
        with pytest.raises(error, match="keep"):
            Budget(keep, keep_by)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="budget"):
            s.budget = 0.5  # type: ignore[assignment]
        assert dump(s) == before and s.budget == Budget(0.5)
    with pytest.raises(TypeError, match="budget"), MemoryStore(path) as s:
        s.budget = {"keep": 0.5}  # type: ignore[assignment]
    with MemoryStore(path) as s:
        assert s.budget == Budget(0.5)


def test_keep_by_without_keep_needs_a_budget() -> None:
    s = _store(4)
    with pytest.raises(ValueError, match="keep_by needs keep"):
        s.forget_sweep(keep_by="random")


def test_use_history_reads_every_access_with_its_kind_in_one_query() -> None:
    s = _store(6)
    ids = [int(i) for i in s.to_dataframe()["id"]]
    s.search(s.get(ids[0]).content, k=2, now=T0 + timedelta(days=1))
    s.feedback(ids[1], now=T0 + timedelta(days=2))
    s.access(ids[2], now=T0 + timedelta(days=3))
    at = (T0 + timedelta(days=5)).timestamp()
    with s.core.read():
        ages, weights = use_history(s.core, ids, at)
    for m, a, w in zip(ids, ages, weights, strict=True):
        h = s.history(m)
        h = h[h["kind"] == "access"]
        expected_ages = (at - h["at"].map(lambda t: t.timestamp()).to_numpy(float)) / 86400.0
        assert a == pytest.approx(expected_ages)
        kinds = [d["source"] for d in h["data"]]
        assert w.tolist() == [0.1 if k == "search" else 1.0 for k in kinds]
    assert weights[1].tolist() == [1.0] and weights[2].tolist() == [1.0]
    assert 0.1 in weights[0].tolist()


def test_a_sweep_leaves_out_the_memories_created_after_its_time() -> None:
    """A memory does not exist yet at a time before its creation: no sweep then scores it,
    counts it toward the budget or archives it (an archive before its create event)."""
    s = MemoryStore(gate=Gate.off())
    for i, t in enumerate(_texts(6)):
        s.ingest(t, now=T0 + timedelta(days=10 * i))
    early = T0 + timedelta(days=15)  # memories 1 and 2 exist
    swept = s.forget_sweep(now=early, keep=1, keep_by="recency", dry_run=False)
    assert swept["id"].tolist() == [1, 2]
    assert swept.set_index("id")["action"].to_dict() == {1: "drop", 2: "keep"}
    assert [m.id for m in s.memories(include_archived=False)] == [2, 3, 4, 5, 6]
    assert s.forget_sweep(now=T0 - timedelta(days=1)).empty  # before every memory
