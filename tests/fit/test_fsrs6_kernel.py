"""The compiled FSRS-6 pass (numba) against the numpy reference pass, and the fitter on both."""

from __future__ import annotations

import numpy as np
import pytest
from fit_helpers import josh_log, random_histories

from memlab.fit import FSRS6Fitter, _fsrs6_grad, _fsrs6_kernel, histories, load_reviews, time_split
from memlab.models.fsrs6 import DEFAULT_WEIGHTS, LOWER_BOUNDS, UPPER_BOUNDS

pytestmark = pytest.mark.skipif(not _fsrs6_kernel.AVAILABLE, reason="numba is not installed")


def _random_weights(rng: np.random.Generator) -> np.ndarray:
    low, high = np.array(LOWER_BOUNDS), np.array(UPPER_BOUNDS)
    w = np.array(DEFAULT_WEIGHTS) + rng.normal(0, 0.15, 21) * (high - low)
    return np.clip(w, low + 0.05 * (high - low), high - 0.05 * (high - low))


def _both(w, grades, elapsed, scored, sample_weight=None):
    prepared = _fsrs6_grad.prepare(grades, elapsed, scored, sample_weight)
    fisher = np.zeros((21, 21))
    reference = _fsrs6_grad.loss_and_grad(w, prepared, fisher=fisher)
    cards = _fsrs6_kernel.CardArrays(grades, elapsed, scored, sample_weight)
    compiled = _fsrs6_kernel.loss_grad_fisher(w, cards, want_fisher=True)
    return (reference[0], reference[1], fisher), compiled


def _assert_same(reference, compiled) -> None:
    assert compiled[0] == pytest.approx(reference[0], rel=1e-12)
    scale = np.abs(reference[1]).max()
    np.testing.assert_allclose(compiled[1], reference[1], rtol=1e-9, atol=1e-12 * scale)
    np.testing.assert_allclose(
        compiled[2], reference[2], rtol=1e-9, atol=1e-12 * np.abs(reference[2]).max()
    )


@pytest.mark.parametrize("seed", range(6))
def test_kernel_equals_numpy_pass_on_random_histories(seed: int) -> None:
    rng = np.random.default_rng(500 + seed)
    grades, elapsed = random_histories(rng, n_cards=80, width=14, same_day=0.3)
    scored = (grades > 0) & (np.nan_to_num(elapsed, nan=0) >= 1)
    scored[:, 0] = False
    w = np.array(DEFAULT_WEIGHTS) if seed == 0 else _random_weights(rng)
    weight = rng.random(grades.shape) if seed % 2 else None
    _assert_same(*_both(w, grades, elapsed, scored, weight))
    # the loss alone (no derivatives) is the same number
    cards = _fsrs6_kernel.CardArrays(grades, elapsed, scored, weight)
    alone = _fsrs6_kernel.loss_grad_fisher(w, cards, want_grad=False)
    assert alone[0] == pytest.approx(_both(w, grades, elapsed, scored, weight)[0][0], rel=1e-12)
    assert not alone[1].any() and alone[2] is None


def test_kernel_equals_numpy_pass_on_josh() -> None:
    frame = load_reviews(josh_log()).frame
    h = histories(frame)
    rng = np.random.default_rng(7)
    for w in (np.array(DEFAULT_WEIGHTS), _random_weights(rng)):
        _assert_same(*_both(w, h.grades, h.elapsed_days, h.scoreable()))


def test_fitter_engines_agree_on_josh() -> None:
    frame = load_reviews(josh_log()).frame
    test = time_split(frame, 0.2)
    fast = FSRS6Fitter(engine="numba").fit(frame, ~test)
    slow = FSRS6Fitter(engine="numpy").fit(frame, ~test)
    assert fast.engine_used_ == "numba" and slow.engine_used_ == "numpy"
    np.testing.assert_allclose(fast.weights_, slow.weights_, rtol=1e-6, atol=1e-9)
    assert fast.score(frame, test)["log_loss"] == pytest.approx(
        slow.score(frame, test)["log_loss"], abs=1e-9
    )


def test_engine_is_checked() -> None:
    with pytest.raises(ValueError, match="engine"):
        FSRS6Fitter(engine="rust").fit(load_reviews(josh_log()))
