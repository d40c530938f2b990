from __future__ import annotations

from datetime import UTC

import numpy as np
import pytest

from memlab.datasets import shared_path
from memlab.eval.locomo import MemoryText, load_locomo
from memlab.keep import (
    DEFAULT_KEEP,
    KEEP_SCORES,
    RETURN_WEIGHT,
    USE_WEIGHT,
    KeepInputs,
    MemlabKeep,
    access_weight,
    decayed_uses,
    exposure,
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


def test_the_heat_keep_score_keeps_a_protected_memory_first_however_cold() -> None:
    """A caveat not used for 100 days outranks a fresh plain memory, as with ``memlab``."""
    inputs = _inputs(
        2,
        elapsed_days=np.array([100.0, 1.0]),
        age_days=np.array([100.0, 1.0]),
        texts=("never deploy on a friday", "lunch was fine"),
        layer=("caveat", "context"),
    )
    heat = keep_scores(inputs, ["heat"])["heat"]
    assert keep_mask(heat, 1).tolist() == [True, False]
    plain = _inputs(3, elapsed_days=np.array([1.0, 30.0, 300.0]), age_days=np.full(3, 300.0))
    assert np.all(np.diff(keep_scores(plain, ["heat"])["heat"]) < 0)  # colder is lower


def test_a_memory_used_often_is_kept_before_one_used_once() -> None:
    inputs = _inputs(2, access_count=np.array([1.0, 8.0]), texts=("same text",) * 2)
    s = keep_scores(inputs, ["memlab"])["memlab"]
    assert s[1] > s[0]
    # and a recent use counts more than an old one; no use counts nothing
    uses = decayed_uses([1.0, 30.0, 5.0], [40.0, 40.0, 40.0], [1.0, 1.0, 0.0])
    assert uses[0] > uses[1] > uses[2] == 0.0


def test_decayed_uses_approximates_the_exact_sum_and_exposure_is_the_integral() -> None:
    from scipy.integrate import quad

    # 20 uses spread evenly over days 1..39 before the sweep: Petrov's approximation is close
    ages = np.linspace(1.0, 39.0, 20)
    exact = float(np.sum(ages**-0.5))
    approx = float(decayed_uses([1.0], [39.0], [20.0])[0])
    assert approx == pytest.approx(exact, rel=0.1)
    for age in (0.5, 3.0, 90.0):
        want = quad(lambda t: max(t, 1e-3) ** -0.5, 0.0, age, points=[1e-3])[0]
        assert float(exposure([age])[0]) == pytest.approx(want, rel=1e-6)


def test_an_explicit_use_weighs_more_than_a_search_return() -> None:
    assert access_weight("api") == access_weight("reinforce") == USE_WEIGHT
    assert access_weight("update") == access_weight("feedback") == USE_WEIGHT
    assert access_weight("search") == RETURN_WEIGHT < USE_WEIGHT
    # four memories of the same text: nothing, returned twice, used once, used three times
    ages = (np.zeros(0), np.array([2.0, 3.0]), np.array([2.0]), np.array([1.0, 2.0, 3.0]))
    weights = (np.zeros(0), np.full(2, RETURN_WEIGHT), np.ones(1), np.ones(3))
    inputs = _inputs(4, texts=("same text",) * 4, use_ages=ages, use_weights=weights)
    s = keep_scores(inputs, ["memlab"])["memlab"]
    assert s[0] < s[1] < s[2] < s[3]
    assert s[1] - s[0] < (s[2] - s[0]) / 2  # two returns count less than half of one use


def test_content_decides_without_use_history_and_use_decides_with_it() -> None:
    rng = np.random.default_rng(3)
    n = 200
    importance = rng.uniform(0.1, 0.8, n)
    age = np.full(n, 30.0)
    keeper = MemlabKeep()
    # no uses at all: the keep order is the importance order
    none = keeper.value(importance, np.zeros(n), np.zeros(n), age)
    assert (np.argsort(none) == np.argsort(importance)).all()
    assert keeper.beta(importance / importance.mean(), np.zeros(n), np.zeros(n)) == 1.0
    # a store whose memories are used, independently of their importance: the history shows
    # importance predicts nothing, so the prior flattens and the uses decide
    counts = rng.poisson(5.0, n).astype(float)
    expected = np.full(n, counts.mean())
    beta = keeper.beta(importance / importance.mean(), counts, expected)
    assert beta < 0.3
    elapsed = np.full(n, 2.0)
    used = keeper.value(importance, decayed_uses(elapsed, age, counts), counts, age)
    corr_use = np.corrcoef(used, counts)[0, 1]
    corr_imp = np.corrcoef(used, importance)[0, 1]
    assert corr_use > 0.9 and corr_use > 3 * abs(corr_imp)
    # uses that follow importance: the history confirms the prior
    follows = rng.poisson(10.0 * importance / importance.mean()).astype(float)
    assert keeper.beta(importance / importance.mean(), follows, np.full(n, 10.0)) > 0.8


def test_use_history_of_a_replayed_store_weighs_returns_and_uses() -> None:
    from datetime import datetime, timedelta

    from memlab.eval.locomo import _use_history
    from memlab.store import MemoryStore

    t0 = datetime(2024, 5, 1, tzinfo=UTC)
    store = MemoryStore(":memory:")
    a = store.ingest("Melanie ran the Lisbon marathon in May", now=t0).memory_id
    b = store.ingest("Caroline adopted a grey cat called Oscar", now=t0).memory_id
    store.search("Lisbon marathon", 1, now=t0 + timedelta(days=1))
    store.access(b, now=t0 + timedelta(days=2))
    frame = store.to_dataframe(now=t0 + timedelta(days=4), include_archived=False)
    ages, weights = _use_history(store, frame, t0 + timedelta(days=4))
    by_id = dict(zip(frame["id"].tolist(), zip(ages, weights, strict=True), strict=True))
    assert by_id[a][1].tolist() == [RETURN_WEIGHT] and by_id[a][0] == pytest.approx([3.0])
    assert by_id[b][1].tolist() == [USE_WEIGHT] and by_id[b][0] == pytest.approx([2.0])
    store.close()


def test_bad_inputs_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="elapsed_days has shape"):
        _inputs(elapsed_days=np.zeros(3))
    with pytest.raises(ValueError, match="stability must be > 0"):
        _inputs(stability=np.zeros(4))
    with pytest.raises(ValueError, match="importance must lie"):
        _inputs(importance=np.full(4, 2.0))
    with pytest.raises(ValueError, match="unknown layer 'dream'"):
        _inputs(layer=("dream",) * 4)
    with pytest.raises(ValueError, match="go together"):
        _inputs(use_ages=(np.zeros(0),) * 4)
    with pytest.raises(ValueError, match="differ in length"):
        _inputs(use_ages=(np.zeros(1),) * 4, use_weights=(np.zeros(2),) * 4)
    with pytest.raises(ValueError, match="use_ages must be finite"):
        _inputs(use_ages=(np.array([-1.0]),) * 4, use_weights=(np.ones(1),) * 4)


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
