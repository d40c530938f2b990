"""Parameter recovery: simulate review logs from FSRS-6 with known weights, fit them back.

The learner follows FSRS-6: each review comes at the interval for ``desired_retention`` times
log-normal noise, in whole days; recalled with probability R (graded from ``recall_grades``), else
Again and, with probability ``relearn``, reviewed again that day. :func:`recover` compares the
fitted weights and the predicted R, which is what is identifiable (the weights trade off).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from memlab.fit.data import ReviewData, load_reviews
from memlab.fit.fsrs6 import FSRS6Fitter, predict_fsrs6
from memlab.fit.metrics import log_loss, scoreable_rows
from memlab.models.fsrs6 import DEFAULT_WEIGHTS, FSRS6


def simulate_reviews(
    weights: tuple[float, ...] | None = None,
    *,
    n_cards: int = 500,
    reviews_per_card: int = 8,
    desired_retention: float = 0.9,
    interval_noise: float = 0.5,
    first_grades: tuple[float, float, float, float] = (0.25, 0.1, 0.55, 0.1),
    recall_grades: tuple[float, float, float] = (0.15, 0.7, 0.15),
    relearn: float = 0.5,
    start_days: int = 60,
    seed: int | np.random.Generator | None = 0,
) -> ReviewData:
    """A review log simulated from FSRS-6 (module docs), loaded as tidy :class:`ReviewData`; the
    true R of every review is in the frame's ``true_r`` column.
    """
    if n_cards < 1 or reviews_per_card < 1:
        raise ValueError("n_cards and reviews_per_card must be positive")
    if not 0 < desired_retention < 1:
        raise ValueError(f"desired_retention must be in (0, 1), got {desired_retention!r}")
    for name, probs in (("first_grades", first_grades), ("recall_grades", recall_grades)):
        if abs(sum(probs) - 1) > 1e-9 or min(probs) < 0:
            raise ValueError(f"{name} must be probabilities summing to 1, got {probs!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    model = FSRS6(weights)
    day = rng.integers(0, start_days, n_cards).astype(float)
    grade = rng.choice(np.arange(1, 5), size=n_cards, p=first_grades)
    s = model.initial_stability(grade).astype(float)
    d = model.initial_difficulty(grade).astype(float)
    cards = np.arange(n_cards)
    nan = np.full(n_cards, np.nan)
    rows: list[tuple[NDArray[Any], ...]] = [(cards, day.copy(), np.zeros(n_cards), grade, nan, nan)]
    for step in range(1, reviews_per_card):
        interval = model.interval(stability=s, desired_retention=desired_retention) * np.exp(
            rng.normal(0.0, interval_noise, n_cards)
        )
        t = np.maximum(1.0, np.round(interval))
        r = model.retrievability(elapsed_days=t, stability=s)
        recalled = rng.random(n_cards) < r
        grade = np.where(recalled, rng.choice(np.arange(2, 5), size=n_cards, p=recall_grades), 1)
        day = day + t
        s, d = model.review(stability=s, difficulty=d, elapsed_days=t, grade=grade)
        rows.append((cards, day.copy(), np.full(n_cards, step * 2.0), grade, t, r))
        again = grade == 1
        relearning = again & (rng.random(n_cards) < relearn)
        if relearning.any():
            s[relearning], d[relearning] = model.review(
                stability=s[relearning], difficulty=d[relearning], elapsed_days=0.0, grade=3
            )
            k = int(relearning.sum())
            same_day = (np.full(k, step * 2.0 + 1), np.full(k, 3), np.zeros(k), np.full(k, np.nan))
            rows.append((cards[relearning], day[relearning], *same_day))
    card, days, seq, grades, elapsed, true_r = (
        np.concatenate(parts) for parts in zip(*rows, strict=True)
    )
    order = np.lexsort((card, seq, days))
    table = pd.DataFrame(
        {
            "card_id": card[order],
            "day_offset": days[order].astype(np.int64),
            "rating": grades[order].astype(np.int64),
            "elapsed_days": np.where(np.isnan(elapsed[order]), -1, elapsed[order]),
        }
    )
    data = load_reviews(table, layout="srs-benchmark")
    data.frame["true_r"] = true_r[order]
    data.report.source = (
        f"simulated FSRS-6 ({n_cards} cards x {reviews_per_card} reviews, seed {seed!r})"
    )
    return data


@dataclass
class RecoveryResult:
    """How close a fit to simulated reviews comes to the weights that generated them."""

    true_weights: tuple[float, ...]
    fitted_weights: tuple[float, ...]
    n_reviews: int  # scored reviews only: those the errors and log losses below are taken over
    r_mae: float  # mean |R_fitted - R_true| over scored reviews
    r_max_error: float
    log_loss_true: float  # log loss of the true weights on the simulated outcomes
    log_loss_fitted: float
    log_loss_default: float
    fit_seconds: float
    weight_errors: pd.DataFrame = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "weight_errors"}
        for name in ("true_weights", "fitted_weights"):
            out[name] = list(out[name])
        return {**out, "weight_abs_error": self.weight_errors["abs_error"].tolist()}


def recover(
    weights: tuple[float, ...] | None = None,
    *,
    n_cards: int = 500,
    reviews_per_card: int = 8,
    seed: int = 0,
) -> RecoveryResult:
    """Simulate from ``weights`` (default: the defaults), fit back, compare (see module docs)."""
    true = FSRS6(weights)
    data = simulate_reviews(
        true.weights, n_cards=n_cards, reviews_per_card=reviews_per_card, seed=seed
    )
    fitted = FSRS6Fitter().fit(data)
    frame = data.frame
    rows = scoreable_rows(frame)
    r_true = frame["true_r"].to_numpy()[rows]
    r_fit = fitted.predict(frame)[rows]
    y = (frame["grade"].to_numpy()[rows] >= 2).astype(float)
    r_default = predict_fsrs6(FSRS6(), frame)[rows]
    errors = pd.DataFrame(
        {
            "true": true.weights,
            "fitted": fitted.weights_,
            "abs_error": np.abs(np.array(fitted.weights_) - np.array(true.weights)),
        },
        index=[f"w{i}" for i in range(21)],
    )
    return RecoveryResult(
        true_weights=true.weights,
        fitted_weights=fitted.weights_,
        n_reviews=int(rows.sum()),
        r_mae=float(np.mean(np.abs(r_fit - r_true))),
        r_max_error=float(np.max(np.abs(r_fit - r_true))),
        log_loss_true=log_loss(y, r_true),
        log_loss_fitted=log_loss(y, r_fit),
        log_loss_default=log_loss(y, r_default),
        fit_seconds=fitted.fit_seconds_,
        weight_errors=errors,
    )


#: A weight vector within the bounds, away from the defaults (recovery tests and experiments).
ALTERNATIVE_WEIGHTS: tuple[float, ...] = tuple(
    np.round(
        np.multiply(
            DEFAULT_WEIGHTS,
            (2.0, 1.5, 1.3, 1.2, 0.9, 1.2, 0.8, 10.0, 0.9, 1.5, 1.2)  # w0..w10
            + (1.1, 1.5, 1.2, 0.9, 1.2, 1.1, 0.8, 1.5, 1.3, 1.4),  # w11..w20
        ),
        4,
    ).tolist()
)
