"""Model parameters belong to the store: FSRS-6 weights and heat constants survive reopening."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from store_helpers import T0, Clock

from memlab.models.fsrs6 import DEFAULT_WEIGHTS, FSRS6
from memlab.models.heat import HeatModel
from memlab.store import MemoryStore
from memlab.store.dynamics import Dynamics


def _custom() -> Dynamics:
    w = np.array(DEFAULT_WEIGHTS, dtype=float)
    w[20] = 0.6
    return Dynamics(fsrs=FSRS6(w), heat=HeatModel.preset("ebbinghaus1885"))


def test_weights_and_heat_survive_reopening(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "p.db"
    with MemoryStore(path, clock=clock, dynamics=_custom()) as s:
        mid = s.ingest("The staging database listens on port 5432.").memory_id
    with MemoryStore(path, clock=clock) as again:
        assert again.dynamics == _custom()
        assert again.dynamics.fsrs.weights[20] == pytest.approx(0.6)
        later = T0 + timedelta(days=30)
        sweep = again.forget_sweep(now=later).set_index("id")
        m = again.get(mid)
        expected = _custom().retention(30.0, m.stability)
        assert float(again.dynamics.retention(30.0, m.stability)) == pytest.approx(float(expected))
        assert float(expected) != pytest.approx(float(Dynamics().retention(30.0, m.stability)))
    plain = MemoryStore(clock=clock)
    pid = plain.ingest("The staging database listens on port 5432.").memory_id
    plain_heat = plain.forget_sweep(now=later).set_index("id").loc[pid, "heat"]
    assert sweep.loc[mid, "heat"] != pytest.approx(plain_heat)  # the 1885 constants ran
    with MemoryStore(path, clock=clock, dynamics=Dynamics()) as reset:
        assert reset.dynamics == Dynamics()
    with MemoryStore(path, clock=clock) as back:
        assert back.dynamics == Dynamics()


def test_bad_stored_dynamics_is_refused() -> None:
    with pytest.raises(ValueError, match="dynamics"):
        Dynamics.from_dict({"fsrs": {}})
    d = Dynamics()
    assert Dynamics.from_dict(json.loads(json.dumps(d.to_dict()))) == d
    assert replace(d, heat=HeatModel.preset("ebbinghaus1885")) != d
