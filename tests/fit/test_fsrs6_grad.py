from __future__ import annotations

import numpy as np
import pytest
from fit_helpers import random_histories

from memlab.fit import _fsrs6_grad
from memlab.models.fsrs6 import DEFAULT_WEIGHTS, FSRS6, LOWER_BOUNDS, UPPER_BOUNDS


def _random_weights(rng: np.random.Generator) -> np.ndarray:
    low, high = np.array(LOWER_BOUNDS), np.array(UPPER_BOUNDS)
    w = np.array(DEFAULT_WEIGHTS) + rng.normal(0, 0.15, 21) * (high - low)
    return np.clip(w, low + 0.05 * (high - low), high - 0.05 * (high - low))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_trace_equals_forward(seed: int) -> None:
    rng = np.random.default_rng(seed)
    grades, elapsed = random_histories(rng, n_cards=60)
    w = DEFAULT_WEIGHTS if seed == 0 else _random_weights(rng)
    prepared = _fsrs6_grad.prepare(grades, elapsed, np.ones_like(grades, dtype=bool))
    _, _, trace = _fsrs6_grad.loss_and_grad(w, prepared, want_trace=True)
    reference = FSRS6(tuple(w)).forward(grades, elapsed)
    for name in ("retrievability", "stability", "difficulty"):
        # equal up to the last bit or two: numpy's SIMD exp/log/power may round a lane differently
        # from the scalar tail, and the gradient pass reorders cards (longest first)
        np.testing.assert_array_equal(np.isnan(trace[name]), np.isnan(getattr(reference, name)))
        np.testing.assert_allclose(
            trace[name], getattr(reference, name), rtol=1e-13, atol=0, err_msg=name
        )


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_gradient_matches_finite_differences(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    grades, elapsed = random_histories(rng, n_cards=50)
    scored = (grades > 0) & (np.nan_to_num(elapsed, nan=0) >= 1)
    prepared = _fsrs6_grad.prepare(grades, elapsed, scored)
    w = np.array(DEFAULT_WEIGHTS) if seed == 0 else _random_weights(rng)
    _, grad, _ = _fsrs6_grad.loss_and_grad(w, prepared)
    fd = np.zeros(21)
    for j in range(21):
        h = 1e-6 * max(1.0, abs(w[j]))
        up, down = w.copy(), w.copy()
        up[j] += h
        down[j] -= h
        fd[j] = (
            _fsrs6_grad.loss_and_grad(up, prepared, want_grad=False)[0]
            - _fsrs6_grad.loss_and_grad(down, prepared, want_grad=False)[0]
        ) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=1e-5 * np.abs(fd).max())
    assert np.abs(grad).max() > 0


def test_weighted_gradient_and_fisher() -> None:
    rng = np.random.default_rng(7)
    grades, elapsed = random_histories(rng, n_cards=40)
    scored = (grades > 0) & (np.nan_to_num(elapsed, nan=0) >= 1)
    weights = rng.uniform(0.2, 2.0, grades.shape)
    prepared = _fsrs6_grad.prepare(grades, elapsed, scored, weights)
    w = _random_weights(rng)
    fisher = np.zeros((21, 21))
    total, grad, _ = _fsrs6_grad.loss_and_grad(w, prepared, fisher=fisher)
    fd = np.zeros(21)
    for j in range(21):
        h = 1e-6 * max(1.0, abs(w[j]))
        up, down = w.copy(), w.copy()
        up[j] += h
        down[j] -= h
        fd[j] = (
            _fsrs6_grad.loss_and_grad(up, prepared, want_grad=False)[0]
            - _fsrs6_grad.loss_and_grad(down, prepared, want_grad=False)[0]
        ) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=1e-5 * np.abs(fd).max())
    # the Fisher matrix is symmetric positive semi-definite
    np.testing.assert_allclose(fisher, fisher.T, rtol=1e-12, atol=1e-12)
    assert np.linalg.eigvalsh(fisher).min() > -1e-8 * np.abs(fisher).max()
    unweighted = _fsrs6_grad.prepare(grades, elapsed, scored)
    assert total != pytest.approx(_fsrs6_grad.loss_and_grad(w, unweighted, want_grad=False)[0])
