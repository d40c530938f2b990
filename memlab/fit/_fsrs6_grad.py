"""FSRS-6 forward pass that carries exact derivatives with respect to the 21 weights.

Forward-mode differentiation: alongside the state (S, D) of every card it carries the
Jacobians dS/dw and dD/dw, arrays of shape (cards, 21), through the loop over the review
index. Each step writes the new Jacobians as

    dS' = a * dS + b * dD + C          dD' = a_D * dD + C_D

where ``a``, ``b``, ``a_D`` are per-card coefficients and ``C``, ``C_D`` have a handful of
non-zero columns (the weights that appear explicitly in the branch taken). The equations and
the order of floating-point operations are those of :meth:`memlab.models.fsrs6.FSRS6._forward`,
so the values (R, S, D) agree with it to the last bit or two (numpy's SIMD transcendental
functions may round a lane differently once cards are reordered);
``tests/fit/test_fsrs6_grad.py`` checks both the values and the gradient (against central finite
differences).

Clamps (S to [S_MIN, S_MAX], D to [1, 10]) and ``min``/``max`` choices take the derivative of
the branch chosen (zero where a clamp is active), the usual subgradient.

The loss is the summed binary cross-entropy of the scored reviews, so
``d loss / d w = sum_scored q * dR/dw`` with ``q = dBCE/dR`` and ``dR = r_S dS + r_20 e_20``:
only a vector-matrix product per step, no (cards, 21) dR array.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from memlab.models.fsrs6 import D_MAX, D_MIN, S_MAX, S_MIN

N_W = 21
LOG_09 = math.log(0.9)
P_EPS = 1e-7


@dataclass(frozen=True)
class PreparedHistories:
    """Padded histories re-ordered for the loop: cards sorted by length, longest first.

    At review index ``i`` the cards still active are the prefix ``[:active[i]]``.
    """

    grades: NDArray[np.intp]  # (n_reviews, n_cards) review-major, sorted cards
    elapsed: NDArray[np.float64]
    recalled: NDArray[np.float64]
    scored: NDArray[np.bool_]
    sample_weight: NDArray[np.float64]  # weight of each scored review in the loss (1 by default)
    active: NDArray[np.intp]  # number of active cards at each review index
    order: NDArray[np.intp]  # sorted position -> original card row
    n_scored: int


def prepare(
    grades: NDArray[np.intp],
    elapsed: NDArray[np.float64],
    scored: NDArray[np.bool_],
    sample_weight: NDArray[np.float64] | None = None,
) -> PreparedHistories:
    """Sort cards by number of reviews (descending) and lay arrays out review-major.

    ``sample_weight`` (same layout as ``grades``) weights each scored review's loss (default 1).
    """
    g = np.asarray(grades, dtype=np.intp)
    lengths = (g > 0).sum(axis=1)
    order = np.argsort(-lengths, kind="stable").astype(np.intp)
    gs = np.ascontiguousarray(g[order].T)
    ts = np.ascontiguousarray(np.nan_to_num(np.asarray(elapsed, dtype=float)[order].T, nan=0.0))
    sc = np.ascontiguousarray(np.asarray(scored, dtype=bool)[order].T) & (gs > 0)
    width = g.shape[1]
    active = np.array([(lengths > i).sum() for i in range(width)], dtype=np.intp)
    if sample_weight is None:
        sw = np.ones(gs.shape)
    else:
        sw = np.ascontiguousarray(
            np.nan_to_num(np.asarray(sample_weight, dtype=float)[order].T, nan=0.0)
        )
    return PreparedHistories(gs, ts, (gs >= 2).astype(float), sc, sw, active, order, int(sc.sum()))


def loss_and_grad(
    w: NDArray[np.float64],
    h: PreparedHistories,
    *,
    want_grad: bool = True,
    want_trace: bool = False,
    fisher: NDArray[np.float64] | None = None,
) -> tuple[float, NDArray[np.float64], dict[str, NDArray[np.float64]] | None]:
    """Summed BCE over the scored reviews, its gradient over the 21 weights, and optionally the
    trace.

    With ``fisher`` (a (21, 21) array, zeroed by the caller) the Gauss-Newton / Fisher matrix of
    the summed BCE, ``sum J J^T / (R (1 - R))`` with ``J = dR/dw``, is accumulated into it.

    The trace (``retrievability``, ``stability``, ``difficulty``, each (cards, reviews) in the
    original card order) equals :meth:`FSRS6.forward`'s.
    """
    w = [
        float(x) for x in np.asarray(w, dtype=np.float64)
    ]  # Python floats: same scalar arithmetic as FSRS6
    n_rev, n_cards = h.grades.shape
    grad = np.zeros(N_W)
    total = 0.0
    if n_rev == 0 or n_cards == 0:
        return total, grad, ({} if want_trace else None)
    decay = -w[20]
    f = 0.9 ** (1.0 / decay) - 1.0
    df20 = (f + 1.0) * LOG_09 / decay**2  # d f / d w20
    e_w8 = math.exp(w[8])
    d0_easy = w[4] - math.exp(w[5] * 3.0) + 1.0
    lapse_cap = math.exp(-w[17] * w[18])
    w7 = w[7]

    trace = None
    if want_trace:
        r_out = np.full((n_rev, n_cards), np.nan)
        s_out = np.empty((n_rev, n_cards))
        d_out = np.empty((n_rev, n_cards))

    # initial state
    g0 = h.grades[0]
    s0_table = np.maximum(np.array([np.nan, w[0], w[1], w[2], w[3]]), S_MIN)
    grades_f = np.arange(5, dtype=float)
    d0_table = w[4] - np.exp(w[5] * (grades_f - 1.0)) + 1.0
    S = s0_table[g0].copy()
    D0 = d0_table[g0]
    D = np.clip(D0, D_MIN, D_MAX)
    if want_grad:
        # Jacobians stored transposed, (21, cards): each weight's row is contiguous
        dS = np.zeros((N_W, n_cards))
        dS[g0 - 1, np.arange(n_cards)] = 1.0
        dD = np.zeros((N_W, n_cards))
        free = (D0 > D_MIN) & (D0 < D_MAX)
        dD[4] = free
        dD[5] = np.where(free, -(g0 - 1.0) * np.exp(w[5] * (g0 - 1.0)), 0.0)
    if want_trace:
        s_out[0], d_out[0] = S, D

    d_step = -w[6] * (grades_f - 3.0) / 9.0
    recall_mult = np.array([0.0, 0.0, w[15], 1.0, w[16]])
    short_coef = np.exp(w[17] * (grades_f - 3.0 + w[18]))
    short_floor = np.array([0.0, 0.0, 1.0, 1.0, 1.0])
    is_hard = np.array([0.0, 0.0, 1.0, 0.0, 0.0])
    is_easy = np.array([0.0, 0.0, 0.0, 0.0, 1.0])

    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for i in range(1, n_rev):
            m = int(h.active[i])
            if m == 0:
                break
            g = h.grades[i, :m]
            t = h.elapsed[i, :m]
            s = S[:m]
            d = D[:m]
            # retrievability, exactly as FSRS6._retrievability
            u = t * (f / s)
            u += 1.0
            r = np.power(u, decay)
            log_s = np.log(s)
            one_minus_r = np.subtract(1.0, r)
            # success branch, same operation order as FSRS6._next_stability
            eleven_d = np.subtract(11.0, d)
            s_pow = np.exp(log_s * -w[9])
            x_exp = np.expm1(one_minus_r * w[10])
            mult = recall_mult[g]
            q_fac = eleven_d * e_w8
            q_fac *= s_pow  # Q = e^w8 (11-D) S^-w9
            recall = q_fac * x_exp  # P = Q E
            p_val = recall.copy()
            recall *= mult
            recall += 1.0
            recall *= s
            # lapse branch
            d_pow = np.power(d, -w[12])
            lapse = d_pow * w[11]
            z_pow = np.expm1(np.log1p(s) * w[13])  # (S+1)^w13 - 1
            lapse *= z_pow
            y_exp = np.exp(one_minus_r * w[14])
            lapse *= y_exp
            cap = s * lapse_cap
            take_cap = cap < lapse
            lapse_min = np.minimum(lapse, cap)
            again = g == 1
            out = np.where(again, lapse_min, recall)
            same_day = t < 1.0
            any_short = bool(same_day.any())
            if any_short:
                short = np.exp(log_s * -w[19])
                short *= short_coef[g]
                v_val = short.copy()
                np.maximum(short, short_floor[g], out=short)
                short *= s
                out = np.where(same_day, short, out)
            s_new = np.clip(out, S_MIN, S_MAX)
            # difficulty, as FSRS6._next_difficulty
            d_lin = np.subtract(10.0, d)
            d_lin *= d_step[g]
            d_lin += d
            d_new = d_lin * (1.0 - w7)
            d_new += w7 * d0_easy
            d_clipped = np.clip(d_new, D_MIN, D_MAX)

            # loss on the scored reviews
            sc = h.scored[i, :m]
            if sc.any():
                yv = h.recalled[i, :m]
                pc = np.clip(r, P_EPS, 1.0 - P_EPS)
                bce = -(yv * np.log(pc) + (1.0 - yv) * np.log1p(-pc))
                sw = h.sample_weight[i, :m]
                total += float((bce * sw)[sc].sum())
            if want_grad:
                # dR = rS dS + r20 e20
                tf_over = t / (u * s)
                r_s = -r * decay * f * tf_over / s
                r_20 = r * (-np.log(u) + decay * df20 * tf_over)
                dS_m = dS[:, :m]
                dD_m = dD[:, :m]
                if sc.any():
                    inside = (r > P_EPS) & (r < 1.0 - P_EPS)
                    q = np.where(sc & inside, (-(yv / pc) + (1.0 - yv) / (1.0 - pc)) * sw, 0.0)
                    grad += dS_m @ (q * r_s)
                    grad[20] += float(q @ r_20)
                    if fisher is not None:
                        jac = dS_m[:, sc] * r_s[sc]
                        jac[20] += r_20[sc]
                        pcs = pc[sc]
                        # einsum, not BLAS: a threaded dgemm of this thin shape crawls on a
                        # busy machine
                        fisher += np.einsum("ik,jk->ij", jac * (sw[sc] / (pcs * (1.0 - pcs))), jac)
                keep = ((out > S_MIN) & (out < S_MAX)).astype(float)  # clamp inactive
                # branch selectors as 0/1 floats, with the clamp folded in
                n_again = int(again.sum())
                if any_short:
                    not_short = keep * ~same_day
                    recall_sel = not_short * ~again
                    again_sel = not_short * again
                else:
                    recall_sel = keep * ~again
                    again_sel = keep * again
                a = np.zeros(m)
                b = np.zeros(m)
                C = np.zeros((N_W, m))
                if n_again < m:
                    # recall: S' = S (1 + P m), P = Q E, Q = e^w8 (11-D) S^-w9,
                    # E = e^(w10 (1-R)) - 1
                    sm = s * mult
                    sm *= recall_sel
                    xq = q_fac * (x_exp + 1.0)  # Q X
                    smxq = sm * xq
                    a += recall_sel * (1.0 + p_val * mult * (1.0 - w[9])) - smxq * (w[10] * r_s)
                    smp = sm * p_val
                    b -= smp / eleven_d
                    C[8] = smp
                    C[9] = -smp * log_s
                    C[10] = smxq * one_minus_r
                    C[20] = -w[10] * smxq * r_20
                    sp = s * p_val
                    sp *= recall_sel
                    C[15] = sp * is_hard[g]
                    C[16] = sp * is_easy[g]
                if n_again:
                    lapse_sel = again_sel * ~take_cap
                    cap_sel = again_sel * take_cap
                    # lapse: L = w11 D^-w12 ((S+1)^w13 - 1) e^(w14 (1-R))
                    lap = lapse * lapse_sel
                    k_zw = d_pow * (w[11] * lapse_sel) * y_exp * (z_pow + 1.0)  # K Z
                    a += k_zw * w[13] / (s + 1.0) - lap * w[14] * r_s
                    b -= lap * w[12] / d
                    C[11] = lap / w[11]
                    C[12] = -lap * np.log(d)
                    C[13] = k_zw * np.log1p(s)
                    C[14] = lap * one_minus_r
                    C[20] -= lap * w[14] * r_20
                    # lapse cap: S e^(-w17 w18)
                    cp = cap * cap_sel
                    a += lapse_cap * cap_sel
                    C[17] = -cp * w[18]
                    C[18] = -cp * w[17]
                if any_short:
                    # same day: W = e^(w17 (G-3+w18)) S^(1-w19), or floor * S
                    big = same_day & (v_val > short_floor[g])
                    short_big = keep * big
                    short_flat = keep * (same_day & ~big)
                    wv = v_val * s * short_big
                    a += short_big * v_val * (1.0 - w[19]) + short_flat * short_floor[g]
                    C[17] += wv * (g - 3.0 + w[18])
                    C[18] += wv * w[17]
                    C[19] = -wv * log_s
                new_dS = dS_m * a
                new_dS += dD_m * b
                new_dS += C
                # difficulty Jacobian
                d_free = ((d_new > D_MIN) & (d_new < D_MAX)).astype(float)
                new_dD = dD_m * ((1.0 - w7) * (1.0 - d_step[g]) * d_free)
                new_dD[6] += d_free * (1.0 - w7) * (10.0 - d) * (-(g - 3.0) / 9.0)
                new_dD[4] += d_free * w7
                new_dD[5] += d_free * (w7 * (-3.0 * math.exp(3.0 * w[5])))
                new_dD[7] += d_free * (d0_easy - d_lin)
                dS[:, :m] = new_dS
                dD[:, :m] = new_dD
            S[:m] = s_new
            D[:m] = d_clipped
            if want_trace:
                r_out[i, :m] = r
                s_out[i] = S
                d_out[i] = D
    if want_trace:
        inverse = np.empty_like(h.order)
        inverse[h.order] = np.arange(len(h.order))
        trace = {
            "retrievability": r_out.T[inverse],
            "stability": s_out.T[inverse],
            "difficulty": d_out.T[inverse],
        }
    return total, grad, trace


__all__ = ["PreparedHistories", "loss_and_grad", "prepare"]
