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
    if "\x00" in content:
        raise ValueError(f"{name} contains a NUL character")
    return content


def check_optional_str(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str or None, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name} must not be blank (use None for no {name})")
    return value


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
        out.setdefault(t, None)
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


def check_count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_id(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"memory_id must be an integer, got {type(value).__name__}")
    return int(value)


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


__all__ = [
    "MAX_CONTENT_BYTES",
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
