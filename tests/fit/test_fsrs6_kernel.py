"""The FSRS-6 fitter's pass against the model's forward pass and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from fit_helpers import josh_log, random_histories

from memlab.fit import FSRS6Fitter, _fsrs6_kernel, histories, load_reviews
from memlab.models.fsrs6 import DEFAULT_WEIGHTS, FSRS6, LOWER_BOUNDS, UPPER_BOUNDS


def _random_weights(rng: np.random.Generator) -> np.ndarray:
    low, high = np.array(LOWER_BOUNDS), np.array(UPPER_BOUNDS)
    w = np.array(DEFAULT_WEIGHTS) + rng.normal(0, 0.15, 21) * (high - low)
    return np.clip(w, low + 0.05 * (high - low), high - 0.05 * (high - low))


def _scored(grades, elapsed):
    scored = (grades > 0) & (np.nan_to_num(elapsed, nan=0) >= 1)
    scored[:, 0] = False
    return scored


def _recall(w, grades, elapsed, scored):
    """R at the scored reviews by the model's forward pass (weights unchecked: a finite
    difference may step past a bound, as from w7's default at its lower bound)."""
    model = object.__new__(FSRS6)
    object.__setattr__(model, "weights", tuple(w))
    object.__setattr__(model, "_k", FSRS6._constants(tuple(w)))
    return model._forward(grades, elapsed).retrievability[scored]


def _forward_loss(w, grades, elapsed, scored, weight=None) -> float:
    """The summed weighted BCE from the model's forward pass, the plain path the kernel must
    reproduce."""
    r = np.clip(_recall(w, grades, elapsed, scored), 1e-7, 1 - 1e-7)
    y = (grades[scored] >= 2).astype(float)
    bce = -(y * np.log(r) + (1 - y) * np.log1p(-r))
    return float(bce @ (np.ones(len(y)) if weight is None else weight[scored]))


def _finite_differences(w, grades, elapsed, scored, weight=None):
    """Central differences of the loss, and the Fisher matrix from central differences of R."""
    grad, jac = np.zeros(21), np.zeros((21, int(scored.sum())))
    for j in range(21):
        h = 1e-6 * max(1.0, abs(w[j]))
        up, down = w.copy(), w.copy()
        up[j] += h
        down[j] -= h
        loss_up = _forward_loss(up, grades, elapsed, scored, weight)
        grad[j] = (loss_up - _forward_loss(down, grades, elapsed, scored, weight)) / (2 * h)
        jac[j] = (_recall(up, grades, elapsed, scored) - _recall(down, grades, elapsed, scored)) / (
            2 * h
        )
    r = _recall(w, grades, elapsed, scored)
    cw = (np.ones(len(r)) if weight is None else weight[scored]) / (r * (1 - r))
    return grad, (jac * cw) @ jac.T


@pytest.mark.parametrize("seed", range(6))
def test_kernel_against_forward_and_finite_differences(seed: int) -> None:
    rng = np.random.default_rng(500 + seed)
    grades, elapsed = random_histories(rng, n_cards=60, width=12, same_day=0.3)
    scored = _scored(grades, elapsed)
    w = np.array(DEFAULT_WEIGHTS) if seed == 0 else _random_weights(rng)
    weight = rng.uniform(0.2, 2.0, grades.shape) if seed % 2 else None
    cards = _fsrs6_kernel.CardArrays(grades, elapsed, scored, weight)
    total, grad, fisher = _fsrs6_kernel.loss_grad_fisher(w, cards, want_fisher=True)
    assert total == pytest.approx(_forward_loss(w, grades, elapsed, scored, weight), rel=1e-10)
    fd_grad, fd_fisher = _finite_differences(w, grades, elapsed, scored, weight)
    np.testing.assert_allclose(grad, fd_grad, rtol=1e-4, atol=1e-5 * np.abs(fd_grad).max())
    np.testing.assert_allclose(fisher, fd_fisher, rtol=1e-4, atol=1e-5 * np.abs(fd_fisher).max())
    assert np.abs(grad).max() > 0
    np.testing.assert_array_equal(fisher, fisher.T)
    # the loss alone (no derivatives) is the same number
    alone = _fsrs6_kernel.loss_grad_fisher(w, cards, want_grad=False)
    assert alone[0] == total and not alone[1].any() and alone[2] is None


def test_kernel_loss_equals_forward_on_josh() -> None:
    h = histories(load_reviews(josh_log()).frame)
    cards = _fsrs6_kernel.CardArrays(h.grades, h.elapsed_days, h.scoreable())
    for w in (np.array(DEFAULT_WEIGHTS), _random_weights(np.random.default_rng(7))):
        total = _fsrs6_kernel.loss_grad_fisher(w, cards, want_grad=False)[0]
        expected = _forward_loss(w, h.grades, h.elapsed_days, h.scoreable())
        assert total == pytest.approx(expected, rel=1e-10)


def test_uncompiled_pass_fits_the_same(small_log, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = FSRS6Fitter().fit(small_log)
    monkeypatch.setattr(_fsrs6_kernel, "AVAILABLE", False)
    plain = FSRS6Fitter().fit(small_log)
    np.testing.assert_allclose(plain.weights_, compiled.weights_, rtol=1e-9, atol=1e-12)
