"""LoCoMo budgets go through the store: its sweep decides what is kept, its rankings answer."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from locomo_helpers import TINY

from memlab.eval.locomo import (
    DEFAULT,
    Conversation,
    _keep_scores,
    _kept,
    _own_texts,
    _use_history,
    budget_configs,
    candidates,
    evaluate,
    fuse,
    ingest_conversation,
    load_locomo,
    question_topics,
    sweep_and_rank,
)
from memlab.gate import Gate
from memlab.keep import KEEP_SCORES
from memlab.store import MemoryStore

SHARED = Path(__file__).resolve().parents[2].parent / "shared"


def _check(conv: Conversation, names: tuple[str, ...]) -> int:
    store = MemoryStore(":memory:", gate=Gate.off(), secrets="allow")
    turn_of_memory = ingest_conversation(store, conv, DEFAULT.text, replay=True)
    frame = store.to_dataframe(now=conv.end, include_archived=False)
    ids = frame["id"].to_numpy()
    questions = [q.question for q in conv.questions if q.evidence]
    qvecs = [store.embedder.embed_query(q) for q in questions]
    topics = [question_topics(q, conv.speakers) for q in questions]
    # the reference: keep scores computed outside the store from each turn's own text
    outside = _keep_scores(
        frame,
        conv.end,
        np.random.default_rng(0),
        _own_texts(frame, turn_of_memory, conv),
        _use_history(store, frame, conv.end),
    )
    checked = 0
    for cfg in budget_configs():
        if cfg.keep_by not in names:
            continue
        dry = store.forget_sweep(now=conv.end, keep=cfg.keep, keep_by=cfg.keep_by)
        decided = set(dry.loc[dry["action"] == "keep", "id"])
        before = store.to_dataframe(now=conv.end)
        kept_ids, per_question = sweep_and_rank(store, cfg, conv, questions, qvecs, topics)
        assert set(kept_ids) == decided  # the eval keeps what the store's sweep decides
        if cfg.keep_by != "random":  # (the reference draws its own random numbers)
            assert decided == set(ids[_kept(outside, cfg, ids)])
        after = store.to_dataframe(now=conv.end)
        assert after["status"].tolist() == before["status"].tolist()  # restored
        kept = np.isin(ids, kept_ids)
        for j, q in enumerate(questions):
            full = candidates(store, q, qvecs[j], topics[j], frame)
            through = fuse(per_question[j], cfg, None, k=10)
            assert through.tolist() == fuse(full, cfg, kept, k=10).tolist()
            checked += 1
    store.close()
    return checked


def test_budget_through_the_store_equals_its_sweep_decision(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    (conv,) = load_locomo(path)
    n = sum(1 for q in conv.questions if q.evidence)
    assert _check(conv, KEEP_SCORES) == n * len(KEEP_SCORES)


def test_budget_through_the_store_on_dev5() -> None:
    path = SHARED / "data" / "locomo" / "locomo_dev5.json"
    if not path.exists():
        pytest.skip(f"shared data not available: {path}")
    conv = load_locomo(path)[0]
    n = sum(1 for q in conv.questions if q.evidence)
    assert _check(conv, ("memlab", "idf", "recency")) == 3 * n


def test_evaluate_reports_the_store_budget_and_its_outside_reference(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    default_budget = budget_configs()[0]
    outside = replace(default_budget, name="outside", through_store=False)
    result = evaluate(path, configs=[default_budget, outside])
    out = result.to_json()
    assert out["budget"] == {"keep": 0.5, "policy": "memlab", "config": default_budget.name}
    t = result.table()
    assert t.loc[default_budget.name, "recall@10"] == t.loc["outside", "recall@10"]
