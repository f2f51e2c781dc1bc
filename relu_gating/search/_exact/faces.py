"""Exact evidence for a chamber whose supremum lies on a one-sample face of its boundary (private).

A neuron active on one sample ``a`` alone, ``h = c e_a``, has the value ``v_a = ||M^T e_a||^2 /
||(I - Pi_H) e_a||^2`` (the leverage ``l_a = ||U_K^T e_a||^2`` for ``N_K``), an exact rational of the
inputs.  When it is the best neuron of a query, every chamber whose closed cone contains it (the
chambers across the walls of the one-sample chamber ``{a}``, and across its edges) has its supremum
``v_a`` on its boundary, not inside: at ``u = v_a`` the dual slack ``u B_S - A_S - G_T^T N G_T``
must be singular along that neuron, so a solver's float multipliers leave it indefinite by their own
error, and the claim the exact check proves stays 1e-8 above the value (a 12-sample ``N_K`` query
said "certified NO").

Here the multipliers are built from the exact pencil instead.  On a chamber with active set ``T``
every neuron is ``h = S Phi theta``, supported on ``T`` with ``h_T = Phi_T theta >= 0``, and

.. math::  u B_S - A_S - G_T^T N G_T = \\Phi_T^T (R(u) - N) \\Phi_T, \\qquad
           R(u) = u (I - \\Pi_H)_{TT} - (M M^T)_{TT},

with the active rows ``G_T = Phi_T`` as the evidence rows.  So ``R(u) - N`` positive semidefinite
with ``N >= 0`` (``h_a h_b >= 0`` on the cone) proves ``u`` (decided first on the ``|T| x |T|``
matrices, then in ``theta`` by the checker's rule).  At ``u`` just above ``v_a`` the row
``a`` of ``R(u)`` is nearly zero on the diagonal, and its positive off-diagonal entries are what a
boundary supremum leaves (they are ``-P_ab >= 0`` for ``N_K`` whenever ``e_a`` is the chamber's
maximum): ``N`` clears them exactly, here ``N_ab = R_ab`` rounded to a float (53 bits), and the
rest of ``R(u)`` must then be PSD.  More generally the face's neuron may have any sub-support ``T'``
of ``T`` (:func:`faces`: the top eigenpair ``(lam, h)`` of the pencil on ``T'``, ``h > 0``, with
nonnegative KKT multipliers ``mu_j = (R(lam) h)_j`` on the samples left out), and
``N_ja = mu_j h_a / ||h||^2`` makes ``(R - N) h`` vanish on them (for one sample, ``N_ja = R_ja``).
Variants also clear the positive off-diagonal entries among the samples left out, or everywhere (a
copositivity certificate of Diananda's form on the orthant).  The claim is decided by the search's
exact test (:func:`relu_gating.certificate.exact_claim`, the checker's rule), at the float just
above ``lam`` (``v_a`` exactly, for one sample) and one step of the checker's ladder (``2^-40``)
above it.  Faces cut by inactive rows need multipliers on them: :func:`polished_claim` polishes the
solver's own (:mod:`relu_gating.search._exact.dual_polish`).

Nothing here is trusted: the evidence is ordinary dual evidence ``(rows, N)`` with float ``N``,
which the checker decides in exact rationals (``FORMAT.md``, "dual evidence").
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["one_sample_values", "face_candidates", "face_claim", "FACE_GAP", "FACE_MAX_ACTIVE"]

#: A chamber is tried when its claim exceeds its best one-sample value by at most this (relative):
#: a float dual bound left above a boundary supremum by the multipliers' error (1e-8 seen).
FACE_GAP = 1e-4

#: Chambers with more active samples try their one-sample faces only (closed form, ``O(|T|^2)``);
#: up to it, also the sub-supports ``T`` less one or two samples (``O(|T|^2)`` eigenproblems).
FACE_MAX_ACTIVE = 12

#: The checker's first ladder step (:data:`relu_gating.checker.ROUNDING_STEP`): tried above ``v_a``.
_STEP = 2.0**-40


def one_sample_values(obj: Any) -> np.ndarray:
    """Float value of each one-sample neuron ``h = e_a`` (n,): ``||M_a||^2 / (1 - ||QH_a||^2)``
    (``M^T (I - Pi_H) e_a = M_a``), nan where ``e_a`` is nearly in ``col(H)``; a filter only."""
    cache = obj.__dict__.setdefault("_face_cache", {}) if hasattr(obj, "__dict__") else {}
    if "v" not in cache:
        num = np.sum(np.asarray(obj.M, dtype=float) ** 2, axis=1)
        den = np.ones(obj.n) if obj.Q_H is None else 1.0 - np.sum(np.asarray(obj.Q_H) ** 2, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            cache["v"] = np.where(den > 1e-12, num / np.where(den > 1e-12, den, 1.0), np.nan)
    return cache["v"]


def face_candidates(obj: Any, masks: np.ndarray, bounds: np.ndarray, near: float | None = None) -> list[int]:
    """Positions whose bound may be a supremum on the chamber's boundary left open: it exceeds the
    best one-sample value of its active set, or ``near`` (the incumbent's value, when known), by more
    than twice the checker's ladder step and at most :data:`FACE_GAP` (relative); or, by any amount,
    one of its one-sample values equals ``near`` (to two ladder steps): the incumbent is a one-sample
    neuron on the chamber's boundary, and a solver's bound was seen 2% above it (3-d samples on a line)."""
    masks = np.asarray(masks, dtype=bool)
    if masks.shape[0] == 0:
        return []
    v = np.nan_to_num(one_sample_values(obj), nan=-np.inf)
    size = masks.sum(axis=1)
    bounds = np.asarray(bounds, dtype=float)
    ok = (size > 0) & np.isfinite(bounds)
    hit = np.zeros(masks.shape[0], dtype=bool)
    tops = [np.where(masks, v[None, :], -np.inf).max(axis=1)]
    if near is not None and np.isfinite(near):
        tops.append(np.full(masks.shape[0], float(near)))
    with np.errstate(invalid="ignore"):
        for t in tops:
            s = np.maximum(1.0, np.abs(np.where(np.isfinite(t), t, 0.0)))
            gap = bounds - t
            hit |= np.isfinite(t) & (gap > 2 * _STEP * s) & (gap <= FACE_GAP * s)
        if near is not None and np.isfinite(near):  # the incumbent is a one-sample neuron of the chamber: any gap
            sc = max(1.0, abs(float(near)))
            at = np.abs(np.where(masks, v[None, :], np.inf) - float(near)) <= 2 * _STEP * sc
            hit |= at.any(axis=1) & (bounds - float(near) > 2 * _STEP * sc)
    return np.flatnonzero(ok & hit).tolist()


def _float_forms(obj: Any, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``((M M^T)_TT, (I - Pi_H)_TT)`` in floats (where to look; the exact test decides)."""
    M = np.asarray(obj.M, dtype=float)[T]
    Bh = np.eye(T.size) if obj.Q_H is None else np.eye(T.size) - obj.Q_H[T] @ obj.Q_H[T].T
    return M @ M.T, Bh


def _sub_supports(t: int) -> list[tuple[int, ...]]:
    """The supports tried for the face's neuron: every singleton, and ``T`` less one or two samples."""
    out: set[tuple[int, ...]] = {(k,) for k in range(t)}
    for drop in list(itertools.combinations(range(t), 1)) + list(itertools.combinations(range(t), 2)):
        rest = tuple(k for k in range(t) if k not in drop)
        if rest:
            out.add(rest)
    return sorted(out, key=len)


def faces(Ah: np.ndarray, Bh: np.ndarray, lo: float, hi: float) -> list[tuple[float, tuple, np.ndarray]]:
    """Candidate faces ``(lam, support, h)`` with ``lo <= lam < hi``, descending: on a sub-support
    ``T'`` the top eigenpair of ``(Ah, Bh)`` restricted to it, with ``h > 0`` (a neuron of the
    orthant) and nonnegative KKT multipliers ``mu_j = -(R(lam) h)_j >= 0``... as floats (to within
    rounding) on the samples left out (leaving the face along ``e_j`` does not increase the value).

    Descending because only the highest can be proven: every face's ``lam`` is the value of a
    nonnegative ``h`` on ``T``, so at most the orthant's maximum ``lam*``, and ``R(u) - N`` with
    ``N >= 0`` is PSD on the orthant's directions only for ``u >= lam*``.  Beyond
    :data:`FACE_MAX_ACTIVE` samples only the one-sample faces are listed (:func:`_one_sample_faces`)."""
    t = Ah.shape[0]
    if t > FACE_MAX_ACTIVE:
        return _one_sample_faces(Ah, Bh, lo, hi)
    out = []
    for sup in _sub_supports(t):
        idx = list(sup)
        Bs = Bh[np.ix_(idx, idx)]
        if np.linalg.eigvalsh(Bs)[0] <= 1e-12:
            continue
        w, V = _top(Ah[np.ix_(idx, idx)], Bs)
        if not lo <= w < hi:
            continue
        h = V if V.sum() > 0 else -V
        if np.any(h <= 0):
            continue
        rest = [k for k in range(t) if k not in sup]
        mu = (Ah[np.ix_(rest, idx)] - w * Bh[np.ix_(rest, idx)]) @ h  # d/dh_j of h^T (A - w B) h, halved
        if np.any(mu > 1e-9 * max(1.0, float(np.abs(Ah).max()))):
            continue
        out.append((float(w), sup, h))
    return sorted(out, key=lambda x: -x[0])


def _one_sample_faces(Ah: np.ndarray, Bh: np.ndarray, lo: float, hi: float) -> list[tuple[float, tuple, np.ndarray]]:
    """The one-sample faces of :func:`faces` in closed form (``O(t^2)``, vectorised): ``lam_a =
    A_aa / B_aa`` and ``h = e_a / sqrt(B_aa)``, kept where ``lo <= lam_a < hi`` and every
    ``A_ja - lam_a B_ja <= `` the same rounding allowance as :func:`faces`; descending."""
    d = np.diag(Bh)
    ok = d > 1e-12
    lam = np.where(ok, np.diag(Ah) / np.where(ok, d, 1.0), -np.inf)
    h = 1.0 / np.sqrt(np.where(ok, d, 1.0))
    with np.errstate(invalid="ignore"):
        mu = (Ah - lam[None, :] * Bh) * h[None, :]  # column a: the KKT multipliers of the face of sample a
    np.fill_diagonal(mu, -np.inf)
    ok &= (lam >= lo) & (lam < hi) & np.all(mu <= 1e-9 * max(1.0, float(np.abs(Ah).max())), axis=0)
    keep = np.flatnonzero(ok)
    return [(float(lam[a]), (int(a),), np.array([h[a]])) for a in keep[np.argsort(-lam[keep])]]


def _top(A: np.ndarray, B: np.ndarray) -> tuple[float, np.ndarray]:
    """Top eigenpair of the pencil ``(A, B)`` (``B`` positive definite), ``h^T B h = 1``."""
    L = np.linalg.cholesky(B)
    Li = np.linalg.inv(L)
    w, V = np.linalg.eigh(Li @ A @ Li.T)
    return float(w[-1]), Li.T @ V[:, -1]


def _unit_columns(n: int, T: np.ndarray) -> np.ndarray:
    E = np.zeros((n, T.size))
    E[T, np.arange(T.size)] = 1.0
    return E


def _float_above(x: Fraction) -> float:
    """The least float ``>= x``."""
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def _multipliers(R: list[list[Fraction]], sup: tuple, h: np.ndarray, variant: str) -> np.ndarray:
    """Float multipliers for the face of support ``sup`` (neuron ``h`` there) at the slack ``R(u)``:
    ``"kkt"``: ``N_ja = mu_j h_a / ||h||^2`` on the samples ``j`` left out and ``a`` in ``sup``, with
    ``mu_j = (R h)_j`` (so ``(R - N) h`` vanishes on them; for one sample, ``N_ja = R_ja``);
    ``"kkt+"``: also the positive off-diagonal entries among the samples left out cleared;
    ``"all"``: every positive off-diagonal entry of ``R`` cleared (Diananda's form)."""
    t = len(R)
    N = np.zeros((t, t))
    if variant == "all":
        for i in range(t):
            for j in range(i + 1, t):
                if R[i][j] > 0:
                    N[i, j] = N[j, i] = float(R[i][j])
        return N
    rest = [j for j in range(t) if j not in sup]
    hh = float(h @ h)
    for j in rest:
        mu = float(sum((R[j][a] * Fraction(float(x)) for a, x in zip(sup, h)), Fraction(0)))
        if mu > 0:
            for a, x in zip(sup, h):
                N[j, a] = N[a, j] = mu * float(x) / hh
    if variant == "kkt+":
        for i in rest:
            for j in rest:
                if i < j and R[i][j] > 0:
                    N[i, j] = N[j, i] = float(R[i][j])
    return N


#: At most this many faces are tried per chamber (descending by their value: only the highest can be
#: proven, see :func:`faces`; more than one for faces tied to rounding).
FACE_TRIES = 4


def face_claim(obj: Any, basis: Any, mask: np.ndarray, bound: float, budget: Any = None, near: float | None = None
               ) -> tuple[float, tuple] | None:
    """``(u, (rows, N))``: the least ``u < bound`` proven by multipliers on the active rows built from
    the exact pencil at ``u`` (see the module docstring), for the faces of :func:`faces` within
    :data:`FACE_GAP` below ``bound``, or any face when the highest is at most ``near`` (the incumbent's value)
    (a one-sample face at the float just above its exact value, others just above their float value, then
    one ladder step above); None when none is proven."""
    from relu_gating.search.proofs import exact_pencil

    T = np.flatnonzero(mask)
    if T.size == 0 or not np.isfinite(bound):
        return None
    scale = max(1.0, abs(bound))
    Ahf, Bhf = _float_forms(obj, T)
    lo = bound - 2 * FACE_GAP * scale
    if near is not None and np.isfinite(near) and near < lo:  # the incumbent's face, however loose the bound
        at = 2 * _STEP * max(1.0, abs(float(near)))
        top = faces(Ahf, Bhf, -np.inf, bound)
        if not top or top[0][0] > near + at:
            return None  # a higher face: the chamber's supremum may be above the incumbent, no proof at it
        # the orthant's top face at most the incumbent (a one-sample face at it, or any face below it: a
        # solver's refuted claim at the ends of the float range, seed 51 of benchmarks/float_range_sweep.py);
        # only the highest can be proven: it and those tied to it by rounding
        lo = top[0][0] - 2 * at
    cands = faces(Ahf, Bhf, lo, bound)[:FACE_TRIES]
    if not cands or not _charge(budget, T.size):
        return None
    A, B = exact_pencil(_unit_columns(obj.n, T), obj.U_K, basis, np.ones(obj.n, dtype=bool))
    for lam, sup, h in cands:
        if len(sup) == 1:
            a = sup[0]
            if B[a][a] <= 0:
                continue
            f0 = _float_above(A[a][a] / B[a][a])
        else:
            f0 = lam + 16 * np.finfo(float).eps * max(abs(lam), 1e-300)
        tries = sorted(x for x in {f0, f0 + _STEP * max(1.0, abs(f0))} if x < bound)
        for u in tries:
            got = _prove_at(obj, basis, mask, T, A, B, u, sup, h, budget)
            if got is not None:
                return u, (T.astype(np.int64), got)
            if budget is not None and budget.left <= 0:
                return None
    return None


def _charge(budget: Any, t: int) -> bool:
    """Spend the exact work of a ``t x t`` rational elimination from ``budget`` (in checks of
    :data:`FACE_MAX_ACTIVE` samples, ``ceil((t / FACE_MAX_ACTIVE)^3)``, at least one); False, with
    nothing spent, when it has not that much left.  Smaller chambers spend nothing here (their
    cost was always counted by the exact claims alone)."""
    if budget is None or t <= FACE_MAX_ACTIVE:
        return True
    units = -(-t**3 // FACE_MAX_ACTIVE**3)
    if budget.left < units:
        return False
    budget.left -= units
    return True


def _prove_at(obj: Any, basis: Any, mask: np.ndarray, T: np.ndarray, A: list, B: list, u: float, sup: tuple,
              h: np.ndarray, budget: Any) -> np.ndarray | None:
    """Multipliers that prove ``u`` (each variant of :func:`_multipliers`: ``R(u) - N`` PSD on the
    active coordinates, then the checker's rule in ``theta``), or None."""
    from relu_gating.search.proofs import exact_below, exact_claim

    U = Fraction(u)
    t = T.size
    R = [[U * B[i][j] - A[i][j] for j in range(t)] for i in range(t)]
    seen: list[np.ndarray] = []
    for variant in ("kkt", "kkt+", "all"):
        N = _multipliers(R, sup, h, variant)
        if any(np.array_equal(N, x) for x in seen):
            continue
        seen.append(N)
        AN = [[A[i][j] + Fraction(float(N[i, j])) for j in range(t)] for i in range(t)]
        if not _charge(budget, t):
            return None
        if not exact_below(U, AN, B):  # R(u) - N not PSD on the active coordinates: no proof here
            continue
        if budget is not None:
            if budget.left <= 0:
                return None
            budget.left -= 1
        if exact_claim(u, obj.Phi, obj.U_K, basis, mask, T, N):  # the checker's rule, in theta
            return N
    return None


def polished_claim(obj: Any, basis: Any, mask: np.ndarray, bound: float, rows: Any, N: Any, budget: Any = None
                   ) -> tuple[float, tuple] | None:
    """``(u, (rows, N))`` with ``u < bound``: the solver's own evidence polished at the face where its
    supremum lies (:func:`relu_gating.search._exact.dual_polish.polish`), in the quotient by an
    exact kernel (:func:`relu_gating.search._exact.kernel_evidence.kernel_evidence`) or, without
    one, on its rows; decided by the exact test.  None when nothing below ``bound`` is proven."""
    from relu_gating.search.proofs import exact_claim
    from relu_gating.search._exact.dual_polish import polish
    from relu_gating.search._exact.kernel_evidence import kernel_evidence, polish_ladder
    from relu_gating.search.objectives import pattern_matrices

    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    got = kernel_evidence(obj, basis, mask, [bound], rows, budget)
    if got is not None:
        return got if got[0] < bound else None
    N = np.asarray(N)
    if rows.size == 0 or N.dtype == object:
        return None
    A, B = pattern_matrices(obj, mask[None])
    G = np.where(mask[rows], 1.0, -1.0)[:, None] * obj.Psi[rows]
    pol = polish(A[0], B[0], G, N.astype(float).reshape(rows.size, rows.size), bound)
    if pol is None:
        return None
    for u in polish_ladder(pol[0]):
        if u >= bound or (budget is not None and budget.left <= 0):
            return None
        if budget is not None:
            budget.left -= 1
        if exact_claim(u, obj.Phi, obj.U_K, basis, mask, rows, pol[1]):
            return u, (rows, pol[1])
    return None
