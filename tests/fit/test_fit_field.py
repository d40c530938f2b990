"""Fitting the field's models: recovery, the AVG floor, bounds, gradients, bad input, compare."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import check_grad

from memlab.fit import evaluate_fsrs6, load_reviews
from memlab.fit.compare import (
    ExponentialFitter,
    compare_models,
    evaluate_benchmark,
    evaluate_models,
)
from memlab.fit.field import (
    ACTRFitter,
    AverageFitter,
    DASHFitter,
    HLRFitter,
    MovingAverageFitter,
    SM2Scheduler,
)
from memlab.fit.metrics import log_loss, scoreable_rows
from memlab.models.field import HLR

TRUTH = HLR(w_success=1.5, w_failure=-1.0, bias=2.0)


def _hlr_log(rng: np.random.Generator, cards: int = 300) -> pd.DataFrame:
    """Cards reviewed at random gaps of 1-40 days, recalled with HLR's probability."""
    rows = []
    start = pd.Timestamp("2024-01-01", tz="UTC")
    for card in range(cards):
        time = start + pd.Timedelta(hours=int(rng.integers(0, 200)))
        rows.append((card, 3, time))
        successes, failures = 1, 0
        for _ in range(5):
            gap = int(rng.integers(1, 41))
            time = time + pd.Timedelta(days=gap)
            ok = rng.random() < float(
                np.exp2(-gap / TRUTH.half_life(successes=successes, failures=failures))
            )
            successes, failures = successes + ok, failures + (not ok)
            rows.append((card, 3 if ok else 1, time))
    frame = pd.DataFrame(rows, columns=["card_id", "review_rating", "review_time"])
    frame["review_time"] = frame["review_time"].map(lambda t: t.isoformat())
    return load_reviews(frame).frame


@pytest.fixture(scope="module")
def hlr_log() -> pd.DataFrame:
    return _hlr_log(np.random.default_rng(20261206))


def test_hlr_recovers_its_parameters(hlr_log: pd.DataFrame) -> None:
    fitter = HLRFitter()
    assert fitter.fit(hlr_log) is fitter
    assert fitter.params_["w_success"] == pytest.approx(1.5, abs=0.4)
    assert fitter.params_["w_failure"] == pytest.approx(-1.0, abs=0.4)
    assert fitter.params_["bias"] == pytest.approx(2.0, abs=0.5)


def test_fitted_models_beat_avg_within_bounds(hlr_log: pd.DataFrame) -> None:
    evaluation = evaluate_models(hlr_log, models=["avg", "hlr", "dash", "act-r", "sm2"])
    test = evaluation.table().xs("test", level="split")["log_loss"]
    for name in ("hlr", "dash", "act-r"):
        assert test[name] < test["avg"] - 0.01, name
    for fitter in (HLRFitter(), DASHFitter(), ACTRFitter(), AverageFitter()):
        fitted = fitter.fit(hlr_log, ~evaluation.test)
        assert fitted is fitter
        for (low, high), value in zip(fitter.bounds, fitter.params_.values(), strict=True):
            assert low <= value <= high
        assert fitter.loss_ <= type(fitter)().fit(hlr_log, ~evaluation.test).loss_ + 1e-12
        assert fitter.n_train_ == int((scoreable_rows(hlr_log) & ~evaluation.test).sum())


def test_avg_is_the_training_mean(hlr_log: pd.DataFrame) -> None:
    fitted = AverageFitter().fit(hlr_log)
    y = hlr_log["grade"].to_numpy()[scoreable_rows(hlr_log)] >= 2
    assert fitted.params_["recall"] == pytest.approx(y.mean(), abs=1e-4)
    assert np.unique(fitted.predict(hlr_log)).size == 1


def test_unfitted_models_keep_their_constants(hlr_log: pd.DataFrame) -> None:
    rows = scoreable_rows(hlr_log)
    y = (hlr_log["grade"].to_numpy()[rows] >= 2).astype(float)
    moving = MovingAverageFitter().fit(hlr_log)
    assert moving.params_ == {"start": 1.2, "rate": 0.3}
    sm2 = SM2Scheduler().fit(hlr_log)
    assert sm2.params_ == {}
    for fitted in (moving, sm2):
        p = fitted.predict(hlr_log)
        assert not np.isnan(p[rows]).any()
        assert fitted.loss_ == pytest.approx(log_loss(y, p[rows]))


def test_exact_gradients(rng: np.random.Generator) -> None:
    t = rng.integers(1, 60, 300).astype(float)
    y = (rng.random(300) < 0.7).astype(float)
    x = np.column_stack([np.sqrt(rng.integers(0, 6, 300)), np.sqrt(rng.integers(0, 3, 300))])
    hlr_x = np.column_stack([x, np.ones(300)])
    fit = HLRFitter()
    f = lambda th: fit._objective(th, hlr_x, t, y)  # noqa: E731
    for theta in (np.array([2.58, -0.87, 2.72]), np.array([0.5, 0.3, 1.0])):
        assert check_grad(lambda th: f(th)[0], lambda th: f(th)[1], theta) < 1e-6
    dash_x = np.column_stack([np.log1p(rng.integers(0, 5, (300, 8))), np.ones(300)])
    dash = DASHFitter()
    theta = np.array(dash.default_init)
    f = lambda th: dash._objective(th, dash_x, y)  # noqa: E731
    assert check_grad(lambda th: f(th)[0], lambda th: f(th)[1], theta) < 1e-6


def test_bad_input_raises(hlr_log: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="not fitted"):
        HLRFitter().predict(hlr_log)
    with pytest.raises(ValueError, match="one entry per review"):
        DASHFitter().fit(hlr_log, np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match="one value per parameter"):
        HLRFitter(init=(1.0, 2.0)).fit(hlr_log)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="outside the bounds"):
        ACTRFitter(init=(0.1, 0.1, 0.1, 0.5, 0.1)).fit(hlr_log)
    with pytest.raises(ValueError, match="no scoreable reviews"):
        AverageFitter().fit(hlr_log, np.zeros(len(hlr_log), dtype=bool))


class _Constant:
    """A user's own model: any object with fit(reviews, mask) and predict(reviews)."""

    def fit(self, reviews, mask=None):
        self.params_ = {"p": 0.5}
        return self

    def predict(self, reviews):
        return np.full(len(reviews), 0.5)


def test_compare_models_takes_names_and_fitters(hlr_log: pd.DataFrame) -> None:
    table = compare_models(hlr_log, models={"hlr": "hlr", "coin": _Constant()})
    assert list(table.index.get_level_values("model").unique()) == ["hlr", "coin"]
    assert table.loc[("coin", "test"), "log_loss"] == pytest.approx(np.log(2))
    with pytest.raises(ValueError, match="unknown model 'gru'"):
        compare_models(hlr_log, models=["gru"])
    with pytest.raises(TypeError, match="needs fit"):
        compare_models(hlr_log, models={"x": object()})
    with pytest.raises(ValueError, match="no models"):
        compare_models(hlr_log, models=[])
    assert "_Constant" in compare_models(hlr_log, models=[_Constant()]).index.unique("model")


class _Forgetful(_Constant):
    def fit(self, reviews, mask=None):  # returns None, not the fitted object
        super().fit(reviews, mask)


def test_a_models_error_names_the_model(hlr_log: pd.DataFrame) -> None:
    for evaluate in (evaluate_models, evaluate_benchmark):
        with pytest.raises(AttributeError) as info:
            evaluate(hlr_log, models={"mine": _Forgetful()})
        assert any("in model 'mine'" in note for note in info.value.__notes__)
    with pytest.raises(ValueError, match=r"\(bounds of the logs\)"):
        ExponentialFitter(init=(1e9, 1.0)).fit(hlr_log)


def test_benchmark_protocol_matches_evaluate_fsrs6(josh_reviews_path) -> None:
    data = load_reviews(josh_reviews_path)
    table = evaluate_benchmark(data, models=["fsrs6", "avg"])
    reference = evaluate_fsrs6(data, protocol="srs-benchmark").metrics
    assert table.loc["fsrs6", "log_loss"] == pytest.approx(reference["log_loss"], rel=1e-9)
    assert table.loc["fsrs6", "n"] == table.loc["avg", "n"] == reference["n"]
    assert table.loc["avg", "auc"] == pytest.approx(0.5, abs=0.05)


@pytest.mark.parametrize(("convention", "expected"), [("continuous", 1 + 13 / 24), ("anki", 1.0)])
def test_elapsed_days_run_from_the_previous_kept_review(convention: str, expected: float) -> None:
    """A same-day review left out of a history does not shorten the next gap."""
    from memlab.fit.field import field_histories

    times = ["2024-01-01T08:00", "2024-01-06T08:00", "2024-01-06T20:00", "2024-01-07T21:00"]
    frame = pd.DataFrame({"card_id": 1, "review_rating": 3, "review_time": times})
    data = load_reviews(frame, convention=convention).frame
    h = field_histories(data)
    assert h.elapsed_days[0, 1] == 5.0
    assert h.elapsed_days[0, 2] == pytest.approx(expected, abs=1e-9)
    assert h.grades.shape == (1, 3)
