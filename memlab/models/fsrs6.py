"""FSRS-6: the 21-weight power-law memory model behind Anki's scheduler, vectorised in numpy.

The equations are those of py-fsrs 6.3.2 (``fsrs.scheduler``), with which this module keeps
parity to 1e-9 (see ``tests/models/test_fsrs6_parity.py``). ``G`` is the grade 1..4
(Again, Hard, Good, Easy), ``t`` the days since the previous review, ``S`` the stability
(days until R falls to 0.9) and ``D`` the difficulty in [1, 10]::

    decay = -w20 ;  f = 0.9 ** (1 / decay) - 1         R(t, S) = (1 + f t / S) ** decay
    first review:   S0 = w[G-1] ;  D0(G) = w4 - exp(w5 (G-1)) + 1, clamped to [1, 10]
    difficulty:     D' = D - w6 (G-3) (10-D) / 9 ;  D'' = w7 D0(4) + (1-w7) D'  (D0(4) unclamped)
    stability (old D, R = R(t, S)):
      t >= 1, G >= 2: S' = S (1 + e^w8 (11-D) S^-w9 (e^(w10 (1-R)) - 1) [w15 if G=2] [w16 if G=4])
      t >= 1, G == 1: S' = min(w11 D^-w12 ((S+1)^w13 - 1) e^(w14 (1-R)),  S / e^(w17 w18))
      t <  1:         S' = S max(e^(w17 (G-3+w18)) S^-w19,  1 if G >= 2 else 0)
    S' clamped to [S_MIN, S_MAX] = [0.001, 36500]
    interval(S, r) = S / f (r ** (1/decay) - 1)

One deliberate difference: py-fsrs clamps S only from below; memlab also caps it at ``S_MAX``
(100 years), as fsrs-rs does. Time is in days as given (:mod:`memlab.models.days` picks them).

Examples
--------
>>> model = FSRS6()
>>> float(model.retrievability(elapsed_days=10.0, stability=10.0))
0.9
>>> s, d = model.review(stability=np.nan, difficulty=np.nan, elapsed_days=0, grade=3)  # new card
>>> round(float(s), 4), round(float(d), 4)
(2.3065, 2.1181)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np
from fsrs import Rating
from fsrs.scheduler import DEFAULT_PARAMETERS, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS
from numpy.typing import ArrayLike, NDArray

from memlab.models._validation import as_float_array

#: Default weights w0..w20 and their bounds, py-fsrs's own (``fsrs.scheduler``).
DEFAULT_WEIGHTS: tuple[float, ...] = tuple(DEFAULT_PARAMETERS)
LOWER_BOUNDS: tuple[float, ...] = tuple(LOWER_BOUNDS_PARAMETERS)
UPPER_BOUNDS: tuple[float, ...] = tuple(UPPER_BOUNDS_PARAMETERS)
N_WEIGHTS = 21
#: Stability bounds in days (py-fsrs has no upper bound; fsrs-rs caps at 36500).
S_MIN = 0.001
S_MAX = 36500.0
#: Difficulty bounds.
D_MIN = 1.0
D_MAX = 10.0
#: What the vectorised methods return: a numpy float for scalar input, else an array.
FloatOrArray: TypeAlias = "float | NDArray[np.float64]"
#: Grades: py-fsrs's ``Rating`` IntEnum (1 Again, 2 Hard, 3 Good, 4 Easy); 0 pads ragged histories.
AGAIN, HARD, GOOD, EASY = Rating.Again, Rating.Hard, Rating.Good, Rating.Easy
PAD = 0


def _check_elapsed(t: NDArray[np.float64], name: str = "elapsed_days") -> None:
    if (t < 0).any():
        raise ValueError(
            f"{name} must be >= 0 (negative elapsed time), got minimum {float(t.min())!r}"
        )


def _check_stability(s: NDArray[np.float64], name: str = "stability") -> None:
    if (s <= 0).any():
        raise ValueError(f"{name} must be > 0, got minimum {float(s.min())!r}")
    if np.isinf(s).any():
        raise ValueError(f"{name} must be finite, got inf")


def _check_difficulty(d: NDArray[np.float64], name: str = "difficulty") -> None:
    outside = (d < D_MIN) | (d > D_MAX)
    if outside.any():
        raise ValueError(f"{name} must lie in [{D_MIN}, {D_MAX}], got {float(d[outside][0])!r}")


def _grades(values: ArrayLike, name: str = "grade", *, allow_pad: bool = False) -> NDArray[np.intp]:
    """Grades as an integer array; non-integers, NaN and values outside 1..4 raise ValueError."""
    array = np.asarray(values)
    low = PAD if allow_pad else AGAIN
    if array.dtype.kind == "b":
        raise ValueError(f"{name} must be integers {low}..{EASY}, got booleans")
    if array.dtype.kind in "iu" and (array.size == 0 or low <= array.min() <= array.max() <= EASY):
        return array.astype(np.intp, copy=False)
    try:  # floats, integers out of range, or objects such as fsrs.Rating
        numeric = array.astype(np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be integers {low}..{EASY}, got {values!r}") from error
    if np.isnan(numeric).any():
        raise ValueError(f"{name} contains NaN")
    fraction = numeric != np.round(numeric)
    if fraction.any():
        raise ValueError(f"{name} must be integers {low}..{EASY}, got {numeric[fraction][0]:g}")
    outside = (numeric < low) | (numeric > EASY)
    if outside.any():
        raise ValueError(f"{name} must be in {low}..{EASY}, got {numeric[outside][0]:g}")
    return numeric.astype(np.intp)


def _histories(grades: ArrayLike, elapsed_days: ArrayLike) -> tuple[NDArray[np.intp], Any]:
    """Validated padded histories of a forward pass (grades 2-D, padding only at the end,
    elapsed days >= 0 at every review but the first)."""
    g = _grades(grades, "grades", allow_pad=True)
    t = as_float_array(elapsed_days, "elapsed_days", allow_nan=True)
    if g.ndim != 2:
        raise ValueError(f"grades must be 2-D (n_cards, n_reviews), got shape {g.shape}")
    if t.shape != g.shape:
        raise ValueError(f"elapsed_days shape {t.shape} differs from grades shape {g.shape}")
    used = g > 0
    if (used[:, 1:] & ~used[:, :-1]).any():
        card = int(np.nonzero((used[:, 1:] & ~used[:, :-1]).any(axis=1))[0][0])
        raise ValueError(f"grades: padding (0) may only follow a card's last review (card {card})")
    used[:, :1] = False  # the first review has no elapsed time
    bad = used & ~(t >= 0)  # NaN or negative at a review
    if np.isnan(t[bad]).any():
        raise ValueError("elapsed_days contains NaN at a review (only column 0 and padding may)")
    _check_elapsed(t[bad])
    return g, t


def _validate_weights(weights: Sequence[float]) -> tuple[float, ...]:
    if isinstance(weights, (str, bytes)) or not hasattr(weights, "__len__"):
        raise TypeError(
            f"weights must be a sequence of {N_WEIGHTS} numbers, got {type(weights).__name__}"
        )
    if len(weights) != N_WEIGHTS:
        raise ValueError(f"expected {N_WEIGHTS} weights (w0..w20), got {len(weights)}")
    for index, weight in enumerate(weights):
        if isinstance(weight, bool) or not isinstance(
            weight, (int, float, np.integer, np.floating)
        ):
            raise TypeError(f"weights[{index}] must be a number, got {weight!r}")
    values = tuple(float(weight) for weight in weights)
    errors = [
        f"weights[{i}] = {value} is not finite"
        if not math.isfinite(value)
        else f"weights[{i}] = {value} is out of bounds [{low}, {high}]"
        for i, (value, low, high) in enumerate(zip(values, LOWER_BOUNDS, UPPER_BOUNDS, strict=True))
        if not low <= value <= high
    ]
    if errors:
        raise ValueError("invalid FSRS-6 weights:\n" + "\n".join(errors))
    return values


def _result(array: NDArray[np.float64]) -> Any:
    """0-d arrays come back as numpy scalars (np.float64 is a float), others as arrays."""
    return array[()] if array.ndim == 0 else array


@dataclass(frozen=True, eq=False)
class FSRS6Trace:
    """The states of a forward pass, arrays of shape ``(n_cards, n_reviews)``.

    Attributes
    ----------
    grades, elapsed_days : ndarray
        The inputs of :meth:`FSRS6.forward`, as given (not copied; 0 pads grades).
    retrievability : ndarray of float
        R predicted just before review ``i``; NaN at the first review and in the padding.
    stability, difficulty : ndarray of float
        State after review ``i``; in the padding, the card's last state is carried forward.
    """

    grades: NDArray[np.intp]
    elapsed_days: NDArray[np.float64]
    retrievability: NDArray[np.float64]
    stability: NDArray[np.float64]
    difficulty: NDArray[np.float64]


@dataclass(frozen=True)
class FSRS6:
    """The FSRS-6 model with 21 weights, vectorised over arrays of cards.

    Parameters
    ----------
    weights : sequence of 21 floats, optional
        w0..w20; default :data:`DEFAULT_WEIGHTS`. Each within py-fsrs's [:data:`LOWER_BOUNDS`,
        :data:`UPPER_BOUNDS`], else ``ValueError`` naming the index, the value and the bounds.

    Notes
    -----
    Public methods broadcast and validate their arguments (NaN, negative elapsed time,
    non-positive stability, grades outside 1..4 raise ``ValueError``); scalars give numpy scalars.
    """

    weights: tuple[float, ...] = field(default=DEFAULT_WEIGHTS)
    _k: dict[str, Any] = field(init=False, repr=False, compare=False, hash=False)

    def __init__(self, weights: Sequence[float] | None = None) -> None:
        w = DEFAULT_WEIGHTS if weights is None else _validate_weights(weights)
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "_k", self._constants(w))

    # -- constants precomputed once per weight vector
    @staticmethod
    def _constants(w: tuple[float, ...]) -> dict[str, Any]:
        decay = -w[20]
        factor = 0.9 ** (1.0 / decay) - 1.0
        grades = np.arange(5)  # lookup tables indexed by grade 0..4 (0 = padding)
        s0 = np.array([np.nan, w[0], w[1], w[2], w[3]])
        d0 = w[4] - np.exp(w[5] * (grades - 1.0)) + 1.0
        d0[0] = np.nan
        return {
            "decay": decay,
            "factor": factor,
            "s0": np.maximum(s0, S_MIN),
            "d0": np.clip(d0, D_MIN, D_MAX),
            # mean reversion target D0(4) unclamped, and the difficulty step per grade
            "d0_easy": w[4] - math.exp(w[5] * 3.0) + 1.0,
            "d_step_slope": -w[6] / 9.0,  # D' = D + (G-3) (-w6/9) (10-D)
            # success: e^w8, times the hard penalty / easy bonus
            "e_w8": math.exp(w[8]),
            # e^w8 [w15 | 1 | w16] for G = 2, 3, 4 as a quadratic in u = G - 3 (cheaper than lookup)
            "recall_u1": math.exp(w[8]) * (w[16] - w[15]) / 2.0,
            "recall_u2": math.exp(w[8]) * ((w[15] + w[16]) / 2.0 - 1.0),
            # lapse short-term cap S / e^(w17 w18)
            "lapse_cap": math.exp(-w[17] * w[18]),
            # same-day: e^(w17 (G-3+w18)) and the floor of the increase (1 if G >= 2 else 0)
            "short_coef": np.exp(w[17] * (grades - 3.0 + w[18])),
            "short_floor": np.array([0.0, 0.0, 1.0, 1.0, 1.0]),
        }

    @property
    def decay(self) -> float:
        """``-w20``: the exponent of the power-law forgetting curve (negative)."""
        return float(self._k["decay"])

    @property
    def factor(self) -> float:
        """``f = 0.9 ** (1/decay) - 1``, so that ``R(S, S) = 0.9``."""
        return float(self._k["factor"])

    def to_dict(self) -> dict[str, list[float]]:
        """JSON-serialisable form: ``{"weights": [w0, ..., w20]}``."""
        return {"weights": list(self.weights)}

    @classmethod
    def from_dict(cls, source: Mapping[str, Any]) -> FSRS6:
        """Inverse of :meth:`to_dict`; also reads py-fsrs's ``Scheduler.to_dict()``."""
        if isinstance(source, Mapping):
            for key in ("weights", "parameters"):
                if key in source:
                    return cls(source[key])
        raise ValueError(
            "FSRS6.from_dict expects a mapping with a 'weights' (or py-fsrs 'parameters') key"
        )

    # -- public, validated, vectorised equations
    def retrievability(self, *, elapsed_days: ArrayLike, stability: ArrayLike) -> FloatOrArray:
        """Probability of recall ``R(t, S) = (1 + f t / S) ** decay`` (R(S, S) = 0.9) after
        ``elapsed_days`` (>= 0) at ``stability`` (days, > 0)."""
        t = as_float_array(elapsed_days, "elapsed_days")
        s = as_float_array(stability, "stability")
        _check_elapsed(t)
        _check_stability(s)
        shape = np.broadcast_shapes(t.shape, s.shape)
        t, s = (a.ravel() for a in np.broadcast_arrays(t, s))
        return _result(self._retrievability(t, s).reshape(shape))

    def initial_stability(self, grade: ArrayLike) -> FloatOrArray:
        """Stability after a card's first review: ``w[G-1]``."""
        return _result(self._k["s0"][_grades(grade)])

    def initial_difficulty(self, grade: ArrayLike) -> FloatOrArray:
        """Difficulty after a first review: ``w4 - exp(w5 (G-1)) + 1`` (clamped to [1, 10])."""
        return _result(self._k["d0"][_grades(grade)])

    def review(
        self,
        *,
        stability: ArrayLike,
        difficulty: ArrayLike,
        elapsed_days: ArrayLike,
        grade: ArrayLike,
    ) -> tuple[FloatOrArray, FloatOrArray]:
        """State ``(S', D')`` after one review; a NaN ``stability`` marks a new card, whose first
        review gives the initial state (``difficulty`` and ``elapsed_days`` are then ignored).
        """
        s, d, t, g, shape = self._review_args(stability, difficulty, elapsed_days, grade)
        new = np.isnan(s)
        if new.any():
            s_old = np.where(new, 1.0, s)
            d_old = np.where(new, D_MIN, d)
            t_old = np.where(new, 0.0, t)
            s_next = np.where(new, self._k["s0"][g], self._next_stability(s_old, d_old, t_old, g))
            d_next = np.where(new, self._k["d0"][g], self._next_difficulty(d_old, g))
        else:
            s_next = self._next_stability(s, d, t, g)
            d_next = self._next_difficulty(d, g)
        return _result(s_next.reshape(shape)), _result(d_next.reshape(shape))

    def interval(self, *, stability: ArrayLike, desired_retention: ArrayLike = 0.9) -> FloatOrArray:
        """Days until R falls to ``desired_retention``: ``S / f (r ** (1/decay) - 1)``, unrounded
        (py-fsrs rounds it; memlab leaves that to the caller).
        """
        s = as_float_array(stability, "stability")
        _check_stability(s)
        r = as_float_array(desired_retention, "desired_retention")
        if ((r <= 0) | (r >= 1)).any():
            bad = r[(r <= 0) | (r >= 1)].ravel()[0]
            raise ValueError(f"desired_retention must lie in (0, 1), got {float(bad)!r}")
        k = self._k
        return _result(np.asarray(s / k["factor"] * (r ** (1.0 / k["decay"]) - 1.0)))  # 0-d safe

    # -- the forward pass
    def forward(self, *, grades: ArrayLike, elapsed_days: ArrayLike) -> FSRS6Trace:
        """Run many review histories at once.

        Parameters
        ----------
        grades : array_like of int, shape (n_cards, n_reviews)
            Grades 1..4; 0 pads a card's history after its last review (and only there).
        elapsed_days : array_like of float, shape (n_cards, n_reviews)
            Days since the card's previous review (>= 0); column 0 and the padding are ignored.

        Returns
        -------
        FSRS6Trace
            R predicted before each review, S and D after each review.
        """
        return self._forward(*_histories(grades, elapsed_days))

    def _forward(
        self, g: NDArray[np.intp], t: NDArray[np.float64], s_max: float = S_MAX
    ) -> FSRS6Trace:
        """Unvalidated forward pass. Cards are ordered by history length (longest first) so
        the cards still under review at step ``i`` are a prefix: every step runs on slices,
        gathering and scattering its column by flat index, never on the padding."""
        n_cards, n_reviews = g.shape
        k = self._k
        lengths = (g > 0).sum(axis=1)
        r_all = np.full((n_cards, n_reviews), np.nan)
        s_all = np.empty((n_cards, n_reviews))
        d_all = np.empty((n_cards, n_reviews))
        if n_reviews == 0 or n_cards == 0:
            return FSRS6Trace(g, t, r_all, s_all, d_all)
        order = np.argsort(-lengths, kind="stable")
        at_least = np.bincount(lengths, minlength=n_reviews + 1)[::-1].cumsum()[::-1]
        n_active = at_least[1:]  # n_active[i]: cards with more than i reviews
        # flat indices (into the C-ordered batch) of review i of each card, longest history first
        g_flat = np.ascontiguousarray(g).reshape(-1)
        t_flat = np.ascontiguousarray(t, dtype=np.float64).reshape(-1)
        r_flat, s_flat, d_flat = r_all.reshape(-1), s_all.reshape(-1), d_all.reshape(-1)
        base = order * n_reviews
        at = base.copy()
        first = g_flat[base]
        s_cur = k["s0"][first]
        d_cur = k["d0"][first]
        s_next = np.empty(n_cards)
        d_next = np.empty(n_cards)
        r_cur = np.empty(n_cards)
        work = np.empty((4, n_cards))
        s_flat[base] = s_cur
        d_flat[base] = d_cur
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            for i in range(1, n_reviews):
                n = int(n_active[i])
                if n == 0:  # every history has ended: carry the last state to the end
                    s_all[:, i:] = s_all[:, i - 1 : i]
                    d_all[:, i:] = d_all[:, i - 1 : i]
                    break
                np.add(base, i, out=at)
                active = at[:n]
                gi, ti = g_flat[active], t_flat[active]
                s, d, r = s_cur[:n], d_cur[:n], r_cur[:n]
                self._retrievability(ti, s, out=r)
                self._next_stability(s, d, ti, gi, r, s_max, out=s_next[:n], work=work[:, :n])
                self._next_difficulty(d, gi, out=d_next[:n], work=work[0, :n])
                s_cur[:n] = s_next[:n]
                d_cur[:n] = d_next[:n]
                r_flat[active] = r
                s_flat[at] = s_cur  # padding cards keep their state
                d_flat[at] = d_cur
        return FSRS6Trace(g, t, r_all, s_all, d_all)

    # -- private, unvalidated kernels on 1-D float64 / intp arrays of one length; ``out`` and
    #    ``work`` buffers are optional (the forward pass reuses them, the public methods do not)
    def _retrievability(
        self, t: NDArray[np.float64], s: NDArray[np.float64], out: NDArray[np.float64] | None = None
    ) -> NDArray[np.float64]:
        """``R = (1 + f t / S) ** decay``, as ``exp(decay log(1 + f t / S))``."""
        k = self._k
        r = np.divide(t, s, out=out)
        r *= k["factor"]
        r += 1.0
        np.log(r, out=r)
        r *= k["decay"]
        return np.exp(r, out=r)

    def _next_difficulty(
        self,
        d: NDArray[np.float64],
        g: NDArray[np.intp],
        out: NDArray[np.float64] | None = None,
        work: NDArray[np.float64] | None = None,
    ) -> NDArray[np.float64]:
        """``D' = D - w6 (G-3) (10-D) / 9``; ``D'' = w7 D0(4) + (1-w7) D'``, clamped to [1, 10]."""
        w7 = self.weights[7]
        k = self._k
        out = np.subtract(10.0, d, out=out)
        step = np.subtract(g, 3.0, out=work)  # d_step[G] = -w6 (G-3) / 9
        step *= k["d_step_slope"]
        out *= step
        out += d
        out *= 1.0 - w7
        out += w7 * k["d0_easy"]
        return np.clip(out, D_MIN, D_MAX, out=out)

    def _next_stability(
        self,
        s: NDArray[np.float64],
        d: NDArray[np.float64],
        t: NDArray[np.float64],
        g: NDArray[np.intp],
        r: NDArray[np.float64] | None = None,
        s_max: float = S_MAX,
        out: NDArray[np.float64] | None = None,
        work: NDArray[np.float64] | None = None,
    ) -> NDArray[np.float64]:
        """The branch per card (same day if t < 1, else lapse if G = 1, else success), clamped."""
        w, k = self.weights, self._k
        if work is None:
            work = np.empty((4, len(s)))
        if r is None:
            r = self._retrievability(t, s, out=work[2])
        log_s = np.log(s, out=work[0])
        # success (G >= 2): S (1 + e^w8 (11-D) S^-w9 (e^(w10 (1-R)) - 1) [w15 | 1 | w16])
        out = np.multiply(log_s, -w[9], out=out)
        np.exp(out, out=out)  # S^-w9
        tmp = np.subtract(1.0, r, out=work[1])
        tmp *= w[10]
        np.exp(tmp, out=tmp)
        tmp -= 1.0
        out *= tmp
        np.subtract(11.0, d, out=tmp)
        out *= tmp
        u = np.subtract(g, 3.0, out=tmp)  # e^w8 [w15 | 1 | w16] = e^w8 + u (c1 + u c2)
        mult = np.multiply(u, k["recall_u2"], out=work[3])
        mult += k["recall_u1"]
        mult *= u
        mult += k["e_w8"]
        out *= mult
        out += 1.0
        out *= s
        # lapse (G = 1): min(w11 D^-w12 ((S+1)^w13 - 1) e^(w14 (1-R)), S / e^(w17 w18))
        lapse = np.flatnonzero(g == AGAIN)
        if lapse.size:
            s_lapse = s[lapse]
            forget = np.log(d[lapse])
            forget *= -w[12]
            forget += w[14] * (1.0 - r[lapse])
            np.exp(forget, out=forget)  # D^-w12 e^(w14 (1-R))
            grow = np.log(s_lapse + 1.0)
            grow *= w[13]
            np.exp(grow, out=grow)
            grow -= 1.0  # (S+1)^w13 - 1
            forget *= grow
            forget *= w[11]
            out[lapse] = np.minimum(forget, s_lapse * k["lapse_cap"], out=forget)
        # same day (t < 1): S max(e^(w17 (G-3+w18)) S^-w19, 1 if G >= 2 else 0)
        same_day = np.flatnonzero(t < 1.0)
        if same_day.size:
            short = log_s[same_day] * -w[19]
            np.exp(short, out=short)
            short *= k["short_coef"][g[same_day]]
            np.maximum(short, k["short_floor"][g[same_day]], out=short)
            short *= s[same_day]
            out[same_day] = short
        return np.clip(out, S_MIN, s_max, out=out)

    def _review_args(
        self, stability: ArrayLike, difficulty: ArrayLike, elapsed_days: ArrayLike, grade: ArrayLike
    ) -> tuple[
        NDArray[np.float64],
        NDArray[np.float64],
        NDArray[np.float64],
        NDArray[np.intp],
        tuple[int, ...],
    ]:
        """Validated, broadcast and flattened arguments of the review equations, and their shape."""
        s = as_float_array(stability, "stability", allow_nan=True)
        d = as_float_array(difficulty, "difficulty", allow_nan=True)
        t = as_float_array(elapsed_days, "elapsed_days", allow_nan=True)
        g = _grades(grade)
        shape = np.broadcast_shapes(s.shape, d.shape, t.shape, g.shape)
        s, d, t, g = (a.ravel() for a in np.broadcast_arrays(s, d, t, g))
        known = ~np.isnan(s)
        if np.isnan(d[known]).any():
            raise ValueError("difficulty contains NaN (for a card with a stability)")
        if np.isnan(t[known]).any():
            raise ValueError("elapsed_days contains NaN")
        _check_stability(s[known])
        _check_difficulty(d[known])
        _check_elapsed(t[known])
        return s, d, t, g, shape


__all__ = [
    "AGAIN",
    "D_MAX",
    "D_MIN",
    "DEFAULT_WEIGHTS",
    "EASY",
    "FSRS6",
    "FSRS6Trace",
    "FloatOrArray",
    "GOOD",
    "Rating",
    "HARD",
    "LOWER_BOUNDS",
    "N_WEIGHTS",
    "PAD",
    "S_MAX",
    "S_MIN",
    "UPPER_BOUNDS",
]
