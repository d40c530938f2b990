"""A store's access log as reviews (memlab.fit.access): the rule, ties, sources, continuous days."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.fit import (
    NotEnoughReviewsError,
    fit_access_log,
    load_access_log,
    load_reviews,
    review_log,
)
from memlab.fit.access import ACCESS_COLUMNS
from memlab.models.days import elapsed_days

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _log(rows: list[tuple[int, int, float, str, str | None, int | None]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(ACCESS_COLUMNS))
    frame["at"] = [T0 + timedelta(days=d) for d in frame["at"]]
    frame["grade"] = pd.array(frame["grade"], dtype="Int64")
    return frame


def test_creation_is_a_good_first_review_and_accesses_keep_their_grades() -> None:
    log = _log(
        [
            (1, 1, 0.0, "create", None, None),
            (2, 2, 0.5, "create", None, None),
            (1, 3, 1.5, "access", "search", 4),
            (1, 4, 3.0, "tag", None, None),  # not a review
            (2, 5, 2.5, "access", "feedback", 1),
            (1, 6, 5.0, "access", "reinforce", 3),
        ]
    )
    out = review_log(log)
    assert list(out.columns) == ["card_id", "review_rating", "review_time", "source"]
    assert out["card_id"].tolist() == [1, 2, 1, 2, 1]
    assert out["review_rating"].tolist() == [3, 3, 4, 1, 3]
    frame = load_access_log(log).frame
    # continuous days, as the store runs FSRS-6: 36 hours are 1.5 days, not 1
    assert frame.loc[frame["card_id"] == 1, "elapsed_days"].tolist()[1:] == [1.5, 3.5]
    assert frame.loc[frame["card_id"] == 2, "elapsed_days"].tolist()[1:] == [2.0]
    only = review_log(log, sources=["feedback"])
    assert only["review_rating"].tolist() == [3, 3, 1]  # creations stay first reviews
    assert review_log(log, sources="search")["source"].tolist()[-1] == "search"


def test_accesses_at_one_instant_are_kept_in_event_order() -> None:
    # a search at the creation's timestamp, then a feedback at the same instant
    log = _log(
        [
            (7, 10, 0.0, "create", None, None),
            (7, 12, 0.0, "access", "feedback", 1),
            (7, 11, 0.0, "access", "search", 4),
        ]
    )
    out = review_log(log)
    assert out["review_rating"].tolist() == [3, 4, 1]
    gaps = np.diff(out["review_time"].astype("int64").to_numpy())
    assert (gaps == 1_000).all()  # one microsecond apart
    frame = load_access_log(log).frame
    assert len(frame) == 3 and (frame["elapsed_days"].iloc[1:] < 1e-9).all()


def test_bad_access_logs_are_refused() -> None:
    with pytest.raises(TypeError, match="DataFrame"):
        review_log([1, 2])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="missing column"):
        review_log(pd.DataFrame({"memory_id": [1]}))
    log = _log([(1, 1, 0.0, "create", None, None)])
    with pytest.raises(ValueError, match="unknown access source"):
        review_log(log, sources=["searches"])
    with pytest.raises(NotEnoughReviewsError, match="no reviews"):
        load_access_log(log.iloc[:0])
    with pytest.raises(TypeError, match="FSRS6"):
        fit_access_log(log, previous="defaults")  # type: ignore[arg-type]


def test_continuous_convention_keeps_fractional_days() -> None:
    times = pd.to_datetime(["2026-01-01T00:00Z", "2026-01-02T12:00Z", "2026-01-02T18:00Z"])
    assert elapsed_days(times, "continuous")[1:].tolist() == [1.5, 0.25]
    assert elapsed_days(times, "24h")[1:].tolist() == [1.0, 0.0]
    table = pd.DataFrame(
        {"card_id": [1, 1, 1], "review_rating": [3, 3, 1], "review_time": times.astype(str)}
    )
    data = load_reviews(table, convention="continuous")
    assert data.report.convention == "continuous"
    assert data.frame["elapsed_days"].tolist()[1:] == [1.5, 0.25]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 4),  # memory
            st.integers(0, 6),  # day (ties likely)
            st.integers(1, 4),  # grade
            st.sampled_from(["search", "feedback", "api", "reinforce"]),
        ),
        max_size=30,
    )
)
def test_every_access_becomes_a_review_in_order(
    accesses: list[tuple[int, int, int, str]],
) -> None:
    rows: list[tuple[int, int, float, str, str | None, int | None]] = [
        (m, m, 0.0, "create", None, None) for m in range(1, 5)
    ]
    rows += [
        (m, 10 + i, float(day), "access", source, grade)
        for i, (m, day, grade, source) in enumerate(accesses)
    ]
    log = _log(rows)
    out = review_log(log)
    assert len(out) == len(log)
    for m in range(1, 5):
        mine = out[out["card_id"] == m]
        ns = mine["review_time"].astype("int64").to_numpy()
        assert (np.diff(ns) > 0).all()
        expected = log[log["memory_id"] == m].sort_values(["at", "event_id"], kind="stable")
        grades = [3] + [int(g) for g in expected["grade"].iloc[1:]]
        assert mine["review_rating"].tolist() == grades
