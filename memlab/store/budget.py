"""A forgetting budget: how many memories a sweep keeps, and by which keep score."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memlab.keep import DEFAULT_KEEP, KEEP_SCORES


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
        keep = self.keep
        if isinstance(keep, bool) or not isinstance(keep, numbers.Real):
            raise TypeError(
                f"keep must be a share in (0, 1] (a float) or a count >= 1 (an int), got {keep!r}"
            )
        if isinstance(keep, numbers.Integral):
            if keep < 1:
                raise ValueError(f"keep count must be >= 1, got {keep!r}")
            object.__setattr__(self, "keep", int(keep))
        elif not (math.isfinite(keep) and 0.0 < keep <= 1.0):
            raise ValueError(f"keep share must lie in (0, 1], got {float(keep)!r}")
        else:
            object.__setattr__(self, "keep", float(keep))
        if not isinstance(self.keep_by, str) or self.keep_by not in KEEP_SCORES:
            raise ValueError(f"unknown keep score {self.keep_by!r}; available: {list(KEEP_SCORES)}")

    def to_dict(self) -> dict[str, Any]:
        return {"keep": self.keep, "keep_by": self.keep_by}

    @classmethod
    def from_dict(cls, source: Mapping[str, Any]) -> Budget:
        if not isinstance(source, Mapping) or set(source) != {"keep", "keep_by"}:
            raise ValueError("a budget must be a mapping with keys 'keep' and 'keep_by'")
        return cls(source["keep"], source["keep_by"])
