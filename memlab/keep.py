"""Keep scores: which memories a forgetting budget keeps, by name.

A budget keeps the share (or number) of memories with the highest keep score. The scores,
all computed from what a store knows about each memory (:class:`KeepInputs`):

=================  ===========================================================================
name               keep score (higher = kept first)
=================  ===========================================================================
``memlab``         the default, :class:`MemlabKeep` - posterior need: an importance prior
                   (given, else from content) updated by uses weighted by kind; protected first
``fsrs6``          FSRS-6 retention R(t, S) at the time of the sweep
``heat``           ``-r / (1 + r)``, ``r`` Linksee's forgetting risk (heat with stability,
                   importance as above); protected first
``exponential``    MemoryBank's ``exp(-t / S)``, S = 1 + number of accesses
``recency``        creation time (newest first)
``random``         a seeded uniform draw
``length``         number of characters of the text
``idf``            IDF mass of the text against the memories' own corpus (no bonuses)
=================  ===========================================================================

The default's need is a Poisson rate with a Gamma prior, relative to the store's average memory:
``need = (PRIOR_USES * prior + uses) / (PRIOR_USES + rate * exposure)`` and
``keep = need / (1 + need) + PROTECTED_BONUS * protected``, where ``uses`` sums the memory's
accesses weighted by kind (:func:`access_weight`), each decaying as ``t ** -d`` (Anderson &
Schooler 1991), ``exposure`` is what ``uses`` would be for one use a day over its life and
``rate`` the store's weighted uses per memory-day: content decides while a memory has no use
history, use once it has. Protected memories (layer ``caveat``/``goal``, altitude ``mission``
or importance >= 0.9) are kept before every other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from memlab.informativeness import Informativeness, TermStats, content_importance
from memlab.models.exponential import ExponentialModel
from memlab.models.fsrs6 import FSRS6
from memlab.models.heat import ALTITUDES, LAYERS, HeatModel

#: Keep scores selectable by name.
KEEP_SCORES: tuple[str, ...] = tuple(
    "memlab fsrs6 heat exponential recency random length idf".split()
)
#: The default keep score of a budget.
DEFAULT_KEEP = "memlab"
#: Added to the keep score of protected memories (every other score lies below 1).
PROTECTED_BONUS = 10.0
#: Evidence weight of an explicit use (the agent used the memory) or of the fact stated again.
USE_WEIGHT = 1.0
#: Evidence weight of a mere return by search (the memory came up; nobody said it was used).
RETURN_WEIGHT = 0.1
#: Strength of the content prior, in expected uses.
PRIOR_USES = 1.0
#: Trust in the content prior, in weighted uses: how much of the store's own use history it takes
#: before the history, not the content, says how far importance predicts need.
PRIOR_TRUST_USES = 100.0
#: Decay ``d`` of a use's weight ``t ** -d`` (ACT-R's default; Anderson & Schooler 1991).
DECAY = 0.5
#: Times below this (days) count as this (a use at the moment of the sweep is finite).
MIN_DAYS = 1e-3


def access_weight(source: str | None) -> float:
    """Evidence weight of one access by its ``source``: a search return (any source naming a
    search) weighs :data:`RETURN_WEIGHT`, every other access :data:`USE_WEIGHT`."""
    return RETURN_WEIGHT if source is not None and "search" in str(source).lower() else USE_WEIGHT


@dataclass(frozen=True)
class KeepInputs:
    """What the keep scores read of each memory: arrays of equal length.

    Parameters
    ----------
    elapsed_days, age_days : array
        Days since the last access and since creation (>= 0).
    stability : array
        FSRS-6 stability after the last access (days, > 0).
    access_count : array
        Accesses after creation (>= 0).
    texts : sequence of str
        The memories' texts (content importance, ``length``, ``idf``); their count is ``len``.
    importance : array, optional
        Given importance in [0, 1], NaN where none was given (estimated from content).
    layer, altitude : sequence of str, optional
        Heat-model layer and altitude (protection); default ``context`` / ``implementation``.
    use_ages, use_weights : sequence of arrays, optional
        Per memory, the days since each access and its weight (:func:`access_weight`);
        without them each of ``access_count`` accesses counts as a use.
    """

    elapsed_days: NDArray[np.float64]
    age_days: NDArray[np.float64]
    stability: NDArray[np.float64]
    access_count: NDArray[np.float64]
    texts: tuple[str, ...]
    importance: NDArray[np.float64] | None = None
    layer: tuple[str, ...] | None = None
    altitude: tuple[str, ...] | None = None
    use_ages: tuple[NDArray[np.float64], ...] | None = None
    use_weights: tuple[NDArray[np.float64], ...] | None = None

    def __post_init__(self) -> None:
        n = len(self.texts)
        if (self.use_ages is None) != (self.use_weights is None):
            raise ValueError("use_ages and use_weights go together")
        if self.use_ages is not None and self.use_weights is not None:
            if len(self.use_ages) != n or len(self.use_weights) != n:
                raise ValueError(f"use_ages and use_weights need {n} entries (one per memory)")
            ages = tuple(np.asarray(a, dtype=float).reshape(-1) for a in self.use_ages)
            weights = tuple(np.asarray(w, dtype=float).reshape(-1) for w in self.use_weights)
            for a, w in zip(ages, weights, strict=True):
                if a.shape != w.shape:
                    raise ValueError("use_ages and use_weights differ in length for a memory")
                for name, x in (("use_ages", a), ("use_weights", w)):
                    if not (np.isfinite(x).all() and (x >= 0).all()):
                        raise ValueError(f"{name} must be finite and >= 0")
            object.__setattr__(self, "use_ages", ages)
            object.__setattr__(self, "use_weights", weights)
        for name in ("elapsed_days", "age_days", "stability", "access_count"):
            value = np.asarray(getattr(self, name), dtype=float)
            if value.shape != (n,):
                raise ValueError(f"{name} has shape {value.shape}, expected ({n},)")
            if np.isnan(value).any() or (value < 0).any():
                raise ValueError(f"{name} must be >= 0 (no NaN)")
            object.__setattr__(self, name, value)
        if (self.stability <= 0).any():
            raise ValueError("stability must be > 0")
        if self.importance is not None:
            imp = np.asarray(self.importance, dtype=float)
            if imp.shape != (n,):
                raise ValueError(f"importance has shape {imp.shape}, expected ({n},)")
            if ((imp < 0) | (imp > 1)).any():
                raise ValueError("importance must lie in [0, 1] (NaN: not given)")
            object.__setattr__(self, "importance", imp)
        for name, allowed in (("layer", LAYERS), ("altitude", ALTITUDES)):
            value = getattr(self, name)
            if value is not None:
                value = tuple(str(v) for v in value)
                if len(value) != n:
                    raise ValueError(f"{name} has {len(value)} entries, expected {n}")
                unknown = sorted(set(value) - set(allowed))
                if unknown:
                    raise ValueError(f"unknown {name} {unknown[0]!r}; expected one of {allowed}")
                object.__setattr__(self, name, value)
        object.__setattr__(self, "texts", tuple(self.texts))

    def __len__(self) -> int:
        return len(self.texts)

    @classmethod
    def from_frame(
        cls, frame: pd.DataFrame, now: datetime, *, importance_given: bool = True
    ) -> KeepInputs:
        """From ``MemoryStore.to_dataframe()`` columns at ``now`` (timezone-aware).

        An importance the store estimated (``importance_auto``) is NaN here (estimated again),
        every one with ``importance_given=False``. Texts are ``content[:own_chars]``.
        """
        at = pd.Timestamp(now)
        if at.tzinfo is None:
            raise ValueError("now must be timezone-aware")

        def days(column: str) -> NDArray[np.float64]:
            seconds = (at - frame[column]).dt.total_seconds().to_numpy(dtype=float)
            return np.maximum(seconds / 86400.0, 0.0)

        texts = tuple(frame["content"].astype(str))
        if "own_chars" in frame:
            texts = tuple(
                t if pd.isna(n) else t[: int(n)]
                for t, n in zip(texts, frame["own_chars"], strict=True)
            )
        importance = frame["importance"].to_numpy(dtype=float) if importance_given else None
        if importance is not None and "importance_auto" in frame:
            auto = frame["importance_auto"].to_numpy(dtype=bool)
            importance = np.where(auto, np.nan, importance)
        return cls(
            elapsed_days=days("last_access"),
            age_days=days("created_at"),
            stability=frame["stability"].to_numpy(dtype=float),
            access_count=frame["access_count"].to_numpy(dtype=float),
            texts=texts,
            importance=importance,
            layer=tuple(frame["layer"]) if "layer" in frame else None,
            altitude=tuple(frame["altitude"]) if "altitude" in frame else None,
        )


class MemlabKeep:
    """The default keep score, the posterior need of each memory (see the module docstring)."""

    def need(
        self,
        importance: ArrayLike,
        uses: ArrayLike,
        weighted_count: ArrayLike,
        age_days: ArrayLike,
        use_count: ArrayLike | None = None,
    ) -> NDArray[np.float64]:
        """Posterior need of each memory; ``uses`` is the decayed weighted sum of accesses
        (:func:`decayed_uses`), ``weighted_count`` their plain weighted count and ``use_count``
        the real uses alone (default ``weighted_count``), from which :meth:`prior` learns."""
        u = np.asarray(uses, dtype=float)
        count = np.asarray(weighted_count, dtype=float)
        age = np.maximum(np.asarray(age_days, dtype=float), 0.0)
        real = count if use_count is None else np.asarray(use_count, dtype=float)
        life = float(age.sum())
        rate = float(count.sum()) / life if life > 0 else 0.0
        real_rate = float(real.sum()) / life if life > 0 else 0.0
        prior = self.prior(np.asarray(importance, dtype=float), real, real_rate * age)
        return (PRIOR_USES * prior + u) / (PRIOR_USES + rate * exposure(age))

    def prior(
        self, importance: ArrayLike, weighted_count: ArrayLike, expected: ArrayLike
    ) -> NDArray[np.float64]:
        """Prior need ``1 + beta * (importance / mean - 1)`` of each memory (mean 1), ``beta``
        from :meth:`beta`."""
        imp = np.asarray(importance, dtype=float)
        mean = float(imp.mean()) if imp.size else 0.0
        if mean <= 0:
            return np.ones_like(imp)
        ratio = imp / mean
        return 1.0 + self.beta(ratio, weighted_count, expected) * (ratio - 1.0)

    def beta(self, ratio: ArrayLike, weighted_count: ArrayLike, expected: ArrayLike) -> float:
        """How far importance predicts need: 1 without use history, moving to the slope of the
        real uses ``n`` on the ratio ``p``, ``sum((n - e) * (p - 1)) / sum(e * (p - 1)**2)``
        (``e`` expected; clipped to [0, 1]), weighted by the uses against
        :data:`PRIOR_TRUST_USES`."""
        dev = np.asarray(ratio, dtype=float) - 1.0
        n = np.asarray(weighted_count, dtype=float)
        e = np.asarray(expected, dtype=float)
        info = float(np.sum(e * dev**2))
        total = float(n.sum())
        if info <= 0 or total <= 0:
            return 1.0
        slope = float(np.clip(np.sum((n - e) * dev) / info, 0.0, 1.0))
        return (PRIOR_TRUST_USES + total * slope) / (PRIOR_TRUST_USES + total)

    def value(
        self,
        importance: ArrayLike,
        uses: ArrayLike,
        weighted_count: ArrayLike,
        age_days: ArrayLike,
        protected: ArrayLike | bool = False,
        use_count: ArrayLike | None = None,
    ) -> NDArray[np.float64]:
        """``need / (1 + need) + 10 * protected`` (see :meth:`need`)."""
        need = self.need(importance, uses, weighted_count, age_days, use_count)
        return need / (1.0 + need) + PROTECTED_BONUS * np.asarray(protected, dtype=float)

    def score(
        self, inputs: KeepInputs, importance: NDArray[np.float64], protected: NDArray[np.bool_]
    ) -> NDArray[np.float64]:
        """:meth:`value` of ``inputs``: each access weighed by its kind, or without an access
        history each one a use (:func:`decayed_uses`)."""
        if inputs.use_ages is not None and inputs.use_weights is not None:
            uses = np.array(
                [
                    float(np.sum(w * np.maximum(a, MIN_DAYS) ** -DECAY))
                    for a, w in zip(inputs.use_ages, inputs.use_weights, strict=True)
                ]
            )
            count = np.array([float(np.sum(w)) for w in inputs.use_weights])
            real = np.array([float(np.sum(w[w >= USE_WEIGHT])) for w in inputs.use_weights])
        else:
            uses = decayed_uses(inputs.elapsed_days, inputs.age_days, inputs.access_count)
            count = real = inputs.access_count
        return self.value(importance, uses, count, inputs.age_days, protected, use_count=real)


def exposure(age_days: ArrayLike) -> NDArray[np.float64]:
    """``integral_0^age max(t, MIN_DAYS) ** -DECAY dt``: the decayed uses of one use a day."""
    decay = DECAY
    a = np.maximum(np.asarray(age_days, dtype=float), 0.0)
    e = MIN_DAYS
    head = np.minimum(a, e) * e**-decay
    tail = (np.maximum(a, e) ** (1 - decay) - e ** (1 - decay)) / (1 - decay)
    return head + tail


def decayed_uses(
    elapsed_days: ArrayLike, age_days: ArrayLike, uses: ArrayLike
) -> NDArray[np.float64]:
    """``sum_j t_j ** -d`` over a memory's ``n`` uses from their count alone: Petrov's (2006)
    approximation of ACT-R's base level, ``t1**-d + (n - 1) * (L**(1-d) - t1**(1-d)) / ((1 - d)
    * (L - t1))`` (``t1`` days since the last use, ``L`` since creation); 0 for ``n = 0``."""
    decay = DECAY
    t1 = np.maximum(np.asarray(elapsed_days, dtype=float), MIN_DAYS)
    life = np.maximum(np.asarray(age_days, dtype=float), t1)
    n = np.asarray(uses, dtype=float)
    span = life - t1
    spread = np.divide(
        life ** (1 - decay) - t1 ** (1 - decay),
        (1 - decay) * span,
        out=t1**-decay,  # the limit when every use happened at the last one
        where=span > 1e-9,
    )
    return np.where(n > 0, t1**-decay + np.maximum(n - 1.0, 0.0) * spread, 0.0)


def effective_importance(inputs: KeepInputs, stats: TermStats | None = None) -> NDArray[np.float64]:
    """Given importance where there is one, else :func:`content_importance` of the text."""
    auto = content_importance(inputs.texts, stats)
    if inputs.importance is None:
        return auto
    return np.where(np.isnan(inputs.importance), auto, inputs.importance)


def protected_mask(inputs: KeepInputs, importance: ArrayLike) -> NDArray[np.bool_]:
    """The heat model's protection rule (caveat/goal layer, mission altitude, importance >= 0.9)."""
    n = len(inputs)
    layer = inputs.layer if inputs.layer is not None else ("context",) * n
    altitude = inputs.altitude if inputs.altitude is not None else ("implementation",) * n
    if n == 0:
        return np.zeros(0, bool)
    rule = HeatModel.is_protected
    return np.asarray(rule(layer=list(layer), importance=importance, altitude=list(altitude)))


def keep_scores(
    inputs: KeepInputs,
    names: Sequence[str] = KEEP_SCORES,
    *,
    rng: np.random.Generator | int | None = 0,
    stats: TermStats | None = None,
    fsrs: FSRS6 | None = None,
    heat: HeatModel | None = None,
) -> dict[str, NDArray[np.float64]]:
    """Keep scores (higher = keep) of every memory, one array per name of :data:`KEEP_SCORES`.

    ``rng`` seeds the ``random`` baseline; ``stats`` are the corpus statistics of content
    importance and ``idf`` (default: the memories' texts); ``fsrs`` and ``heat`` default to
    FSRS-6's default weights and the calibrated heat model.
    """
    unknown = [n for n in names if n not in KEEP_SCORES]
    if unknown:
        raise ValueError(f"unknown keep score {unknown[0]!r}; available: {list(KEEP_SCORES)}")
    if not isinstance(inputs, KeepInputs):
        raise TypeError(f"inputs must be KeepInputs, got {type(inputs).__name__}")
    stats = TermStats.from_texts(inputs.texts) if stats is None else stats
    heat = heat or HeatModel()
    out: dict[str, NDArray[np.float64]] = {}
    need_importance = any(n in ("memlab", "heat") for n in names)
    importance = effective_importance(inputs, stats) if need_importance else None
    for name in names:
        if name == "memlab":
            assert importance is not None
            out[name] = MemlabKeep().score(inputs, importance, protected_mask(inputs, importance))
        elif name == "fsrs6":
            fsrs = fsrs or FSRS6()
            r = fsrs.retrievability(elapsed_days=inputs.elapsed_days, stability=inputs.stability)
            out[name] = np.asarray(r, float)
        elif name == "heat":
            assert importance is not None
            t, imp = inputs.elapsed_days, importance
            h = heat.heat(elapsed_days=t, stability=inputs.stability)
            risk = heat.risk(heat=h, importance=imp, elapsed_days=t, altitude="implementation")
            out[name] = -risk / (1.0 + risk) + PROTECTED_BONUS * protected_mask(inputs, importance)
        elif name == "exponential":
            model = ExponentialModel()
            out[name] = model.retention(
                elapsed_days=inputs.elapsed_days, strength=model.strength_after(inputs.access_count)
            )
        elif name == "recency":
            out[name] = -inputs.age_days
        elif name == "random":
            out[name] = np.random.default_rng(rng).uniform(size=len(inputs))
        elif name == "length":
            out[name] = np.array([len(t) for t in inputs.texts], dtype=float)
        elif name == "idf":
            plain = Informativeness(rare_bonus=0.0, entity_bonus=0.0, number_bonus=0.0)
            out[name] = plain.mass(list(inputs.texts), stats)
    return out


def keep_mask(
    scores: ArrayLike, keep: float | int, order_ids: ArrayLike | None = None
) -> NDArray[np.bool_]:
    """Which memories a budget keeps: the top ``keep`` by score.

    ``keep`` is a share in (0, 1] (rounded to whole memories, at least one) or a count >= 1
    (an int). Ties are broken by ``order_ids`` descending (the newest memory first when ids
    grow with time), else by position, later first.
    """
    s = np.asarray(scores, dtype=float)
    n = len(s)
    if np.isnan(s).any():
        raise ValueError("scores contain NaN")
    if isinstance(keep, bool):
        raise TypeError("keep must be a share in (0, 1] or a count >= 1, not a bool")
    if isinstance(keep, (int, np.integer)):
        if keep < 1:
            raise ValueError(f"keep count must be >= 1, got {keep!r}")
        n_keep = min(int(keep), n)
    else:
        if not 0.0 < float(keep) <= 1.0:
            raise ValueError(f"keep share must be in (0, 1], got {keep!r}")
        n_keep = n if float(keep) >= 1.0 else max(1, int(round(float(keep) * n)))
    ids = np.arange(n) if order_ids is None else np.asarray(order_ids)
    if ids.shape != (n,):
        raise ValueError(f"order_ids has shape {ids.shape}, expected ({n},)")
    order = np.lexsort((-ids, -s))
    kept = np.zeros(n, bool)
    kept[order[:n_keep]] = True
    return kept
