"""Evaluation protocols for FSRS-6 on a review log: memlab's 80/20 split and the srs-benchmark's.

``protocol="memlab"`` (the default): fit on the first 80 % of reviews by time, score the last 20 %
(:func:`memlab.fit.data.time_split`) in the day convention the log was loaded with.

``protocol="srs-benchmark"`` (open-spaced-repetition/srs-benchmark), rule by rule:

    1. **Anki days**: calendar days with a 4 am rollover (``convention="anki"``); a py-fsrs log
       is reloaded so (UTC unless a ``timezone`` is given), an srs-benchmark revlog already is.
    2. **Review cap** (``features/base.py``, ``_common_preprocessing``): a card's reviews after
       its ``2 * max_seq_len`` = 128th (same-day ones counted) are dropped.
    3. **Same-day reviews stay in the history** (``include_short_term``): they carry the state,
       but only rows with ``elapsed_days > 0`` are predicted and scored.
    4. **Review number**: ``i = (elapsed_days > 0).cumsum() + 1`` within the card, the ``i`` of
       RMSE(bins) (:mod:`memlab.fit.metrics`).
    5. **Outlier filter** (fsrs-optimizer's ``remove_outliers``): among the cards' first
       long-term reviews (``i == 2``), grouped by first grade, the (first grade, interval) cells
       are visited from the fewest reviews to the most (ties: longer interval first); a cell is
       dropped while the reviews dropped so far plus its own stay below
       ``max(5 % of the group, 20)``, and after that when it has fewer than 6 reviews or its
       interval exceeds 100 days (365 when the first grade is Easy).
    6. **Continuity** (``remove_non_continuous_rows``): a card loses every row from the first gap
       in ``i`` on, so a card whose first long-term review was an outlier leaves entirely.
    7. **Time-series folds** (scikit-learn's ``TimeSeriesSplit(n_splits=5)`` over the rows in
       time order): fold k tests the ``(k + 2)``-th of ``n_splits + 1`` equal blocks (the first
       takes the remainder) and trains on every row before it.
    8. **Metrics**: log loss, RMSE(bins) and AUC over the test rows of all folds pooled.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from memlab.fit.data import ReviewData, as_frame, load_reviews
from memlab.fit.metrics import scoreable_rows

Protocol = Literal["memlab", "srs-benchmark"]

#: srs-benchmark's ``--max_seq_len`` default; rows with ``i > 2 * MAX_SEQ_LEN`` are dropped.
MAX_SEQ_LEN = 64


@dataclass
class BenchmarkRows:
    """The rows the srs-benchmark protocol keeps: ``history`` builds card states, ``scored`` is
    predicted and scored; ``counts`` gives the rows removed by each rule.
    """

    history: NDArray[np.bool_]
    scored: NDArray[np.bool_]
    counts: dict[str, int] = field(default_factory=dict)


def _outlier_cells(first_grade: int, delta_t: NDArray[np.float64]) -> set[float]:
    """Intervals dropped from one first-grade group by the benchmark's outlier rule (docs, 5)."""
    values, counts = np.unique(delta_t, return_counts=True)
    order = np.lexsort((-values, counts))  # fewest reviews first, then the longer interval
    total = int(counts.sum())
    limit = max(total * 0.05, 20)
    removed = 0
    dropped: set[float] = set()
    long_limit = 365 if first_grade == 4 else 100
    for k in order:
        count, value = int(counts[k]), float(values[k])
        if removed + count < limit or count < 6 or value > long_limit:
            dropped.add(value)
            removed += count
    return dropped


def benchmark_rows(frame: pd.DataFrame, max_seq_len: int = MAX_SEQ_LEN) -> BenchmarkRows:
    """Rows kept by the srs-benchmark's rules 2-6 (module docs) of a tidy frame in Anki days."""
    cards = frame["card_id"].to_numpy()
    within_cap = frame["review"].to_numpy() < 2 * max_seq_len
    long_term = scoreable_rows(frame) & within_cap
    number = 1 + pd.Series(long_term.astype(int)).groupby(cards).cumsum().to_numpy()
    second = long_term & (number == 2)
    first_grade = frame.groupby("card_id", sort=False)["grade"].transform("first").to_numpy()
    t = frame["elapsed_days"].to_numpy(dtype=float)
    outlier = np.zeros(len(frame), dtype=bool)
    for grade in np.unique(first_grade[second]):
        sel = second & (first_grade == grade)
        dropped = _outlier_cells(int(grade), t[sel])
        outlier |= sel & np.isin(t, list(dropped))
    lost_cards = np.unique(cards[outlier])
    card_kept = ~np.isin(cards, lost_cards)
    history = within_cap & card_kept
    scored = long_term & card_kept
    counts = {
        "rows": int(len(frame)),
        "beyond_review_cap": int((~within_cap).sum()),
        "outlier_first_reviews": int(outlier.sum()),
        "outlier_cards": int(len(lost_cards)),
        "rows_of_outlier_cards": int((~card_kept & within_cap).sum()),
        "scored": int(scored.sum()),
    }
    return BenchmarkRows(history, scored, counts)


def time_series_folds(n: int, n_splits: int = 5) -> list[tuple[int, int]]:
    """``(start, stop)`` of each test block of scikit-learn's ``TimeSeriesSplit`` of ``n`` rows."""
    if n_splits < 2:
        raise ValueError(f"n_splits must be at least 2, got {n_splits!r}")
    size = n // (n_splits + 1)
    if size < 1:
        raise ValueError(f"{n} rows are too few for {n_splits} time-series folds")
    first = n - n_splits * size
    return [(first + k * size, first + (k + 1) * size) for k in range(n_splits)]


def benchmark_frame(
    reviews: ReviewData | pd.DataFrame | str, timezone: str | None = None
) -> pd.DataFrame:
    """The tidy frame in Anki days (rule 1): a log loaded in another convention, or in another
    ``timezone`` than one given, is reloaded with ``convention="anki"`` and the options it was
    loaded with (its deck and card filters, its ``invalid_grades``), so the protocol scores the
    same reviews."""
    if isinstance(reviews, ReviewData):
        source, zone = reviews.report.source, reviews.options.get("timezone")
        if reviews.report.layout == "srs-benchmark" or (
            reviews.report.convention == "anki" and timezone in (None, zone)
        ):
            return reviews.frame
        if source == "<DataFrame>":
            raise ValueError(
                "cannot reload a log given as a DataFrame in Anki days; load it with "
                "load_reviews(..., convention='anki', timezone=...) and pass that"
            )
        options = {**reviews.options, "convention": "anki", "timezone": timezone or zone}
        return load_reviews(source, **options).frame
    if isinstance(reviews, (str, bytes)) or hasattr(reviews, "__fspath__"):
        data = load_reviews(reviews, convention="anki", timezone=timezone)  # type: ignore[arg-type]
        return data.frame
    return as_frame(reviews)


@dataclass
class ProtocolResult:
    """Pooled test metrics of one model under one protocol, and the per-fold details."""

    protocol: str
    metrics: dict[str, float | int]
    folds: list[dict[str, Any]]
    rows: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
