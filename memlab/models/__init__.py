"""Pure, vectorised numpy models of memory: no I/O, no plotting, no store.

``memlab.models`` imports nothing from the rest of memlab.

- :class:`FSRS6` — the 21-weight FSRS-6 power-law model (parity with py-fsrs 6.3.2).
- :class:`FSRS7` — the 34-weight, two-trace FSRS-7 model (from its published specification).
- :class:`HeatModel` — Ebbinghaus's savings curve as 0-100 heat, with forgetting risk.
- :class:`ExponentialModel` — ``exp(-t/S)`` with MemoryBank's strength rule, the baseline.
- :class:`HLR`, :class:`ACTR`, :class:`DASH`, :class:`SM2`, :func:`moving_average` — the field's
  recall models beside FSRS-6, as the srs-benchmark runs them (:mod:`memlab.models.field`).
- :class:`DualStrength` — Bjork's storage and retrieval strength, accessibility, states.
- :func:`get_curve` / :func:`curve_table` — the forgetting curves side by side, by name.
- :func:`elapsed_days` — review timestamps to whole days ("24h" as py-fsrs, "anki" calendar days).
"""

from memlab.models.curves import (
    ExponentialCurve,
    ForgettingCurve,
    FSRS6Curve,
    HeatCurve,
    available_curves,
    curve_table,
    get_curve,
    register_curve,
)
from memlab.models.days import elapsed_days, elapsed_days_by_card
from memlab.models.exponential import ExponentialModel
from memlab.models.field import ACTR, DASH, HLR, SM2, moving_average
from memlab.models.fsrs6 import DEFAULT_WEIGHTS, FSRS6, FSRS6Trace, pad_histories
from memlab.models.fsrs7 import FSRS7, FSRS7Trace
from memlab.models.heat import HeatAssessment, HeatModel
from memlab.models.strength import DualStrength

__all__ = [
    "ACTR",
    "DASH",
    "DEFAULT_WEIGHTS",
    "DualStrength",
    "ExponentialCurve",
    "ExponentialModel",
    "FSRS6",
    "FSRS6Curve",
    "FSRS6Trace",
    "FSRS7",
    "FSRS7Trace",
    "HLR",
    "SM2",
    "ForgettingCurve",
    "HeatAssessment",
    "HeatCurve",
    "HeatModel",
    "available_curves",
    "curve_table",
    "elapsed_days",
    "elapsed_days_by_card",
    "get_curve",
    "moving_average",
    "pad_histories",
    "register_curve",
]
