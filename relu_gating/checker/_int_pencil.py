"""Exact mode's node pencils in integers (private; loaded only by ``verify(..., exact=True)``).

A tree node's span ``col(D+ Phi) + span{e_i: i undecided}`` has the basis ``Z`` of the rows of
``Phi_r`` (integers, one common scale) on the active rows and unit vectors on the undecided ones.
:func:`node_forms` gives ``A = Z^T M M^T Z``, ``B = Z^T (I - Pi_H) Z`` and ``ZZ = Z^T Z`` as
integer matrices over common integer denominators (``(H^T H)^{-1}`` = adjugate / determinant), from
integer data prepared once per problem: ``O(n p (r + q))`` integer products a node, no fraction.

:func:`psd` decides ``C >= 0`` for a symmetric integer matrix, exactly:

* a negative diagonal entry refutes; a zero one needs its row zero (then the row is dropped);
* the rest is made congruent by powers of two to equal diagonals (within a factor 4: exact);
* **accept** in floats only with a proven bound: ``F`` the float copy (``|F - C 2^-sh| <= 1 + eps
  |F|`` entrywise, ``1`` only when shifted), ``c = lambda_min(F) / 2``, ``L`` the float Cholesky
  factor of ``F - c I`` (any ``L``: ``L L^T`` is PSD), ``R = F - c I - L L^T`` computed with
  Higham's ``gamma_{p+2}`` bound; ``lambda_min(C 2^-sh) >= c - ||R|| - ||F - C 2^-sh||``;
* **refute** exactly: the float eigenvector of a negative eigenvalue, rounded to integers ``x``,
  with ``x^T C x < 0`` in integers;
* else symmetric Bareiss elimination (:func:`relu_gating.checker._rational.is_psd`) decides.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from relu_gating.checker._constants import EPS, EXCLUDE_RTOL, ROUNDING_STEP
from relu_gating.checker._floats import fro, gamma
from relu_gating.checker._rational import det as det_int, is_psd
from relu_gating.errors import CertificateError

__all__ = ["node_forms", "psd", "psd_excluding", "first_proven", "Meter", "dual_form"]

_TINY = float(np.finfo(float).tiny)


def _data(E: Any) -> tuple:
    """``(Y, X, adj, HU, det, 4^su, K)`` of an :class:`ExactProblem` as integer object arrays (cached on it):
    ``X = [U, H]``, ``(H^T H)^{-1} = adj / det`` (None when the identity), ``HU = H^T U``."""
    got = getattr(E, "_int_pencil", None)
    if got is None:
        def obj(X: list) -> np.ndarray:
            return np.array(X, dtype=object).reshape(len(X), -1)
        Y, X = obj(E.Y), obj(E.Ui)
        adj = HU = None
        det = 1
        if E.Hi is not None:
            H = obj(E.Hi)
            det = math.lcm(*(x.denominator for row in E.Ginv for x in row))
            adj = obj([[x.numerator * (det // x.denominator) for x in row] for row in E.Ginv])
            HU = H.T.dot(X)
            X = np.concatenate([X, H], axis=1)
            adj = None if adj.shape == (1, 1) and adj[0, 0] == 1 else adj
        got = E._int_pencil = (Y, X, adj, HU, det, 4 ** E.su, E.K)
    return got


def node_forms(E: Any, plus: list, und: list, full: bool = False) -> tuple:
    """``(A, B, ZZ, sA, sB)``: integer ``p x p`` matrices with ``A / sA``, ``B / sB`` and ``ZZ`` the exact
    forms over the span of the active rows ``plus`` (rows of ``Phi_r``) and the undecided ``und``: in the
    coordinates of the independent columns of ``Phi_r`` on ``plus``, or with ``full`` of all its columns
    (``theta`` itself: where evidence constrains ``theta`` on other rows, a basis of the span is not enough)."""
    Y, X, adj, HU, det, s4, K = _data(E)
    Yp, keep = Y[plus], list(range(Y.shape[1])) if full else []
    G = Yp.T.dot(Yp)
    if plus and not full:  # the independent columns of Y on the active rows: with the unit vectors, a basis (ZZ definite)
        for j in range(Y.shape[1]):
            if det_int(G[np.ix_(keep + [j], keep + [j])].tolist()) != 0:
                keep.append(j)
    Yp = Yp[:, keep]
    r, k = len(keep), len(und)
    p = r + k
    ZZ = np.zeros((p, p), dtype=object)
    XZ = np.zeros((X.shape[1], p), dtype=object)  # [U, H]^T Z
    if r and plus:
        ZZ[:r, :r] = G[np.ix_(keep, keep)]
        XZ[:, :r] = X[plus].T.dot(Yp)
    ZZ[np.arange(r, p), np.arange(r, p)] = 1
    XZ[:, r:] = X[und].T
    if HU is None:
        return XZ.T.dot(XZ), ZZ, ZZ, s4, 1
    HZ = XZ[K:]
    GHZ = HZ if adj is None else adj.dot(HZ)
    W = np.concatenate([HU, HZ], axis=1).T.dot(GHZ)  # [H^T U, H^T Z]^T (H^T H)^{-1} H^T Z, times det
    UZd = det * XZ[:K] - W[:K]  # det M^T Z
    return UZd.T.dot(UZd), det * ZZ - W[K:], ZZ, det * det * s4, det


def _congruent(rows: list) -> Any:
    """True/False when decided by the diagonal; else the rows made congruent by powers of two (diagonals
    equal to a factor 4; zero diagonals with zero rows dropped)."""
    p = len(rows)
    if any(rows[i][i] < 0 for i in range(p)):
        return False
    if any(rows[i][j] for i in range(p) if rows[i][i] == 0 for j in range(p)):
        return False
    keep = [i for i in range(p) if rows[i][i] > 0]
    if not keep:
        return True
    bits = [rows[i][i].bit_length() for i in keep]
    top = max(bits)
    e = [(top - b) // 2 for b in bits]
    return [[rows[i][j] << (ei + ej) for j, ej in zip(keep, e)] for i, ei in zip(keep, e)]


def _float_accepts(F: np.ndarray, shifted: bool) -> tuple[bool, Any]:
    """(accepted, float eigenvector of a negative eigenvalue or None): see the module docstring."""
    p = F.shape[0]
    conv = fro(EPS * np.abs(F) + (1.0 if shifted else 0.0))
    w, W = np.linalg.eigh(F)
    c = 0.5 * float(w[0])
    if not c > 0:
        return False, (W[:, 0] if w[0] < 0 else None)
    I = np.eye(p)
    try:
        L = np.linalg.cholesky(F - c * I)
    except np.linalg.LinAlgError:
        return False, None
    aL = np.abs(L)
    bound = (fro((F - c * I) - L @ L.T) + gamma(p + 2) * fro(np.abs(F) + c * I + aL @ aL.T) + conv
             + 8.0 * p**3 * _TINY) * (1 + gamma(p * p + 4))
    return bool(np.isfinite(bound) and c * (1 - 4 * EPS) > bound), None


class Meter:
    """The exact eliminations of one verify, in units of ``p^4 b / 64`` (a ``p x p`` matrix of ``b``-bit
    entries: ``p^3`` steps on entries growing to ``p b`` bits); past ``limit`` a one-line refusal."""

    def __init__(self, limit: float) -> None:
        self.used, self.limit = 0.0, float(limit)

    def charge(self, rows: list) -> None:
        p = len(rows)
        self.used += p**4 * max(abs(x).bit_length() for row in rows for x in row) / 64
        if self.used > self.limit:
            raise CertificateError(f"exact mode: the claims floats cannot decide need more exact elimination than "
                                   f"{self.limit:.3g} units of the stated problem allow (FORMAT.md, Limits); verify "
                                   "without --exact")


def psd(C: Any, meter: Meter | None = None) -> bool | None:
    """Whether the symmetric integer matrix ``C`` (object array or nested lists) is PSD, exactly; None when
    floats and the refutation cannot decide and no ``meter`` allows the exact elimination."""
    rows = _congruent(C.tolist() if isinstance(C, np.ndarray) else [list(r) for r in C])
    if rows is True or rows is False:
        return rows
    top = max(abs(x).bit_length() for row in rows for x in row)
    sh = max(0, top - 400)  # entries below 2^400 after the shift: their squares' sums stay finite
    F = np.array([[float(x >> sh) for x in row] for row in rows])
    ok, v = _float_accepts(F, sh > 0)
    if ok:
        return True
    if v is not None:
        x = [int(t) for t in np.round(v * 2.0**40).tolist()]
        if sum(a * sum(c * b for c, b in zip(row, x)) for a, row in zip(x, rows)) < 0:
            return False
    if meter is None:
        return None
    meter.charge(rows)
    return is_psd(rows)


def psd_excluding(u: float, forms: tuple, meter: Meter | None = None, D: tuple | None = None) -> bool | None:
    """:func:`relu_gating.checker._exact_claims.psd_excluding` on the integer forms of :func:`node_forms`:
    ``u B - A - D`` PSD, or ``(u - lam) B - A - D + lam EXCLUDE_RTOL^2 ZZ`` PSD (``lam = ROUNDING_STEP
    max(1, |u|)``; ``D = (Di, sD)`` an integer matrix over its denominator, :func:`dual_form`, or None: 0);
    None when undecided without a ``meter`` (:func:`psd`)."""
    A, B, ZZ, sA, sB = forms
    Di, sD = (0, 1) if D is None else D
    U, lam = Fraction(u), Fraction(ROUNDING_STEP * max(1.0, abs(u)))
    got: bool | None = False
    for V, w in ((U, Fraction(0)), (U - lam, lam * Fraction(EXCLUDE_RTOL) ** 2)):
        L = math.lcm(V.denominator * sB, sA, w.denominator, sD)
        C = ((V.numerator * (L // (V.denominator * sB))) * B - (L // sA) * A + (w.numerator * (L // w.denominator)) * ZZ
             - (L // sD) * Di)
        one = psd(C, meter)
        if one:
            return True
        got = None if one is None else got
    return got


def first_proven(ladder: list, forms: tuple, meter: Meter) -> float:
    """The first ``u`` of ``ladder`` proven (``inf`` if none), to within a rounding step: floats and exact
    refutations first; the undecided steps below the first step floats accept are eliminated exactly
    (charged to ``meter``), except those within ``2 ROUNDING_STEP max(1, |u|)`` of it (skipped: a larger
    proven bound is still a bound, and this one at most that much larger)."""
    pending, accepted = [], np.inf
    for u in sorted(float(v) for v in ladder):
        got = psd_excluding(u, forms)
        if got:
            accepted = u
            pending = [v for v in pending if accepted - v > 2 * ROUNDING_STEP * max(1.0, abs(v))]
            break
        if got is None:
            pending.append(u)
    for u in pending:
        if psd_excluding(u, forms, meter):
            return u
    return accepted


def dual_form(G: np.ndarray, N: Any, diag: dict | None = None) -> tuple:
    """``(Di, sD)``: ``G^T N_c G + C = Di / sD`` exactly, ``Di`` an integer ``p x p`` object array: ``G`` integer
    rows (object array), ``N_c = max((N + N^T) / 2, 0)`` of the float or rational multipliers ``N``, and ``C``
    from ``diag`` ``{t: (mu, y)}`` (``C_tt = mu``, ``C_tj = C_jt = -mu y_j / 2``: a lifted leaf's
    ``mu (y_t^2 - y_t Y_i w)``, ``y`` the integer row ``Y_i``)."""
    k = G.shape[0]
    Nc = [[max((Fraction(N[a][b]) + Fraction(N[b][a])) / 2, Fraction(0)) for b in range(k)] for a in range(k)]
    mus = {t: Fraction(m) for t, (m, _) in (diag or {}).items()}
    sD = math.lcm(1, *(x.denominator for row in Nc for x in row), *(2 * m.denominator for m in mus.values()))
    Ni = np.array([[x.numerator * (sD // x.denominator) for x in row] for row in Nc], dtype=object).reshape(k, k)
    Di = G.T.dot(Ni).dot(G) if k else np.zeros((G.shape[1], G.shape[1]), dtype=object)
    for t, m in mus.items():
        mi, y = m.numerator * (sD // m.denominator), (diag or {})[t][1]
        Di[t, t] += mi
        for j, v in enumerate(y):
            Di[t, j] -= mi * v // 2
            Di[j, t] -= mi * v // 2
    return Di, sD
