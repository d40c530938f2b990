"""A forgetting budget: how many memories a sweep keeps, and by which keep score."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memlab.keep import DEFAULT_KEEP, KEEP_SCORES


def check_keep(keep: Any) -> float | int:
    """``keep`` as a share in (0, 1] (float) or a count >= 1 (int); else a clear error."""
    if isinstance(keep, bool) or not isinstance(keep, numbers.Real):
        raise TypeError(
            f"keep must be a share in (0, 1] (a float) or a count >= 1 (an int), got {keep!r}"
        )
    if isinstance(keep, numbers.Integral):
        if keep < 1:
            raise ValueError(f"keep count must be >= 1, got {keep!r}")
        return int(keep)
    keep = float(keep)
    if not (math.isfinite(keep) and 0.0 < keep <= 1.0):
        raise ValueError(f"keep share must lie in (0, 1], got {keep!r}")
    return keep


def check_keep_by(keep_by: Any) -> str:
    """``keep_by`` if it names a keep score of :data:`memlab.keep.KEEP_SCORES`."""
    if not isinstance(keep_by, str) or keep_by not in KEEP_SCORES:
        raise ValueError(f"unknown keep score {keep_by!r}; available: {list(KEEP_SCORES)}")
    return keep_by


@dataclass(frozen=True)
class Budget:
    """Keep ``keep`` of the active memories, best by ``keep_by``.

    ``keep`` is a share in (0, 1] (a float; at least one memory) or a count >= 1 (an int);
    ``keep_by`` one of :data:`memlab.keep.KEEP_SCORES`. Protected memories are always kept and
    count toward the budget. E.g. ``Budget(keep=500, keep_by="recency")``: the 500 newest.
    """

    keep: float | int
    keep_by: str = DEFAULT_KEEP

    def __post_init__(self) -> None:
        object.__setattr__(self, "keep", check_keep(self.keep))
        object.__setattr__(self, "keep_by", check_keep_by(self.keep_by))

    def to_dict(self) -> dict[str, Any]:
        return {"keep": self.keep, "keep_by": self.keep_by}

    @classmethod
    def from_dict(cls, source: Mapping[str, Any]) -> Budget:
        if not isinstance(source, Mapping) or set(source) != {"keep", "keep_by"}:
            raise ValueError("a budget must be a mapping with keys 'keep' and 'keep_by'")
        return cls(source["keep"], source["keep_by"])
