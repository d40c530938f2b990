"""Fitting: review logs, metrics, the FSRS-6 / FSRS-7 / curve / field fitters, gates, many fits.

Entry points: :func:`load_reviews` (py-fsrs CSV, srs-benchmark revlogs, Anki files) into
:class:`ReviewData`; :class:`FSRS6Fitter`, :class:`FSRS7Fitter`, :class:`HeatFitter`,
:class:`ExponentialFitter` and the field's models (:mod:`memlab.fit.field`);
:func:`compare_models`, :func:`evaluate_models`, :func:`evaluate_benchmark`,
:func:`evaluate_fsrs6` (:mod:`memlab.fit.protocol`); :func:`fit_gate`, :class:`LearnedGate`,
:func:`evaluate_gates`; :func:`fit_many`; :func:`recover`; :func:`fit_access_log` (a memory
store's access log, :meth:`memlab.store.MemoryStore.fit`).
"""

from memlab.fit.access import (
    AccessFit,
    NotEnoughReviewsError,
    fit_access_log,
    load_access_log,
    review_log,
)
from memlab.fit.anki import read_anki  # registers the Anki reader with load_reviews
from memlab.fit.base import CurveFitter  # subclass it to fit your own law
from memlab.fit.compare import (
    Evaluation,
    ExponentialFitter,
    HeatFitter,
    ModelResult,
    compare_models,
    evaluate_benchmark,
    evaluate_fsrs6,
    evaluate_models,
    model_registry,
)
from memlab.fit.data import Histories, LoadReport, ReviewData, histories, load_reviews, time_split
from memlab.fit.field import (
    ACTRFitter,
    AverageFitter,
    DASHFitter,
    HLRFitter,
    MovingAverageFitter,
    SM2Scheduler,
)
from memlab.fit.fsrs6 import FSRS6Fitter, predict_fsrs6, score_fsrs6
from memlab.fit.fsrs7 import FSRS7Fitter
from memlab.fit.gating import (
    FittedGate,
    LearnedGate,
    evaluate_gates,
    fit_gate,
    load_stsb,
    pair_similarities,
)
from memlab.fit.many import fit_fsrs6_group, fit_many
from memlab.fit.metrics import (
    auc,
    calibration_table,
    confusion_matrix,
    log_loss,
    macro_f1,
    rmse_bins,
    score_rows,
)
from memlab.fit.protocol import ProtocolResult, benchmark_rows
from memlab.fit.recovery import RecoveryResult, recover, simulate_reviews

__all__ = [
    "read_anki",
    "ACTRFitter",
    "AccessFit",
    "AverageFitter",
    "CurveFitter",
    "DASHFitter",
    "HLRFitter",
    "MovingAverageFitter",
    "SM2Scheduler",
    "Evaluation",
    "ExponentialFitter",
    "FSRS6Fitter",
    "FSRS7Fitter",
    "FittedGate",
    "HeatFitter",
    "Histories",
    "LearnedGate",
    "LoadReport",
    "NotEnoughReviewsError",
    "ModelResult",
    "ProtocolResult",
    "RecoveryResult",
    "ReviewData",
    "auc",
    "benchmark_rows",
    "calibration_table",
    "compare_models",
    "confusion_matrix",
    "evaluate_benchmark",
    "evaluate_fsrs6",
    "evaluate_gates",
    "fit_access_log",
    "evaluate_models",
    "fit_fsrs6_group",
    "fit_gate",
    "fit_many",
    "histories",
    "load_access_log",
    "load_reviews",
    "load_stsb",
    "log_loss",
    "macro_f1",
    "model_registry",
    "pair_similarities",
    "predict_fsrs6",
    "recover",
    "review_log",
    "rmse_bins",
    "score_fsrs6",
    "score_rows",
    "simulate_reviews",
    "time_split",
]
