"""A memory store's access log as reviews, and FSRS-6 fitted to it (the front end is
:meth:`memlab.store.MemoryStore.fit`; this module never loads the store).

As the store's own dynamics: a memory's creation is its first review, graded Good, and each
``access`` event a later review with the grade the store applied; elapsed time is continuous,
and accesses at one instant are kept in event order, one microsecond apart. Search hits are
successes by construction, so only ``feedback(memory_id, 1)`` gives a lapse, and
:func:`fit_access_log` refuses a log with too few scored reviews or lapses. The heat curve is
fitted beside FSRS-6 for comparison, never applied (the store's heat is a band scale).
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from memlab.fit.compare import HeatFitter
from memlab.fit.data import ReviewData, load_reviews, time_split
from memlab.fit.fsrs6 import FSRS6Fitter, _number, score_fsrs6
from memlab.fit.metrics import score_rows, scoreable_rows
from memlab.models._validation import integer
from memlab.models.fsrs6 import FSRS6, GOOD

#: Columns of an access log (:meth:`memlab.store.MemoryStore.access_log`).
ACCESS_COLUMNS: tuple[str, ...] = ("memory_id", "event_id", "at", "kind", "source", "grade")

#: Sources of ``access`` events the store writes (:mod:`memlab.store`).
ACCESS_SOURCES: tuple[str, ...] = ("search", "feedback", "api", "reinforce")

_TIE_NS = 1_000  # accesses of one memory at one instant: one microsecond apart, in event order


class NotEnoughReviewsError(ValueError):
    """The access log is too small (or has no lapse) to fit FSRS-6 on; nothing was changed."""


def review_log(accesses: pd.DataFrame, sources: Iterable[str] | None = None) -> pd.DataFrame:
    """The py-fsrs review layout (``card_id, review_rating, review_time, source``) of an access
    log, one card per memory (the rule is in the module docs).

    Parameters
    ----------
    accesses : DataFrame
        Columns :data:`ACCESS_COLUMNS`: ``at`` UTC timestamps, ``kind`` ``"create"`` or
        ``"access"``, ``source`` the access's source (None at creation), ``grade`` 1-4 (NA at
        creation). Other kinds are ignored.
    sources : iterable of str, optional
        Keep only the accesses of these sources (:data:`ACCESS_SOURCES`); default all.

    Returns
    -------
    DataFrame
        Sorted by time; ``review_time`` tz-aware UTC, strictly increasing within a memory.
    """
    if not isinstance(accesses, pd.DataFrame):
        raise TypeError(f"accesses must be a pandas DataFrame, got {type(accesses).__name__}")
    missing = [c for c in ACCESS_COLUMNS if c not in accesses.columns]
    if missing:
        raise ValueError(f"not an access log: missing column(s) {missing}")
    keep = None
    if sources is not None:
        keep = [sources] if isinstance(sources, str) else list(sources)
        unknown = sorted(set(keep) - set(ACCESS_SOURCES))
        if unknown:
            raise ValueError(f"unknown access source(s) {unknown}; known: {list(ACCESS_SOURCES)}")
    kind = accesses["kind"].to_numpy()
    grade = pd.to_numeric(accesses["grade"], errors="coerce").to_numpy(dtype=float)
    access = (kind == "access") & np.isfinite(grade)
    if keep is not None:
        access &= accesses["source"].isin(keep).to_numpy()
    rows = accesses[(kind == "create") | access].copy()
    rows["review_rating"] = np.where(
        rows["kind"] == "create", GOOD, grade[(kind == "create") | access]
    )
    rows["review_rating"] = rows["review_rating"].astype(np.int64)
    at = pd.to_datetime(rows["at"], utc=True).dt.as_unit("ns")
    rows["_ns"] = at.astype("int64").to_numpy()
    rows = rows.sort_values(["memory_id", "_ns", "event_id"], kind="stable")
    # strictly increasing times within a memory: ties one microsecond apart, in event order
    pos = rows.groupby("memory_id", sort=False).cumcount().to_numpy() * _TIE_NS
    shifted = pd.Series(rows["_ns"].to_numpy() - pos, index=rows.index)
    ns = shifted.groupby(rows["memory_id"].to_numpy(), sort=False).cummax().to_numpy() + pos
    out = pd.DataFrame(
        {
            "card_id": rows["memory_id"].to_numpy(dtype=np.int64),
            "review_rating": rows["review_rating"].to_numpy(),
            "review_time": pd.to_datetime(ns, unit="ns", utc=True),
            "source": rows["source"].to_numpy(dtype=object),
        }
    )
    return out.sort_values(["review_time", "card_id"], kind="stable").reset_index(drop=True)


def load_access_log(accesses: pd.DataFrame, sources: Iterable[str] | None = None) -> ReviewData:
    """:func:`review_log` loaded as tidy :class:`~memlab.fit.ReviewData` (continuous days)."""
    log = review_log(accesses, sources)
    if len(log) == 0:
        raise NotEnoughReviewsError(
            "the access log has no reviews (no memory was created); fitting needs memories and"
            " their uses"
        )
    data = load_reviews(log, layout="py-fsrs", convention="continuous")
    data.report.source = "store access log"
    return data


@dataclass
class AccessFit:
    """FSRS-6 fitted to a store's access log (:func:`fit_access_log`): ``weights`` fitted on every
    review, and the held-out log loss of each model fitted on the first ``1 - holdout`` of them.
    """

    weights: tuple[float, ...]
    previous_weights: tuple[float, ...]
    log_loss: dict[str, float]  # held out: default, previous, fitted (FSRS-6) and heat
    n_reviews: int
    n_memories: int
    n_scored: int
    n_lapses: int
    n_test: int
    holdout: float
    l2: float
    heat_params: dict[str, float]
    sources: tuple[str, ...] | None = None
    applied: bool = False
    split_weights: tuple[float, ...] = field(default=(), repr=False)

    @property
    def model(self) -> FSRS6:
        """The fitted FSRS-6 model."""
        return FSRS6(self.weights)

    @property
    def improved(self) -> bool:
        """Whether the fitted weights beat the previous ones on the held-out reviews."""
        return self.log_loss["fitted"] < self.log_loss["previous"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "weights": list(self.weights),
            "previous_weights": list(self.previous_weights),
            "log_loss": dict(self.log_loss),
            "reviews": self.n_reviews,
            "memories": self.n_memories,
            "scored": self.n_scored,
            "lapses": self.n_lapses,
            "held_out": self.n_test,
            "holdout": self.holdout,
            "l2": self.l2,
            "heat_params": dict(self.heat_params),
            "sources": None if self.sources is None else list(self.sources),
            "applied": self.applied,
        }

    def __repr__(self) -> str:
        ll = self.log_loss
        return (
            f"AccessFit(reviews={self.n_reviews}, memories={self.n_memories},"
            f" held-out log loss previous {ll['previous']:.4f} -> fitted {ll['fitted']:.4f},"
            f" applied={self.applied})"
        )

    def _repr_html_(self) -> str:
        ll = self.log_loss
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(name)}</th><td>{value:.4f}</td></tr>"
            for name, value in (
                ("FSRS-6, default weights", ll["default"]),
                ("FSRS-6, the store's weights before", ll["previous"]),
                ("FSRS-6, fitted", ll["fitted"]),
                ("heat curve, fitted (recall curve; not applied)", ll["heat"]),
            )
        )
        weights = " ".join(f"{w:.4f}" for w in self.weights)
        return (
            f"<b>FSRS-6 fitted to the store's access log</b> ({self.n_reviews} reviews of"
            f" {self.n_memories} memories; {self.n_scored} scored, {self.n_lapses} lapses;"
            f" held out: the last {self.holdout:.0%} by time, {self.n_test} scored)"
            f"<table><tr><th>held-out log loss</th><td></td></tr>{rows}</table>"
            f"<p>weights{' (applied)' if self.applied else ''}: <code>{weights}</code></p>"
        )


def fit_access_log(
    accesses: pd.DataFrame,
    previous: FSRS6 | None = None,
    *,
    sources: Iterable[str] | None = None,
    min_reviews: int = 100,
    min_lapses: int = 5,
    l2: float | str = "auto",
    holdout: float = 0.2,
) -> AccessFit:
    """Fit FSRS-6 to an access log and compare it with the default and previous weights.

    Parameters
    ----------
    accesses : DataFrame
        The access log (:data:`ACCESS_COLUMNS`).
    previous : FSRS6, optional
        The weights the store runs now (default: the defaults).
    sources : iterable of str, optional
        The access sources that count as reviews (:func:`review_log`; default all).
    min_reviews, min_lapses : int
        Refuse (:class:`NotEnoughReviewsError`) with fewer scored reviews (a memory's review at
        least a day after its previous one), or fewer lapses (grade Again) among them.
    l2 : float or "auto"
        Pull toward the default weights (:class:`~memlab.fit.FSRS6Fitter`); "auto" chooses it by
        a time-ordered validation inside the training reviews.
    holdout : float
        Share of the reviews, last by time, held out for the comparison.

    Returns
    -------
    AccessFit
    """
    for name, value in (("min_reviews", min_reviews), ("min_lapses", min_lapses)):
        integer(value, name, low=1)
    if l2 != "auto":  # the arguments are checked before the log is read
        _number(l2, "l2")
    if isinstance(sources, str):
        sources = (sources,)
    sources = None if sources is None else tuple(sources)
    previous = FSRS6() if previous is None else previous
    if not isinstance(previous, FSRS6):
        raise TypeError(f"previous must be an FSRS6 model, got {type(previous).__name__}")
    data = load_access_log(accesses, sources)
    frame = data.frame
    test = time_split(frame, holdout)
    scored = scoreable_rows(frame)
    lapse = scored & (frame["grade"].to_numpy() == 1)
    n_scored, n_lapses = int(scored.sum()), int(lapse.sum())
    if n_scored < min_reviews:
        raise NotEnoughReviewsError(
            f"the access log has {n_scored} scored reviews (a memory's review at least a day"
            f" after its previous one) of {data.report.cards} memories; fitting needs at least"
            f" {min_reviews} (min_reviews)"
        )
    if n_lapses < min_lapses:
        raise NotEnoughReviewsError(
            f"the access log has {n_lapses} lapses (reviews graded Again) among {n_scored}"
            f" scored reviews; fitting needs at least {min_lapses} (min_lapses): search returns"
            " are successes by construction, record a failed recall with"
            " feedback(memory_id, 1)"
        )
    n_test = int((scored & test).sum())
    if n_test == 0 or int((scored & ~test).sum()) == 0:
        raise NotEnoughReviewsError(
            "the time split leaves no scored review on one side; fitting needs scored reviews"
            f" before and after the last {holdout:.0%} of the log"
        )

    split = FSRS6Fitter(l2=l2).fit(frame, ~test)
    heat = HeatFitter().fit(frame, ~test)
    log_loss = {
        "default": float(score_fsrs6(FSRS6(), frame, test)["log_loss"]),
        "previous": float(score_fsrs6(previous, frame, test)["log_loss"]),
        "fitted": float(split.score(frame, test)["log_loss"]),
        "heat": float(score_rows(frame, heat.predict(frame), test)["log_loss"]),
    }
    final = FSRS6Fitter(l2=l2).fit(frame)
    return AccessFit(
        weights=final.weights_,
        previous_weights=previous.weights,
        log_loss=log_loss,
        n_reviews=int(len(frame)),
        n_memories=int(data.report.cards),
        n_scored=n_scored,
        n_lapses=n_lapses,
        n_test=n_test,
        holdout=float(holdout),
        l2=float(final.l2_),
        heat_params=dict(heat.params_),
        sources=sources,
        split_weights=split.weights_,
    )
