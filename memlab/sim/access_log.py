"""An agent's access log simulated from known FSRS-6 weights, recorded through a real store.

The world follows FSRS-6 with the true weights; the store sees only the agent's API calls. Each
memory is ingested on one of the first 30 days (a first review, Good); it is needed again at
the world's interval for retention 0.9 times log-normal noise (sigma 0.5, 1 to 365 days),
recalled with the true retrievability and recorded with ``feedback`` (Hard/Good/Easy with
probabilities 0.15/0.7/0.15, Again when forgotten); after a lapse, with probability 0.5, it is
looked up again a few hours later. The returned frame holds the true R of every review, to
check a fit against.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np
import pandas as pd

from memlab.models._validation import integer
from memlab.models.fsrs6 import FSRS6, GOOD
from memlab.sim.store_sim import START

_SYLLABLES = tuple(
    a + b for a in "bdfgklmnprstvz" for b in ("a", "e", "i", "o", "u", "ai", "ou", "ei")
)


def _text(rng: np.random.Generator, i: int) -> str:
    words = ["".join(rng.choice(_SYLLABLES, size=3)) for _ in range(8)]
    return f"Note {i}: " + " ".join(words) + "."


def simulate_access_log(
    store: Any,
    weights: tuple[float, ...] | None = None,
    *,
    n_memories: int = 300,
    reviews_per_memory: int = 8,
    seed: int | np.random.Generator | None = 0,
) -> pd.DataFrame:
    """Record a simulated access log into ``store`` (see the module docs); returns its reviews.

    Parameters
    ----------
    store : MemoryStore
        Its gate must create a memory for every (pseudo-word) note, as ``Gate(1, 1)`` does.
    weights : tuple of 21 floats, optional
        The world's FSRS-6 weights (default: the defaults).
    n_memories, reviews_per_memory : int
        Memories created, and reviews of each after its creation (same-day relearning extra).
    seed : int or numpy Generator, optional
        Seed of the simulated reviews and texts (the same seed, the same log).

    Returns
    -------
    DataFrame
        One row per review after creation: ``memory_id, at, elapsed_days, grade, true_r``
        (``true_r`` NaN at same-day relearning reviews), in time order.
    """
    integer(n_memories, "n_memories", low=1)  # checked before the store is written
    integer(reviews_per_memory, "reviews_per_memory", low=1)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    world = FSRS6(weights)
    created = np.sort(rng.integers(0, 30, n_memories)).astype(float)
    texts = [_text(rng, i) for i in range(n_memories)]
    ids = np.zeros(n_memories, dtype=np.int64)
    for day in np.unique(created):
        members = np.flatnonzero(created == day)
        results = store.ingest_many(
            [texts[i] for i in members], now=START + timedelta(days=float(day))
        )
        for i, result in zip(members, results, strict=True):
            if result.decision.value not in ("create", "related"):
                raise ValueError(
                    f"the store's gate merged simulated note {i} ({result.decision.value}); give"
                    " the store a gate that creates every note, e.g. Gate(1, 1)"
                )
            ids[i] = result.memory_id
    s = np.full(n_memories, float(world.initial_stability(GOOD)))
    d = np.full(n_memories, float(world.initial_difficulty(GOOD)))
    day = created.copy()
    rows: list[tuple[int, float, float, int, float]] = []
    for _ in range(reviews_per_memory):
        interval = np.asarray(world.interval(stability=s, desired_retention=0.9), dtype=float)
        noisy = interval * np.exp(rng.normal(0.0, 0.5, n_memories))
        t = np.clip(noisy, 1.0, 365.0)
        r = np.asarray(world.retrievability(elapsed_days=t, stability=s), dtype=float)
        recalled = rng.random(n_memories) < r
        grade = np.where(recalled, rng.choice([2, 3, 4], size=n_memories, p=(0.15, 0.7, 0.15)), 1)
        day = day + t
        new = world.review(stability=s, difficulty=d, elapsed_days=t, grade=grade)
        s, d = (np.asarray(x, dtype=float) for x in new)
        relearning = (grade == 1) & (rng.random(n_memories) < 0.5)
        hours = rng.uniform(1.0, 6.0, n_memories)
        for i in range(n_memories):
            rows.append((int(ids[i]), float(day[i]), float(t[i]), int(grade[i]), float(r[i])))
            if relearning[i]:
                rows.append(
                    (int(ids[i]), float(day[i] + hours[i] / 24), hours[i] / 24, GOOD, np.nan)
                )
        if relearning.any():
            later = hours[relearning] / 24
            s[relearning], d[relearning] = world.review(
                stability=s[relearning], difficulty=d[relearning], elapsed_days=later, grade=GOOD
            )
            day[relearning] = day[relearning] + later
    frame = pd.DataFrame(rows, columns=["memory_id", "day", "elapsed_days", "grade", "true_r"])
    frame = frame.sort_values(["day", "memory_id"], kind="stable").reset_index(drop=True)
    frame["at"] = [START + timedelta(days=float(x)) for x in frame["day"]]
    for row in frame.itertuples(index=False):
        store.feedback(row.memory_id, int(row.grade), now=row.at)
    return frame[["memory_id", "at", "elapsed_days", "grade", "true_r"]]
