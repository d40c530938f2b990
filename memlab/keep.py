"""Keep scores: which memories a forgetting budget keeps, by name.

A budget keeps the share (or number) of memories with the highest keep score. The scores,
all computed from what a store knows about each memory (:class:`KeepInputs`):

=================  ===========================================================================
name               keep score (higher = kept first)
=================  ===========================================================================
``memlab``         the default, :func:`memlab_keep` - importance (given, else from content),
                   use and retention combined; protected memories first
``fsrs6``          FSRS-6 retention R(t, S) at the time of the sweep
``heat``           minus Linksee's forgetting risk (heat with stability, importance as above)
``exponential``    MemoryBank's ``exp(-t / S)``, S = 1 + number of accesses
``recency``        creation time (newest first)
``random``         a seeded uniform draw
``length``         number of characters of the text
``idf``            IDF mass of the text against the memories' own corpus (no bonuses)
=================  ===========================================================================

**The default keep score** (``memlab``, :class:`MemlabKeep`) is

``keep = importance + use_weight * need + 10 * protected``

- ``importance`` in [0, 1]: the given value where there is one, else the content importance
  :func:`memlab.informativeness.content_importance` of the memory's text (in [0, 0.8)),
  judged against the corpus of the memories being swept;
- ``need`` in (0, 1): retention from use, ACT-R's base-level activation
  (:func:`activation_need`) - every use of the memory counts and decays as ``t ** -0.8``, so
  recent and frequent use both keep a memory; ``use_weight`` = 0.1;
- ``protected``: layer ``caveat``/``goal``, altitude ``mission`` or importance >= 0.9 - such
  memories are kept before every other.

Chosen on LoCoMo dev5 after replay (``experiments/results/locomo_dev5_budget.md``): there the
content decides (questions reach the whole history; use and age alone keep less than chance),
so importance carries the most weight and use orders memories of alike content. On the
simulated agent workload (``experiments/results/sim_policies.md``) the workload's given
importance says nothing about which facts are asked, and the same score loses to LRU; its
use term alone (``importance`` weight 0) matches LRU. Both rows are reported there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from memlab.informativeness import TermStats, content_importance, informativeness
from memlab.models.exponential import ExponentialModel
from memlab.models.fsrs6 import FSRS6
from memlab.models.heat import ALTITUDES, LAYERS, HeatModel

#: Keep scores selectable by name.
KEEP_SCORES: tuple[str, ...] = (
    "memlab",
    "fsrs6",
    "heat",
    "exponential",
    "recency",
    "random",
    "length",
    "idf",
)
#: The default keep score of a budget.
DEFAULT_KEEP = "memlab"
#: Added to the keep score of protected memories (every other score lies below 3).
PROTECTED_BONUS = 10.0


@dataclass(frozen=True)
class KeepInputs:
    """What the keep scores read of each memory: arrays of equal length.

    Parameters
    ----------
    elapsed_days : array
        Days since the last access (>= 0).
    age_days : array
        Days since creation (>= 0).
    stability : array
        FSRS-6 stability after the last access (days, > 0).
    access_count : array
        Accesses after creation (>= 0).
    texts : sequence of str
        The memories' texts.
    importance : array, optional
        Given importance in [0, 1], NaN where none was given (estimated from content).
    layer, altitude : sequence of str, optional
        Heat-model layer and altitude (protection); default ``context`` / ``implementation``.
    """

    elapsed_days: NDArray[np.float64]
    age_days: NDArray[np.float64]
    stability: NDArray[np.float64]
    access_count: NDArray[np.float64]
    texts: tuple[str, ...]
    importance: NDArray[np.float64] | None = None
    layer: tuple[str, ...] | None = None
    altitude: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        n = len(self.texts)
        for name in ("elapsed_days", "age_days", "stability", "access_count"):
            value = np.asarray(getattr(self, name), dtype=float)
            if value.shape != (n,):
                raise ValueError(f"{name} has shape {value.shape}, expected ({n},)")
            if np.isnan(value).any():
                raise ValueError(f"{name} contains NaN")
            if (value < 0).any():
                raise ValueError(f"{name} must be >= 0")
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
        """From ``MemoryStore.to_dataframe()`` columns at ``now`` (a timezone-aware datetime).

        With ``importance_given=False`` the frame's importance column is ignored (every
        importance is estimated from content).
        """
        at = pd.Timestamp(now)
        if at.tzinfo is None:
            raise ValueError("now must be timezone-aware")

        def days(column: str) -> NDArray[np.float64]:
            seconds = (at - frame[column]).dt.total_seconds().to_numpy(dtype=float)
            return np.maximum(seconds / 86400.0, 0.0)

        return cls(
            elapsed_days=days("last_access"),
            age_days=days("created_at"),
            stability=frame["stability"].to_numpy(dtype=float),
            access_count=frame["access_count"].to_numpy(dtype=float),
            texts=tuple(frame["content"].astype(str)),
            importance=frame["importance"].to_numpy(dtype=float) if importance_given else None,
            layer=tuple(frame["layer"]) if "layer" in frame else None,
            altitude=tuple(frame["altitude"]) if "altitude" in frame else None,
        )


@dataclass(frozen=True)
class MemlabKeep:
    """The default keep score (see the module docstring).

    Parameters
    ----------
    use_weight : float
        Weight of the use term, ACT-R's base-level need (:func:`activation_need`), in [0, 1).
    decay : float
        The base level's decay ``d`` in (0, 1) (ACT-R's default is 0.5).
    """

    use_weight: float = 0.1
    decay: float = 0.8

    def __post_init__(self) -> None:
        if not (0.0 <= self.use_weight < np.inf):
            raise ValueError(f"use_weight must be a finite number >= 0, got {self.use_weight!r}")
        if not (0.0 < self.decay < 1.0):
            raise ValueError(f"decay must lie in (0, 1), got {self.decay!r}")

    def value(
        self,
        importance: ArrayLike,
        access_count: ArrayLike,
        elapsed_days: ArrayLike,
        age_days: ArrayLike,
        protected: ArrayLike | bool = False,
    ) -> NDArray[np.float64]:
        """``importance + use_weight * need + 10 * protected`` (arrays over memories)."""
        imp = np.asarray(importance, dtype=float)
        need = activation_need(elapsed_days, age_days, access_count, self.decay)
        return imp + self.use_weight * need + PROTECTED_BONUS * np.asarray(protected, dtype=float)

    def score(
        self, inputs: KeepInputs, importance: NDArray[np.float64], protected: NDArray[np.bool_]
    ) -> NDArray[np.float64]:
        """:meth:`value` of :class:`KeepInputs` with the given importance and protection."""
        return self.value(
            importance, inputs.access_count, inputs.elapsed_days, inputs.age_days, protected
        )


def activation_need(
    elapsed_days: ArrayLike, age_days: ArrayLike, accesses: ArrayLike, decay: float = 0.8
) -> NDArray[np.float64]:
    """How likely a memory is needed now, from its uses: ACT-R's base-level activation.

    Anderson & Schooler (1991) found the odds that an item is needed follow
    ``sum_j t_j ** -d`` over its past uses ``j``. With only the count of uses, the days since
    the last one (``t1``) and since creation (``L``) at hand, Petrov's (2006) approximation
    ``odds = t1**-d + (n - 1) * (L**(1-d) - t1**(1-d)) / ((1 - d) * (L - t1))`` is used, with
    ``n = 1 + accesses`` (the creation counts as a use) and times floored at 0.001 days.
    Returns ``odds / (1 + odds)`` in (0, 1): recent and frequent use both raise it.
    """
    t1 = np.maximum(np.asarray(elapsed_days, dtype=float), 1e-3)
    life = np.maximum(np.asarray(age_days, dtype=float), t1)
    n = 1.0 + np.asarray(accesses, dtype=float)
    if not 0.0 < decay < 1.0:
        raise ValueError(f"decay must lie in (0, 1), got {decay!r}")
    span = life - t1
    spread = np.divide(
        life ** (1 - decay) - t1 ** (1 - decay),
        (1 - decay) * span,
        out=t1**-decay,  # the limit when every use happened at the last one
        where=span > 1e-9,
    )
    odds = t1**-decay + (n - 1.0) * spread
    return odds / (1.0 + odds)


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
    return np.asarray(HeatModel.is_protected(list(layer), importance, list(altitude)))


def keep_scores(
    inputs: KeepInputs,
    names: Sequence[str] = KEEP_SCORES,
    *,
    rng: np.random.Generator | int | None = 0,
    stats: TermStats | None = None,
    memlab: MemlabKeep | None = None,
    fsrs: FSRS6 | None = None,
    heat: HeatModel | None = None,
) -> dict[str, NDArray[np.float64]]:
    """Keep scores (higher = keep) of every memory, one array per name in ``names``.

    Parameters
    ----------
    inputs : KeepInputs
    names : sequence of str
        Any of :data:`KEEP_SCORES`.
    rng : Generator or int, optional
        Source of the ``random`` baseline (seeded: 0 by default).
    stats : TermStats, optional
        Corpus statistics for content importance and ``idf`` (default: the memories' texts).
    memlab : MemlabKeep, optional
        Weights of the default score.
    fsrs, heat : optional
        The FSRS-6 and heat models (defaults: FSRS-6 default weights, the calibrated heat).
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
            out[name] = (memlab or MemlabKeep()).score(
                inputs, importance, protected_mask(inputs, importance)
            )
        elif name == "fsrs6":
            out[name] = np.asarray(
                (fsrs or FSRS6()).retrievability(inputs.elapsed_days, inputs.stability), float
            )
        elif name == "heat":
            assert importance is not None
            h = heat.heat(inputs.elapsed_days, inputs.stability)
            risk = heat.risk(h, importance, inputs.elapsed_days, "implementation")
            out[name] = -risk + PROTECTED_BONUS * protected_mask(inputs, importance)
        elif name == "exponential":
            model = ExponentialModel()
            out[name] = model.retention(
                inputs.elapsed_days, model.strength_after(inputs.access_count)
            )
        elif name == "recency":
            out[name] = -inputs.age_days
        elif name == "random":
            out[name] = np.random.default_rng(rng).uniform(size=len(inputs))
        elif name == "length":
            out[name] = np.array([len(t) for t in inputs.texts], dtype=float)
        elif name == "idf":
            out[name] = _idf_mass(inputs.texts, stats)
    return out


def _idf_mass(texts: Sequence[str], stats: TermStats) -> NDArray[np.float64]:
    from memlab.informativeness import Informativeness

    plain = Informativeness(rare_bonus=0.0, entity_bonus=0.0, number_bonus=0.0)
    return plain.mass(list(texts), stats)


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


def informativeness_of(inputs: KeepInputs, stats: TermStats | None = None) -> NDArray[np.float64]:
    """Informativeness of each memory's text (convenience for tables)."""
    return informativeness(list(inputs.texts), stats)


__all__ = [
    "DEFAULT_KEEP",
    "KEEP_SCORES",
    "KeepInputs",
    "MemlabKeep",
    "PROTECTED_BONUS",
    "effective_importance",
    "informativeness_of",
    "keep_mask",
    "keep_scores",
    "protected_mask",
]
