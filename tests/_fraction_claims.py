"""The checker's exact decisions of pattern claims and lifted (``"d"``) leaves as they were in
``fractions.Fraction`` before they moved to integers (issue 37): the oracle the integer path is tested
against, on :meth:`ExactProblem.forms` (Fraction forms) and an independent PSD test (``exact_psd``)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tests._exact_reference import exact_psd

EXCLUDE_RTOL = 1e-9
ROUNDING_STEP = 2.0**-40


def fraction_psd_excluding(u, A, B, ZZ, D) -> bool:
    """``u B - A - D`` PSD, or ``(u - lam) B - A - D + lam EXCLUDE_RTOL^2 ZZ`` PSD, in fractions."""
    r = len(A)
    U, lam = Fraction(u), Fraction(ROUNDING_STEP * max(1.0, abs(u)))
    for V, w in ((U, 0), (U - lam, lam * Fraction(EXCLUDE_RTOL) ** 2)):
        C = [[V * B[i][j] - A[i][j] - (0 if D is None else D[i][j]) + w * ZZ[i][j] for j in range(r)] for i in range(r)]
        if exact_psd(C):
            return True
    return False


def _dual(E, mask, rows, N):
    r = len(E.Y[0])
    G = [[(1 if mask[i] else -1) * y for y in E.Y[int(i)]] for i in rows]
    k = len(rows)
    Nc = [[max((Fraction(N[a, b]) + Fraction(N[b, a])) / 2, Fraction(0)) for b in range(k)] for a in range(k)]
    NG = [[sum(Nc[a][c] * G[c][j] for c in range(k)) for j in range(r)] for a in range(k)]
    return [[sum(G[a][i] * NG[a][j] for a in range(k)) for j in range(r)] for i in range(r)]


def fraction_claim(P, mask, claims, rows=None, N=None) -> float:
    """The first of ``claims`` at which ``u B_S - A_S - D`` is PSD (``inf`` if none), in fractions."""
    E = P.exact
    r = P.Phi_r.shape[1]
    A, B, ZZ = E.forms(E.pattern(mask), r)
    Ds = [None]
    if rows is not None and len(rows):
        act = np.flatnonzero(mask[rows])
        Ds = [_dual(E, mask, rows, N)] + ([_dual(E, mask, rows[act], N[np.ix_(act, act)])]
                                          if 0 < act.size < len(rows) else [])
    for u in sorted({float(c) for c in claims if np.isfinite(c)}):
        for D in Ds:
            if fraction_psd_excluding(u, A, B, ZZ, D):
                return u
    return np.inf


def fraction_lifted(P, signs, zero, claims, got) -> float:
    """The first of ``claims`` the lifted evidence ``got = (dec, N, mu, und)`` proves, in fractions."""
    if got is None:
        return np.inf
    dec, Nf, muf, und = got
    E = P.exact
    r, k = P.Phi_r.shape[1], und.size
    p = r + k
    unit = [[Fraction(int(a == b)) for b in range(k)] for a in range(k)]
    zrows = [(i, E.Y[i] + [0] * k) for i in np.flatnonzero((signs > 0) & ~zero).tolist()]
    zrows += [(int(i), [0] * r + unit[t]) for t, i in enumerate(und.tolist())]
    A, B, ZZ = E.forms(zrows, p)
    G = [[int(signs[i]) * y for y in E.Y[int(i)]] + [0] * k for i in dec.tolist()]
    G += [[0] * r + unit[t] for t in range(k)]
    G += [[-y for y in E.Y[int(i)]] + unit[t] for t, i in enumerate(und.tolist())]
    Nc = np.maximum(0.5 * Nf + 0.5 * Nf.T, 0.0)
    D = [[Fraction(0)] * p for _ in range(p)]
    for a in range(len(G)):
        for b in range(len(G)):
            v = Fraction(Nc[a, b])
            if v:
                for i in range(p):
                    for j in range(p):
                        D[i][j] += v * G[a][i] * G[b][j]
    for t, i in enumerate(und.tolist()):  # mu_t (y_t^2 - y_t Y_i w)
        m = Fraction(float(muf[t]))
        D[r + t][r + t] += m
        for j, y in enumerate(E.Y[i]):
            D[r + t][j] -= m * y / 2
            D[j][r + t] -= m * y / 2
    for u in sorted({float(c) for c in claims if np.isfinite(c)}):
        if fraction_psd_excluding(u, A, B, ZZ, D):
            return u
    return np.inf
