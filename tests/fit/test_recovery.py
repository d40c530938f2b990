from __future__ import annotations

import numpy as np
import pytest

from memlab.fit.recovery import ALTERNATIVE_WEIGHTS, recover, simulate_reviews
from memlab.models.fsrs6 import FSRS6


def test_simulated_log_is_well_formed() -> None:
    data = simulate_reviews(n_cards=50, reviews_per_card=5, seed=3)
    frame = data.frame
    assert data.report.cards == 50
    assert (frame.groupby("card_id").size() >= 5).all()
    assert frame["day"].is_monotonic_increasing
    scheduled = frame["true_r"].notna()
    assert (frame.loc[scheduled, "elapsed_days"] >= 1).all()
    # same-day relearning reviews follow lapses
    assert (frame["elapsed_days"] == 0).any()
    with pytest.raises(ValueError, match="desired_retention"):
        simulate_reviews(desired_retention=1.5)
    with pytest.raises(ValueError, match="first_grades"):
        simulate_reviews(first_grades=(0.5, 0.5, 0.5, 0.5))
    with pytest.raises(TypeError):  # two counts by position could be swapped unnoticed
        simulate_reviews(None, 50, 5)  # type: ignore[misc]
    with pytest.raises(TypeError):
        recover(None, 50, 5)  # type: ignore[misc]


def test_true_retrievability_matches_model() -> None:
    data = simulate_reviews(ALTERNATIVE_WEIGHTS, n_cards=40, reviews_per_card=6, seed=4)
    frame = data.frame
    p = FSRS6(ALTERNATIVE_WEIGHTS)
    from memlab.fit.fsrs6 import predict_fsrs6

    predicted = predict_fsrs6(p, frame)
    known = frame["true_r"].notna().to_numpy()
    np.testing.assert_allclose(predicted[known], frame["true_r"].to_numpy()[known], rtol=1e-12)


def test_recovery_of_predicted_r() -> None:
    result = recover(ALTERNATIVE_WEIGHTS, n_cards=400, reviews_per_card=8, seed=5)
    assert result.r_mae < 0.03
    # the fit explains the outcomes about as well as the truth, and better than the defaults
    assert result.log_loss_fitted < result.log_loss_true + 0.005
    assert result.log_loss_fitted < result.log_loss_default
    assert len(result.weight_errors) == 21
