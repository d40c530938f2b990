"""Boundary checks shared by the models: clear errors instead of silent NaN."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray


def as_float_array(values: ArrayLike, name: str, allow_nan: bool = False) -> NDArray[np.float64]:
    """``values`` as a float array; NaN or a non-number raises ``ValueError`` naming ``name``."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be numeric, got {values!r}") from error
    if not allow_nan and np.isnan(array).any():
        raise ValueError(f"{name} contains NaN")
    return array


def positive(values: ArrayLike, name: str) -> NDArray[np.float64]:
    """A float array of values > 0."""
    array = as_float_array(values, name)
    if (array <= 0).any():
        raise ValueError(f"{name} must be > 0, got minimum {array.min()!r}")
    return array


def non_negative(values: ArrayLike, name: str) -> NDArray[np.float64]:
    """A finite-or-infinite, non-negative float array."""
    array = as_float_array(values, name)
    if (array < 0).any():
        raise ValueError(f"{name} must be >= 0, got minimum {array.min()!r}")
    return array


def unit_interval(values: ArrayLike, name: str) -> NDArray[np.float64]:
    """A float array inside [0, 1]."""
    array = as_float_array(values, name)
    if ((array < 0) | (array > 1)).any():
        bad = array[(array < 0) | (array > 1)].ravel()[0]
        raise ValueError(f"{name} must lie in [0, 1], got {bad!r}")
    return array


def positive_scalar(value: float, name: str, zero: bool = False) -> float:
    """A finite number > 0 (a model parameter), or >= 0 when ``zero`` is allowed."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not np.isfinite(value) or value < 0 or (value == 0 and not zero):
        sign = ">=" if zero else ">"
        raise ValueError(f"{name} must be a finite number {sign} 0, got {value!r}")
    return float(value)


def integer(value: Any, name: str, low: int = 0) -> int:
    """An int (or numpy integer) >= ``low``: a bool or a float is refused, never truncated."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return int(value)


def labels(values: ArrayLike | str, allowed: Iterable[str], name: str) -> NDArray[np.str_]:
    """A string array whose every entry is one of ``allowed``."""
    array = np.asarray(values)
    if array.dtype.kind not in "UO":
        raise ValueError(f"{name} must be strings, got dtype {array.dtype}")
    allowed_set = sorted(set(allowed))
    unknown = sorted({str(v) for v in array.ravel()} - set(allowed_set))
    if unknown:
        raise ValueError(f"unknown {name} {unknown[0]!r}; expected one of {allowed_set}")
    return array.astype(str)


def label_by_floors(
    values: NDArray[np.float64], floors: tuple[tuple[str, float], ...]
) -> NDArray[np.str_]:
    """Name of the first ``(name, floor)`` whose floor each value reaches (floors descending)."""
    names = np.array([name for name, _ in floors])
    thresholds = np.array([floor for _, floor in floors])
    index = np.argmax(values[..., None] >= thresholds, axis=-1)
    return names[index]


class FloatParams:
    """``to_dict`` / ``from_dict`` of a dataclass of float parameters; the fields named in
    ``_optional`` may be missing from a dict (they then keep their defaults)."""

    _optional: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, float]:
        return {f.name: float(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls, source: Mapping[str, Any]) -> Any:
        names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
        return cls(**{n: float(source[n]) for n in names if n in source or n not in cls._optional})
