"""Checks at the store's boundary: a bad argument is a clear error before anything is written.

Pure functions: each returns the value normalised or raises ``TypeError`` (wrong type) /
``ValueError`` (bad value) naming the argument. Limits come from what lies below: SQLite
integers are signed 64-bit, annoy takes C ints, UTF-8 cannot encode a lone surrogate, a NUL
ends a C string, pandas holds times in nanoseconds since 1970 (years 1677 to 2262), and one
MCP result over streamable HTTP must fit in a 1 MiB server-sent event.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from memlab.models.heat import ALTITUDES, LAYERS

#: Environment variable that lowers (or raises, up to :data:`CONTENT_CEILING`) the content limit.
CONTENT_ENV = "MEMLAB_MAX_CONTENT_BYTES"
#: Highest content limit: JSON may escape a byte as six (``\u0001``), and an MCP result with
#: one memory must stay under the official client's 1 MiB event limit.
CONTENT_CEILING = 160 * 1024


def _content_limit() -> int:
    raw = os.environ.get(CONTENT_ENV, str(128 * 1024))
    if not raw.isdigit() or not 0 < int(raw) <= CONTENT_CEILING:
        raise ValueError(f"${CONTENT_ENV} must be a whole number in [1, {CONTENT_CEILING}]")
    return int(raw)


#: Largest content accepted, in UTF-8 bytes (128 KiB unless ``$MEMLAB_MAX_CONTENT_BYTES``).
MAX_CONTENT_BYTES = _content_limit()
#: Largest id an imported memory may carry: JSON numbers are exact up to 2**53, and an id near
#: SQLite's 2**63 would leave no room for the next memory.
MAX_ID = 2**53
#: Largest count (``k``, ``n``, ``batch_size``, ``candidates``, ``search_k``): a C int.
MAX_COUNT = 2**31 - 1
#: The times a store accepts (UTC, inclusive): within pandas' nanosecond range, so every time
#: stored reads back through ``to_dataframe``, ``history`` and ``versions``.
MIN_TIME = datetime(1678, 1, 1, tzinfo=UTC)
MAX_TIME = datetime(2261, 12, 31, 23, 59, 59, tzinfo=UTC)
#: The same range in POSIX seconds.
MIN_EPOCH = MIN_TIME.timestamp()
MAX_EPOCH = MAX_TIME.timestamp()

_SURROGATE = re.compile("[\ud800-\udfff]")
_RANGE = f"{MIN_TIME.isoformat()} to {MAX_TIME.isoformat()}"


def check_chars(value: str, name: str) -> str:
    """``value`` if it holds no NUL and no lone surrogate (text UTF-8 can store and export)."""
    if "\x00" in value:
        raise ValueError(f"{name} contains a NUL character")
    bad = _SURROGATE.search(value)
    if bad is not None:
        raise ValueError(
            f"{name} contains a lone surrogate {bad.group()!r} at index {bad.start()}"
            " (not valid Unicode text; decode the source with errors='replace')"
        )
    return value


def check_size(value: str, name: str) -> str:
    """``value`` if it fits :data:`MAX_CONTENT_BYTES` UTF-8 bytes and :func:`check_chars`."""
    size = len(value.encode("utf-8", errors="surrogatepass"))
    if size > MAX_CONTENT_BYTES:
        raise ValueError(
            f"{name} is {size} bytes; the maximum is the content limit, {MAX_CONTENT_BYTES}"
            " bytes (split long documents)"
        )
    return check_chars(value, name)


def check_content(value: Any, name: str = "content") -> str:
    """A non-blank str within the content limit, without NUL or lone surrogates."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name} is empty")
    return check_size(value, name)


def check_now(now: Any, name: str = "now") -> datetime:
    """A timezone-aware datetime, converted to UTC; naive datetimes are refused."""
    if not isinstance(now, datetime):
        raise TypeError(f"{name} must be a timezone-aware datetime, got {type(now).__name__}")
    if now.tzinfo is None or now.tzinfo.utcoffset(now) is None:
        raise ValueError(
            f"{name} is a naive datetime; give a timezone-aware one (an offset such as +00:00)"
        )
    try:
        utc = now.astimezone(UTC)
    except OverflowError:
        utc = None
    if utc is None or not MIN_TIME <= utc <= MAX_TIME:
        raise ValueError(f"{name} {now.isoformat()} is outside the times a store holds, {_RANGE}")
    return utc


def check_optional_str(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str or None, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name} must not be blank (leave it out for no {name})")
    return check_chars(value, name)


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
        out.setdefault(check_chars(t, "topic"), None)
    return tuple(out)


def check_choice(value: Any, allowed: tuple[str, ...], name: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")
    return value


def check_number(
    value: Any,
    name: str,
    low: float = -math.inf,
    high: float = math.inf,
    *,
    integer: bool = False,
    wanted: str = "",
) -> Any:
    """A finite number (an integer when ``integer``) in ``[low, high]`` (said as ``wanted``)."""
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if isinstance(value, bool) or not isinstance(value, kinds):
        wanted = "an integer" if integer else "a number"
        raise TypeError(f"{name} must be {wanted}, got {type(value).__name__}")
    if not ((integer or math.isfinite(value)) and low <= value <= high):
        raise ValueError(f"{name} must be {wanted or f'in [{low:g}, {high:g}]'}, got {value!r}")
    return int(value) if integer else float(value)


def check_unit(value: Any, name: str) -> float:
    return check_number(value, name, 0.0, 1.0)


def check_non_negative(value: Any, name: str) -> float:
    return check_number(value, name, 0.0, wanted="a finite number >= 0")


def check_count(value: Any, name: str, *, maximum: int = MAX_COUNT) -> int:
    """A positive integer of at most ``maximum`` (a C int by default)."""
    wanted = f"a positive integer of at most {maximum}"
    return check_number(value, name, 1, maximum, integer=True, wanted=wanted)


def check_id(value: Any, name: str = "memory_id") -> int:
    """An integer SQLite can hold (|id| < 2**63); whether it exists is the store's ``KeyError``."""
    wanted = "within SQLite's 64-bit integer range"
    return check_number(value, name, -(2**63), 2**63 - 1, integer=True, wanted=wanted)


#: Longest namespace name, in characters.
MAX_NAMESPACE = 200


def check_namespace(value: Any, name: str = "namespace") -> str:
    """A namespace name: a non-empty str of at most :data:`MAX_NAMESPACE` characters, without
    NUL, control characters or surrounding whitespace."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not value or value != value.strip():
        raise ValueError(f"{name} must be non-empty without surrounding whitespace: {value!r}")
    if len(value) > MAX_NAMESPACE:
        raise ValueError(f"{name} is longer than {MAX_NAMESPACE} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError(f"{name} must not contain NUL or control characters: {value!r}")
    return check_chars(value, name)


def check_path(value: Any, name: str = "path") -> str:
    """A database location: ``":memory:"`` or a path (str or os.PathLike; ``~`` expanded) to a
    regular file or a new one in an existing folder."""
    if value is None:
        raise TypeError(f'{name} must be a str or os.PathLike (":memory:" for no file), got None')
    if isinstance(value, bytes) or not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or os.PathLike, got {type(value).__name__}")
    path = os.fspath(value)
    if not isinstance(path, str):
        raise TypeError(f"{name} must be a text path, got {type(path).__name__}")
    if not path.strip():
        raise ValueError(f'{name} is empty (use ":memory:" for an in-memory store)')
    check_chars(path, name)
    if path == ":memory:":
        return path
    target = Path(path).expanduser()
    if target.is_dir():
        raise ValueError(f"{name} {path!r} is a directory; give a file path inside it")
    if target.exists() and not target.is_file():
        raise ValueError(f"{name} {path!r} is not a regular file (a device, pipe or socket)")
    if not target.parent.is_dir():
        raise ValueError(f"{name} {path!r}: its folder {str(target.parent)!r} does not exist")
    return str(target)


def check_items(items: Any, name: str = "items") -> list[Any]:
    """The items of a batch as a list of texts or mappings: a lone str (stored character by
    character), bytes or mapping (key by key) is refused."""
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        single = "mapping" if isinstance(items, Mapping) else type(items).__name__
        raise TypeError(
            f"{name} must be a sequence of texts or dicts, not a single {single}"
            f" (wrap it in a list, or use ingest()), got {type(items).__name__}"
        )
    out = list(items)
    for i, item in enumerate(out):
        if not isinstance(item, (str, Mapping)):
            raise TypeError(f"item {i}: must be a str or a dict, got {type(item).__name__}")
    return out


def check_epoch(value: Any, name: str) -> float:
    """POSIX seconds within :data:`MIN_TIME` .. :data:`MAX_TIME` (e.g. imported times)."""
    return check_number(value, name, MIN_EPOCH, MAX_EPOCH, wanted=f"POSIX seconds, {_RANGE}")


def check_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata of one memory (project, topics, layer, entity, altitude, importance)."""
    return {
        "project": check_optional_str(meta["project"], "project"),
        "topics": check_topics(meta["topics"]),
        "layer": check_choice(meta["layer"], LAYERS, "layer"),
        "entity": check_optional_str(meta["entity"], "entity"),
        "altitude": check_choice(meta["altitude"], ALTITUDES, "altitude"),
        "importance": check_unit(meta["importance"], "importance"),
    }


#: Largest number of results a query may ask for (``k``, ``n``): a bigger request is a bug
#: (annoy takes 32-bit counts and scores ``n_trees * 5k`` nodes).
MAX_RESULTS = 10_000
