"""The per-pattern cheap bound, vectorised near the sign-pattern floor (private).

For every pattern ``S`` of a chunk we need a rigorous upper bound on the top
generalized eigenvalue of the pencil ``(A_S, B_S)`` (Prop 4.3 / 4.5), with

.. math::  A_S = C^T C,\\quad C = M^T S \\Psi,\\qquad
           B_S = \\Psi^T S \\Psi - D^T D,\\quad D = Q_H^T S \\Psi .

Pipeline (all vectorised over the chunk; small matrices are stored "structure of arrays",
shape ``(r, r, k)``, so each step is one numpy operation over the ``k`` patterns):

1. one GEMM ``P = V^T S`` per block of at most ``GEMM_ROWS`` patterns gives the entries of
   ``C``, ``Psi^T S Psi`` (upper triangle) and ``D`` (and, for the ``N_K`` objective, of
   ``U_K^T S U_K`` and the leverage sums): no ``N x n`` float intermediate beyond one block
   (for a chunk of complementary pairs, half of it: :mod:`.mirror`);
2. an *estimate* ``mu`` of ``lambda_max``: Cholesky ``B = L L^T``,
   ``H = C L^{-T}`` and the smaller ``G`` of ``H^T H``, ``H H^T``; of order
   ``p <= 3`` (the default query: K = 4 less the constant eigenvector) its top
   eigenvalue in closed form (:func:`solvers.sym_eigmax_small`), else ``J``
   squarings: ``||G^(2^J)||_F^(1/2^J)`` exceeds ``lambda_max(G)`` by at most
   the factor ``p^(1/2^(J+1))``;
3. *rigour*: ``mu`` is accepted only when a floating-point Cholesky
   factorization of ``mu B~ - A~ - c I`` completes, with ``c`` covering every
   rounding error (:func:`certify`); then ``mu B - A`` is positive definite
   for the exact pencil, so ``lambda_max(A_S, B_S) <= mu``.  Where it fails the
   margin is widened; where every margin fails the pencil is *unreliable*;
4. :func:`tighten` (for the patterns that can still matter, chosen by the
   caller): a top vector ``x`` from the power steps, its quotient, and a margin
   certified tightly around it (more squarings where the gap is small).

The errors ``alpha >= ||A_S - A~||_2`` and ``beta >= ||B_S - B~||_2`` of the formed pencils
are bounded per pattern from the GEMM bound below (each entry of ``P`` errs by at most
``gamma_{n+2}`` times the absolute column sum of ``V``), the rounding of ``C^T C`` and ``D^T D``
and, for columns of ``M`` dropped as negligible (norm below ``DROP_RTOL`` of the largest, e.g.
the constant eigenvector under the bias feature), their whole contribution ``sum ||m_j||^2``.

Rounding model (Higham, *Accuracy and Stability*, 2nd ed.): a sum of ``n``
products computed in any order (BLAS, FMA) errs by at most
``gamma_n sum |x_i y_i|``, ``gamma_n = n u / (1 - n u)``; a completed Cholesky
factorization ``R`` of ``Y`` satisfies ``R^T R = Y + E``,
``|E| <= gamma_{r+1} |R^T| |R|`` (Thm 10.3), so ``||E||_2 <= gamma_{r+1}
trace(R^T R) <= gamma_{r+1} / (1 - gamma_{r+1}) trace(Y)`` and
``Y >= -||E||_2 I``.  The neurons are ``S Phi to_theta v = S (Psi + E) v``
with ``E`` the (bounded) error of the float basis ``Psi`` of ``col(Phi)``; that
error is added to both allowances (``Plan.basis``).  ``M`` and ``Q_H`` are a float basis of the
features: their proven error (``eta_H`` and the rounding of ``M``,
:func:`relu_gating.search.objectives.feature_allowances`) is added to the allowances too; ``U_K``
is taken as exact (as stored).
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np

from relu_gating._inputs.scaling import pow2_norms
from relu_gating.search._kernels.mirror import mirror_products
from relu_gating.search.objectives import feature_allowances
from relu_gating.search._kernels.stacks import backward, cholesky, cholesky_ok, forward, frob, gram, sym
from solvers import sym_eigmax_small

__all__ = ["Plan", "make_plan", "products", "PencilBounds", "pencil_bounds", "tighten", "cone_sides", "unpacked", "power_estimate",
           "certify", "GEMM_ROWS", "SCREEN_SQUARINGS", "MID_SQUARINGS", "REFINE_SQUARINGS"]

U = np.finfo(float).eps / 2
#: Patterns per GEMM block (bounds the float copy of the masks to GEMM_ROWS x n).
GEMM_ROWS = 512
#: Squarings of the screening estimate (looser than lambda_max by at most p^(1/64)).
SCREEN_SQUARINGS = 5
#: Squarings for the patterns that can still matter (looser by at most p^(2^-13) / p^(2^-41)).
MID_SQUARINGS = 12
REFINE_SQUARINGS = 40
#: Relative margins tried in turn by the screening pass / by the refinement.
SCREEN_MARGINS = (1e-6, 1e-3, 1e-1)
REFINE_MARGINS = (1e-13, 1e-11, 1e-9, 1e-7)
#: Columns of M = (I - Pi_H) U_K with a norm below this fraction of the largest are dropped
#: (their whole contribution is added to the error allowance of A_S).
DROP_RTOL = 1e-6


def _gamma(k: int) -> float:
    return k * U / (1 - k * U)


@dataclass(frozen=True)
class Plan:
    """The GEMM operand of one objective: ``P = masks @ V``; column blocks and their error bounds.

    ``err`` (c,) bounds ``|P_computed - P_exact|`` column by column for any mask
    (``gamma_{n+2}`` times the column's absolute sum: a subset sum of the rounded
    products ``fl(l_i r_i)``).
    """

    V: np.ndarray
    err: np.ndarray
    r: int
    K: int
    q: int
    iu: tuple  # upper-triangle indices of Psi^T S Psi
    captured: bool
    n: int
    KU: int         # columns of U_K (leverage bound of the N_K objective)
    dropped: float  # columns of M below DROP_RTOL are left out (and the basis error): A_S grows by at most this
    basis: float    # ||B_S(Phi) - B_S(Psi)||_2 bound: Psi is a float basis of col(Phi)


_PLANS: dict = {}


def make_plan(obj) -> Plan:
    """:func:`_make_plan`, cached for the last few objectives (a query sends many chunks)."""
    hit = _PLANS.get(id(obj))
    if hit is not None and hit[0]() is obj:
        return hit[1]
    plan = _make_plan(obj)
    if len(_PLANS) >= 8:
        _PLANS.clear()
    _PLANS[id(obj)] = (weakref.ref(obj), plan)
    return plan


def _make_plan(obj) -> Plan:
    """Precompute ``V`` (n, c) for :func:`products`: columns ``C`` (K r), ``Psi^T S Psi`` (upper
    triangle), ``D`` (q r), for the ``N_K`` objective ``U_K^T S U_K`` (upper) and leverages, and
    the number of active samples."""
    Psi, M = obj.Psi, obj.M
    n, r = Psi.shape
    norms = pow2_norms(M, axis=0)  # a column below 2^-537 keeps its norm (its square underflows)
    keep = norms > DROP_RTOL * norms.max()  # e.g. the constant eigenvector under the bias feature
    M = M[:, keep]
    dropped = 1.01 * (1 + 4 * n * U) * float(np.sum(norms[~keep] ** 2))  # >= ||M_drop M_drop^T||_2
    K = M.shape[1]
    iu = np.triu_indices(r)
    cols = [(M[:, :, None] * Psi[:, None, :]).reshape(n, K * r), Psi[:, iu[0]] * Psi[:, iu[1]]]
    q = 0
    if obj.Q_H is not None:
        q = obj.Q_H.shape[1]
        cols.append((obj.Q_H[:, :, None] * Psi[:, None, :]).reshape(n, q * r))
    captured = obj.kind == "captured"
    KU = obj.U_K.shape[1]
    if captured:
        ik = np.triu_indices(KU)
        Uk = obj.U_K
        cols += [Uk[:, ik[0]] * Uk[:, ik[1]], np.sum(Uk ** 2, axis=1)[:, None]]
    cols.append(np.ones((n, 1)))  # the number of active samples (exact: integers)
    V = np.ascontiguousarray(np.concatenate(cols, axis=1))
    err = _gamma(n + 2 + max(K, KU)) * np.abs(V).sum(axis=0) * (1 + 4 * U)
    # the neurons are S Phi to_theta v = S (Psi + E) v: the pencils of Psi + E differ from those of
    # Psi by at most 2 ||E|| + ||E||^2 (||Psi||, ||M|| <= 1), E bounded with the rounding of its product
    m = obj.Phi.shape[1]
    with np.errstate(over="ignore", invalid="ignore"):  # beyond the float range: E inf or nan, never certified
        E = float(pow2_norms((obj.Phi @ obj.to_theta - Psi).ravel()) + _gamma(m + 2) * pow2_norms(
            (np.abs(obj.Phi) @ np.abs(obj.to_theta)).ravel()))
    E = E if math.isfinite(E) else math.inf
    basis = 1.01 * (2 * E * (1 + 1e-6) + E * E) + 1e-300
    # and M, Q_H are a float basis of the features (error eta_H): the true pencils are within (aH, bH)
    aH, bH = feature_allowances(obj)
    return Plan(V=V, err=err, r=r, K=K, q=q, iu=iu, captured=captured, n=n, KU=KU, dropped=dropped + basis + aH,
                basis=basis + bH)


def unpacked(masks: np.ndarray, n: int) -> tuple[np.ndarray, bool]:
    """``(masks, packed)``: ``masks`` as given and whether it is ``np.packbits`` output.

    Packed means dtype uint8 with ``ceil(n / 8)`` columns (for n = 1: a value
    other than 0 and 1); anything else is read as 0/1 masks of shape (k, n).
    """
    masks = np.atleast_2d(np.asarray(masks))
    nb = (n + 7) // 8
    packed = masks.dtype == np.uint8 and masks.shape[1] == nb and (n > 1 or bool(np.any(masks > 1)))
    if not packed and masks.dtype != bool:
        masks = masks.astype(bool)
    return masks, packed


def rows_bool(masks: np.ndarray, packed: bool, n: int, rows=slice(None)) -> np.ndarray:
    """Bool masks of the selected rows (unpacked on the fly)."""
    sub = masks[rows]
    return np.unpackbits(sub, axis=1, count=n).astype(bool) if packed else sub


def products(plan: Plan, masks: np.ndarray, packed: bool) -> np.ndarray:
    """``(masks @ V)^T``, shape (c, k), by blocks of ``GEMM_ROWS`` patterns."""
    k = masks.shape[0]
    out = np.empty((plan.V.shape[1], k))
    VT = np.ascontiguousarray(plan.V.T)
    buf = np.empty((min(GEMM_ROWS, k), plan.n))  # the 0/1 masks as float64, one block at a time
    for s in range(0, k, GEMM_ROWS):
        sub = masks[s:s + GEMM_ROWS]
        blk = buf[:sub.shape[0]]
        np.copyto(blk, np.unpackbits(sub, axis=1, count=plan.n) if packed else sub)
        np.matmul(VT, blk.T, out=out[:, s:s + blk.shape[0]])
    return out


def power_estimate(G: np.ndarray, squarings: int, vectors: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """``(est, vec)``: ``||G^(2^J)||_F^(1/2^J)`` (>= lambda_max(G) up to rounding, at most
    ``p^(1/2^(J+1))`` times it) and a top eigenvector estimate (the largest column of
    ``G^(2^J)``), for a stack of symmetric PSD matrices (p, p, k).

    ``G`` is scaled once to unit Frobenius norm (its top eigenvalue is then at least
    ``p^(-1/2)``, so ``SCREEN_SQUARINGS`` squarings cannot underflow it); longer runs
    rescale at every step."""
    with np.errstate(divide="ignore", invalid="ignore", under="ignore", over="ignore"):
        f0 = frob(G)
        f0 = np.where(f0 > 0, f0, 1.0)
        S = G / f0
        logs = np.zeros(G.shape[2])
        for j in range(squarings):
            S = np.einsum("ijk,jlk->ilk", S, S, optimize=False)
            if squarings > SCREEN_SQUARINGS:
                f = frob(S)
                f = np.where(f > 0, f, 1.0)
                logs += np.log2(f) * 0.5 ** (j + 1)
                S /= f
        est = f0 * np.exp2(logs + np.log2(frob(S)) * 0.5 ** squarings)
    est = np.where(np.isfinite(est), est, 0.0)
    if not vectors:
        return est, None
    cn = np.einsum("ijk,ijk->jk", S, S, optimize=False)
    vec = S[:, np.argmax(cn, axis=0), np.arange(S.shape[2])]
    return est, vec


def certify(A: np.ndarray, B: np.ndarray, alpha: np.ndarray, beta: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Where ``mu B - A`` is provably positive definite for every ``A'``, ``B'`` with
    ``||A' - A||_2 <= alpha``, ``||B' - B||_2 <= beta`` (``mu >= 0``).

    ``X = fl(mu B - A)`` errs by at most ``2.01 u (mu ||B||_F + ||A||_F)`` (two roundings
    per entry); the exact ``mu B' - A'`` is then at least ``X - eta I`` with ``eta`` that
    plus ``mu beta + alpha``.  A completed float Cholesky of ``Y = fl(X - c I)`` gives
    ``Y >= -gamma' trace(Y) I`` (``gamma' = gamma_{r+1} / (1 - gamma_{r+1})``) and
    ``X >= Y + c I - u' max|Y_ii| I``; ``c`` below makes the sum exceed ``eta``.
    """
    r = A.shape[0]
    X = mu * B - A
    diag = np.abs(np.einsum("iik->ik", X))
    eta = mu * beta + alpha + 2.01 * U * (mu * frob(B) + frob(A))
    g = _gamma(r + 1) / (1 - _gamma(r + 1))
    c = 1.05 * (eta + 2 * g * diag.sum(axis=0) + 4 * U * diag.max(axis=0)) + 1e-300
    X[np.arange(r), np.arange(r)] -= c
    ok = cholesky_ok(X)  # X is this call's own
    return ok & np.isfinite(c)


@dataclass
class PencilBounds:
    """Screening result of a chunk (arrays over its k patterns; matrices as (a, b, k))."""

    upper: np.ndarray     # rigorous bound on lambda_max(A_S, B_S); +inf where unreliable
    reliable: np.ndarray  # a margin was certified (B_S then positive definite)
    x: np.ndarray         # top generalized eigenvector estimate (r, k), pencil coordinates
    value: np.ndarray     # its quotient x^T A x / x^T B x (nan where unreliable)
    C: np.ndarray         # M^T S Psi, (K, r, k)
    A: np.ndarray
    B: np.ndarray
    alpha: np.ndarray     # ||A_exact - A||_2 bound
    beta: np.ndarray
    L: np.ndarray         # Cholesky factor of B (garbage where not chol_ok)
    chol_ok: np.ndarray
    leverage: np.ndarray  # Prop 4.1 bound (N_K objective; cap otherwise)
    active: np.ndarray    # number of active samples


def _pencils(plan: Plan, P: np.ndarray) -> tuple:
    """``(C, A, B, alpha, beta)`` from the GEMM output, with rigorous error bounds (spectral norm)."""
    r, K, q = plan.r, plan.K, plan.q
    k = P.shape[1]
    o, t = K * r, r * (r + 1) // 2
    C = P[:o].reshape(K, r, k)
    eC = np.sqrt(np.sum(plan.err[:o] ** 2))
    nC = frob(C)
    A = gram(C, C)
    alpha = 1.01 * (2 * nC * eC + eC ** 2 + _gamma(K) * nC ** 2 + plan.dropped)
    B = sym(P[o:o + t], plan.iu, r)
    beta = np.full(k, np.sqrt(2 * np.sum(plan.err[o:o + t] ** 2)))
    if q:
        D = P[o + t:o + t + q * r].reshape(q, r, k)
        eD = np.sqrt(np.sum(plan.err[o + t:o + t + q * r] ** 2))
        nD = frob(D)
        B -= gram(D, D)  # B is this call's own array
        beta = beta + 2 * nD * eD + eD ** 2 + _gamma(q) * nD ** 2 + U * frob(B)
    return C, A, B, alpha, 1.01 * beta + plan.basis


def _top(C: np.ndarray, L: np.ndarray, squarings: int, vectors: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """``(est, x)``: estimate of ``lambda_max`` and a top vector ``x`` (r, k) of the pencils with
    ``B = L L^T``, ``A = C^T C``, from the smaller of ``H^T H``, ``H H^T`` (``H = L^{-1} C^T``)."""
    K, r = C.shape[0], C.shape[1]
    H = forward(L, np.transpose(C, (1, 0, 2)))  # (r, K, k)
    if not vectors and min(K, r) <= 3:  # closed form: tighter than the squarings, and cheaper
        G = gram(H, H) if K <= r else gram(np.transpose(H, (1, 0, 2)), np.transpose(H, (1, 0, 2)))
        with np.errstate(invalid="ignore", over="ignore"):
            top = sym_eigmax_small(G)
        assert top is not None  # order <= 3
        return np.where(np.isfinite(top), np.maximum(top, 0.0), 0.0), None
    if K <= r:  # top eigenvector z of H^T H (K x K), then y = H z
        est, z = power_estimate(gram(H, H), squarings, vectors)
        y = None if z is None else np.einsum("ajk,jk->ak", H, z)
    else:  # top eigenvector y of H H^T (r x r)
        Ht = np.transpose(H, (1, 0, 2))
        est, y = power_estimate(gram(Ht, Ht), squarings, vectors)
    return est, (None if y is None else backward(L, y))


def pencil_bounds(obj, plan: Plan, masks: np.ndarray, packed: bool, cut: float = -np.inf,
                  mirrored: bool = False) -> PencilBounds:
    """Screening bounds of a chunk: one GEMM, estimates, rigorous acceptance (module docstring);
    ``x``, ``value`` are left to :func:`tighten`.  Where :func:`certify` accepts ``mu = cut`` the
    bound is ``cut`` and nothing else is done (``cut B - A > 0``, ``A >= 0`` prove ``B > 0``; ``L``
    garbage, ``chol_ok`` False there): one Cholesky factorization, no estimate.  ``mirrored``: the
    second half of the chunk complements the first (:mod:`.mirror`: half the GEMM)."""
    got = mirror_products(plan, obj.Phi, masks, packed, products) if mirrored else None
    P, plan = got if got is not None else (products(plan, masks, packed), plan)
    C, A, B, alpha, beta = _pencils(plan, P)
    k = P.shape[1]
    upper = np.full(k, np.inf)
    below = certify(A, B, alpha, beta, np.full(k, float(cut))) if np.isfinite(cut) and cut > 0 else np.zeros(k, bool)
    upper[below] = cut
    rest = np.flatnonzero(~below)
    if rest.size == k:
        L, chol_ok = cholesky(B)
    else:
        L, chol_ok = np.zeros_like(B), np.zeros(k, dtype=bool)
        L[:, :, rest], chol_ok[rest] = cholesky(B[:, :, rest])
    if chol_ok.all():
        est, _ = _top(C, L, SCREEN_SQUARINGS, vectors=False)
        upper, _ = _accept(A, B, alpha, beta, est, SCREEN_MARGINS)
    elif chol_ok.any():
        rows = np.flatnonzero(chol_ok)
        est, _ = _top(C[:, :, rows], L[:, :, rows], SCREEN_SQUARINGS, vectors=False)
        upper[rows], _ = _accept(A[:, :, rows], B[:, :, rows], alpha[rows], beta[rows], est, SCREEN_MARGINS)
    lev = np.full(k, obj.cap)
    if plan.captured:
        s = plan.K * plan.r + plan.r * (plan.r + 1) // 2 + plan.q * plan.r
        lev = _leverage(P[s:], plan, s)
    return PencilBounds(upper, np.isfinite(upper), np.zeros((plan.r, k)), np.full(k, np.nan), C, A, B, alpha, beta,
                        L, chol_ok, lev, P[-1])


def tighten(pb: PencilBounds, rows: np.ndarray, squarings: int = SCREEN_SQUARINGS):
    """``(upper, x, value)`` for the patterns ``rows`` (reliable ones): a top vector ``x`` (r, k)
    estimated by ``squarings`` power steps, its quotient ``value``, and a bound certified
    tightly around ``value`` (converged power steps) or, with many steps, around the Frobenius
    estimate; ``+inf`` where neither certifies (the screening bound stands)."""
    est, x = _top(pb.C[:, :, rows], pb.L[:, :, rows], squarings)
    A, B = pb.A[:, :, rows], pb.B[:, :, rows]
    assert x is not None
    value = quotients(A, B, x)
    args = (A, B, pb.alpha[rows], pb.beta[rows])
    upper, _ = _accept(*args, np.nan_to_num(value), (1e-10,))
    if squarings > SCREEN_SQUARINGS:
        up2, _ = _accept(*args, np.maximum(est, np.nan_to_num(value)), REFINE_MARGINS, skip=np.isfinite(upper))
        upper = np.minimum(upper, up2)
    return upper, x, value


def _accept(A, B, alpha, beta, est, margins, skip=None) -> tuple[np.ndarray, np.ndarray]:
    """The smallest ``est (1 + delta) + 1e-3 delta`` over ``margins`` that :func:`certify` accepts
    (``+inf`` where none does, or where ``skip``)."""
    upper = np.full(est.size, np.inf)
    todo = np.arange(est.size) if skip is None else np.flatnonzero(~skip)
    for delta in margins:
        if todo.size == 0:
            break
        mu = est[todo] * (1 + delta) + 1e-3 * delta
        if todo.size == est.size:  # all of them: no copies
            ok = certify(A, B, alpha, beta, mu)
        else:
            ok = certify(A[:, :, todo], B[:, :, todo], alpha[todo], beta[todo], mu)
        upper[todo[ok]] = mu[ok]
        todo = todo[~ok]
    return upper, np.isfinite(upper)


def _leverage(P: np.ndarray, plan: Plan, start: int) -> np.ndarray:
    """Prop 4.1: ``min(lambda_max(U_K^T S U_K), sum_S l_i, 1)``, rigorous."""
    K = plan.KU
    t = K * (K + 1) // 2
    G = sym(P[:t], np.triu_indices(K), K)
    eG = np.sqrt(2 * np.sum(plan.err[start:start + t] ** 2))
    est, _ = power_estimate(G, SCREEN_SQUARINGS)
    eye = np.broadcast_to(np.eye(K)[:, :, None], G.shape)
    top, _ = _accept(G, eye, np.full(est.size, eG), np.zeros(est.size), est, SCREEN_MARGINS)  # mu I - G > 0
    lev = P[t] + plan.err[start + t]
    return np.minimum(np.minimum(top, lev), 1.0)


def cone_sides(Psi: np.ndarray, x: np.ndarray, masks: np.ndarray, packed: bool, rows: np.ndarray):
    """``(lo, hi)``: extreme entries of ``(2S - I) Psi x`` per pattern ``rows`` and the scale
    ``max |Psi x|`` (blocks of ``GEMM_ROWS``: no k x n array)."""
    n = Psi.shape[0]
    lo, hi, scale = (np.empty(rows.size) for _ in range(3))
    for s in range(0, rows.size, GEMM_ROWS):
        sl = slice(s, s + GEMM_ROWS)
        z = x[:, sl].T @ Psi.T
        scale[sl] = np.abs(z).max(axis=1)
        np.negative(z, out=z, where=~rows_bool(masks, packed, n, rows[sl]))
        lo[sl], hi[sl] = z.min(axis=1), z.max(axis=1)
    return lo, hi, scale


def quotients(A: np.ndarray, B: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``x^T A x / x^T B x`` per pattern (``nan`` where the denominator is not positive)."""
    num = np.einsum("ik,ik->k", x, np.einsum("ijk,jk->ik", A, x))
    den = np.einsum("ik,ik->k", x, np.einsum("ijk,jk->ik", B, x))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
