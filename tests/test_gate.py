from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.gate import DECISIONS, Decision, Gate, labels_from_scores


def test_default_thresholds_decide_strictly_above() -> None:
    gate = Gate()
    assert gate.decide(0.93) is Decision.REINFORCE
    assert gate.decide(0.92) is Decision.UPDATE  # "> 0.92" reinforces; 0.92 itself updates
    assert gate.decide(0.76) is Decision.UPDATE
    assert gate.decide(0.75) is Decision.CREATE
    assert gate.decide(None) is Decision.CREATE


@given(st.lists(st.floats(-1, 1), min_size=1, max_size=50), st.floats(-1, 1), st.floats(-1, 1))
def test_codes_are_monotone_in_similarity(sims: list[float], a: float, b: float) -> None:
    gate = Gate(reinforce=max(a, b), update=min(a, b))
    codes = gate.codes(sims)
    order = np.argsort(sims, kind="stable")
    assert (np.diff(codes[order]) <= 0).all()  # higher similarity never gives a "weaker" decision
    assert [DECISIONS[c] for c in codes] == gate.decide_many(sims)


def test_labels_from_stsb_scores() -> None:
    assert labels_from_scores([5.0, 4.5, 4.49, 2.5, 2.49, 0.0]).tolist() == [0, 0, 1, 1, 2, 2]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"reinforce": 0.5, "update": 0.8}, "must not exceed"),
        ({"reinforce": float("nan")}, "finite number"),
        ({"update": 1.5}, r"in \[-1, 1\]"),
        ({"reinforce": "high"}, "must be a number"),
    ],
)
def test_bad_thresholds(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        Gate(**kwargs)  # type: ignore[arg-type]


def test_nan_similarity_is_an_error() -> None:
    with pytest.raises(ValueError, match="NaN"):
        Gate().codes([0.5, float("nan")])


def test_round_trip_dict() -> None:
    assert Gate.from_dict(Gate(0.9, 0.7).to_dict()) == Gate(0.9, 0.7)
