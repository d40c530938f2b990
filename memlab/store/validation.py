"""Checks at the store's boundary: a bad argument is a clear error before anything is written."""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

import numpy as np

from memlab.models.heat import ALTITUDES, LAYERS

#: Largest content accepted, in UTF-8 bytes (1 MiB). Memories are meant to be short texts;
#: longer documents should be split before ingest.
MAX_CONTENT_BYTES = 1 << 20


def check_now(now: Any, name: str = "now") -> datetime:
    """A timezone-aware datetime, converted to UTC; naive datetimes are refused."""
    if not isinstance(now, datetime):
        raise TypeError(f"{name} must be a timezone-aware datetime, got {type(now).__name__}")
    if now.tzinfo is None or now.tzinfo.utcoffset(now) is None:
        raise ValueError(
            f"{name} is a naive datetime; give a timezone-aware one (e.g. tzinfo=timezone.utc)"
        )
    return now.astimezone(timezone.utc)


def check_content(content: Any, name: str = "content") -> str:
    if not isinstance(content, str):
        raise TypeError(f"{name} must be a str, got {type(content).__name__}")
    if not content.strip():
        raise ValueError(f"{name} is empty")
    size = len(content.encode("utf-8", errors="surrogatepass"))
    if size > MAX_CONTENT_BYTES:
        raise ValueError(
            f"{name} is {size} bytes; the maximum is {MAX_CONTENT_BYTES} bytes"
            " (split long documents)"
        )
    return check_text_chars(content, name)


def check_optional_str(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str or None, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name} must not be blank (use None for no {name})")
    return check_text_chars(value, name)


def check_topics(topics: Any) -> tuple[str, ...]:
    if isinstance(topics, str):
        raise TypeError(
            "topics must be a sequence of strings, not a single string (wrap it in a list)"
        )
    if not isinstance(topics, Iterable):
        raise TypeError(f"topics must be a sequence of strings, got {type(topics).__name__}")
    out: dict[str, None] = {}
    for t in topics:
        if not isinstance(t, str) or not t.strip():
            raise ValueError(f"each topic must be a non-empty string, got {t!r}")
        out.setdefault(check_text_chars(t, "topic"), None)
    return tuple(out)


def check_choice(value: Any, allowed: tuple[str, ...], name: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")
    return value


def check_unit(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} must be a finite number in [0, 1], got {value!r}")
    return v


def check_positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def check_non_negative(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return v


def check_count(value: Any, name: str, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return check_at_most(int(value), name, MAX_COUNT if maximum is None else maximum)


def check_id(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"memory_id must be an integer, got {type(value).__name__}")
    return check_id_range(int(value), "memory_id")


def check_meta(
    *, project: Any, topics: Any, layer: Any, entity: Any, altitude: Any, importance: Any
) -> dict[str, Any]:
    """The metadata of one memory, validated."""
    return {
        "project": check_optional_str(project, "project"),
        "topics": check_topics(topics),
        "layer": check_choice(layer, LAYERS, "layer"),
        "entity": check_optional_str(entity, "entity"),
        "altitude": check_choice(altitude, ALTITUDES, "altitude"),
        "importance": check_unit(importance, "importance"),
    }


# ---------------------------------------------------------------------- texts, ranges, times
#: Largest integer SQLite stores (ids beyond it cannot exist).
MAX_ID = 2**63 - 1
#: Largest count accepted for sizes and batch lengths (annoy and numpy take 32-bit counts).
MAX_COUNT = 2**31 - 1
#: Largest number of results a query may ask for (``k``, ``n``).
MAX_RESULTS = 10_000
#: Latest time a store keeps (the end of year 9999, the last a ``datetime`` can hold).
MAX_TIMESTAMP = 253402300799.0


def check_text_chars(value: str, name: str) -> str:
    """``value`` if it is valid Unicode text to store: no NUL, no lone surrogate (which UTF-8
    cannot encode: stored, it would make every later export fail)."""
    if "\x00" in value:
        raise ValueError(f"{name} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"{name} contains a lone surrogate at position {error.start} (not valid Unicode text)"
        ) from None
    return value


def check_at_most(value: int, name: str, maximum: int) -> int:
    if value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value!r}")
    return value


def check_id_range(value: int, name: str) -> int:
    """An integer id SQLite can hold (1 .. 2**63 - 1)."""
    if not 1 <= value <= MAX_ID:
        raise ValueError(f"{name} must be in [1, 2**63 - 1], got {value!r}")
    return value


def check_timestamp(value: Any, name: str) -> float:
    """POSIX seconds of a time a store can hold: finite, after 1970 and before year 10000."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number of POSIX seconds, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or not 0 < v <= MAX_TIMESTAMP:
        raise ValueError(f"{name} must be POSIX seconds in (0, {MAX_TIMESTAMP:.0f}], got {value!r}")
    return v


__all__ = [
    "MAX_CONTENT_BYTES",
    "MAX_COUNT",
    "MAX_ID",
    "MAX_RESULTS",
    "MAX_TIMESTAMP",
    "check_at_most",
    "check_id_range",
    "check_text_chars",
    "check_timestamp",
    "check_choice",
    "check_content",
    "check_count",
    "check_id",
    "check_meta",
    "check_non_negative",
    "check_now",
    "check_optional_str",
    "check_positive",
    "check_topics",
    "check_unit",
]
