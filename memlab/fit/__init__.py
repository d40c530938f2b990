"""Fitting: review-log loading, metrics, FSRS-6 and curve fitters, gate fitting, many-group fits."""

from memlab.fit.data import Histories, LoadReport, ReviewData, histories, load_reviews, time_split
from memlab.fit.fsrs6 import FSRS6Fitter, predict_fsrs6, score_fsrs6
from memlab.fit.metrics import auc, calibration_table, log_loss, rmse_bins

__all__ = [
    "FSRS6Fitter",
    "Histories",
    "LoadReport",
    "ReviewData",
    "auc",
    "calibration_table",
    "histories",
    "load_reviews",
    "log_loss",
    "predict_fsrs6",
    "rmse_bins",
    "score_fsrs6",
    "time_split",
]
