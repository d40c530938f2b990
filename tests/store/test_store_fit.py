"""store.fit(): FSRS-6 fitted to the store's own access log, kept with the store.

The recovery test records a simulated agent's access log (known FSRS-6 weights, grades drawn
from the true retrievability, Again when forgotten) through the store's public API on a
simulated clock, then fits it back.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from store_helpers import T0, Clock, VecEmbedder, dump

from memlab.fit import NotEnoughReviewsError, load_access_log, predict_fsrs6
from memlab.fit.metrics import log_loss, scoreable_rows
from memlab.gate import Gate
from memlab.models.fsrs6 import DEFAULT_WEIGHTS, FSRS6, LOWER_BOUNDS, UPPER_BOUNDS, Rating
from memlab.sim import simulate_access_log
from memlab.store import Durability, MemoryStore
from memlab.store.dynamics import Dynamics


def _true_weights(seed: int = 12) -> tuple[float, ...]:
    """The defaults perturbed (log-normal, sigma 0.3, seeded), forgetting-curve decay w20 = 0.5."""
    rng = np.random.default_rng(seed)
    w = np.array(DEFAULT_WEIGHTS) * np.exp(rng.normal(0.0, 0.3, 21))
    w[20] = 0.5
    return tuple(float(x) for x in np.clip(w, LOWER_BOUNDS, UPPER_BOUNDS))


TRUE = _true_weights()


@pytest.fixture(scope="module")
def recorded() -> tuple[MemoryStore, pd.DataFrame]:
    store = MemoryStore(gate=Gate(1.0, 1.0))  # every simulated note is a new memory
    log = simulate_access_log(store, TRUE, n_memories=200, reviews_per_memory=8, seed=0)
    return store, log


def test_the_access_log_replays_the_world(recorded: tuple[MemoryStore, pd.DataFrame]) -> None:
    store, log = recorded
    frame = load_access_log(store.access_log()).frame
    assert frame["card_id"].nunique() == 200 and len(frame) == 200 + len(log)
    # creation is a first review graded Good; the store's continuous days replay the world's R
    assert (frame.loc[frame["review"] == 0, "grade"] == Rating.Good).all()
    rows = scoreable_rows(frame)
    world = np.sort(log["true_r"].dropna().to_numpy())
    replayed = np.sort(predict_fsrs6(FSRS6(TRUE), frame)[rows])
    np.testing.assert_allclose(replayed, world, atol=1e-9)


def test_fit_recovers_known_weights_from_a_simulated_access_log(
    recorded: tuple[MemoryStore, pd.DataFrame],
) -> None:
    store, _ = recorded
    before = store.dynamics
    result = store.fit(apply=False)
    assert store.dynamics == before and not result.applied
    assert result.n_memories == 200 and result.n_lapses > 100
    frame = load_access_log(store.access_log()).frame
    rows = scoreable_rows(frame)
    y = (frame["grade"].to_numpy()[rows] >= 2).astype(float)
    r_true = predict_fsrs6(FSRS6(TRUE), frame)[rows]
    r_fit = predict_fsrs6(result.model, frame)[rows]
    r_default = predict_fsrs6(FSRS6(), frame)[rows]
    # the predicted retrievability of every review comes close to the truth, much closer than
    # the defaults' (what is identifiable: FSRS-6 weights trade off against each other, e.g. the
    # curve's decay w20 against the growth weights when reviews come near R = 0.9; w0, w1 and
    # w3 are never used, every creation is graded Good)
    assert np.mean(np.abs(r_fit - r_true)) < 0.025
    assert np.mean(np.abs(r_fit - r_true)) < 0.6 * np.mean(np.abs(r_default - r_true))
    # the fit explains the outcomes as well as the truth, better than the defaults
    assert log_loss(y, r_fit) < log_loss(y, r_true) + 0.005
    assert log_loss(y, r_fit) < log_loss(y, r_default) - 0.01
    # held out (the last 20 % by time): the fitted weights beat the defaults
    assert result.log_loss["fitted"] < result.log_loss["default"] - 0.01
    assert result.improved or result.log_loss["previous"] != result.log_loss["default"]
    # the forgetting curve of a new memory (first review Good) over its first week stays close
    # (the defaults' is close too, within 0.02: this log cannot tell them far apart there)
    t = np.linspace(1.0, 7.0, 13)
    true_curve = FSRS6(TRUE).retrievability(elapsed_days=t, stability=TRUE[2])
    fitted_curve = result.model.retrievability(elapsed_days=t, stability=result.weights[2])
    assert np.max(np.abs(fitted_curve - true_curve)) < 0.05


def _small_log(store: MemoryStore, seed: int = 7, n: int = 40) -> None:
    """A spaced, graded access log: ``n`` memories, five uses each, 15 % Again."""
    rng = np.random.default_rng(seed)
    ids = [
        store.ingest(f"fact {i}: {rng.integers(10**6)} unique words w{i} v{i * 3}", now=T0)
        for i in range(n)
    ]
    for day in (1, 3, 8, 20, 45):
        for r in ids:
            grade = int(rng.choice([1, 2, 3, 4], p=[0.15, 0.15, 0.5, 0.2]))
            store.feedback(r.memory_id, grade, now=T0 + timedelta(days=day, hours=r.memory_id % 5))


def test_apply_runs_the_fitted_weights(clock: Clock) -> None:
    store = MemoryStore(clock=clock, gate=Gate(1.0, 1.0))
    _small_log(store)
    result = store.fit(apply=True)
    assert result.applied and store.dynamics.fsrs.weights == result.weights
    assert result.weights != DEFAULT_WEIGHTS
    # heat keeps its band constants and reads stability against the new memory's (w2)
    assert store.dynamics.heat.k == MemoryStore().dynamics.heat.k
    assert store.dynamics.heat.reference_stability == result.weights[2]
    # a memory created now starts at the fitted first-review stability
    new = store.ingest("a brand new note about kiwi harvests", now=T0 + timedelta(days=400))
    assert store.get(new.memory_id).stability == pytest.approx(result.weights[2])
    again = store.fit(apply=False)  # from the fitted weights: "previous" is now them
    assert again.previous_weights == result.weights


def test_if_better_keeps_only_a_fit_that_beats_the_current_weights(
    recorded: tuple[MemoryStore, pd.DataFrame],
) -> None:
    store, _ = recorded
    before = store.dynamics
    try:
        # from the true weights the fit is kept only if it does better on the held-out reviews
        store.dynamics = Dynamics(fsrs=FSRS6(TRUE))
        truth = store.fit()  # apply="if_better", the default
        assert truth.applied == (truth.log_loss["fitted"] < truth.log_loss["previous"])
        assert store.dynamics.fsrs.weights == (truth.weights if truth.applied else TRUE)
        # from weights far off (every first stability 0.1 day) the fit does better: kept
        far = list(DEFAULT_WEIGHTS)
        far[:4] = [0.1, 0.1, 0.1, 0.1]
        store.dynamics = Dynamics(fsrs=FSRS6(far))
        kept = store.fit()
        assert kept.improved and kept.applied and store.dynamics.fsrs.weights == kept.weights
    finally:
        store.dynamics = before


def test_fitted_weights_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "fit.db"
    with MemoryStore(
        path, gate=Gate(1.0, 1.0), durability=Durability(synchronous="NORMAL")
    ) as store:
        _small_log(store)
        result = store.fit(apply=True)
    with MemoryStore(path) as again:
        assert again.dynamics.fsrs.weights == result.weights
        assert again.dynamics.heat.reference_stability == result.weights[2]


def test_too_few_reviews_is_refused_and_changes_nothing(clock: Clock) -> None:
    store = MemoryStore(clock=clock, gate=Gate(1.0, 1.0))
    with pytest.raises(NotEnoughReviewsError, match="fitting needs"):
        store.fit()  # an empty store
    ids = [store.ingest(f"note {i} about topic{i} and thing{i}").memory_id for i in range(20)]
    for _ in range(3):
        clock.advance(days=2)
        for i in ids:
            store.feedback(i, Rating.Good)
    before = dump(store)
    with pytest.raises(NotEnoughReviewsError, match="60 scored reviews.*min_reviews"):
        store.fit()
    # enough reviews, but none failed: the log cannot tell how fast memories fade
    with pytest.raises(NotEnoughReviewsError, match="0 lapses.*feedback"):
        store.fit(min_reviews=50)
    for bad in ({"min_reviews": 0}, {"min_lapses": -1}, {"min_reviews": True}):
        with pytest.raises(ValueError, match="must be an int >= 1"):
            store.fit(**bad)
    for bad_apply in ("yes", 1, None, 1.0, np.True_):  # np.True_ is not ``True``: never applied
        with pytest.raises(TypeError, match="apply"):
            store.fit(apply=bad_apply)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown access source"):
        store.fit(sources=["searches"])
    assert dump(store) == before and store.dynamics == MemoryStore().dynamics


def test_search_reviews_only_are_refused(clock: Clock) -> None:
    """Relevant search hits are reviews (graded by the match), but successes by construction."""
    store = MemoryStore(embedder=VecEmbedder(), clock=clock, gate=Gate(1.0, 1.0))
    ids = [store.ingest(f"axis={k} fact {k}").memory_id for k in range(3, 15)]
    for _ in range(10):
        clock.advance(days=3)
        for k in range(3, 15):
            store.search(f"axis={k} query", k=1)
    log = store.access_log()
    searched = log[log["kind"] == "access"]
    assert set(searched["source"]) == {"search"} and len(searched) == 10 * len(ids)
    assert (searched["grade"] >= Rating.Hard).all()
    with pytest.raises(NotEnoughReviewsError, match="0 lapses"):
        store.fit(min_reviews=10)


def test_sources_pick_the_reviews(clock: Clock) -> None:
    store = MemoryStore(clock=clock, gate=Gate(1.0, 1.0))
    _small_log(store, n=30)
    ids = [m.id for m in store.memories()]
    for i in ids:  # searched, too: more (successful) reviews
        store.access(i, Rating.Good, now=T0 + timedelta(days=60))
    everything = store.fit(apply=False)
    used = store.fit(apply=False, sources=["feedback"])
    assert everything.n_reviews == len(ids) * 7 and used.n_reviews == len(ids) * 6
    assert used.sources == ("feedback",) and everything.sources is None
    html = used._repr_html_()
    assert "held-out log loss" in html and "not applied" in html
    assert "applied=False" in repr(used)
    assert used.to_dict()["reviews"] == used.n_reviews


def test_namespaces_fit_their_own_log(tmp_path: Path) -> None:
    path = tmp_path / "ns.db"
    with MemoryStore(
        path, namespace="a", gate=Gate(1.0, 1.0), durability=Durability(synchronous="NORMAL")
    ) as a:
        _small_log(a)
        fitted = a.fit(apply=False)
    with MemoryStore(path, namespace="b") as b:
        assert len(b.access_log()) == 0
        with pytest.raises(NotEnoughReviewsError):
            b.fit()
    assert fitted.n_memories == 40
