"""The store's use of the models: the boundary between datetimes and model days."""

from __future__ import annotations

import numpy as np
import pytest

from memlab.models.fsrs6 import FSRS6
from memlab.models.strength import DualStrength
from memlab.store.dynamics import GOOD, SECONDS_PER_DAY, Dynamics, days_between


def test_days_between_clips_clock_skew() -> None:
    np.testing.assert_allclose(days_between([SECONDS_PER_DAY * 2, 0.0], [0.0, 10.0]), [2.0, 0.0])


def test_initial_and_access_are_the_models() -> None:
    dyn = Dynamics()
    s0, d0 = dyn.initial()
    f = FSRS6()
    assert s0 == pytest.approx(float(f.initial_stability(GOOD)))
    assert d0 == pytest.approx(float(f.initial_difficulty(GOOD)))
    s, d, ss, rs = dyn.access(s0, d0, 0.0, 1.0, 3.0)
    es, ed = f.review(stability=s0, difficulty=d0, elapsed_days=3.0, grade=GOOD)
    assert float(s) == pytest.approx(float(es)) and float(d) == pytest.approx(float(ed))
    ds = DualStrength()
    rs_before = ds.retrieval_strength(retrieval_at_access=1.0, elapsed_days=3.0, storage=0.0)
    ess, ers = ds.on_access(storage=0.0, retrieval_before=rs_before)
    assert float(ss) == pytest.approx(float(ess)) and float(rs) == float(ers) == 1.0


def test_accessibility_and_state() -> None:
    dyn = Dynamics()
    r, acc, state = dyn.accessibility(np.array([0.0, 3650.0]), [3.0, 3.0], [1.0, 1.0], [0.0, 0.0])
    assert r[0] == pytest.approx(1.0) and r[1] < 0.5
    assert acc[0] > acc[1]
    assert state[0] == "active" and state[1] in ("silent", "unavailable")
