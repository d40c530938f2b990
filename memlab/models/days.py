"""Day conventions: review timestamps to the days FSRS-6 takes as elapsed time.

``"24h"``
    Whole 24-hour periods, as py-fsrs: two reviews 23 h apart are 0 days apart.
``"anki"``
    Calendar days starting at ``rollover_hour`` local time, as Anki and the srs-benchmark: with a
    4 am rollover, reviews at 23:00 and 01:00 the next night fall on the same day.
``"continuous"``
    Fractional days, as memlab's store runs FSRS-6: two reviews 36 h apart are 1.5 days apart.

Local time is UTC shifted by ``utc_offset_hours``, or the wall clock of the IANA ``timezone``
(daylight saving included); naive timestamps are UTC. A card's first review has NaN elapsed days.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

Convention = Literal["24h", "anki", "continuous"]
CONVENTIONS: tuple[str, ...] = ("24h", "anki", "continuous")
_NS_PER_DAY = 86_400 * 10**9
_NS_PER_HOUR = 3_600 * 10**9


def _utc_ns(times: Any, name: str = "times") -> NDArray[np.int64]:
    """Timestamps as int64 nanoseconds since the epoch, UTC (naive = UTC)."""
    try:
        values = times if hasattr(times, "dtype") else np.asarray(times)
        index = pd.DatetimeIndex(pd.to_datetime(values, utc=True))
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"{name} must be datetimes (numpy datetime64 or pandas), got {times!r}"
        ) from error
    if len(index) and values.dtype.kind in "biuf":  # epoch numbers: seconds? milliseconds?
        raise ValueError(f"{name} must be datetimes, not numbers (pd.to_datetime(x, unit=...))")
    if index.isna().any():
        raise ValueError(f"{name} contains NaT")
    return index.tz_localize(None).as_unit("ns").asi8.astype(np.int64, copy=False)


def _check_options(
    convention: str, rollover_hour: float, utc_offset_hours: float, timezone: str | None = None
) -> None:
    if timezone is not None:
        try:
            pd.Timestamp(0, tz="UTC").tz_convert(timezone)
        except Exception as error:  # pytz / zoneinfo raise different types
            raise ValueError(f"unknown timezone {timezone!r}") from error
    if convention not in CONVENTIONS:
        raise ValueError(
            f"unknown day convention {convention!r}; expected one of {list(CONVENTIONS)}"
        )
    if not (isinstance(rollover_hour, (int, float)) and 0 <= rollover_hour < 24):
        raise ValueError(f"rollover_hour must be a number in [0, 24), got {rollover_hour!r}")
    if not (isinstance(utc_offset_hours, (int, float)) and -14 <= utc_offset_hours <= 14):
        raise ValueError(
            f"utc_offset_hours must be a number in [-14, 14], got {utc_offset_hours!r}"
        )


def _steps(
    ns: NDArray[np.int64],
    convention: str,
    rollover_hour: float,
    utc_offset_hours: float,
    timezone: str | None,
) -> NDArray[np.int64] | NDArray[np.float64]:
    """Days from each time to the next one (length ``len(ns) - 1``): whole days, or fractional
    ones for "continuous"; "anki" counts local calendar days starting at ``rollover_hour``."""
    if convention == "24h":
        return np.floor_divide(np.diff(ns), _NS_PER_DAY)
    if convention == "continuous":
        return np.diff(ns) / _NS_PER_DAY
    if timezone is not None:
        index = pd.DatetimeIndex(ns.view("datetime64[ns]")).tz_localize("UTC").tz_convert(timezone)
        local = index.tz_localize(None).as_unit("ns").asi8
    else:
        local = ns + int(round(utc_offset_hours * _NS_PER_HOUR))
    return np.diff(np.floor_divide(local - int(round(rollover_hour * _NS_PER_HOUR)), _NS_PER_DAY))


def elapsed_days(
    times: Any,
    convention: Convention = "24h",
    rollover_hour: float = 4,
    utc_offset_hours: float = 0,
    timezone: str | None = None,
) -> NDArray[np.float64]:
    """Days between consecutive reviews of one card (whole days, or fractional for "continuous").

    Parameters
    ----------
    times : array_like of datetimes
        The card's review times in order (datetime64, pandas, ``datetime``; naive = UTC).
    convention : {"24h", "anki", "continuous"}
        The day convention (module docs).
    rollover_hour : float
        Hour of local time at which an "anki" day starts (Anki's default is 4).
    utc_offset_hours : float
        Fixed offset of local time from UTC for "anki" (ignored when ``timezone`` is given).
    timezone : str, optional
        IANA time zone for "anki" local time (e.g. ``"Europe/Berlin"``, DST-aware).

    Returns
    -------
    ndarray of float
        NaN for the first review, days (>= 0) after; ``ValueError`` for bad options, NaT or times
        that go backwards.
    """
    ns = _utc_ns(times)
    if ns.ndim != 1:
        raise ValueError(f"times must be 1-D, got shape {ns.shape}")
    if (np.diff(ns) < 0).any():
        bad = int(np.nonzero(np.diff(ns) < 0)[0][0]) + 1
        raise ValueError(f"times must not go backwards (negative elapsed time at position {bad})")
    return elapsed_days_by_card(
        np.zeros(len(ns)), times, convention, rollover_hour, utc_offset_hours, timezone
    )


def elapsed_days_by_card(
    card_ids: ArrayLike,
    times: Any,
    convention: Convention = "24h",
    rollover_hour: float = 4,
    utc_offset_hours: float = 0,
    timezone: str | None = None,
) -> NDArray[np.float64]:
    """Elapsed days of a long review log of many cards at once: each row's days since the
    previous review of the same card in time order (rows in any order, ties in input order; NaN at a
    card's first review). Options as :func:`elapsed_days`.
    """
    _check_options(convention, rollover_hour, utc_offset_hours, timezone)
    ids = np.asarray(card_ids)
    ns = _utc_ns(times)
    if ids.ndim != 1 or ids.shape != ns.shape:
        raise ValueError(
            f"card_ids and times must be 1-D of one length, got {ids.shape} and {ns.shape}"
        )
    out = np.full(ns.shape, np.nan)
    if len(ns) == 0:
        return out
    _, card = np.unique(ids, return_inverse=True)
    order = np.lexsort((np.arange(len(ns)), ns, card.ravel()))  # by card, then time, then row
    card_sorted = card.ravel()[order]
    ns_sorted = ns[order]
    same_card = card_sorted[1:] == card_sorted[:-1]
    days = np.full(len(ns), np.nan)
    whole = _steps(ns_sorted, convention, rollover_hour, utc_offset_hours, timezone)
    days[1:] = np.where(same_card, whole, np.nan)
    out[order] = days
    return out


__all__ = ["CONVENTIONS", "Convention", "elapsed_days", "elapsed_days_by_card"]
