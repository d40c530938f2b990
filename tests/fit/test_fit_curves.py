from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy.optimize import check_grad

from memlab.fit.compare import (
    ExponentialFitter,
    HeatFitter,
    compare_models,
    evaluate_models,
    exponential_objective,
    heat_objective,
    prior_successes,
)
from memlab.fit.data import load_reviews
from memlab.models.heat import HeatModel
from memlab.plot import plot_calibration

matplotlib.use("Agg")


def _synthetic_log(rng: np.random.Generator, recall) -> pd.DataFrame:
    rows = []
    start = pd.Timestamp("2024-01-01", tz="UTC")
    for card in range(400):
        time = start + pd.Timedelta(hours=int(rng.integers(0, 200)))
        rows.append((card, 3, time))
        n_success = 0
        for _ in range(4):
            gap = int(rng.integers(1, 40))
            time = time + pd.Timedelta(days=gap)
            ok = rng.random() < recall(gap, n_success)
            n_success += ok
            rows.append((card, 3 if ok else 1, time))
    frame = pd.DataFrame(rows, columns=["card_id", "review_rating", "review_time"])
    frame["review_time"] = frame["review_time"].map(lambda t: t.isoformat())
    return load_reviews(frame).frame


def test_exponential_fitter_recovers_parameters(rng: np.random.Generator) -> None:
    frame = _synthetic_log(rng, lambda t, n: np.exp(-t / (20.0 + 15.0 * n)))
    fitted = ExponentialFitter().fit(frame)
    assert fitted.params_["initial_strength"] == pytest.approx(20.0, rel=0.25)
    assert fitted.params_["strength_gain"] == pytest.approx(15.0, rel=0.35)
    p = fitted.predict(frame)
    assert np.isnan(p[frame["review"].to_numpy() == 0]).all()


def test_heat_fitter_improves_on_ebbinghaus_defaults(rng: np.random.Generator) -> None:
    truth = HeatModel(k=30.0, c=2.0, u_minutes=5.0)
    frame = _synthetic_log(rng, lambda t, n: float(truth.retention(elapsed_days=t)))
    fitted = HeatFitter().fit(frame)
    t = np.array([1.0, 5.0, 20.0, 40.0])
    np.testing.assert_allclose(
        fitted.model_.retention(elapsed_days=t), truth.retention(elapsed_days=t), atol=0.05
    )


@pytest.mark.parametrize("max_iter", [0, -1, 2.5, True])
def test_curve_fitters_refuse_a_max_iter_that_is_not_a_positive_integer(
    small_log, max_iter: object
) -> None:
    for fitter in (HeatFitter(max_iter=max_iter), ExponentialFitter(max_iter=max_iter)):
        with pytest.raises(ValueError, match="max_iter must be an int >= 1"):
            fitter.fit(small_log)


def test_gradients_are_exact(rng: np.random.Generator) -> None:
    t = rng.integers(1, 60, 200).astype(float)
    n = rng.integers(0, 5, 200).astype(float)
    y = (rng.random(200) < 0.7).astype(float)
    for theta in (np.log([1.84, 1.25, 1.0]), np.array([1.0, 0.3, 2.0])):
        assert (
            check_grad(
                lambda x: heat_objective(x, t, y)[0], lambda x: heat_objective(x, t, y)[1], theta
            )
            < 1e-6
        )
    for theta in (np.log([1.0, 1.0]), np.array([2.5, 1.5])):
        f = lambda x: exponential_objective(x, t, n, y)  # noqa: E731
        assert check_grad(lambda x, f=f: f(x)[0], lambda x, f=f: f(x)[1], theta) < 1e-6


def test_prior_successes() -> None:
    frame = pd.DataFrame(
        {"card_id": [1, 1, 1, 2, 1], "grade": [3, 3, 1, 3, 3], "review": [0, 1, 2, 0, 3]}
    )
    assert prior_successes(frame).tolist() == [0, 0, 1, 0, 1]


def test_compare_models_and_calibration_plot(small_log, josh_reviews_path) -> None:
    data = load_reviews(josh_reviews_path)
    evaluation = evaluate_models(data, holdout=0.2)
    table = evaluation.table()
    assert set(table.index.get_level_values("model")) == {
        "fsrs6_default",
        "fsrs6",
        "heat",
        "exponential",
    }
    assert list(table.columns) == ["log_loss", "rmse_bins", "auc", "n"]
    test = table.xs("test", level="split")
    assert test.loc["fsrs6", "log_loss"] < test.loc["fsrs6_default", "log_loss"] < 0.4516
    # FSRS-6 beats both simple curves on held-out reviews
    assert test.loc["fsrs6", "log_loss"] < min(
        test.loc["heat", "log_loss"], test.loc["exponential", "log_loss"]
    )
    assert (test["n"] == 1337).all()
    ax = plot_calibration(evaluation)
    assert len(ax.get_lines()) == 5  # diagonal + four models
    assert compare_models(small_log, holdout=0.25).shape == (8, 4)
    assert "fsrs6_default" in evaluation._repr_html_()
