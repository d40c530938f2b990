"""Progress bars (``tqdm.auto``) for long work, with one switch to turn them all off.

A bar is shown unless ``enabled=False``, :func:`set_progress` or ``MEMLAB_PROGRESS`` says off.

>>> from memlab.progress import progress
>>> sum(progress(range(3), desc="demo", enabled=False))
3
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
    """Turn progress bars on or off for the process (``None``: the environment decides again);
    returns the previous switch, so a caller can restore it."""
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
    iterable: Iterable[Any] | None = None, *, enabled: bool | None = None, **kwargs: Any
) -> Any:
    """A ``tqdm.auto`` bar (over an iterable, or ``bar.update(n)``) shown as ``enabled`` says,
    else as :func:`progress_enabled` does; other keywords go to tqdm. A bar off still counts."""
    if enabled is not None and not isinstance(enabled, bool):
        raise TypeError(f"enabled must be True, False or None, got {enabled!r}")
    show = progress_enabled() if enabled is None else enabled
    from tqdm.auto import tqdm

    return tqdm(iterable, disable=not show, **kwargs)
