"""FSRS-6 loss, its exact gradient and the Fisher matrix: the FSRS-6 fitter's pass (numba).

Forward-mode differentiation, card by card: alongside (S, D) it carries dS/dw and dD/dw
through the reviews, in the equations of :meth:`memlab.models.fsrs6.FSRS6._forward`, as
``dS' = a dS + b dD + c`` and ``dD' = a_D dD + c_D``; an active clamp zeroes the derivative. A
scored review adds the weighted cross-entropy, its gradient and the Fisher term
``J J^T / (R (1 - R))``, ``J = dR/dw``. numba (the ``fast`` extra) compiles the pass; without it
(:data:`AVAILABLE` false) the same Python function runs uncompiled, with the same results.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memlab.models.fsrs6 import D_MAX, D_MIN, S_MAX, S_MIN

try:  # optional: without numba the pass runs as plain Python
    import numba

    AVAILABLE = True
except ImportError:  # pragma: no cover - exercised where numba is absent
    numba = None
    AVAILABLE = False

N_W = 21
LOG_09 = math.log(0.9)
P_EPS = 1e-7


def _pass(
    w: NDArray[np.float64],
    grades: NDArray[np.int64],
    elapsed: NDArray[np.float64],
    scored: NDArray[np.bool_],
    weight: NDArray[np.float64],
    lengths: NDArray[np.int64],
    want_grad: bool,
    want_fisher: bool,
    grad: NDArray[np.float64],
    fisher: NDArray[np.float64],
) -> float:
    decay = -w[20]
    f = 0.9 ** (1.0 / decay) - 1.0
    df20 = (f + 1.0) * LOG_09 / decay**2
    e_w8 = math.exp(w[8])
    d0_easy = w[4] - math.exp(w[5] * 3.0) + 1.0
    lapse_cap = math.exp(-w[17] * w[18])
    w7 = w[7]
    dd0_easy_w5 = w7 * (-3.0 * math.exp(3.0 * w[5]))
    short_coef = np.zeros(5)
    d_steps = np.zeros(5)
    for grade in range(1, 5):
        short_coef[grade] = math.exp(w[17] * (grade - 3.0 + w[18]))
        d_steps[grade] = -w[6] * (grade - 3.0) / 9.0
    total = 0.0
    ds = np.zeros(N_W)
    dd = np.zeros(N_W)
    c = np.zeros(N_W)
    jac = np.zeros(N_W)
    n_cards = grades.shape[0]
    for card in range(n_cards):
        n = lengths[card]
        if n == 0:
            continue
        g0 = grades[card, 0]
        s = max(w[g0 - 1], S_MIN)
        d0 = w[4] - math.exp(w[5] * (g0 - 1.0)) + 1.0
        d = min(max(d0, D_MIN), D_MAX)
        if want_grad:
            for k in range(N_W):
                ds[k] = 0.0
                dd[k] = 0.0
            ds[g0 - 1] = 1.0
            if D_MIN < d0 < D_MAX:
                dd[4] = 1.0
                dd[5] = -(g0 - 1.0) * math.exp(w[5] * (g0 - 1.0))
        for j in range(1, n):
            g = grades[card, j]
            t = elapsed[card, j]
            u = t * (f / s) + 1.0
            r = u**decay
            log_s = math.log(s)
            one_minus_r = 1.0 - r
            again = g == 1
            same_day = t < 1.0
            floor = 1.0 if g >= 2 else 0.0
            mult = 0.0
            eleven_d = q_fac = x_exp = p_val = 0.0
            d_pow = z_pow = y_exp = lapse = cap = 0.0
            take_cap = False
            v_val = 0.0
            if same_day:
                v_val = math.exp(log_s * -w[19]) * short_coef[g]
                out = max(v_val, floor) * s
            elif not again:
                if g == 2:
                    mult = w[15]
                elif g == 4:
                    mult = w[16]
                else:
                    mult = 1.0
                eleven_d = 11.0 - d
                s_pow = math.exp(log_s * -w[9])
                x_exp = math.expm1(one_minus_r * w[10])
                q_fac = eleven_d * e_w8 * s_pow
                p_val = q_fac * x_exp
                out = (p_val * mult + 1.0) * s
            else:
                d_pow = d ** (-w[12])
                z_pow = math.expm1(math.log1p(s) * w[13])
                y_exp = math.exp(one_minus_r * w[14])
                lapse = d_pow * w[11] * z_pow * y_exp
                cap = s * lapse_cap
                take_cap = cap < lapse
                out = min(lapse, cap)
            s_new = min(max(out, S_MIN), S_MAX)
            d_step = d_steps[g]
            d_lin = (10.0 - d) * d_step + d
            d_new = d_lin * (1.0 - w7) + w7 * d0_easy
            d_clipped = min(max(d_new, D_MIN), D_MAX)

            sc = scored[card, j]
            yv = 0.0
            pc = 0.5
            sw = 0.0
            if sc:
                yv = 1.0 if g >= 2 else 0.0
                pc = min(max(r, P_EPS), 1.0 - P_EPS)
                sw = weight[card, j]
                total += -(yv * math.log(pc) + (1.0 - yv) * math.log1p(-pc)) * sw
            if want_grad:
                tf_over = t / (u * s)
                r_s = -r * decay * f * tf_over / s
                r_20 = r * (-math.log(u) + decay * df20 * tf_over)
                if sc:
                    if P_EPS < r < 1.0 - P_EPS:
                        q = (-(yv / pc) + (1.0 - yv) / (1.0 - pc)) * sw
                        qs = q * r_s
                        for k in range(N_W):
                            grad[k] += qs * ds[k]
                        grad[20] += q * r_20
                    if want_fisher:
                        for k in range(N_W):
                            jac[k] = ds[k] * r_s
                        jac[20] += r_20
                        cw = sw / (pc * (1.0 - pc))
                        for k in range(N_W):
                            jk = jac[k] * cw
                            if jk != 0.0:
                                for m in range(k, N_W):
                                    fisher[k, m] += jk * jac[m]
                keep = S_MIN < out < S_MAX
                a = 0.0
                b = 0.0
                for k in range(N_W):
                    c[k] = 0.0
                if keep and not same_day:
                    if not again:
                        sm = s * mult
                        xq = q_fac * (x_exp + 1.0)
                        smxq = sm * xq
                        a = 1.0 + p_val * mult * (1.0 - w[9]) - smxq * (w[10] * r_s)
                        smp = sm * p_val
                        b = -smp / eleven_d
                        c[8] = smp
                        c[9] = -smp * log_s
                        c[10] = smxq * one_minus_r
                        c[20] = -w[10] * smxq * r_20
                        if g == 2:
                            c[15] = s * p_val
                        elif g == 4:
                            c[16] = s * p_val
                    elif not take_cap:
                        k_zw = d_pow * w[11] * y_exp * (z_pow + 1.0)
                        a = k_zw * w[13] / (s + 1.0) - lapse * w[14] * r_s
                        b = -lapse * w[12] / d
                        c[11] = lapse / w[11]
                        c[12] = -lapse * math.log(d)
                        c[13] = k_zw * math.log1p(s)
                        c[14] = lapse * one_minus_r
                        c[20] = -lapse * w[14] * r_20
                    else:
                        a = lapse_cap
                        c[17] = -cap * w[18]
                        c[18] = -cap * w[17]
                elif keep:  # same day
                    if v_val > floor:
                        wv = v_val * s
                        a = v_val * (1.0 - w[19])
                        c[17] = wv * (g - 3.0 + w[18])
                        c[18] = wv * w[17]
                        c[19] = -wv * log_s
                    else:
                        a = floor
                for k in range(N_W):
                    ds[k] = a * ds[k] + b * dd[k] + c[k]
                if D_MIN < d_new < D_MAX:
                    a_d = (1.0 - w7) * (1.0 - d_step)
                    for k in range(N_W):
                        dd[k] *= a_d
                    dd[6] += (1.0 - w7) * (10.0 - d) * (-(g - 3.0) / 9.0)
                    dd[4] += w7
                    dd[5] += dd0_easy_w5
                    dd[7] += d0_easy - d_lin
                else:
                    for k in range(N_W):
                        dd[k] = 0.0
            s = s_new
            d = d_clipped
    if want_fisher:
        for k in range(N_W):
            for m in range(k + 1, N_W):
                fisher[m, k] = fisher[k, m]
    return total


_compiled: Any = None


def _kernel() -> Any:
    global _compiled
    if AVAILABLE and _compiled is None:
        _compiled = numba.njit(cache=True, nogil=True, fastmath=False)(_pass)
    return _compiled if AVAILABLE else _pass


class CardArrays:
    """Card-major padded arrays for the kernel (cards x review index), with per-card lengths."""

    __slots__ = ("elapsed", "grades", "lengths", "scored", "weight")

    def __init__(
        self,
        grades: NDArray[np.intp],
        elapsed: NDArray[np.float64],
        scored: NDArray[np.bool_],
        sample_weight: NDArray[np.float64] | None = None,
    ) -> None:
        g = np.ascontiguousarray(grades, dtype=np.int64)
        self.grades = g
        self.lengths = (g > 0).sum(axis=1).astype(np.int64)
        self.elapsed = np.ascontiguousarray(np.nan_to_num(elapsed, nan=0.0), dtype=np.float64)
        self.scored = np.ascontiguousarray(np.asarray(scored, dtype=bool) & (g > 0))
        weight = (
            np.ones(g.shape) if sample_weight is None else np.nan_to_num(sample_weight, nan=0.0)
        )
        self.weight = np.ascontiguousarray(weight, dtype=np.float64)


def loss_grad_fisher(
    w: NDArray[np.float64], h: CardArrays, *, want_grad: bool = True, want_fisher: bool = False
) -> tuple[float, NDArray[np.float64], NDArray[np.float64] | None]:
    """Summed weighted BCE over the scored reviews, its gradient and (optionally) the Fisher
    matrix ``sum J J^T / (R (1 - R))``, ``J = dR/dw``."""
    kernel = _kernel()
    grad = np.zeros(N_W)
    fisher = np.zeros((N_W, N_W))
    total = kernel(
        np.ascontiguousarray(w, dtype=np.float64),
        h.grades,
        h.elapsed,
        h.scored,
        h.weight,
        h.lengths,
        bool(want_grad or want_fisher),
        bool(want_fisher),
        grad,
        fisher,
    )
    return float(total), grad, (fisher if want_fisher else None)
