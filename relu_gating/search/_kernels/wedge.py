r"""Two-row dual evidence for a batch of patterns at once, before any SDP (private).

For a pattern with pencil ``(A, B)`` (row-space coordinates ``v``, ``Phi theta = Psi v``) and
cone rows ``g_i = s_i psi_i`` (``s_i = +1`` active, ``-1`` inactive), let ``x`` be the
unconstrained maximizer; when neither ``x`` nor ``-x`` lies in the cone, take ``a`` the row
``x`` violates most and ``b`` the row ``-x`` violates most (rows normalized).  Every ``v`` of
the cone has ``(g_a v)(g_b v) >= 0``, so ``N = [[0, t], [t, 0]]`` on rows ``(a, b)``, ``t >= 0``,
is dual evidence in the sense of :mod:`relu_gating.search._exact.evidence`:

.. math::  u B - A - t (g_a g_b^T + g_b g_a^T) \succeq 0
           \;\Longrightarrow\; v^T A v \le u\, v^T B v \text{ on the cone}.

The best ``t`` minimizes the convex ``f(t) = lambda_max(A + t S, B)`` (``S = g_a g_b^T + g_b
g_a^T``); by the S-lemma ``min f`` is the maximum over the wedge of the two rows, which on
near-optimal chambers is usually below the incumbent already.  All patterns of a batch are
bisected in lockstep on the sign of ``f'(t) = w^T S w`` (``w`` a top eigenvector), with
numpy's batched ``eigh`` on ``r x r`` whitened pencils: about 0.2 ms a pattern, where one SDP
costs 2-3 ms.

The bound ``u`` claimed is accepted only where the bound pass's verified Cholesky test
(:func:`relu_gating.search._kernels.bound.certify`) proves ``u B - A - t S`` positive
definite with the pencils' error allowances, plus those of ``t S`` (rounding, and the float
basis ``Psi``); the verifier re-checks the evidence from the stated problem in any case.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from relu_gating._inputs.scaling import pow2_norms
from relu_gating.search._kernels import bound as kernel
from relu_gating.search._kernels.stacks import frob

__all__ = ["wedge_settle", "WEDGE_STEPS"]

#: Safeguarded Newton steps on ``t`` (after doubling brackets the minimizer).
NEWTON_STEPS = 12
#: Bisection steps on ``t`` for the patterns Newton leaves moving.
WEDGE_STEPS = 36
#: Relative margin of the claimed bound over the computed ``f(t)``.
WEDGE_MARGIN = 1e-9

_U = np.finfo(float).eps / 2


def _slope(Aw: np.ndarray, Sw: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(f(t), f'(t))`` for stacks ``(k, r, r)``."""
    w, V = np.linalg.eigh(Aw + t[:, None, None] * Sw)
    v = V[:, :, -1]
    return w[:, -1], np.einsum("ki,kij,kj->k", v, Sw, v)


def _newton(Aw: np.ndarray, Sw: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(f'(t), f''(t))`` for stacks ``(k, r, r)``: ``f' = v^T S v`` and, from the other
    eigenpairs, ``f'' = 2 sum_j (v_j^T S v)^2 / (lambda - lambda_j)`` (``inf`` at a double top)."""
    w, V = np.linalg.eigh(Aw + t[:, None, None] * Sw)
    c = np.einsum("kij,ki->kj", V, (Sw @ V[:, :, -1:])[:, :, 0])  # (k, r): v_j^T S v
    gap = w[:, -1:] - w[:, :-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        f2 = 2.0 * np.sum(c[:, :-1] ** 2 / gap, axis=1)
    return c[:, -1], f2


def _minimize(Aw: np.ndarray, Sw: np.ndarray) -> np.ndarray:
    """``argmin_{t >= 0} lambda_max(Aw + t Sw)`` per pattern (convex; ``f'(0) < 0`` here).

    Newton steps on ``f'`` inside a bracket ``f'(lo) < 0 <= f'(hi)`` (a step leaving it, or a
    non-positive ``f''``, halves the bracket instead) until the step is below ``2^-40`` of ``t``;
    patterns still moving after ``NEWTON_STEPS`` are bisected ``WEDGE_STEPS`` times (a minimum at a
    double eigenvalue, where ``f`` has a kink).  Any ``t`` gives a valid bound (it is certified
    after); this only makes it tight."""
    top = np.linalg.eigvalsh(Aw)[:, -1]
    hi = np.maximum(top, 1e-300) / np.maximum(np.abs(Sw).max(axis=(1, 2)), 1e-300)
    for _ in range(60):
        grow = _slope(Aw, Sw, hi)[1] < 0
        if not grow.any():
            break
        hi = np.where(grow, 4.0 * hi, hi)
    lo = np.zeros_like(hi)
    t = 0.5 * hi
    moving = np.ones(t.size, dtype=bool)
    for _ in range(NEWTON_STEPS):
        f1, f2 = _newton(Aw, Sw, t)
        down = f1 < 0
        lo, hi = np.where(down, t, lo), np.where(down, hi, t)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = t - f1 / f2
        new = np.where((f2 > 0) & (step > lo) & (step < hi), step, 0.5 * (lo + hi))
        moving = np.abs(new - t) > 2.0**-40 * np.abs(t)
        t = new
        if not moving.any():
            return t
    lo, hi = lo[moving], hi[moving]
    Am, Sm = Aw[moving], Sw[moving]
    for _ in range(WEDGE_STEPS):
        mid = 0.5 * (lo + hi)
        down = _slope(Am, Sm, mid)[1] < 0
        lo, hi = np.where(down, mid, lo), np.where(down, hi, mid)
    t[moving] = hi
    return t


def _rows(obj: Any, masks: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(a, b, ok)``: per pattern the row ``x`` violates most, the row ``-x`` violates most, and
    whether both are violated (rows normalized; zero rows of ``Phi`` never chosen)."""
    norms = pow2_norms(obj.Psi, axis=1)  # a row below 2^-537 is live (its square underflows)
    live = norms > 0
    z = (x.T @ obj.Psi.T) * np.where(masks, 1.0, -1.0) / np.where(live, norms, 1.0)
    z[:, ~live] = 0.0
    a, b = np.argmin(z, axis=1), np.argmax(z, axis=1)
    k = np.arange(z.shape[0])
    return a, b, (z[k, a] < 0) & (z[k, b] > 0)


def wedge_settle(obj: Any, masks: np.ndarray, target: float) -> dict[int, tuple[float, tuple[np.ndarray, np.ndarray]]]:
    """Patterns of ``masks`` (bool, (k, n)) settled at most ``target`` by two-row evidence:
    ``{j: (upper, (rows, N))}`` (``rows``: the two sample indices, ascending)."""
    plan = kernel.make_plan(obj)
    pb = kernel.pencil_bounds(obj, plan, masks, False)
    cand = np.flatnonzero(pb.reliable & pb.chol_ok & (pb.upper > target))
    if cand.size == 0:
        return {}
    _, x, _ = kernel.tighten(pb, cand, kernel.MID_SQUARINGS)
    a, b, ok = _rows(obj, masks[cand], x)
    cand, a, b = cand[ok], a[ok], b[ok]
    if cand.size == 0:
        return {}
    sa = np.where(masks[cand, a], 1.0, -1.0)[:, None] * obj.Psi[a]
    sb = np.where(masks[cand, b], 1.0, -1.0)[:, None] * obj.Psi[b]
    S = sa[:, :, None] * sb[:, None, :]
    S = S + np.transpose(S, (0, 2, 1))
    Li = np.linalg.inv(np.transpose(pb.L[:, :, cand], (2, 0, 1)))
    A = np.transpose(pb.A[:, :, cand], (2, 0, 1))
    Aw = Li @ A @ np.transpose(Li, (0, 2, 1))
    Sw = Li @ S @ np.transpose(Li, (0, 2, 1))
    Aw, Sw = 0.5 * (Aw + np.transpose(Aw, (0, 2, 1))), 0.5 * (Sw + np.transpose(Sw, (0, 2, 1)))
    t = _minimize(Aw, Sw)
    val = _slope(Aw, Sw, t)[0]
    mu = val * (1 + WEDGE_MARGIN) + WEDGE_MARGIN * np.abs(val).max(initial=0.0) + 1e-300
    At = np.transpose(A + t[:, None, None] * S, (1, 2, 0))
    na, nb = pow2_norms(sa, axis=1), pow2_norms(sb, axis=1)
    E = plan.basis  # rows of Psi err by at most this (part of the pencils' allowance)
    extra = t * (4.01 * _U * na * nb + 2.01 * E * (na + nb + E)) + 2.01 * _U * (
        frob(At) + t * pow2_norms(S.reshape(S.shape[0], -1), axis=1))  # entries near 2^-537 keep their norm
    good = kernel.certify(At, pb.B[:, :, cand], pb.alpha[cand] + extra, pb.beta[cand], mu) & (mu <= target)
    out = {}
    for j in np.flatnonzero(good).tolist():
        rows = np.array(sorted((int(a[j]), int(b[j]))), dtype=np.int64)
        out[int(cand[j])] = (float(mu[j]), (rows, np.array([[0.0, t[j]], [t[j], 0.0]])))
    return out
