"""The verifier's own bound proofs, in plain numpy (private).

Nothing here is shared with the search: no solver, no pencil routine of
:mod:`relu_gating.search.objectives`.  For a stack of gating patterns ``S`` and the
verifier's orthonormal basis ``Q`` of ``col(Phi)``, every neuron of a pattern
is ``h = S Q v`` with ``v`` in the pattern's cone, and its objective is the
quotient ``v^T A_S v / v^T B_S v`` with

.. math::  A_S = Q^T S M M^T S Q,\\qquad B_S = Q^T S (I - \\Pi_H) S Q.

A claimed bound ``u`` of a pattern is proven by one of:

* **pencil**: ``u B_S - A_S - D ⪰ 0`` (``D = G_T^T N G_T`` for dual evidence,
  0 otherwise), tested with ``eigvalsh`` and an explicit allowance ``delta``
  for the rounding of the formation and of the eigenvalues; if the smallest
  eigenvalue ``lam`` falls short of ``delta``, the proven bound is
  ``u + (delta - lam) / beta`` with ``beta`` a lower bound on
  ``lambda_min(B_S)`` (``+inf`` when ``B_S`` is numerically singular);
* **support**: the maximum over all ``h`` supported on the active samples,
  computed here in ``K x K`` form (Prop 4.1 and its marginal-gain analogue);
* **cap**: ``1`` for ``N_K``, ``||M||_2^2 = s_K(H)^2`` for ``G_H``;
* **dual evidence** (exactly solved patterns): ``u B_S - A_S - G_T^T N G_T``
  positive definite decided in exact rational arithmetic
  (:func:`exact_slack_pd`), else bounded in floats (:func:`dual_bound`).

The proven bound of a pattern is the smallest of these.
"""

from __future__ import annotations

import math
from typing import Any
from fractions import Fraction

import numpy as np

from relu_gating.checker import EXCLUDE_RTOL, ROUNDING_STEP

__all__ = ["pattern_pencils", "pencil_bounds", "gross_scale", "support_bounds", "cap_bound", "dual_bound", "FORM_EPS_FACTOR",
           "SINGULAR_RTOL", "exact_slack_pd", "exact_claim", "exact_excluded", "exact_feature_basis",
           "exact_pencil", "exact_psd", "exact_parts", "exact_below", "exact_gram"]

_EPS = np.finfo(float).eps

#: Allowance multiplier: rounding of a sum of ``n`` products and of ``eigvalsh``
#: is taken as ``FORM_EPS_FACTOR * (n + d^2) * eps`` times the magnitude involved.
FORM_EPS_FACTOR = 8.0

#: ``B_S`` (or the support pencil) counts as singular below this relative eigenvalue.
SINGULAR_RTOL = 1e-12


def _allow(n: int, d: int) -> float:
    return FORM_EPS_FACTOR * (n + d * d) * _EPS


def _masked(masks: np.ndarray, *pairs: tuple[np.ndarray, np.ndarray]) -> list[np.ndarray]:
    """``L^T S R`` for every mask ``S`` (rows of ``masks``) and every pair ``(L, R)``: (k, a, b) each.

    One matrix product for all pairs: ``masks @ [vec(l_i r_i^T) ...]``.
    """
    blocks = [(L[:, :, None] * R[:, None, :]).reshape(L.shape[0], -1) for L, R in pairs]
    out = masks @ np.concatenate(blocks, axis=1)
    res, c = [], 0
    for L, R in pairs:
        w = L.shape[1] * R.shape[1]
        res.append(out[:, c:c + w].reshape(-1, L.shape[1], R.shape[1]))
        c += w
    return res


def pattern_pencils(masks: np.ndarray, Q: np.ndarray, M: np.ndarray,
                    QH: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``(A_S, B_S)`` for a stack of float 0/1 masks (k, n): shapes (k, r, r)."""
    pairs = [(M, Q), (Q, Q)] + ([] if QH is None else [(QH, Q)])
    got = _masked(masks, *pairs)
    C, B = got[0], got[1]  # M^T S Q, Q^T S Q
    A = np.einsum("kai,kaj->kij", C, C)
    if QH is not None:
        E = got[2]  # QH^T S Q
        B = B - np.einsum("kai,kaj->kij", E, E)
    return 0.5 * (A + np.transpose(A, (0, 2, 1))), 0.5 * (B + np.transpose(B, (0, 2, 1)))


def _trace(X: np.ndarray) -> np.ndarray:
    return np.abs(np.einsum("kii->k", X))


def gross_scale(masks: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """``trace(Q^T S Q)`` per mask (k,): the size of the terms ``B_S`` is formed from.  With
    features, ``B_S = Q^T S Q - E^T E`` may cancel to far below it (``h`` near ``col(H)``): its
    rounding is relative to this, not to ``B_S``."""
    return masks @ np.einsum("ij,ij->i", Q, Q)


def pencil_bounds(A: np.ndarray, B: np.ndarray, ub: np.ndarray, n: int,
                  D: np.ndarray | None = None, gross: np.ndarray | None = None,
                  allowance: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """Proven bounds from the claims ``ub`` (k,): ``ub`` itself when ``ub B - A - D ⪰ 0`` holds
    with margin, else ``ub`` plus the shortfall over ``lambda_min(B)``, else ``+inf``.  ``gross``
    (:func:`gross_scale`): the size of the terms ``B`` was formed from, when it cancels.
    ``allowance = (a, b)``: the true pencils are within ``a`` and ``b`` of ``A`` and ``B`` (the float
    basis of the features, :meth:`StatedProblem.allowances`): the margin grows by ``|ub| b + a`` and
    ``lambda_min(B)``'s bound shrinks by ``b``."""
    r = A.shape[1]
    ubc = np.where(np.isfinite(ub), ub, 0.0)
    C = ubc[:, None, None] * B - A - (0.0 if D is None else D)
    tB = _trace(B) if gross is None else np.maximum(_trace(B), gross)
    mag = np.abs(ubc) * tB + _trace(A) + (0.0 if D is None else np.abs(D).sum(axis=(1, 2)))
    a_H, b_H = allowance
    delta = _allow(n, r) * mag + np.finfo(float).tiny + (np.abs(ubc) * b_H + a_H) * (1 + 1e-6)
    lam = np.linalg.eigvalsh(C)[:, 0]
    wB = np.linalg.eigvalsh(B)
    beta = wB[:, 0] - _allow(n, r) * tB - b_H
    ok_beta = beta > SINGULAR_RTOL * np.maximum(wB[:, -1], np.finfo(float).tiny)
    short = np.maximum(delta - lam, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        via_beta = np.where(ok_beta, ubc + short / np.where(ok_beta, beta, 1.0), np.inf)
    out = np.where(lam >= delta, ubc, via_beta)
    return np.where(np.isfinite(ub), out, np.inf)


def support_bounds(masks: np.ndarray, U: np.ndarray, M: np.ndarray, QH: np.ndarray | None,
                   err: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """Max of the objective over all ``h`` supported on the active samples (k,).

    ``N_K``: ``||U_A||_2^2``.  ``G_H``: the top eigenvalue of
    ``M_A^T M_A + X (I - QH_A^T QH_A)^{-1} X^T`` with ``X = M_A^T QH_A``
    (Woodbury form of the pencil ``(M_A M_A^T, I - QH_A QH_A^T)``); ``+inf``
    where ``I - QH_A^T QH_A`` is singular (a vector on the support lies in
    ``col(H)``).  ``err = (eta, d)``: ``QH QH^T`` within ``eta`` of ``Pi_H`` and ``M`` within ``d`` of
    ``(I - Pi_H) U``: the bound ``t`` of the float pencil becomes ``t + (t eta + a) / (w - eta)``,
    ``a = 2 (||U|| + d) d + d^2``, ``w`` a bound on ``lambda_min(I - QH_A QH_A^T) = 1 -
    lambda_max(QH_A^T QH_A)`` (``+inf`` where ``w <= eta``).
    """
    n, K = U.shape
    if QH is None:
        (T,) = _masked(masks, (U, U))
        return np.linalg.eigvalsh(T)[:, -1] + _allow(n, K) * _trace(T)
    q = QH.shape[1]
    QQ, X, MM = _masked(masks, (QH, QH), (M, QH), (M, M))
    Gq = np.eye(q)[None] - QQ
    wq = np.linalg.eigvalsh(Gq)[:, 0] - _allow(n, q) * q
    ok = wq > SINGULAR_RTOL
    Gs = np.where(ok[:, None, None], Gq, np.eye(q)[None])
    T = MM + X @ np.linalg.solve(Gs, np.transpose(X, (0, 2, 1)))
    top = np.linalg.eigvalsh(0.5 * (T + np.transpose(T, (0, 2, 1))))[:, -1]
    allowance = _allow(n, K + q) * (_trace(T) + 1.0) / np.where(ok, wq, 1.0)
    t = top + allowance
    eta, d = err
    if eta == 0 and d == 0:
        return np.where(ok, t, np.inf)
    a = (2.0 * (math.sqrt(1.0 + K * 1.01e-10) + d) * d + d * d) * (1 + 1e-6)
    ok = ok & (wq > eta) & np.isfinite(eta + d)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t = t + (np.abs(t) * eta + a) / np.where(ok, wq - eta, 1.0) * (1 + 1e-6)
    return np.where(ok, t, np.inf)


def cap_bound(M: np.ndarray, features: bool, d: float = 0.0) -> float:
    """``1`` for ``N_K``; ``||M||_2^2 = s_K(H)^2`` (plus rounding) for the marginal gain, ``M``
    within ``d`` of ``(I - Pi_H) U_K``."""
    if not features:
        return 1.0
    n, K = M.shape
    return float(min(1.0, (np.linalg.norm(M, 2) + d) ** 2 + _allow(n, K) * K))


def dual_bound(A: np.ndarray, B: np.ndarray, D: np.ndarray, n: int) -> float:
    """Proven ``sup v^T (A + D) v / v^T B v`` for one pattern (bounds the objective on the cone).

    ``D = G_T^T N G_T`` with ``N >= 0``, so ``v^T A v <= v^T (A + D) v`` on the
    cone.  With ``B = W diag(w) W^T``: on ``range(B)`` whitened coordinates;
    ``ker B`` splits into directions where ``A + D`` and its coupling vanish
    (they play no part) and directions where it is negative definite (the
    supremum is then the top eigenvalue of the Schur complement); anything
    else gives ``+inf``.
    """
    r = A.shape[0]
    Mx = 0.5 * (A + D + (A + D).T)
    w, W = np.linalg.eigh(B)
    wmax = max(float(w[-1]), np.finfo(float).tiny)
    rng = w > SINGULAR_RTOL * wmax
    if not rng.any():  # no direction the floats can whiten: no float proof
        return float("inf")
    delta = _allow(n, r) * float(np.abs(Mx).sum() + np.abs(B).sum())
    R = W[:, rng] / np.sqrt(w[rng])
    top = R.T @ Mx @ R
    if rng.all():
        return _top_plus(top, delta, float(w[rng].min()))
    mu, Y = np.linalg.eigh(W[:, ~rng].T @ Mx @ W[:, ~rng])
    Z = W[:, ~rng] @ Y
    C = R.T @ Mx @ Z
    zero = np.abs(mu) <= delta
    if np.any(zero) and np.abs(C[:, zero]).max(initial=0.0) > delta * 1e3:
        return float("inf")  # a kernel direction the numerator sees: no finite bound from this evidence
    neg = mu < -delta
    if not np.all(zero | neg):
        return float("inf")
    if neg.any():
        Cn = C[:, neg]
        top = top - (Cn / mu[neg]) @ Cn.T
        delta = delta * (1.0 + float(np.abs(Cn).sum()) ** 2 / float(-mu[neg].max()))
    return _top_plus(top, delta, float(w[rng].min()))


def _top_plus(top: np.ndarray, delta: float, wmin: float) -> float:
    """Top eigenvalue of a whitened pencil plus its rounding allowance ``delta / w_min``."""
    if top.size == 0:
        return float("-inf")
    lam = float(np.linalg.eigvalsh(0.5 * (top + top.T))[-1])
    return lam + delta / max(wmin, np.finfo(float).tiny) * (1.0 + abs(lam))


def _ints(X: np.ndarray) -> tuple[np.ndarray, int]:
    """``X`` as exact integers: ``(Xi, s)`` with ``X = Xi * 2^-s`` (object array of Python ints)."""
    X = np.asarray(X, dtype=float)
    nz = X[X != 0]
    s = 0 if nz.size == 0 else int(53 - np.frexp(nz)[1].min())
    out = np.empty(X.shape, dtype=object)
    flat = out.reshape(-1)
    for k, x in enumerate(X.reshape(-1).tolist()):
        m, e = math.frexp(x)
        mant, sh = int(m * (1 << 53)), e - 53 + s
        flat[k] = mant << sh if sh >= 0 else mant >> -sh  # sh >= 0 for every entry by the choice of s
    return out, s


def exact_slack_pd(ub: float, Q: np.ndarray, M: np.ndarray, QH: np.ndarray | None, mask: np.ndarray,
                   G: np.ndarray, N: np.ndarray) -> bool:
    """Is ``ub B_S - A_S - G^T N G`` positive definite, in exact arithmetic?

    Every float input is taken as the exact rational it is (scaled to
    integers by a power of two), the pencil is formed in Python integers
    and its leading principal minors are computed by fraction-free
    (Bareiss) elimination: no rounding anywhere, so True is a proof for the
    verifier's basis ``Q``.  Used for the few patterns with dual evidence
    whose float allowance is too coarse.
    """
    act = np.flatnonzero(mask)
    Y, sy = _ints(Q[act])
    Mi, sm = _ints(M[act])
    C1 = Mi.T @ Y  # scale 2^-(sm + sy)
    A = C1.T @ C1  # 2^-2(sm + sy)
    B = Y.T @ Y  # 2^-2sy
    if QH is not None:
        Hi, sh = _ints(QH[act])
        E = Hi.T @ Y  # 2^-(sh + sy)
        B = B * (1 << 2 * sh) - E.T @ E  # 2^-2(sh + sy)
    else:
        sh = 0
    Gi, sg = _ints(G if G.shape[0] else np.zeros((1, Q.shape[1])))
    Ni, sn = _ints(N if G.shape[0] else np.zeros((1, 1)))
    D = Gi.T @ Ni @ Gi  # 2^-(2sg + sn)
    ui, su = _ints(np.array([[float(ub)]]))
    # common scale 2^-T for u B, A and D
    eB, eA, eD = su + 2 * (sh + sy), 2 * (sm + sy), 2 * sg + sn
    T = max(eB, eA, eD)
    C = (ui[0, 0] << (T - eB)) * B - A * (1 << (T - eA)) - D * (1 << (T - eD))
    return _bareiss_pd(C.tolist())


def _bareiss_pd(C: list) -> bool:
    """Positive definiteness of a symmetric integer matrix: every leading principal minor > 0."""
    C = [row[:] for row in C]
    r, prev = len(C), 1
    for k in range(r):
        if C[k][k] <= 0:  # C[k][k] is the (k+1)-th leading principal minor
            return False
        for i in range(k + 1, r):
            for j in range(k + 1, r):
                C[i][j] = (C[i][j] * C[k][k] - C[i][k] * C[k][j]) // prev
        prev = C[k][k]
    return True


# ---------------------------------------------------------------- exact decisions on the stated inputs


def _frac_matrix(N: Any, p: int) -> list[list[Fraction]]:
    """Multipliers ``N`` (p x p; floats, or exact rationals in an object array) as Fractions, clipped at 0."""
    N = np.asarray(N).reshape(p, p)
    if N.dtype == object:
        return [[max(Fraction(v), Fraction(0)) for v in row] for row in N.tolist()]
    return _frac_rows(np.maximum(N.astype(float), 0.0))


def _frac_rows(X: np.ndarray) -> list[list[Fraction]]:
    return [[Fraction(float(x)) for x in row] for row in np.atleast_2d(np.asarray(X, dtype=float))]


def exact_feature_basis(H: np.ndarray | None) -> list[list[Fraction]] | None:
    """An orthogonal basis of ``col(H)`` in exact rationals (rational Gram-Schmidt over the
    independent columns; the floats of ``H`` taken as the rationals they are); None for no features."""
    if H is None:
        return None
    Hf = _frac_rows(np.asarray(H, dtype=float).T)  # columns as rows
    basis: list[list[Fraction]] = []
    norms: list[Fraction] = []
    for v in Hf:
        for b, bb in zip(basis, norms):
            f = sum((x * y for x, y in zip(v, b)), Fraction(0)) / bb
            if f:
                v = [x - f * y for x, y in zip(v, b)]
        if any(v):
            basis.append(v)
            norms.append(sum((x * x for x in v), Fraction(0)))
    return basis


def _project_out(h: list[Fraction], basis: list[list[Fraction]] | None) -> list[Fraction]:
    """``(I - Pi_H) h`` exactly (``basis`` orthogonal)."""
    if not basis:
        return h
    y = list(h)
    for b in basis:
        bb = sum((x * x for x in b), Fraction(0))
        f = sum((x * z for x, z in zip(h, b)), Fraction(0)) / bb
        if f:
            y = [a - f * c for a, c in zip(y, b)]
    return y


def _residual_columns(Phi: np.ndarray, mask: np.ndarray, basis: list | None) -> list[list[Fraction]]:
    """The columns ``(I - Pi_H) S Phi e_j`` (one list of n Fractions per column of ``Phi``)."""
    act = np.asarray(mask, dtype=bool)
    out = []
    for col in _frac_rows(np.asarray(Phi, dtype=float).T):
        h = [x if a else Fraction(0) for x, a in zip(col, act)]
        out.append(_project_out(h, basis))
    return out


def exact_pencil(Phi: np.ndarray, U: np.ndarray, basis: list | None, mask: np.ndarray
                 ) -> tuple[list[list[Fraction]], list[list[Fraction]]]:
    """``(A_S, B_S)`` in the user's coordinates ``theta``, exactly: ``theta^T A theta =
    ||U^T y||^2``, ``theta^T B theta = ||y||^2`` with ``y = (I - Pi_H) S Phi theta``."""
    Y = _residual_columns(Phi, mask, basis)
    Uc = _frac_rows(np.asarray(U, dtype=float).T)  # columns of U
    W = [[sum((u * y for u, y in zip(uc, yc)), Fraction(0)) for uc in Uc] for yc in Y]  # m x K
    m = len(Y)
    A = [[sum((a * b for a, b in zip(W[i], W[j])), Fraction(0)) for j in range(m)] for i in range(m)]
    B = [[sum((a * b for a, b in zip(Y[i], Y[j])), Fraction(0)) for j in range(m)] for i in range(m)]
    return A, B


def exact_psd(C: list[list[Fraction]]) -> bool:
    """Is the symmetric rational matrix ``C`` positive semidefinite?  Exact: a positive diagonal
    pivot is eliminated (Schur complement), a negative one refutes, and a zero diagonal entry
    requires its whole row to vanish."""
    C = [row[:] for row in C]
    idx = list(range(len(C)))
    while idx:
        k = next((i for i in idx if C[i][i] > 0), None)
        if k is None:  # no positive pivot left: PSD iff what remains is zero
            return all(C[i][j] == 0 for i in idx for j in idx)
        idx.remove(k)
        p = C[k][k]
        for i in idx:
            if C[i][k]:
                f = C[i][k] / p
                for j in idx:
                    C[i][j] -= f * C[k][j]
    return True


def exact_parts(Phi: np.ndarray, U: np.ndarray, basis: list | None, mask: np.ndarray, rows: np.ndarray,
                N: np.ndarray) -> tuple[list[list[Fraction]], list[list[Fraction]]]:
    """``(A_S + G_T^T N G_T, B_S)`` in the user's coordinates, exactly (see :func:`exact_claim`)."""
    A, B = exact_pencil(Phi, U, basis, mask)
    m = len(A)
    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    if rows.size:
        Nf = _frac_matrix(N, rows.size)
        G = [[x if mask[r] else -x for x in row] for r, row in zip(rows.tolist(), _frac_rows(Phi[rows]))]
        half = Fraction(1, 2)
        NG = [[sum(((Nf[a][b] + Nf[b][a]) * half * G[b][j] for b in range(rows.size)), Fraction(0))
               for j in range(m)] for a in range(rows.size)]
        A = [[A[i][j] + sum((G[a][i] * NG[a][j] for a in range(rows.size)), Fraction(0)) for j in range(m)]
             for i in range(m)]
    return A, B


def exact_claim(claim: float, Phi: np.ndarray, U: np.ndarray, basis: list | None, mask: np.ndarray,
                rows: np.ndarray, N: np.ndarray) -> bool:
    """Is ``claim`` a bound of the objective over the pattern's cone, by ``claim B - A - G_T^T N G_T``
    positive semidefinite, decided in exact rationals on the caller's inputs?

    Everything is exact: ``Phi``, ``U``, the features (``basis`` from :func:`exact_feature_basis`)
    and the multipliers ``N`` (symmetrised and clipped at 0, so nonnegative) are the rationals
    their floats are; ``G_T`` are the signed rows ``(2 s_i - 1) phi_i`` of ``Phi`` itself, so no
    rounded basis enters.  True is a proof; False means this evidence does not prove the claim.
    """
    if not np.isfinite(claim):
        return False
    AD, B = exact_parts(Phi, U, basis, mask, rows, N)
    return exact_below(Fraction(float(claim)), AD, B, None if basis is None else exact_gram(Phi, mask))


def exact_below(u: Fraction, AD: list[list[Fraction]], B: list[list[Fraction]],
                ZZ: list[list[Fraction]] | None = None) -> bool:
    """``u`` bounds the objective, exactly: ``u B - AD`` positive semidefinite, or, with ``ZZ`` (the
    Gram matrix of ``S Phi``: only admissible neurons count, ``||(I - Pi_H) h|| > EXCLUDE_RTOL ||h||``),
    ``(u - lam) B - AD + lam EXCLUDE_RTOL^2 ZZ`` PSD with ``lam = ROUNDING_STEP max(1, |u|)`` (the
    S-lemma: then ``u B - AD >= lam (B - EXCLUDE_RTOL^2 ZZ) >= 0`` on admissible neurons; the
    checker's own rule, ``FORMAT.md``)."""
    m = len(B)
    if exact_psd([[u * B[i][j] - AD[i][j] for j in range(m)] for i in range(m)]):
        return True
    if ZZ is None:
        return False
    lam = Fraction(ROUNDING_STEP * max(1.0, abs(float(u))))
    t2 = lam * Fraction(EXCLUDE_RTOL) ** 2
    return exact_psd([[(u - lam) * B[i][j] - AD[i][j] + t2 * ZZ[i][j] for j in range(m)] for i in range(m)])


def exact_gram(Phi: np.ndarray, mask: np.ndarray) -> list[list[Fraction]]:
    """``(S Phi)^T (S Phi)`` in exact rationals."""
    rows = _frac_rows(np.asarray(Phi, dtype=float)[np.asarray(mask, dtype=bool)])
    m = np.asarray(Phi).shape[1]
    return [[sum((r[i] * r[j] for r in rows), Fraction(0)) for j in range(m)] for i in range(m)]


def exact_excluded(Phi: np.ndarray, basis: list | None, mask: np.ndarray) -> bool:
    """Does the pattern have no admissible neuron, exactly: no active sample, or every column of
    ``S Phi`` in ``col(H)`` (so ``(I - Pi_H) S Phi = 0``)?"""
    if not np.any(mask):
        return True
    if basis is None:
        return False
    return all(not any(y) for y in _residual_columns(Phi, mask, basis))
