from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from fit_helpers import shared_path
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memlab.datasets import load_dataset
from memlab.embed import HashingEmbedder
from memlab.fit.gating import (
    LearnedGate,
    evaluate_gates,
    fit_gate,
    has_negation,
    load_stsb,
    pair_features,
    pair_similarities,
)
from memlab.fit.metrics import macro_f1
from memlab.gate import Gate, labels_from_scores


def _brute_force(s: np.ndarray, y: np.ndarray) -> float:
    values = np.unique(s)
    candidates = [-1.0, *((values[:-1] + values[1:]) / 2), 1.0]
    best = 0.0
    for update, reinforce in itertools.combinations_with_replacement(candidates, 2):
        best = max(best, macro_f1(y, Gate(reinforce=reinforce, update=update).codes(s)))
    return best


@settings(max_examples=40)
@given(st.lists(st.tuples(st.integers(-10, 10), st.integers(0, 2)), min_size=1, max_size=25))
def test_fit_gate_is_exact(pairs: list[tuple[int, int]]) -> None:
    s = np.array([a for a, _ in pairs], dtype=float) / 10
    y = np.array([b for _, b in pairs])
    assume(len(set(y)) >= 2)  # one class is refused (test_fit_gate_bad_input)
    fitted = fit_gate(s, y)
    assert fitted.macro_f1 == pytest.approx(_brute_force(s, y))
    assert fitted.macro_f1 == pytest.approx(macro_f1(y, fitted.codes(s)))
    assert fitted.gate.update <= fitted.gate.reinforce


def test_fit_gate_separable() -> None:
    s = np.array([0.1, 0.2, 0.5, 0.6, 0.95, 0.99])
    y = np.array([2, 2, 1, 1, 0, 0])
    fitted = fit_gate(s, y)
    assert fitted.macro_f1 == 1.0
    assert 0.6 < fitted.gate.reinforce < 0.95 and 0.2 < fitted.gate.update < 0.5
    # persisted with a store, the gate says where its thresholds came from
    assert fitted.gate.preset == "fitted"
    assert fitted.gate.params == {"macro_f1": 1.0, "n_pairs": 6}
    assert Gate.from_dict(fitted.gate.to_dict()).params == fitted.gate.params


def test_fit_gate_bad_input() -> None:
    with pytest.raises(ValueError, match="same length"):
        fit_gate([0.1, 0.2], [0])
    with pytest.raises(ValueError, match="gate codes"):
        fit_gate([0.1], [3])
    for y in ([], [0], [2, 2, 2]):  # no pair, or one class: every threshold fits it as well
        with pytest.raises(ValueError, match="pairs of two classes or more, got [01]$"):
            fit_gate([0.5] * len(y), y)
    with pytest.raises(ValueError, match="two classes or more"):
        LearnedGate().fit([0.5, 0.9], ["a", "b"], ["a", "c"], [1, 1])
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        fit_gate([1.5], [0])


def test_negation_features() -> None:
    assert (
        has_negation("don't use tabs")
        and has_negation("never use tabs")
        and not has_negation("use tabs")
    )
    x = pair_features([0.95, 0.95], ["use tabs", "use tabs"], ["don't use tabs", "use tabs please"])
    assert x[0, 4] == 1.0 and x[1, 4] == 0.0


def _toy_pairs(rng: np.random.Generator, n: int = 300):
    texts1, texts2, sims, labels = [], [], [], []
    for k in range(n):
        cls = k % 3
        base = f"the service uses port {k} for task {k}"
        if cls == 0:
            other, sim = base, rng.uniform(0.9, 1.0)
        elif cls == 1:
            other, sim = f"the service uses port {k} for job {k + 1}", rng.uniform(0.6, 0.92)
        else:
            other, sim = f"lunch is at noon on day {k}", rng.uniform(0.0, 0.7)
        texts1.append(base)
        texts2.append(other)
        sims.append(sim)
        labels.append(cls)
    return np.array(sims), texts1, texts2, np.array(labels)


def test_learned_gate_never_reinforces_negation(rng: np.random.Generator) -> None:
    s, t1, t2, y = _toy_pairs(rng)
    gate = LearnedGate().fit(s, t1, t2, y)
    assert macro_f1(y, gate.codes(s, t1, t2)) > 0.8
    same, negated = "use X for the build", "don't use X for the build"
    codes = gate.codes([0.99, 0.99], [same, same], [same, negated])
    assert codes[0] == 0 and codes[1] != 0  # REINFORCE, but never across a negation
    with pytest.raises(ValueError, match="not fitted"):
        LearnedGate().codes(s, t1, t2)


def test_stsb_loader_quirks(tmp_path: Path) -> None:
    path = tmp_path / "sts.csv"
    path.write_text(
        'main-news\theadlines\t2016\t0012\t4.2\tHe said "hi\tHe said hi\textra licence\tmore\n'
        "main-captions\tMSRvid\t2012test\t0001\t5.000\tA plane.\tAn air plane.\n",
        encoding="utf-8",
    )
    frame = load_stsb(path)
    assert frame["sentence1"].tolist() == ['He said "hi', "A plane."]
    assert frame["score"].tolist() == [4.2, 5.0]
    (tmp_path / "short.csv").write_text("a\tb\tc\n")
    with pytest.raises(ValueError, match="at least 7"):
        load_stsb(tmp_path / "short.csv")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match="no pairs"):
        load_stsb(tmp_path / "empty.csv")
    (tmp_path / "score.csv").write_text("a\tb\tc\td\tx\ts1\ts2\n")
    with pytest.raises(ValueError, match="score"):
        load_stsb(tmp_path / "score.csv")


def test_evaluate_gates_on_stsb_subsample_with_hashing() -> None:
    """Shape of the evaluation on real STS-B pairs (hashing embedder: no model needed, fast).

    The STS-B samples shipped in ``datasets/`` (500 train, 500 dev pairs), so it runs with or
    without the shared folder."""
    train = load_dataset("stsb_train_sample")
    test = load_dataset("stsb_dev_sample").sample(300, random_state=0)
    result = evaluate_gates(train, test, HashingEmbedder())
    assert set(result) >= {"default", "fitted", "learned"}
    assert len(result["fitted"]["thresholds"]) == 2
    assert np.array(result["fitted"]["confusion"]).sum() == 300
    # thresholds chosen on train beat the fixed 0.92/0.75 on held-out pairs
    assert result["fitted"]["macro_f1"] > result["default"]["macro_f1"]


@pytest.mark.slow
def test_minilm_gate_beats_default_on_stsb_subsample(minilm_dir: Path) -> None:
    from memlab.embed import FastEmbedEmbedder

    train = load_stsb(shared_path("data", "stsb", "sts-train.csv")).sample(240, random_state=1)
    test = load_stsb(shared_path("data", "stsb", "sts-dev.csv")).sample(160, random_state=1)
    embedder = FastEmbedEmbedder(model_path=minilm_dir)
    result = evaluate_gates(train, test, embedder)
    assert result["fitted"]["macro_f1"] > result["default"]["macro_f1"]
    s = pair_similarities(["A plane is taking off."], ["An air plane is taking off."], embedder)
    assert 0.8 < s[0] <= 1.0
    y = labels_from_scores(test["score"].to_numpy())
    assert len(y) == 160


def test_pair_similarities_in_batches_under_a_bar_are_the_same(
    capsys: pytest.CaptureFixture[str],
) -> None:
    first = [f"sentence number {i} about topic {i % 7}" for i in range(300)]
    second = [f"another sentence {i} on topic {i % 5}" for i in range(300)]
    calls: list[int] = []

    class Counting(HashingEmbedder):
        def embed_documents(self, texts):  # type: ignore[no-untyped-def]
            calls.append(len(texts))
            return super().embed_documents(texts)

    whole, batched = Counting(), Counting()
    whole.name, batched.name = "test-whole", "test-batched"  # their own cache entries
    one = pair_similarities(first, second, whole)
    bar = pair_similarities(first, second, batched, progress=True)
    assert calls == [600, 256, 256, 88]  # 600 distinct texts: one call, or three batches
    np.testing.assert_array_equal(one, bar)
    assert "embedding" in capsys.readouterr().err
