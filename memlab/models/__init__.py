"""Pure, vectorised numpy models of memory: no I/O, no plotting, no store.

``memlab.models`` imports nothing from the rest of memlab: FSRS-6 (:class:`FSRS6`, parity with
py-fsrs 6.3.2), FSRS-7 (:class:`FSRS7`), Ebbinghaus heat (:class:`HeatModel`), the exponential
baseline (:class:`ExponentialModel`), the field's models (:mod:`memlab.models.field`), Bjork's
dual strength (:class:`DualStrength`), the curves by name (:func:`get_curve`) and the day
conventions (:func:`elapsed_days`).
"""

from memlab.models.curves import (
    ExponentialCurve,
    ForgettingCurve,
    FSRS6Curve,
    HeatCurve,
    curve_table,
    get_curve,
)
from memlab.models.days import elapsed_days, elapsed_days_by_card
from memlab.models.exponential import ExponentialModel
from memlab.models.field import ACTR, DASH, HLR, SM2, moving_average
from memlab.models.fsrs6 import DEFAULT_WEIGHTS, FSRS6, FSRS6Trace
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
    "curve_table",
    "elapsed_days",
    "elapsed_days_by_card",
    "get_curve",
    "moving_average",
]
