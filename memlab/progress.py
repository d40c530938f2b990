"""Progress bars for long work, with one switch to turn them all off.

A leaf module (it imports nothing from memlab), so every layer can use it:
bulk ingest, fitting, simulation and evaluation.

Examples
--------
>>> from memlab.progress import progress, set_progress
>>> total = sum(progress(range(3), desc="demo", enabled=False))
>>> total
3

Bars use ``tqdm.auto`` (a widget in Jupyter, text in a terminal). They are shown unless
turned off, in this order of precedence:

1. ``enabled=`` passed to :func:`progress` (``True``/``False``; ``None`` follows the switch);
2. :func:`set_progress` (``set_progress(False)``; ``set_progress(None)`` goes back to the env);
3. the environment variable ``MEMLAB_PROGRESS`` (``0``, ``false``, ``no`` or ``off`` turn bars off).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

#: Environment variable read when no switch is set: "0", "false", "no", "off" disable bars.
ENV_VAR = "MEMLAB_PROGRESS"
_OFF_VALUES = frozenset({"0", "false", "no", "off"})

_switch: bool | None = None


def set_progress(enabled: bool | None) -> bool | None:
    """Turn progress bars on (``True``) or off (``False``) for the whole process.

    ``None`` removes the switch, so the environment variable ``MEMLAB_PROGRESS`` decides
    again. Returns the previous switch value, so a caller can restore it.
    """
    global _switch
    if enabled is not None and not isinstance(enabled, bool):
        raise TypeError(f"set_progress takes True, False or None, got {enabled!r}")
    previous = _switch
    _switch = enabled
    return previous


def progress_enabled() -> bool:
    """Whether bars are shown now (the switch, else ``MEMLAB_PROGRESS``, else on)."""
    if _switch is not None:
        return _switch
    return os.environ.get(ENV_VAR, "1").strip().lower() not in _OFF_VALUES


def progress(
    iterable: Iterable[Any] | None = None,
    *,
    total: float | None = None,
    desc: str | None = None,
    unit: str = "it",
    leave: bool | None = None,
    enabled: bool | None = None,
    **kwargs: Any,
) -> Any:
    """A ``tqdm.auto`` bar that obeys memlab's switch.

    Wrap an iterable (``for x in progress(items, desc="fit")``) or leave it out and call
    ``bar.update(n)`` (``with progress(total=n, desc="ingest") as bar``). ``enabled`` forces
    the bar on or off for this call (``None`` follows :func:`progress_enabled`); other keywords
    go to tqdm. A bar that is off (``disable=True``) still iterates and counts.
    """
    if enabled is not None and not isinstance(enabled, bool):
        raise TypeError(f"enabled must be True, False or None, got {enabled!r}")
    show = progress_enabled() if enabled is None else enabled
    from tqdm.auto import tqdm

    return tqdm(
        iterable, total=total, desc=desc, unit=unit, leave=leave, disable=not show, **kwargs
    )
