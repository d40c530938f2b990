"""Forgetting policies: a memory model, gate thresholds and a forgetting budget.

A budget forgets the lowest keep scores beyond ``max_memories``, and/or memories whose
retention fell below ``min_retention``; with ``protect_important``, importance >= 0.9 is never
forgotten.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memlab.gate import Gate
from memlab.models._validation import integer
from memlab.models.exponential import ExponentialModel
from memlab.models.fsrs6 import GOOD
from memlab.models.heat import PROTECTED_IMPORTANCE, HeatModel

#: The built-in models a :class:`Policy` names (the keys of :data:`SCORERS`).
MODELS: tuple[str, ...] = ("fsrs6", "heat", "exponential", "lru", "memlab", "none")


@dataclass
class MemoryState:
    """Arrays over memory slots (zeros until set; grown by doubling)."""

    last_access: NDArray[np.float64]
    stability: NDArray[np.float64]
    difficulty: NDArray[np.float64]
    importance: NDArray[np.float64]
    access_count: NDArray[np.float64]
    created: NDArray[np.float64]

    @classmethod
    def empty(cls, capacity: int) -> MemoryState:
        return cls(*(np.zeros(capacity) for _ in fields(cls)))

    def grow(self, capacity: int) -> None:
        for f in fields(self):
            old = getattr(self, f.name)
            setattr(self, f.name, np.concatenate([old, np.zeros(capacity - len(old))]))


class Scorer:
    """How a model scores and updates memories, vectorised over slots (these defaults: LRU's)."""

    def create(self, st: MemoryState, i: int, now: float, importance: float) -> None:
        st.last_access[i] = now
        st.importance[i] = importance

    def access(self, st: MemoryState, idx: NDArray[np.int64], now: NDArray[np.float64]) -> None:
        """One access of each memory ``idx`` (distinct) at times ``now``."""
        st.last_access[idx] = now

    def retention(
        self, st: MemoryState, idx: NDArray[np.int64], now: float
    ) -> NDArray[np.float64] | None:
        """Retention in [0, 1] (None if the model has none)."""
        return None

    def rank(self, st: MemoryState, idx: NDArray[np.int64], now: float) -> NDArray[np.float64]:
        """Score ranking candidates in retrieval (higher first): retention, else last access."""
        r = self.retention(st, idx, now)
        return st.last_access[idx] if r is None else r

    def keep(self, st: MemoryState, idx: NDArray[np.int64], now: float) -> NDArray[np.float64]:
        """Score used to choose what to forget (lowest forgotten first)."""
        return self.rank(st, idx, now)


class FSRS6Scorer(Scorer):
    def __init__(self, weights: Any = None) -> None:
        from memlab.models.fsrs6 import FSRS6  # imported lazily: the other policies do not need it

        self.model = FSRS6(weights) if weights is not None else FSRS6()
        s0, d0 = self.model.review(stability=np.nan, difficulty=np.nan, elapsed_days=0, grade=GOOD)
        self._s0, self._d0 = float(s0), float(d0)  # a scalar review gives scalars

    def create(self, st: MemoryState, i: int, now: float, importance: float) -> None:
        super().create(st, i, now, importance)
        st.stability[i], st.difficulty[i] = self._s0, self._d0

    def access(self, st: MemoryState, idx: NDArray[np.int64], now: NDArray[np.float64]) -> None:
        t = np.maximum(now - st.last_access[idx], 0.0)
        st.stability[idx], st.difficulty[idx] = self.model.review(
            stability=st.stability[idx], difficulty=st.difficulty[idx], elapsed_days=t, grade=GOOD
        )
        st.last_access[idx] = now

    def retention(self, st: MemoryState, idx: NDArray[np.int64], now: float) -> NDArray[np.float64]:
        t, s = np.maximum(now - st.last_access[idx], 0.0), st.stability[idx]
        return np.asarray(self.model.retrievability(elapsed_days=t, stability=s), dtype=float)


class ExponentialScorer(Scorer):
    def __init__(self, **params: Any) -> None:
        self.model = ExponentialModel(**params)

    def create(self, st: MemoryState, i: int, now: float, importance: float) -> None:
        super().create(st, i, now, importance)
        st.stability[i] = self.model.initial_strength

    def access(self, st: MemoryState, idx: NDArray[np.int64], now: NDArray[np.float64]) -> None:
        st.stability[idx] = self.model.recall(st.stability[idx])
        st.last_access[idx] = now

    def retention(self, st: MemoryState, idx: NDArray[np.int64], now: float) -> NDArray[np.float64]:
        t = np.maximum(now - st.last_access[idx], 0.0)
        return self.model.retention(elapsed_days=t, strength=st.stability[idx])


class HeatScorer(Scorer):
    def __init__(self, **params: Any) -> None:
        self.model = HeatModel(**params)

    def retention(self, st: MemoryState, idx: NDArray[np.int64], now: float) -> NDArray[np.float64]:
        return self.model.heat(elapsed_days=np.maximum(now - st.last_access[idx], 0.0)) / 100.0

    def keep(self, st: MemoryState, idx: NDArray[np.int64], now: float) -> NDArray[np.float64]:
        # highest risk forgotten first; among equal risk (e.g. zero), the coldest first
        d = np.maximum(now - st.last_access[idx], 0.0)
        h, imp = self.model.heat(elapsed_days=d), st.importance[idx]
        risk = self.model.risk(heat=h, importance=imp, elapsed_days=d, altitude="implementation")
        return -risk + 1e-9 * self.retention(st, idx, now)


class MemlabKeepScorer(FSRS6Scorer):
    """memlab's default keep score on the simulator's state.

    Every access the simulator makes is a real use (an answer used, or the fact stated again);
    the memories have no texts, so the prior is the workload's importance, weighted by
    ``importance_weight`` in [0, 1] (0: a flat prior). Retrieval ranks by last access, as LRU
    does.
    """

    def __init__(self, importance_weight: float = 1.0) -> None:
        from memlab.keep import MemlabKeep

        super().__init__()
        if not 0.0 <= float(importance_weight) <= 1.0:
            raise ValueError(f"importance_weight must lie in [0, 1], got {importance_weight!r}")
        self.importance_weight = float(importance_weight)
        self.keeper = MemlabKeep()

    def access(self, st: MemoryState, idx: NDArray[np.int64], now: NDArray[np.float64]) -> None:
        super().access(st, idx, now)
        st.access_count[idx] += 1.0

    def rank(self, st: MemoryState, idx: NDArray[np.int64], now: float) -> NDArray[np.float64]:
        return st.last_access[idx]

    def keep(self, st: MemoryState, idx: NDArray[np.int64], now: float) -> NDArray[np.float64]:
        from memlab.keep import decayed_uses

        elapsed = np.maximum(now - st.last_access[idx], 0.0)
        age = np.maximum(now - st.created[idx], 0.0)
        imp = st.importance[idx]
        w = self.importance_weight
        prior = w * imp + (1.0 - w) * (float(imp.mean()) if len(imp) else 0.0)
        count = st.access_count[idx]
        uses = decayed_uses(elapsed, age, count)
        return self.keeper.value(prior, uses, count, age)


#: Model name -> Scorer factory; add your own law (``SCORERS["mine"] = MyScorer``) before use.
SCORERS: dict[str, Any] = {
    "fsrs6": FSRS6Scorer,
    "heat": HeatScorer,
    "exponential": ExponentialScorer,
    "lru": Scorer,
    "memlab": MemlabKeepScorer,
    "none": Scorer,  # ranks as LRU, never forgets (forget_mask)
}


@dataclass(frozen=True)
class Policy:
    """A memory model with gate thresholds and a forgetting budget.

    Parameters
    ----------
    model : {"fsrs6", "heat", "exponential", "lru", "memlab", "none"} or a name added to SCORERS
        The memory model that ranks memories and chooses what to forget ("none" never forgets).
    max_memories : int, optional
        Cap of each daily forgetting sweep (protected memories are kept even beyond it).
    min_retention : float, optional
        Forget memories whose retention is below this (fsrs6, exponential, heat/100).
    gate : Gate
        Thresholds deciding REINFORCE / UPDATE / CREATE on a write.
    protect_important : bool
        Never forget memories of importance >= 0.9.
    k : int
        Retrieval depth of hit@k.
    params : dict
        Model parameters (``FSRS6`` weights as ``weights=``, ``HeatModel`` or ``ExponentialModel``
        fields, or the memlab model's ``importance_weight``).
    name : str, optional
        Label in result tables (default: the model, plus the budget).
    """

    model: str = "fsrs6"
    max_memories: int | None = None
    min_retention: float | None = None
    gate: Gate = field(default_factory=Gate)
    protect_important: bool = True
    k: int = 5
    params: dict[str, Any] = field(default_factory=dict)
    name: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or self.model not in SCORERS:
            raise ValueError(f"model must be one of {tuple(SCORERS)} (SCORERS), got {self.model!r}")
        if self.max_memories is not None:  # kept as int, as k is: to_dict() is JSON
            object.__setattr__(self, "max_memories", integer(self.max_memories, "max_memories", 1))
        if self.model == "none" and self.max_memories is not None:
            raise ValueError("model 'none' never forgets: it takes no max_memories")
        if self.min_retention is not None:
            if self.model in ("lru", "none"):
                raise ValueError(f"min_retention needs a model with retention, not {self.model!r}")
            if not isinstance(self.min_retention, Real) or not 0 <= self.min_retention <= 1:
                raise ValueError(f"min_retention must be in [0, 1], got {self.min_retention!r}")
        if not isinstance(self.protect_important, bool):
            raise TypeError(f"protect_important must be a bool, got {self.protect_important!r}")
        if not isinstance(self.gate, Gate):
            raise TypeError(f"gate must be a memlab.gate.Gate, got {type(self.gate).__name__}")
        object.__setattr__(self, "k", integer(self.k, "k", low=1))
        if not isinstance(self.params, dict):
            raise TypeError("params must be a dict")
        try:
            self.scorer()  # validates params now
        except TypeError as error:
            raise TypeError(f"model {self.model!r} rejects params {sorted(self.params)}") from error

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        budget = []
        if self.max_memories is not None:
            budget.append(f"cap={self.max_memories}")
        if self.min_retention is not None:
            budget.append(f"R>={self.min_retention:g}")
        return self.model + (f"[{','.join(budget)}]" if budget else "")

    @property
    def has_budget(self) -> bool:
        return self.model != "none" and (
            self.max_memories is not None or self.min_retention is not None
        )

    def scorer(self) -> Scorer:
        return SCORERS[self.model](**self.params)

    def to_dict(self) -> dict[str, Any]:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return {
            **values,
            "gate": self.gate.to_dict(),
            "params": dict(self.params),
            "name": self.label,
        }

    @classmethod
    def from_dict(cls, source: dict[str, Any]) -> Policy:
        values = dict(source)
        if "gate" in values and isinstance(values["gate"], dict):
            values["gate"] = Gate.from_dict(values["gate"])
        return cls(**values)


def forget_mask(
    policy: Policy, scorer: Scorer, st: MemoryState, idx: NDArray[np.int64], now: float
) -> NDArray[np.bool_]:
    """Which of the memories ``idx`` (alive) the policy forgets in a sweep at ``now``."""
    out = np.zeros(len(idx), dtype=bool)
    if policy.model == "none" or len(idx) == 0:
        return out
    protected = (st.importance[idx] >= PROTECTED_IMPORTANCE) & bool(policy.protect_important)
    if policy.min_retention is not None:
        r = scorer.retention(st, idx, now)
        assert r is not None
        out |= r < policy.min_retention
    out &= ~protected
    if policy.max_memories is not None:
        excess = int((~out).sum()) - policy.max_memories
        if excess > 0:
            candidates = np.flatnonzero(~out & ~protected)
            if len(candidates):
                keep = scorer.keep(st, idx[candidates], now)
                # lowest keep score first; ties: the oldest slot first
                order = np.lexsort((idx[candidates], keep))
                out[candidates[order[: min(excess, len(candidates))]]] = True
    return out
