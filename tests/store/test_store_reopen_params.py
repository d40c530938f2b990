"""Parameters belong to the store: after reopening it *behaves* by its stored FSRS-6 weights
(w20 included), heat constants, dual-strength constants and gate; given parameters win and are
stored; assigning ``store.dynamics`` stores them."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from store_helpers import T0, Clock, dump_file

from memlab.gate import Gate
from memlab.models.fsrs6 import DEFAULT_WEIGHTS, FSRS6, LOWER_BOUNDS, UPPER_BOUNDS, Rating
from memlab.models.heat import HeatModel
from memlab.models.strength import DualStrength
from memlab.store import MemoryStore
from memlab.store.dynamics import Dynamics

FACT = "The staging database listens on port 5432."


def _w20(value: float) -> FSRS6:
    w = list(DEFAULT_WEIGHTS)
    w[20] = value
    return FSRS6(w)


def test_a_store_opened_with_w20_forgets_like_it_after_reopening(tmp_path: Path) -> None:
    path = tmp_path / "w20.db"
    model = _w20(0.6)
    with MemoryStore(path, dynamics=Dynamics(fsrs=model)) as s:
        mid = s.ingest(FACT, now=T0).memory_id
    later = T0 + timedelta(days=30)
    with MemoryStore(path) as again:  # no dynamics given: the stored ones run
        m = again.get(mid)
        r = float(again.to_dataframe(now=later).set_index("id").loc[mid, "retention"])
        assert r == pytest.approx(
            float(model.retrievability(elapsed_days=30.0, stability=m.stability))
        )
        assert r != pytest.approx(
            float(FSRS6().retrievability(elapsed_days=30.0, stability=m.stability)), abs=1e-3
        )
        # a review after reopening updates the state by the w20 = 0.6 model
        after = again.feedback(mid, Rating.Good, now=later)
        s_expected, d_expected = model.review(
            stability=m.stability, difficulty=m.difficulty, elapsed_days=30.0, grade=Rating.Good
        )
        assert after.stability == pytest.approx(float(s_expected))
        assert after.difficulty == pytest.approx(float(d_expected))
        s_default, _ = FSRS6().review(
            stability=m.stability, difficulty=m.difficulty, elapsed_days=30.0, grade=Rating.Good
        )
        assert after.stability != pytest.approx(float(s_default), rel=1e-3)
    # a store without the stored weights forgets otherwise
    plain = MemoryStore()
    pid = plain.ingest(FACT, now=T0).memory_id
    r_plain = float(plain.to_dataframe(now=later).set_index("id").loc[pid, "retention"])
    assert r_plain != pytest.approx(r, abs=1e-3)


def test_every_parameter_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "all.db"
    rng = np.random.default_rng(3)
    weights = np.array(DEFAULT_WEIGHTS) * np.exp(rng.normal(0.0, 0.2, 21))
    weights[20] = 0.45
    dynamics = Dynamics(
        fsrs=FSRS6(np.clip(weights, LOWER_BOUNDS, UPPER_BOUNDS)),
        strength=DualStrength(gain=0.7),
        heat=HeatModel.preset("ebbinghaus1885"),
    )
    gate = Gate(reinforce=0.97, update=0.8)
    with MemoryStore(path, dynamics=dynamics, gate=gate) as s:
        mid = s.ingest(FACT, now=T0).memory_id
    with MemoryStore(path) as again:
        assert again.dynamics == dynamics and again.gate == gate
        assert again.dynamics.fsrs.weights[20] == pytest.approx(0.45)
        # heat runs the 1885 constants: hot ends after minutes, so a day later it is cold
        # (the default constants keep a memory hot for about a day)
        day = T0 + timedelta(days=1)
        sweep = again.forget_sweep(now=day).set_index("id")
        m = again.get(mid)
        assert sweep.loc[mid, "band"] == "cold" and 10 < sweep.loc[mid, "heat"] < 40
        plain = MemoryStore()
        pid = plain.ingest(FACT, now=T0).memory_id
        assert plain.forget_sweep(now=day).set_index("id").loc[pid, "band"] == "hot"
        # the new memory's first state follows the stored weights
        assert m.stability == pytest.approx(dynamics.fsrs.weights[2])


def test_given_parameters_win_and_are_stored(tmp_path: Path) -> None:
    path = tmp_path / "given.db"
    with MemoryStore(path, dynamics=Dynamics(fsrs=_w20(0.6))) as s:
        mid = s.ingest(FACT, now=T0).memory_id
        stored = s.get(mid)
    with MemoryStore(path, dynamics=Dynamics(fsrs=_w20(0.3))) as given:
        assert given.dynamics.fsrs.weights[20] == pytest.approx(0.3)
        # the memories keep the state the old weights gave them; the new weights read it
        m = given.get(mid)
        assert (m.stability, m.difficulty) == (stored.stability, stored.difficulty)
        r = float(
            given.to_dataframe(now=T0 + timedelta(days=30)).set_index("id").loc[mid, "retention"]
        )
        assert r == pytest.approx(
            float(_w20(0.3).retrievability(elapsed_days=30.0, stability=m.stability))
        )
    with MemoryStore(path) as back:  # the given ones were stored
        assert back.dynamics.fsrs.weights[20] == pytest.approx(0.3)


def test_assigning_dynamics_stores_them(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "set.db"
    with MemoryStore(path, clock=clock) as s:
        s.ingest(FACT)
        before = dump_file(path)
        with pytest.raises(TypeError, match="Dynamics"):
            s.dynamics = {"fsrs": {}}  # type: ignore[assignment]
        assert s.dynamics == Dynamics()
        s.dynamics = Dynamics(fsrs=_w20(0.5))
        assert s.dynamics.fsrs.weights[20] == pytest.approx(0.5)
        new = s.ingest("A second, unrelated note about kiwi harvests in March.")
        assert s.get(new.memory_id).stability == pytest.approx(DEFAULT_WEIGHTS[2])
    assert dump_file(path) != before
    with MemoryStore(path) as again:
        assert again.dynamics == Dynamics(fsrs=_w20(0.5))
