"""Workloads: reproducible from a seed, ground truth consistent, bad config rejected."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.sim.workload import KINDS, Workload, WorkloadConfig

SMALL = dict(
    n_days=8,
    facts_per_day=10.0,
    queries_per_day=30.0,
    paraphrases_per_day=4.0,
    corrections_per_day=2.0,
)


def check_ground_truth(workload: Workload) -> None:
    """Raise ``ValueError`` if the events contradict their own ground truth.

    Checks: events in time order; each fact created once (version 0) before any other event
    about it; versions of a fact rise by one at each correction (``supersedes``); every
    query asks for the version current at its time, with the value of that version.
    """
    ev = workload.events
    if not ev["day"].is_monotonic_increasing:
        raise ValueError("events are not in time order")
    current: dict[int, tuple[int, str]] = {}
    for row in ev.itertuples(index=False):
        fid = int(row.fact_id)
        if row.kind == "fact":
            if fid in current or row.version != 0 or row.supersedes:
                raise ValueError(f"event {row.event}: fact {fid} created twice or not at version 0")
            current[fid] = (0, row.value)
            continue
        if fid not in current:
            raise ValueError(f"event {row.event}: {row.kind} about fact {fid} before it exists")
        version, value = current[fid]
        if row.kind == "correction":
            if not row.supersedes or row.version != version + 1 or row.value == value:
                raise ValueError(
                    f"event {row.event}: correction of fact {fid} is not version {version + 1} "
                    "with a new value"
                )
            current[fid] = (int(row.version), row.value)
        elif row.version != version or row.value != value or row.supersedes:
            raise ValueError(
                f"event {row.event}: {row.kind} of fact {fid} does not carry its current version"
            )


def test_same_seed_same_events_other_seed_differs() -> None:
    a = Workload.generate(seed=3, **SMALL)
    b = Workload.generate(WorkloadConfig(seed=3, **SMALL))
    pd.testing.assert_frame_equal(a.events, b.events)
    c = Workload.generate(seed=4, **SMALL)
    assert not a.events[["kind", "fact_id", "text"]].equals(c.events[["kind", "fact_id", "text"]])


@pytest.mark.parametrize("seed", [8, 20, 51])
def test_a_burst_before_the_first_fact_has_no_target(seed: int) -> None:
    w = Workload.generate(seed=seed, n_days=30, facts_per_day=1.0)
    assert (w.events["kind"] == "fact").any()


@settings(max_examples=15)
@given(seed=st.integers(0, 10_000), corrections=st.floats(0, 6), burst=st.floats(0, 1))
def test_ground_truth_is_consistent(seed: int, corrections: float, burst: float) -> None:
    w = Workload.generate(
        seed=seed,
        n_days=5,
        facts_per_day=8.0,
        queries_per_day=20.0,
        corrections_per_day=corrections,
        burst_prob=burst,
    )
    check_ground_truth(w)  # raises on any contradiction
    ev = w.events
    assert set(ev["kind"].unique()) <= set(KINDS)
    assert (ev["day"] >= 0).all() and (ev["day"] < 5).all()
    # every query's version is the number of corrections of its fact before it
    corr = ev[ev["kind"] == "correction"]
    for q in (
        ev[ev["kind"] == "query"]
        .sample(min(40, (ev["kind"] == "query").sum()), random_state=0)
        .itertuples()
    ):
        n_before = int(((corr["fact_id"] == q.fact_id) & (corr["event"] < q.event)).sum())
        assert q.version == n_before
    # text holds the value of the version it carries
    writes = ev[ev["kind"].isin(["fact", "paraphrase", "correction"])]
    assert all(v in t for v, t in zip(writes["value"], writes["text"], strict=False))


def test_check_ground_truth_catches_a_wrong_version() -> None:
    w = Workload.generate(seed=1, **SMALL)
    ev = w.events.copy()
    q = ev.index[ev["kind"] == "query"][5]
    ev.loc[q, "version"] += 1
    with pytest.raises(ValueError, match="current version"):
        check_ground_truth(Workload(w.config, ev))


def test_popularity_is_skewed_and_config_round_trips() -> None:
    w = Workload.generate(seed=2, n_days=20, queries_per_day=100.0)
    counts = w.events.loc[w.events["kind"] == "query", "fact_id"].value_counts().to_numpy()
    top = counts[: max(1, len(counts) // 10)].sum() / counts.sum()
    assert top > 0.3  # the top 10 % of facts draw well over 10 % of queries (Zipf-like)
    cfg = WorkloadConfig(seed=9, n_days=3)
    assert WorkloadConfig.from_dict(cfg.to_dict()) == cfg


@pytest.mark.parametrize(
    "bad, error",
    [
        ({"seed": -1}, ValueError),
        ({"n_days": 0}, ValueError),
        ({"queries_per_day": -1.0}, ValueError),
        ({"recency_mix": 1.5}, ValueError),
        ({"zipf_alpha": 0.0}, ValueError),
        ({"facts_per_day": "x"}, TypeError),
        ({"paraphrase_similarity": (2.0, 0.1)}, ValueError),
        ({"paraphrase_similarity": 0.9}, ValueError),  # a pair (mean, sd), named
        ({"correction_similarity": ("a", 0.1)}, ValueError),
        # a NaN spread would make every similarity NaN, which the simulator takes as "no
        # similarity" (CREATE); an infinite one would pin them to -1 or 1
        ({"paraphrase_similarity": (0.88, float("nan"))}, ValueError),
        ({"correction_similarity": (0.82, float("inf"))}, ValueError),
    ],
)
def test_bad_config_is_rejected(bad: dict, error: type) -> None:
    with pytest.raises(error):
        WorkloadConfig(**bad)
    with pytest.raises(TypeError, match="unknown"):
        WorkloadConfig.from_dict({"nope": 1})
    with pytest.raises(TypeError, match="config must be a WorkloadConfig"):  # not AttributeError
        Workload.generate({"n_days": 3}, seed=1)  # type: ignore[arg-type]


def test_events_are_in_time_order_with_dense_ids() -> None:
    w = Workload.generate(seed=5, **SMALL)
    assert np.array_equal(w.events["event"].to_numpy(), np.arange(len(w.events)))
    assert w.events["day"].is_monotonic_increasing
    assert w.n_facts == len(w.events.query("kind == 'fact'")["fact_id"].unique())
