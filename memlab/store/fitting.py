"""The store's own parameters, fitted to its own access log.

:func:`access_log` reads the creations and accesses of one namespace (the columns of
:data:`memlab.fit.access.ACCESS_COLUMNS`); :func:`fit_dynamics` hands them to
:func:`memlab.fit.access.fit_access_log` (the rule of which accesses are reviews, and with
which grade, is there) and, when asked, runs and persists the fitted FSRS-6 weights.

``memlab.fit`` sits above the store in the layering; it is loaded here only when a fit is
asked for (importing the store never loads it), and it never loads the store.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

import pandas as pd

from memlab.models.fsrs6 import FSRS6
from memlab.store.core import StoreCore
from memlab.store.dynamics import Dynamics

if TYPE_CHECKING:
    from memlab.fit.access import AccessFit

#: Values of ``apply``: always, never (a report), or when the fit beats the current weights.
APPLY_MODES: tuple[bool | str, ...] = (True, False, "if_better")

#: The ``meta`` key the dynamics are persisted under.
DYNAMICS_KEY = "dynamics"


def set_dynamics(core: StoreCore, dynamics: Dynamics) -> None:
    """Run ``dynamics`` from now on and persist them (reopening keeps them)."""
    if not isinstance(dynamics, Dynamics):
        raise TypeError(f"dynamics must be a Dynamics, got {type(dynamics).__name__}")
    with core.write():
        core.set_meta(DYNAMICS_KEY, json.dumps(dynamics.to_dict()))
    core.set_dynamics(dynamics)  # once stored


def access_log(core: StoreCore) -> pd.DataFrame:
    """Creations and accesses of the namespace's memories, oldest first.

    Columns ``memory_id, event_id, at`` (UTC timestamps), ``kind`` (``create`` / ``access``),
    ``source`` (of an access: ``search``, ``feedback``, ``api``, ``reinforce``) and ``grade``
    (the FSRS-6 grade the store applied; NA at creation).
    """
    with core.read():
        rows = core.execute(
            "SELECT e.memory_id, e.id, e.at, e.kind, json_extract(e.data, '$.source'), e.grade"
            " FROM events e JOIN memories m ON m.id = e.memory_id"
            " WHERE m.namespace = ? AND e.kind IN ('create', 'access') ORDER BY e.at, e.id",
            (core.namespace,),
        ).fetchall()
    columns = ["memory_id", "event_id", "at", "kind", "source", "grade"]
    frame = pd.DataFrame([tuple(r) for r in rows], columns=columns)
    frame["memory_id"] = frame["memory_id"].astype("int64")
    frame["event_id"] = frame["event_id"].astype("int64")
    frame["at"] = pd.to_datetime(frame["at"].astype(float), unit="s", utc=True)
    frame["source"] = frame["source"].astype(object).where(frame["kind"] == "access", None)
    frame["grade"] = pd.array(frame["grade"], dtype="Int64")
    return frame


def fitted_dynamics(current: Dynamics, weights: Iterable[float]) -> Dynamics:
    """``current`` with the FSRS-6 ``weights``; heat keeps its band constants, and reads stability
    against the new memory's (``w2``) when it read it against the old one's."""
    fsrs = FSRS6(tuple(weights))
    heat = current.heat
    if heat.reference_stability == current.fsrs.weights[2]:
        heat = replace(heat, reference_stability=fsrs.weights[2])
    return replace(current, fsrs=fsrs, heat=heat)


def fit_dynamics(
    core: StoreCore,
    *,
    apply: bool | str = "if_better",
    min_reviews: int = 100,
    min_lapses: int = 5,
    l2: float | str = "auto",
    holdout: float = 0.2,
    sources: Iterable[str] | None = None,
) -> AccessFit:
    """Fit FSRS-6 to the access log (:func:`memlab.fit.access.fit_access_log`); the fitted
    weights become the store's dynamics (:func:`fitted_dynamics`), persisted, with
    ``apply=True``, or with ``apply="if_better"`` (the default) when they beat the store's
    current weights on the held-out reviews; ``apply=False`` only reports."""
    if apply not in APPLY_MODES or isinstance(apply, int) and not isinstance(apply, bool):
        raise TypeError(f"apply must be True, False or 'if_better', got {apply!r}")
    from memlab.fit.access import fit_access_log

    current = core.dynamics
    result = fit_access_log(
        access_log(core),
        current.fsrs,
        sources=sources,
        min_reviews=min_reviews,
        min_lapses=min_lapses,
        l2=l2,
        holdout=holdout,
    )
    if apply is True or (apply == "if_better" and result.improved):
        set_dynamics(core, fitted_dynamics(current, result.weights))
        result.applied = True
    return result


__all__ = [
    "APPLY_MODES",
    "DYNAMICS_KEY",
    "access_log",
    "fit_dynamics",
    "fitted_dynamics",
    "set_dynamics",
]
