"""Benchmark: memlab's vectorised FSRS-6 forward pass against py-fsrs's per-card Scheduler.

Synthetic, seeded review histories (10,000 cards, 10-30 reviews each, ragged and padded; all
four grades, same-day reviews and gaps up to hundreds of days). memlab runs them all in one
``FSRS6.forward`` call (validation included). py-fsrs reviews a subset of the same histories
card by card with ``Scheduler(enable_fuzzing=False).review_card`` at explicit UTC datetimes;
its rate is scaled to reviews/s. The two are timed in alternating rounds (the machine may be
shared) and the best time of each is kept. Their final states are checked to agree.

Run:  python experiments/bench_fsrs6_forward.py [--cards 10000] [--reference-cards 1000]
Writes experiments/results/bench_fsrs6_forward.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from datetime import UTC, datetime, timedelta
from importlib.metadata import version
from pathlib import Path

import numpy as np
from fsrs import Card, Rating, Scheduler

from memlab.models.fsrs6 import FSRS6

RESULTS = Path(__file__).resolve().parent / "results" / "bench_fsrs6_forward.json"
TARGET_RATE = 1_000_000
TARGET_RATIO = 100


def synthetic_histories(n_cards: int, seed: int = 20261130) -> tuple[np.ndarray, np.ndarray]:
    """Padded (grades, whole elapsed days) of shape (n_cards, 30)."""
    rng = np.random.default_rng(seed)
    max_reviews = 30
    lengths = rng.integers(10, max_reviews + 1, n_cards)
    grades = rng.choice([1, 2, 3, 4], size=(n_cards, max_reviews), p=[0.15, 0.15, 0.55, 0.15])
    kind = rng.integers(0, 4, size=(n_cards, max_reviews))
    elapsed = np.select(
        [kind == 0, kind == 1, kind == 2],
        [
            np.zeros((n_cards, max_reviews)),
            rng.integers(1, 30, (n_cards, max_reviews)),
            rng.integers(30, 120, (n_cards, max_reviews)),
        ],
        rng.integers(120, 800, (n_cards, max_reviews)),
    ).astype(float)
    pad = np.arange(max_reviews)[None, :] >= lengths[:, None]
    grades[pad] = 0
    elapsed[:, 0] = np.nan
    elapsed[pad] = np.nan
    return grades, elapsed


def time_memlab(model: FSRS6, grades: np.ndarray, elapsed: np.ndarray, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        model.forward(grades=grades, elapsed_days=elapsed)
        best = min(best, time.perf_counter() - start)
    return best


def run_py_fsrs(
    weights: tuple[float, ...], grades: np.ndarray, elapsed: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray]:
    """Seconds spent in review_card over all real reviews, and the final (S, D) of each card."""
    scheduler = Scheduler(parameters=weights, enable_fuzzing=False)
    start_time = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)
    # datetimes whose whole-day differences (py-fsrs's .days) are the elapsed days; a few minutes
    # are added to each so that same-day reviews are distinct moments
    plans = []
    for card_grades, card_elapsed in zip(grades, elapsed, strict=True):
        when = start_time
        plan = []
        for i, grade in enumerate(card_grades[card_grades > 0]):
            if i > 0:
                when = when + timedelta(days=float(card_elapsed[i]), minutes=7)
            plan.append((Rating(int(grade)), when))
        plans.append(plan)
    final_s = np.empty(len(plans))
    final_d = np.empty(len(plans))
    start = time.perf_counter()
    for index, plan in enumerate(plans):
        card = Card(card_id=index + 1)
        for rating, when in plan:
            card, _ = scheduler.review_card(card, rating, when)
        final_s[index] = card.stability
        final_d[index] = card.difficulty
    return time.perf_counter() - start, final_s, final_d


def main() -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument(
        "--reference-cards", type=int, default=1_000, help="cards reviewed by py-fsrs (a subset)"
    )
    parser.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds")
    parser.add_argument("--repeats", type=int, default=3, help="memlab runs per round")
    args = parser.parse_args()

    model = FSRS6()
    grades, elapsed = synthetic_histories(args.cards)
    n_reviews = int((grades > 0).sum())
    subset = slice(0, min(args.reference_cards, args.cards))
    ref_reviews = int((grades[subset] > 0).sum())
    model.forward(grades=grades[:10], elapsed_days=elapsed[:10])  # warm up

    # the machine is shared: memlab and py-fsrs are timed in alternating rounds so that both
    # see the same load, and the best time of each is kept
    memlab_seconds = ref_seconds = np.inf
    for _ in range(args.rounds):
        memlab_seconds = min(memlab_seconds, time_memlab(model, grades, elapsed, args.repeats))
        seconds, ref_s, ref_d = run_py_fsrs(model.weights, grades[subset], elapsed[subset])
        ref_seconds = min(ref_seconds, seconds)
    memlab_rate = n_reviews / memlab_seconds
    ref_rate = ref_reviews / ref_seconds

    trace = model.forward(grades=grades[subset], elapsed_days=elapsed[subset])
    last = (grades[subset] > 0).sum(axis=1) - 1
    rows = np.arange(len(last))
    memlab_s, memlab_d = trace.stability[rows, last], trace.difficulty[rows, last]
    below_cap = ref_s <= 36500.0
    agree_s = float(np.max(np.abs(memlab_s[below_cap] / ref_s[below_cap] - 1)))
    agree_d = float(np.max(np.abs(memlab_d - ref_d)))

    result = {
        "benchmark": "FSRS-6 forward pass: memlab FSRS6.forward vs py-fsrs Scheduler.review_card",
        "date_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "cards": args.cards,
        "reviews": n_reviews,
        "memlab": {
            "best_seconds": memlab_seconds,
            "runs": args.rounds * args.repeats,
            "reviews_per_second": memlab_rate,
        },
        "py_fsrs": {
            "version": version("fsrs"),
            "cards": len(last),
            "reviews": ref_reviews,
            "best_seconds": ref_seconds,
            "runs": args.rounds,
            "reviews_per_second": ref_rate,
        },
        "ratio": memlab_rate / ref_rate,
        "final_state_agreement_on_subset": {
            "max_relative_stability_difference": agree_s,
            "max_abs_difficulty_difference": agree_d,
            "cards_compared": int(below_cap.sum()),
        },
        "targets": {
            "reviews_per_second": TARGET_RATE,
            "ratio": TARGET_RATIO,
            "met": bool(memlab_rate >= TARGET_RATE and memlab_rate / ref_rate >= TARGET_RATIO),
        },
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_1min": os.getloadavg()[0],
        },
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")

    met = "met" if result["targets"]["met"] else "NOT met"
    print(f"{n_reviews:,} reviews over {args.cards:,} cards")
    print(
        f"memlab FSRS6.forward : {memlab_rate:14,.0f} reviews/s"
        f"  (best of {args.rounds * args.repeats}: {memlab_seconds * 1e3:.1f} ms)"
    )
    print(
        f"py-fsrs review_card  : {ref_rate:14,.0f} reviews/s"
        f"  (best of {args.rounds}: {ref_reviews:,} reviews in {ref_seconds:.3f} s)"
    )
    print(f"ratio                : {memlab_rate / ref_rate:14,.0f} x")
    print(f"agreement on subset  : max rel dS {agree_s:.1e}, max abs dD {agree_d:.1e}")
    print(f"targets (>= {TARGET_RATE:,}/s, >= {TARGET_RATIO}x): {met}")
    print(f"wrote {RESULTS}")
    return result


if __name__ == "__main__":
    main()
