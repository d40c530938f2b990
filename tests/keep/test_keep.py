from __future__ import annotations

import numpy as np
import pytest

from memlab.datasets import shared_path
from memlab.eval.locomo import MemoryText, load_locomo
from memlab.keep import (
    DEFAULT_KEEP,
    KEEP_SCORES,
    KeepInputs,
    MemlabKeep,
    activation_need,
    keep_mask,
    keep_scores,
)


def _inputs(n: int = 4, **overrides) -> KeepInputs:
    values = {
        "elapsed_days": np.full(n, 3.0),
        "age_days": np.full(n, 10.0),
        "stability": np.full(n, 2.3065),
        "access_count": np.zeros(n),
        "texts": tuple(f"memory number {i}" for i in range(n)),
    }
    values.update(overrides)
    return KeepInputs(**values)


def test_every_keep_score_is_selectable_by_name() -> None:
    inputs = _inputs()
    scores = keep_scores(inputs)
    assert list(scores) == list(KEEP_SCORES) and DEFAULT_KEEP == "memlab"
    for name, s in scores.items():
        assert s.shape == (4,) and np.isfinite(s).all(), name
    with pytest.raises(ValueError, match="unknown keep score 'lfu'"):
        keep_scores(inputs, ["lfu"])


def test_keep_mask_shares_counts_and_ties() -> None:
    s = np.array([0.1, 0.9, 0.5, 0.5, 0.3])
    assert keep_mask(s, 0.4).tolist() == [False, True, False, True, False]  # tie: later first
    assert keep_mask(s, 3).sum() == 3 and keep_mask(s, 1.0).all()
    assert keep_mask(s, 0.01).sum() == 1
    ids = np.array([5, 4, 3, 2, 1])
    assert keep_mask(s, 2, ids).tolist() == [False, True, True, False, False]
    for bad in (0.0, 1.5, 0, True):
        with pytest.raises((ValueError, TypeError)):
            keep_mask(s, bad)


def test_given_importance_wins_and_protection_comes_first() -> None:
    texts = ("ok", "Melanie ran the Lisbon marathon in 3 hours 41 minutes", "fine", "hm")
    auto = keep_scores(_inputs(texts=texts), ["memlab"])["memlab"]
    assert auto.argmax() == 1  # the informative text, importance from content
    given = np.array([np.nan, 0.1, 0.7, np.nan])
    scores = keep_scores(_inputs(texts=texts, importance=given), ["memlab"])["memlab"]
    assert scores[2] > scores[1]  # a given importance wins over the text
    layer = ("context", "context", "context", "caveat")
    scores = keep_scores(_inputs(texts=texts, importance=given, layer=layer), ["memlab"])
    assert scores["memlab"].argmax() == 3 and keep_mask(scores["memlab"], 1)[3]


def test_a_memory_used_often_is_kept_before_one_used_once() -> None:
    inputs = _inputs(2, access_count=np.array([1.0, 8.0]), texts=("same text",) * 2)
    s = keep_scores(inputs, ["memlab"])["memlab"]
    assert s[1] > s[0]
    # and a recent use counts more than an old one
    need = activation_need([1.0, 30.0], [40.0, 40.0], [1.0, 1.0])
    assert need[0] > need[1] and ((need > 0) & (need < 1)).all()


def test_bad_inputs_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="elapsed_days has shape"):
        _inputs(elapsed_days=np.zeros(3))
    with pytest.raises(ValueError, match="stability must be > 0"):
        _inputs(stability=np.zeros(4))
    with pytest.raises(ValueError, match="importance must lie"):
        _inputs(importance=np.full(4, 2.0))
    with pytest.raises(ValueError, match="unknown layer 'dream'"):
        _inputs(layer=("dream",) * 4)
    with pytest.raises(ValueError, match="decay"):
        MemlabKeep(decay=1.0)


def _evidence_kept(conv, kept_ids: set[str]) -> float:
    shares = [
        len(set(q.evidence) & kept_ids) / len(q.evidence)
        for q in conv.questions
        if q.evidence and q.category in (1, 2, 3, 4)
    ]
    return float(np.mean(shares))


def test_keep_order_on_real_locomo_text() -> None:
    # LoCoMo conversation 1 (419 turns, questions asked a day after the last session): which
    # half of the turns does each score keep, judged by the evidence turns of the questions?
    path = shared_path("data", "locomo", "locomo_dev5.json", required=False)
    if path is None:
        pytest.skip("shared data not available: data/locomo/locomo_dev5.json")
    conv = load_locomo(path)[0]
    texts = tuple(MemoryText().render(conv.turns, i) for i in range(len(conv.turns)))
    age = np.array([(conv.end - t.time).total_seconds() / 86400 for t in conv.turns])
    inputs = KeepInputs(age, age, np.full(len(age), 2.3065), np.zeros(len(age)), texts)
    scores = keep_scores(inputs)
    ids = np.array([t.dia_id for t in conv.turns])
    kept = {
        name: _evidence_kept(conv, set(ids[keep_mask(s, 0.5, np.arange(len(s)))]))
        for name, s in scores.items()
    }
    assert kept["memlab"] > kept["random"] + 0.15
    assert kept["memlab"] > kept["recency"] + 0.15
    assert kept["memlab"] >= kept["length"]
    for law in ("fsrs6", "exponential"):
        assert kept["memlab"] > kept[law] + 0.15
