"""LoCoMo loader, evidence normalisation, recall, and fusion on a tiny LoCoMo file and dev5."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from locomo_helpers import TINY

from memlab.eval.locomo import (
    DEFAULT,
    Candidates,
    Config,
    Conversation,
    MemoryText,
    candidates,
    evaluate,
    fuse,
    ingest_conversation,
    load_locomo,
    normalise_evidence,
    parse_session_time,
    question_topics,
)
from memlab.gate import Gate
from memlab.store import MemoryStore
from memlab.store.relevance import SearchOptions

SHARED = Path(__file__).resolve().parents[2].parent / "shared"


@pytest.fixture
def tiny_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny_locomo.json"
    path.write_text(json.dumps(TINY))
    return path


def test_loader_reads_sessions_dates_captions_and_evidence(tiny_file: Path) -> None:
    (conv,) = load_locomo(tiny_file)
    assert conv.sample_id == "tiny-1" and conv.speakers == ("Ann", "Bob")
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D2:3"]
    assert conv.turns[1].caption == "a photo of a red bicycle" and conv.turns[0].caption is None
    assert conv.turns[3].time == datetime(2023, 6, 20, 10, 0, tzinfo=UTC)
    assert conv.end == datetime(2023, 6, 21, 10, 0, tzinfo=UTC)  # empty session 3 skipped
    q = conv.questions
    assert q[2].evidence == ("D1:2",)  # D2:9 is not a turn of the conversation
    assert q[3].answer == "vase" and q[4].evidence == ()
    assert (
        MemoryText().render(conv.turns, 1)
        == "Bob: Congrats! My bicycle is painted bright red now. [image: a photo of a red bicycle]"
    )
    assert "(context: Ann: Hi Bob!" in MemoryText(neighbours=1).render(conv.turns, 1)
    assert "context" not in MemoryText(neighbours=1).render(
        conv.turns, 3
    )  # context stays inside a session
    sample = json.loads(json.dumps(TINY[0]))
    sample["conversation"]["session_1"][1]["text"] = None  # an image-only turn
    turns = load_locomo([sample])[0].turns
    assert turns[1].text == "" and "None" not in MemoryText().render(turns, 1)


def test_evidence_and_dates_normalisation() -> None:
    known = {"D8:6", "D9:17", "D11:26"}
    assert normalise_evidence(["D8:6; D9:17"], known) == ("D8:6", "D9:17")
    assert normalise_evidence(["D:11:26", "D10:19"], known) == ("D11:26",)
    assert parse_session_time("8:56 pm on 20 July, 2023") == datetime(
        2023, 7, 20, 20, 56, tzinfo=UTC
    )
    assert parse_session_time("2023-07-20 10:00").tzinfo is not None
    with pytest.raises(ValueError):
        parse_session_time("sometime")
    assert question_topics("When did Caroline go?", ["Caroline", "Melanie"]) == ["Caroline"]


def test_fuse_matches_the_store_formula_and_budget_reranks() -> None:
    c = Candidates(
        np.array([1, 2, 3]),
        np.array([1.0, np.inf, 2.0]),
        np.array([2.0, 1.0, np.inf]),
        np.array([1.0, 1.0, 0.1]),
        np.zeros(3),
    )
    assert list(fuse(c, Config("rrf"))) == [1, 2, 3]  # 1/61+1/62 > 1/61 > 1/62
    assert list(fuse(c, Config("b", ranking="bm25"))) == [1, 3]
    assert list(fuse(c, Config("v", ranking="vector"))) == [2, 1]
    assert list(fuse(c, Config("w", keyword_weight=3.0))) == [1, 3, 2]
    kept = np.array([False, True, True])
    assert list(fuse(c, Config("b", ranking="bm25"), kept)) == [3]


def test_evaluate_tiny_file_end_to_end(tiny_file: Path) -> None:
    configs = [
        Config("bm25", ranking="bm25"),
        Config("rrf"),
        Config("gated", gated=True),
        DEFAULT,
        Config("half", keep=0.5, keep_by="recency"),
    ]
    result = evaluate(tiny_file, configs=configs)
    out = result.to_json()
    assert set(out["configs"]) == {c.name for c in configs} and out["default"] == DEFAULT.name
    bm25 = out["configs"]["bm25"]
    assert (
        bm25["n"] == 3 and bm25["recall@5"] == 1.0
    )  # cat 1, 2, 4 scored; cat 3 had no valid evidence
    assert out["adversarial"]["bm25"]["n"] == 1
    # keeping the newest half (session 2) loses the session-1 evidence of 2 of the 3 questions
    assert result.table().loc["half", "recall@10"] == pytest.approx(1 / 3)
    assert out["turns"] == 6 and out["configs"]["rrf"]["memories"] == 6
    assert out["configs"]["gated"]["memories"] <= 6
    assert out["configs"]["half"]["memories"] == 3  # the kept half is what was searched
    assert result.evidence_kept()["half"] == pytest.approx(1 / 3)
    assert "budget" not in out  # no default budget among these configurations
    json.dumps(out)


def test_keep_by_names_every_keep_score_and_rejects_others() -> None:
    from memlab.eval.locomo import budget_configs
    from memlab.keep import KEEP_SCORES

    assert [c.keep_by for c in budget_configs()] == list(KEEP_SCORES)
    assert all(c.keep == 0.5 and c.replay for c in budget_configs())
    with pytest.raises(ValueError, match="keep_by must be one of"):
        Config("x", keep=0.5, keep_by="lfu")


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_locomo(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="JSON"):
        load_locomo(bad)
    bad.write_text(json.dumps([{"conversation": {}}]))
    with pytest.raises(ValueError, match="qa"):
        load_locomo(bad)
    with pytest.raises(ValueError):
        Config("x", keep=0.0)
    with pytest.raises(ValueError):
        Config("x", ranking="magic")
    for bad, message in (
        ({"depth": 0}, "depth must be an int >= 1, got 0"),  # an empty list to score, R@k 0
        ({"depth": 2.5}, "depth must be an int >= 1"),
        ({"keyword_weight": -1.0}, "keyword_weight must be >= 0"),
        ({"vector_weight": float("nan")}, "vector_weight contains NaN"),
        ({"time_weight": 1.5}, r"time_weight must lie in \[0, 1\]"),
    ):
        with pytest.raises(ValueError, match=message):
            Config("x", **bad)
    with pytest.raises(ValueError, match="configs is empty"):  # not every configuration
        evaluate(TINY, configs=[])
    sample = json.loads(json.dumps(TINY[0]))
    sample["qa"][0]["category"] = "multi-hop"
    with pytest.raises(ValueError, match="qa item 0 has category 'multi-hop'"):
        load_locomo([sample])
    for category in (0, 6, "12"):  # only 1-5 exist: another would be scored nowhere
        sample["qa"][0]["category"] = category
        with pytest.raises(ValueError, match=f"qa item 0 has category {category!r}, not 1-5"):
            load_locomo([sample])
    sample["qa"][0] = 5
    with pytest.raises(ValueError, match="qa item 0 lacks question or category"):
        load_locomo([sample])
    sample = json.loads(json.dumps(TINY[0]))
    for q in sample["qa"]:
        q["evidence"] = []
    with pytest.raises(ValueError, match="no question has evidence"):
        evaluate([sample], configs=[Config("bm25", ranking="bm25")])


def test_dev5_first_conversation_with_hashing() -> None:
    path = SHARED / "data" / "locomo" / "locomo_dev5.json"
    if not path.exists():
        pytest.skip(f"shared data not available: {path}")
    conv = load_locomo(path)[:1]
    assert len(conv[0].turns) == 419 and len(conv[0].questions) == 199
    result = evaluate(conv, configs=[Config("bm25", ranking="bm25"), Config("rrf"), DEFAULT])
    t = result.table()
    assert (t["n"] == 150).all()
    assert 0.3 < t.loc["bm25", "recall@10"] <= 1.0
    assert t.loc[DEFAULT.name, "recall@10"] > t.loc["rrf", "recall@10"]


def _fuse_equals_search(conv: Conversation, configs: list[Config]) -> int:
    """Compare the store's search with :func:`fuse` on every question; returns the count."""
    # the score's ranking: versions are not reordered (a permutation of the same top k)
    options = SearchOptions(versions_at=1.0)
    store = MemoryStore(":memory:", gate=Gate.off(), secrets="allow", search=options)
    ingest_conversation(store, conv, configs[0].text)
    frame = store.to_dataframe(now=conv.end, include_archived=False)
    checked = 0
    for q in conv.questions:
        topics = question_topics(q.question, conv.speakers)
        qvec = store.embedder.embed_query(q.question)
        cand = candidates(store, q.question, qvec, topics, frame)
        for cfg in configs:
            hits = store.search(
                q.question,
                10,
                topics=topics,
                mark_accessed=False,
                now=conv.end,
                query_vector=qvec,
                time_weight=cfg.time_weight,
                topic_weight=cfg.topic_weight,
            )
            assert [h.memory.id for h in hits] == [int(m) for m in fuse(cand, cfg, k=10)]
            checked += 1
    store.close()
    return checked


def test_fuse_is_the_stores_own_search(tiny_file: Path) -> None:
    (conv,) = load_locomo(tiny_file)
    cfgs = [Config("rrf"), Config("r", time_weight=0.5), Config("t", topic_weight=0.5)]
    assert _fuse_equals_search(conv, cfgs) == 3 * len(conv.questions)


def test_fuse_is_the_stores_own_search_on_dev5() -> None:
    path = SHARED / "data" / "locomo" / "locomo_dev5.json"
    if not path.exists():
        pytest.skip(f"shared data not available: {path}")
    conv = load_locomo(path)[0]
    assert _fuse_equals_search(conv, [Config("rrf"), DEFAULT]) == 2 * len(conv.questions)


def test_to_json_with_no_question_of_a_block(tiny_file: Path) -> None:
    # no adversarial question: that block is empty (n 0, no recall), not an error
    sample = json.loads(json.dumps(TINY[0]))
    sample["qa"] = [q for q in sample["qa"] if q["category"] != 5]
    out = evaluate([sample], configs=[Config("bm25", ranking="bm25")]).to_json()
    assert out["adversarial"]["bm25"] == {
        "recall@5": None,
        "recall@10": None,
        "n": 0,
        "memories": 6,
    }
    assert out["configs"]["bm25"]["n"] == 3


def test_progress_bar_counts_the_scored_questions(
    tiny_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memlab.progress

    bars = []
    real = memlab.progress.progress

    class Bar:  # the question bar: its total and how far it got
        def __init__(self, total: int) -> None:
            self.total, self.n = total, 0

        def update(self) -> None:
            self.n += 1

        def close(self) -> None:
            pass

    def fake(*args: object, **kwargs: object) -> object:
        if kwargs.get("desc") != "locomo":
            return real(*args, **kwargs)
        bars.append(Bar(int(kwargs["total"])))  # type: ignore[call-overload]
        return bars[-1]

    monkeypatch.setattr(memlab.progress, "progress", fake)
    # two builds (plain, neighbours) x 4 questions with evidence (3 scored + 1 adversarial)
    evaluate(tiny_file, configs=[Config("rrf"), DEFAULT], progress=True)
    assert [(b.total, b.n) for b in bars] == [(8, 8)]
