from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.gate import (
    DECISIONS,
    Decision,
    Gate,
    contradicts,
    has_negation,
    labels_from_scores,
    numbers,
    words,
)


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
    assert Gate.from_dict(Gate(0.9, 0.7, guard=False).to_dict()) == Gate(0.9, 0.7, guard=False)


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        (
            "Backups run at 03:00 UTC.",
            "Backups run at 02:00 UTC.",
            Decision.UPDATE,
        ),  # a number changed
        (
            "Don't use black for formatting.",
            "Use black for formatting.",
            Decision.UPDATE,
        ),  # negation changed
        ("Never deploy on Fridays.", "Deploy on Fridays.", Decision.UPDATE),
        ("Use ruff for linting.", "Use ruff for linting", Decision.REINFORCE),  # a plain repetition
        ("Port 5432 is the staging port.", "The staging port is 5432.", Decision.REINFORCE),
    ],
)
def test_guard_never_reinforces_a_contradiction(new: str, old: str, expected: Decision) -> None:
    assert contradicts(new, old) is (expected is Decision.UPDATE)
    assert Gate().decide(0.99, new, old) is expected
    assert Gate(guard=False).decide(0.99, new, old) is Decision.REINFORCE
    assert Gate().decide(0.99) is Decision.REINFORCE  # without the texts the gate cannot guard
    assert (
        Gate().decide(0.5, new, old) is Decision.CREATE
    )  # the guard only ever demotes a reinforce


def test_guard_helpers() -> None:
    assert (
        has_negation("I can't remember")
        and has_negation("no more tabs")
        and not has_negation("use tabs")
    )
    assert numbers("v2.5 on port 8080 at 02:00") == {"2.5", "8080", "02", "00"}
    assert words("Don't STOP") == ["don't", "stop"]


def test_lossless_judge_rules() -> None:
    from memlab.gate import Candidate

    gate = Gate()

    def judge(new: str, old: str, sim: float = 0.8) -> tuple[Decision, str]:
        v = gate.judge(new, [Candidate(sim, old)])
        return v.decision, v.rule

    assert judge("Note: Sven's game is piano!", "Sven's game is piano.") == (
        Decision.REINFORCE,
        "same-fact",
    )
    assert judge("The backup runs at 03:00", "The backup runs at 02:00") == (
        Decision.SUPERSEDE,
        "contradiction",
    )
    assert judge("Correction: Sven's game is now chess.", "Sven's game is piano.", 0.5) == (
        Decision.SUPERSEDE,
        "revision",
    )
    # another attribute and another value of the same person: not a revision, both stay
    assert judge(
        "Update: the bank of Alice Ito changed to a sabbatical.",
        "Update: the child of Alice Ito changed to Alex.",
    ) == (Decision.RELATED, "related")
    assert judge("My daughter is allergic to peanuts", "I am allergic to peanuts") == (
        Decision.RELATED,
        "related",
    )
    assert judge("Bob prefers tabs", "Alice prefers tabs", 0.6)[0] is Decision.CREATE
    # a candidate about another entity is never reinforced or superseded
    v = gate.judge("Sven's game is piano.", [Candidate(0.99, "Sven's game is piano.", "x")], "y")
    assert v.decision is Decision.RELATED
    assert Gate.off().judge("same", [Candidate(1.0, "same")]).decision is Decision.CREATE
    assert Gate.from_dict(Gate.fitted(0.9, 0.7, n=3).to_dict()) == Gate.fitted(0.9, 0.7)
    # a two-word value replaced by a two-word value is one slot: a revision
    assert judge("Correction: Wen's team is now Q3 launch.", "Wen's team is Berlin office.") == (
        Decision.SUPERSEDE,
        "revision",
    )
    assert (
        judge("Correction: Alice's child is now Leeds.", "Correction: Alice's partner is now Sam.")[
            0
        ]
        is not Decision.SUPERSEDE
    )
