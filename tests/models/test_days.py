"""Day conventions: whole 24-hour periods (py-fsrs) and calendar days with a rollover (Anki)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.models.days import elapsed_days, elapsed_days_by_card


def _utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_late_night_pair_in_each_convention() -> None:
    times = [_utc(2026, 3, 1, 23, 0), _utc(2026, 3, 2, 1, 0)]
    assert np.isnan(elapsed_days(times)[0])
    assert elapsed_days(times, "24h")[1] == 0
    assert elapsed_days(times, "anki", rollover_hour=0)[1] == 1
    assert elapsed_days(times, "anki", rollover_hour=4)[1] == 0  # both on the day of 1 March


def test_rollover_splits_an_early_morning() -> None:
    times = [_utc(2026, 3, 1, 3, 0), _utc(2026, 3, 1, 5, 0)]
    assert elapsed_days(times, "24h")[1] == 0
    assert elapsed_days(times, "anki", rollover_hour=4)[1] == 1
    assert elapsed_days(times, "anki", rollover_hour=0)[1] == 0


def test_24h_counts_whole_periods() -> None:
    t0 = _utc(2026, 1, 1, 10, 0)
    times = [
        t0,
        t0 + timedelta(hours=23, minutes=59, seconds=59),
        t0 + timedelta(days=1),
        t0 + timedelta(days=3.5),
    ]
    np.testing.assert_array_equal(elapsed_days(times, "24h")[1:], [0, 0, 2])
    # since the previous review, not the first
    np.testing.assert_array_equal(
        elapsed_days([t0, t0 + timedelta(hours=23), t0 + timedelta(hours=25)])[1:], [0, 0]
    )


def test_utc_offset_and_timezone_move_the_day() -> None:
    times = [_utc(2026, 6, 1, 21, 0), _utc(2026, 6, 1, 23, 0)]  # 23:00 and 01:00 at UTC+2
    assert elapsed_days(times, "anki", rollover_hour=0)[1] == 0
    assert elapsed_days(times, "anki", rollover_hour=0, utc_offset_hours=2)[1] == 1
    assert (
        elapsed_days(times, "anki", rollover_hour=0, timezone="Europe/Berlin")[1] == 1
    )  # CEST = UTC+2
    winter = [_utc(2026, 1, 1, 21, 0), _utc(2026, 1, 1, 23, 0)]  # 22:00 and 00:00 at CET = UTC+1
    assert elapsed_days(winter, "anki", rollover_hour=0, timezone="Europe/Berlin")[1] == 1
    assert elapsed_days(winter, "anki", rollover_hour=0, utc_offset_hours=0.5)[1] == 0


def test_input_types_agree() -> None:
    times = pd.to_datetime(["2026-01-01 08:00", "2026-01-03 07:00", "2026-01-03 09:00"], utc=True)
    expected = elapsed_days(list(times.to_pydatetime()), "anki")
    np.testing.assert_array_equal(elapsed_days(times, "anki"), expected)
    np.testing.assert_array_equal(elapsed_days(pd.Series(times), "anki"), expected)
    np.testing.assert_array_equal(
        elapsed_days(times.tz_localize(None).to_numpy(), "anki"), expected
    )  # naive = UTC
    np.testing.assert_array_equal(
        elapsed_days(pd.Series(times).dt.tz_convert("Asia/Tokyo"), "anki"), expected
    )
    np.testing.assert_array_equal(expected, [np.nan, 2, 0])
    assert elapsed_days([]).shape == (0,) and np.isnan(elapsed_days(times[:1])).all()


@given(st.lists(st.integers(0, 3 * 10**8), min_size=1, max_size=20))
def test_24h_matches_py_fsrs_timedelta_days(gaps_seconds: list[int]) -> None:
    t0 = _utc(2025, 5, 5, 12, 34, 56)
    times = [t0]
    for gap in gaps_seconds:
        times.append(times[-1] + timedelta(seconds=gap, microseconds=gap % 997))
    expected = [(b - a).days for a, b in zip(times, times[1:], strict=False)]
    np.testing.assert_array_equal(elapsed_days(times, "24h")[1:], expected)
    anki = elapsed_days(times, "anki")[1:]
    assert (np.abs(anki - np.array(expected)) <= 1).all()  # calendar days differ by at most one


@given(
    st.lists(st.integers(0, 10**7), min_size=1, max_size=15),
    st.integers(0, 23),
    st.sampled_from([-8, -3.5, 0, 1, 5.5, 9]),
)
def test_anki_matches_calendar_dates(gaps: list[int], rollover: int, offset: float) -> None:
    """Anki days = difference of local calendar dates after shifting back by the rollover hour."""
    times = [_utc(2024, 2, 28, 22, 30)]
    for gap in gaps:
        times.append(times[-1] + timedelta(seconds=gap))
    shift = timedelta(hours=offset) - timedelta(hours=rollover)
    expected = [
        ((b + shift).date() - (a + shift).date()).days
        for a, b in zip(times, times[1:], strict=False)
    ]
    got = elapsed_days(times, "anki", rollover_hour=rollover, utc_offset_hours=offset)
    np.testing.assert_array_equal(got[1:], expected)


def test_by_card_matches_per_card(rng: np.random.Generator) -> None:
    n = 300
    cards = rng.integers(0, 20, n)
    times = pd.Timestamp("2026-01-01", tz="UTC") + pd.to_timedelta(rng.uniform(0, 400, n), unit="D")
    for convention in ("24h", "anki"):
        got = elapsed_days_by_card(cards, times, convention)
        for card in np.unique(cards):
            rows = np.nonzero(cards == card)[0]
            order = rows[np.argsort(times[rows], kind="stable")]
            np.testing.assert_array_equal(got[order], elapsed_days(times[order], convention))
    assert np.isnan(elapsed_days_by_card(cards, times)).sum() == len(np.unique(cards))


def test_times_with_different_utc_offsets_are_read_in_utc() -> None:
    # ISO times logged on both sides of a daylight saving change carry different offsets
    times = ["2024-03-30T10:00+01:00", "2024-04-01T10:00+02:00"]
    np.testing.assert_allclose(elapsed_days(times, "continuous")[1:], [47 / 24])
    assert elapsed_days(times, "anki", timezone="Europe/Berlin")[1] == 2


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: elapsed_days([_utc(2026, 1, 2), _utc(2026, 1, 1)]), "must not go backwards"),
        (lambda: elapsed_days([_utc(2026, 1, 1)], "calendar"), "unknown day convention"),
        (lambda: elapsed_days([_utc(2026, 1, 1)], "anki", rollover_hour=24), "rollover_hour"),
        (lambda: elapsed_days([_utc(2026, 1, 1)], "anki", utc_offset_hours=20), "utc_offset_hours"),
        (lambda: elapsed_days(pd.to_datetime(["2026-01-01", None])), "NaT"),
        (lambda: elapsed_days([_utc(2026, 1, 1)], "anki", timezone="Mars/Olympus"), "timezone"),
        (lambda: elapsed_days(["yesterday-ish"]), "must be datetimes"),
        # epoch seconds were read as nanoseconds: two reviews a day apart, 0 days apart
        (lambda: elapsed_days(np.array([0.0, 86_400.0])), "not numbers"),
        (lambda: elapsed_days_by_card([1, 1], [0, 86_400_000]), "not numbers"),
        (lambda: elapsed_days_by_card([1, 2], [_utc(2026, 1, 1)]), "one length"),
    ],
)
def test_bad_input(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()
