"""FSRS-7: the 34-weight, two-trace memory model, vectorised in numpy.

Written from its published specification, ts-fsrs ``docs/src/en-US/guide/model/fsrs-7.mdx``
(also srs-benchmark ``models/fsrs_v7.py`` and fsrs-rs ``model_v7.rs``). No released package
implements it, so the tests check the equations on hand-worked values and on the state
progression the specification's authors publish for the default weights.

State: slow stability ``S``, fast stability ``Sf`` (days) and difficulty ``D`` in [1, 10]; ``t``
fractional days since the previous review (0 allowed: no separate same-day formula)::

    first review:  S = w[G-1],  Sf = 0.8 S,  D0(G) = w4 - exp(w5 (G-1)) + 1 (clamped)
    fast curve:    df = -clip(w23 Sf^(w33-0.3), 0.01, 0.95);  Ff = exp(min(ln w25 / df, 60)) - 1
                   Rf = (1 + Ff t / Sf) ** df
    slow curve:    ds = -clip(w24, 0.01, 0.95);  Fs = (w26^(1/ds) - 1) exp((D-5)(w32-0.3))
                   Rs = (1 + Fs t / S) ** ds
    mixture:       af = w27 Sf^-w29,  as = w28 S^w30 exp((D-5)(w31-0.5))
                   R = (af Rf + as Rs) / (af + as) (1 - 2e-5) + 1e-5
    trace update (offset k, stability x, recall q; k = 7, q = R for S; k = 15, q = Rf for Sf):
        L = min(x, w[k+3] ((x+1)^w[k+4] - 1) exp((1-q) w[k+5]))
        U = x (1 + exp(w[k]-1.5) (11-D) x^-w[k+1] (exp((1-q) w[k+2]) - 1) [w[k+6] if G=2]
              [w[k+7] if G=4])
        x' = L if G = 1 else max(L, U);  on Again Sf' = min(Sf', 0.8 S')
    difficulty:    dD = -w6 (G-3) (R + 0.1 if G = 1 else 1)
                   D' = clip(0.01 D0(4) + 0.99 (D + (10-D) dD / 9), 1, 10)   (D0(4) unclamped)
    S, Sf clamped to [S_MIN, S_MAX] = [0.0001, 36500]; all updates use the pre-review D.

One deliberate difference: the references round each new state to 8 decimals; memlab does not
(that would make the loss a step function of the weights, which a fitter cannot follow).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from memlab.models import fsrs6 as _f6
from memlab.models._validation import as_float_array
from memlab.models.fsrs6 import D_MAX, D_MIN, FloatOrArray

#: Each weight's default (the specification's: fsrs-rs ``inference_v7.rs``) and box bounds
#: (fsrs-rs ``parameter_clipper_v7.rs``; w26's floor as srs-benchmark).
_WEIGHT_TABLE = """
w    default  low     high
w0   0.1104   0.0001  50.0
w1   2.2395   0.0001  100.0
w2   3.9221   0.0001  100.0
w3   11.7841  0.0001  100.0
w4   6.1686   1.0     10.0
w5   0.6457   0.001   4.0
w6   3.6807   0.1     4.0
w7   1.9795   0.0     4.0
w8   0.0      0.0     1.2
w9   1.3826   0.3     3.0
w10  0.7024   0.01    1.5
w11  0.5999   0.1     1.0
w12  0.8146   0.0     3.5
w13  0.6398   0.0     1.0
w14  1.0      1.0     7.0
w15  1.3207   0.0     4.0
w16  0.6707   0.0     2.0
w17  3.8668   0.5     6.0
w18  0.4416   0.001   1.5
w19  0.0934   0.001   1.0
w20  1.8631   0.0     5.0
w21  0.6162   0.0     1.0
w22  1.0869   1.0     7.0
w23  0.1567   0.01    0.25
w24  0.0801   0.01    0.95
w25  0.2421   0.2     0.85
w26  0.9464   0.5     0.99
w27  0.1433   0.01    1.0
w28  0.7145   0.1     1.0
w29  0.0      0.0     0.9
w30  0.5667   0.1     1.1
w31  0.3734   0.0     1.0
w32  0.5333   0.0     0.6
w33  0.3048   0.0     0.6
"""
_ROWS = [line.split() for line in _WEIGHT_TABLE.strip().splitlines()[1:]]
DEFAULT_WEIGHTS: tuple[float, ...] = tuple(float(row[1]) for row in _ROWS)
LOWER_BOUNDS: tuple[float, ...] = tuple(float(row[2]) for row in _ROWS)
UPPER_BOUNDS: tuple[float, ...] = tuple(float(row[3]) for row in _ROWS)
N_WEIGHTS = 34
#: Cross-weight order the clipper also enforces: w[j] >= w[i] for each pair (i, j).
ORDERED: tuple[tuple[int, int], ...] = ((0, 1), (1, 2), (2, 3), (25, 26))
S_MIN = 0.0001
S_MAX = 36500.0
#: The mixed recall is kept within [EPS, 1 - EPS].
EPS = 1e-5


def clip_weights(weights: ArrayLike) -> NDArray[np.float64]:
    """Weights clamped into their box, then ``w1 >= w0``, ``w2 >= w1``, ``w3 >= w2`` and
    ``w26 >= w25`` (as the specification's clipper); works on ``(..., 34)`` arrays."""
    w = np.clip(np.array(weights, dtype=np.float64), LOWER_BOUNDS, UPPER_BOUNDS)
    for i, j in ORDERED:
        w[..., j] = np.maximum(w[..., j], w[..., i])
    return w


def _validate_weights(weights: Sequence[float]) -> tuple[float, ...]:
    if isinstance(weights, (str, bytes)) or not hasattr(weights, "__len__"):
        raise TypeError(f"weights must be a sequence of {N_WEIGHTS} numbers")
    if len(weights) != N_WEIGHTS:
        raise ValueError(f"expected {N_WEIGHTS} FSRS-7 weights (w0..w33), got {len(weights)}")
    w = as_float_array(list(weights), "weights")
    bad = np.flatnonzero(~(clip_weights(w) == w))  # also catches inf
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"weights[{i}] = {w[i]} is outside [{LOWER_BOUNDS[i]}, {UPPER_BOUNDS[i]}] or breaks "
            "the order w1>=w0, w2>=w1, w3>=w2, w26>=w25"
        )
    return tuple(float(x) for x in w)


# ----------------------------------------------------------------------------- the equations
# ``w`` is an array whose first axis indexes the weights: shape (34,) for one model, or
# (34, m, 1) for m weight vectors at once (the fitter's finite differences), broadcasting
# against states of shape (n,) or (m, n).
def _curves(w: Any, t: Any, s: Any, sf: Any, d: Any) -> tuple[Any, Any]:
    """Mixed recall ``R`` and the raw fast-trace recall ``Rf`` after ``t`` days."""
    with np.errstate(divide="ignore", over="ignore"):
        df = -np.clip(w[23] * sf ** (w[33] - 0.3), 0.01, 0.95)
        ff = np.exp(np.minimum(np.log(w[25]) / df, 60.0)) - 1.0
        rf = (1.0 + ff * t / sf) ** df
        ds = -np.clip(w[24], 0.01, 0.95)
        rs = (1.0 + (w[26] ** (1.0 / ds) - 1.0) * np.exp((d - 5.0) * (w[32] - 0.3)) * t / s) ** ds
        af = w[27] * sf ** -w[29]
        a_s = w[28] * s ** w[30] * np.exp((d - 5.0) * (w[31] - 0.5))
    return (af * rf + a_s * rs) / (af + a_s) * (1.0 - 2.0 * EPS) + EPS, rf


def _trace(w: Any, k: int, x: Any, d: Any, q: Any, g: Any) -> Any:
    """Stability of one trace after a review (offset ``k``: 7 slow, 15 fast), unclamped."""
    lapse = np.minimum(x, w[k + 3] * ((x + 1.0) ** w[k + 4] - 1.0) * np.exp((1.0 - q) * w[k + 5]))
    bonus = np.where(g == 2, w[k + 6], 1.0) * np.where(g == 4, w[k + 7], 1.0)
    grow = np.exp(w[k] - 1.5) * (11.0 - d) * x ** -w[k + 1] * (np.exp((1.0 - q) * w[k + 2]) - 1.0)
    return np.where(g == 1, lapse, np.maximum(lapse, x * (1.0 + grow * bonus)))


def _initial(w: Any, g: Any) -> tuple[Any, Any, Any]:
    """State after a first review: ``(S, Sf, D)``."""
    s = np.clip(np.choose(g - 1, [w[0], w[1], w[2], w[3]]), S_MIN, S_MAX)
    d = np.clip(w[4] - np.exp(w[5] * (g - 1.0)) + 1.0, D_MIN, D_MAX)
    return s, np.clip(0.8 * s, S_MIN, S_MAX), d


def _next(w: Any, s: Any, sf: Any, d: Any, t: Any, g: Any) -> tuple[Any, Any, Any, Any]:
    """``(R, S', Sf', D')``: the recall predicted before the review and the state after it."""
    r, rf = _curves(w, t, s, sf, d)
    s_new = _trace(w, 7, s, d, r, g)
    sf_new = _trace(w, 15, sf, d, rf, g)
    sf_new = np.where(g == 1, np.minimum(sf_new, 0.8 * s_new), sf_new)
    step = -w[6] * (g - 3.0) * np.where(g == 1, r + 0.1, 1.0)
    d0_easy = w[4] - np.exp(3.0 * w[5]) + 1.0
    d_new = np.clip(0.01 * d0_easy + 0.99 * (d + (10.0 - d) * step / 9.0), D_MIN, D_MAX)
    return r, np.clip(s_new, S_MIN, S_MAX), np.clip(sf_new, S_MIN, S_MAX), d_new


def _steps(w: Any, g: NDArray[np.intp], t: NDArray[np.float64]) -> Any:
    """Run padded histories longest first; yield ``(i, rows, R, S, Sf, D)`` per review column
    ``i``, ``rows`` the cards still under review (a prefix of the state; R is NaN at ``i = 0``).
    """
    lengths = (g > 0).sum(axis=1)
    order = np.argsort(-lengths, kind="stable")
    g, t = g[order], t[order]
    for i in range(g.shape[1]):
        n = int((lengths > i).sum())
        if n == 0:
            return
        if i == 0:
            s, sf, d = _initial(w, g[:n, 0])
            r = np.full(np.shape(s), np.nan)
        else:
            s, sf, d = s[..., :n], sf[..., :n], d[..., :n]
            r, s, sf, d = _next(w, s, sf, d, t[:n, i], g[:n, i])
        yield i, order[:n], r, s, sf, d


@dataclass(frozen=True, eq=False)
class FSRS7Trace:
    """States of a forward pass, arrays of shape ``(n_cards, n_reviews)``: ``retrievability``
    predicted before review ``i`` (NaN at the first review and in the padding), and the
    ``stability``, ``stability_fast`` and ``difficulty`` after it (NaN in the padding)."""

    grades: NDArray[np.intp]
    elapsed_days: NDArray[np.float64]
    retrievability: NDArray[np.float64]
    stability: NDArray[np.float64]
    stability_fast: NDArray[np.float64]
    difficulty: NDArray[np.float64]


@dataclass(frozen=True)
class FSRS7:
    """The FSRS-7 model (module docs), vectorised over arrays of cards.

    Parameters
    ----------
    weights : sequence of 34 floats, optional
        w0..w33, default :data:`DEFAULT_WEIGHTS`; each within its bounds and the order of
        :data:`ORDERED`, else ``ValueError`` naming the index.

    Notes
    -----
    A memory state is given by the keywords ``stability``, ``stability_fast`` (both > 0) and
    ``difficulty`` (in [1, 10]); arrays broadcast, scalars give numpy scalars.
    """

    weights: tuple[float, ...] = DEFAULT_WEIGHTS

    def __init__(self, weights: Sequence[float] | None = None) -> None:
        w = DEFAULT_WEIGHTS if weights is None else _validate_weights(weights)
        object.__setattr__(self, "weights", w)

    @property
    def _w(self) -> NDArray[np.float64]:
        return np.asarray(self.weights)

    def to_dict(self) -> dict[str, list[float]]:
        return {"weights": list(self.weights)}

    @classmethod
    def from_dict(cls, source: Mapping[str, Any]) -> FSRS7:
        if not isinstance(source, Mapping) or "weights" not in source:
            raise ValueError("FSRS7.from_dict expects a mapping with a 'weights' key")
        return cls(source["weights"])

    @staticmethod
    def _state(state: dict[str, ArrayLike]) -> list[NDArray[np.float64]]:
        names = ("stability", "stability_fast", "difficulty")
        if sorted(state) != sorted(names):
            raise TypeError(f"a memory state is given as the keywords {names}, got {tuple(state)}")
        out = [as_float_array(state[name], name) for name in names]
        _f6._check_stability(out[0])
        _f6._check_stability(out[1], "stability_fast")
        _f6._check_difficulty(out[2])
        return out

    @staticmethod
    def _elapsed(elapsed_days: ArrayLike) -> NDArray[np.float64]:
        t = as_float_array(elapsed_days, "elapsed_days")
        _f6._check_elapsed(t)
        return t

    def initial_state(self, grade: ArrayLike) -> tuple[FloatOrArray, FloatOrArray, FloatOrArray]:
        """``(S, Sf, D)`` after a card's first review with ``grade`` 1..4."""
        return tuple(_f6._result(np.asarray(x)) for x in _initial(self._w, _f6._grades(grade)))

    def retrievability(self, *, elapsed_days: ArrayLike, **state: ArrayLike) -> FloatOrArray:
        """Mixed recall probability ``R`` of the two traces after ``elapsed_days`` (>= 0)."""
        r = _curves(self._w, self._elapsed(elapsed_days), *self._state(state))[0]
        return _f6._result(np.asarray(r))

    def next_state(
        self, *, elapsed_days: ArrayLike, grade: ArrayLike, **state: ArrayLike
    ) -> tuple[FloatOrArray, FloatOrArray, FloatOrArray]:
        """``(S', Sf', D')`` after a review with ``grade``, ``elapsed_days`` after the last one."""
        t, g = self._elapsed(elapsed_days), _f6._grades(grade)
        out = _next(self._w, *self._state(state), t, g)[1:]
        return tuple(_f6._result(np.asarray(x)) for x in out)  # type: ignore[return-value]

    def forward(self, *, grades: ArrayLike, elapsed_days: ArrayLike) -> FSRS7Trace:
        """Run many review histories at once, as :meth:`memlab.models.FSRS6.forward`."""
        g, t = _f6._histories(grades, elapsed_days)
        later = g > 0
        later[:, :1] = False
        out = [np.full(g.shape, np.nan) for _ in range(4)]
        for i, rows, *values in _steps(self._w, g, np.where(later, t, 0.0)):
            for array, value in zip(out, values, strict=True):
                array[rows, i] = value
        return FSRS7Trace(g, t, *out)


__all__ = [
    "DEFAULT_WEIGHTS",
    "EPS",
    "FSRS7",
    "FSRS7Trace",
    "LOWER_BOUNDS",
    "N_WEIGHTS",
    "ORDERED",
    "S_MAX",
    "S_MIN",
    "UPPER_BOUNDS",
    "clip_weights",
]
