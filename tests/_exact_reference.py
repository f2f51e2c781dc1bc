"""Exact references for the near-degenerate tests: objectives and per-pattern maxima in rationals.

Shares no code with the library.  Every float input is taken as the exact rational it is
(``fractions.Fraction``): the neuron ``h = relu(Phi theta)``, its marginal gain or captured
fraction, the strict interiority of a point in a chamber, all decided exactly.  Per-pattern
maxima for ``m = 2`` (one feature and the ones column) are computed face by face: the top
generalized eigenvector of the 2 x 2 pencil if it lies in the cone, else the better ray; the
eigenvalues are roots of a quadratic with rational coefficients, evaluated with ``mpmath``
at 80 digits (the comparisons they feed are made with a 1e-30 margin).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["exact_objective", "interior", "interior_points", "chamber_max_2d", "pattern_violations",
           "exact_features"]


def _F(a: Any) -> list:
    return [[Fraction(float(x)) for x in row] for row in np.atleast_2d(np.asarray(a, dtype=float))]


def exact_features(features: Any, n: int) -> list | None:
    """Columns of an exact basis of ``col(H)`` (lists of Fractions), None for ``N_K``."""
    if features is None or (isinstance(features, str) and features == "none"):
        return None
    if isinstance(features, str):
        return [[Fraction(1)] * n]
    H = np.asarray(features, dtype=float).reshape(n, -1)
    basis: list = []  # Gram-Schmidt in rationals (independent columns only)
    for c in range(H.shape[1]):
        v = [Fraction(float(x)) for x in H[:, c]]
        for b in basis:
            bb = sum(x * x for x in b)
            f = sum(x * y for x, y in zip(v, b)) / bb
            v = [x - f * y for x, y in zip(v, b)]
        if any(x != 0 for x in v):
            basis.append(v)
    return basis


def _residual(h: list, basis: list | None) -> list:
    if basis is None:
        return h
    y = list(h)
    for b in basis:  # the basis is orthogonal: one pass projects
        bb = sum(x * x for x in b)
        f = sum(x * z for x, z in zip(h, b)) / bb
        y = [a - f * c for a, c in zip(y, b)]
    return y


def exact_objective(Phi: np.ndarray, U: np.ndarray, basis: list | None, theta: Any) -> Fraction | None:
    """``N_K`` or ``G_H`` of ``relu(Phi theta)`` in exact rationals; None for an excluded neuron.

    ``theta`` may hold Fractions or floats (taken exactly); ``basis`` from :func:`exact_features`.
    """
    th = [t if isinstance(t, Fraction) else Fraction(float(t)) for t in theta]
    if basis is None or (len(basis) == 1 and len(set(basis[0])) == 1):  # integers: the ratio is scale-free
        return _objective_int(Phi, U, th, basis is not None)
    P, Uf = _F(Phi), _F(U)
    h = [max(sum(p * t for p, t in zip(row, th)), Fraction(0)) for row in P]
    y = _residual(h, basis)
    yy = sum(v * v for v in y)
    if yy == 0:
        return None
    K = len(Uf[0])
    num = sum(sum(Uf[i][k] * y[i] for i in range(len(y))) ** 2 for k in range(K))
    return num / yy


def _ints(a: np.ndarray) -> tuple[list, int]:
    """``a`` as exact integers times ``2^-e``: ``(rows of ints, e)``."""
    a = np.atleast_2d(np.asarray(a, dtype=float))
    nz = a[a != 0]
    e = 0 if nz.size == 0 else max(0, int(53 - np.frexp(nz)[1].min()))
    return [[int(Fraction(float(x)) * 2**e) for x in row] for row in a], e


def _objective_int(Phi: np.ndarray, U: np.ndarray, th: list, centred: bool) -> Fraction | None:
    """:func:`exact_objective` without features or with the ones column, in integers."""
    import math

    den = 1
    for t in th:
        den = den * t.denominator // math.gcd(den, t.denominator)
    ti = [int(t * den) for t in th]
    h = [max(sum(p * t for p, t in zip(row, ti)), 0) for row in _ints(Phi)[0]]
    if centred:
        s, n = sum(h), len(h)
        h = [n * v - s for v in h]
    yy = sum(v * v for v in h)
    if yy == 0:
        return None
    Ui, e = _ints(U)
    num = sum(sum(Ui[i][k] * h[i] for i in range(len(h))) ** 2 for k in range(len(Ui[0])))
    return Fraction(num, yy * 4**e)


def interior(Phi: np.ndarray, mask: np.ndarray, theta: Any) -> bool:
    """``(2 mask - 1) Phi theta > 0`` on every nonzero row, exactly."""
    P = _F(Phi)
    th = [t if isinstance(t, Fraction) else Fraction(float(t)) for t in theta]
    for row, s in zip(P, np.asarray(mask, dtype=bool)):
        if all(x == 0 for x in row):
            continue
        z = sum(p * t for p, t in zip(row, th))
        if (z <= 0) if s else (z >= 0):
            return False
    return True


def interior_points(Phi: np.ndarray, mask: np.ndarray, witness: np.ndarray, rng: np.random.Generator,
                    count: int = 8) -> list:
    """Exact interior points of the chamber: the witness and ``count`` random convex moves from it
    toward random directions, halved until they stay strictly inside (checked exactly)."""
    w = [Fraction(float(t)) for t in witness]
    out = [w] if interior(Phi, mask, w) else []
    scale = max(abs(float(t)) for t in witness) or 1.0
    sgn = np.where(np.asarray(mask, dtype=bool), 1.0, -1.0)
    nz = np.any(Phi != 0, axis=1)
    z0 = sgn * (Phi @ np.asarray(witness, dtype=float))
    for _ in range(count):
        d = rng.normal(size=len(w)) * scale
        dz = sgn * (Phi @ d)
        step = 1.0
        for _ in range(200):  # a float guess of the step (decided below, exactly)
            if np.all((z0 + step * dz)[nz] > 1e-6 * np.abs(z0[nz])):
                break
            step /= 4
        p = [a + Fraction(step) * Fraction(float(b)) for a, b in zip(w, d)]
        if interior(Phi, mask, p):
            out.append(p)
    return out


def _pencil_2d(Phi: np.ndarray, U: np.ndarray, basis: list | None, mask: np.ndarray) -> tuple:
    """Exact 2 x 2 ``(A, B)`` of a pattern in theta coordinates: ``theta^T A theta = ||U^T y||^2``,
    ``theta^T B theta = ||y||^2`` with ``y = (I - Pi_H) S Phi theta``."""
    P, Uf = _F(Phi), _F(U)
    n, m = len(P), len(P[0])
    cols = []
    for j in range(m):  # y for theta = e_j
        h = [P[i][j] if mask[i] else Fraction(0) for i in range(n)]
        cols.append(_residual(h, basis))
    K = len(Uf[0])
    Ut = [[sum(Uf[i][k] * c[i] for i in range(n)) for k in range(K)] for c in cols]
    A = [[sum(Ut[a][k] * Ut[b][k] for k in range(K)) for b in range(m)] for a in range(m)]
    B = [[sum(x * y for x, y in zip(cols[a], cols[b])) for b in range(m)] for a in range(m)]
    return A, B


def _rays_2d(Phi: np.ndarray, mask: np.ndarray) -> list:
    """The two extreme rays of a 2-d chamber (exact), from its walls ``phi_i^T theta = 0``."""
    cands = []
    for row in _F(Phi):
        if row[0] == 0 and row[1] == 0:
            continue
        r = [-row[1], row[0]]
        cands += [r, [-r[0], -r[1]]]
    s = np.asarray(mask, dtype=bool)
    P = _F(Phi)
    ok = []
    for r in cands:
        z = [p[0] * r[0] + p[1] * r[1] for p in P]
        if all((v >= 0) if si else (v <= 0) for v, si in zip(z, s)):
            ok.append(r)
    return ok


def chamber_max_2d(Phi: np.ndarray, U: np.ndarray, basis: list | None, mask: np.ndarray, digits: int = 80) -> float:
    """Supremum of the objective over the closed 2-d cone of a pattern (``m = 2``), to ``digits``.

    The objective is continuous where ``theta^T B theta > 0``; its supremum over the cone is the
    top generalized eigenvalue when a top eigenvector (either sign) lies in the cone, else the
    larger value on the two rays; ``-inf`` when every neuron of the cone is excluded.
    """
    import mpmath

    mpmath.mp.dps = digits
    A, B = _pencil_2d(Phi, U, basis, mask)
    cands = []
    for r in _rays_2d(Phi, mask):
        q = r[0] * r[0] * B[0][0] + 2 * r[0] * r[1] * B[0][1] + r[1] * r[1] * B[1][1]
        if q > 0:
            p = r[0] * r[0] * A[0][0] + 2 * r[0] * r[1] * A[0][1] + r[1] * r[1] * A[1][1]
            cands.append(mpmath.mpf(p.numerator) / p.denominator / (mpmath.mpf(q.numerator) / q.denominator))
    # det(A - l B) = 0: a l^2 + b l + c
    a = B[0][0] * B[1][1] - B[0][1] ** 2
    b = -(A[0][0] * B[1][1] + A[1][1] * B[0][0] - 2 * A[0][1] * B[0][1])
    c = A[0][0] * A[1][1] - A[0][1] ** 2
    mp = [mpmath.mpf(x.numerator) / x.denominator for x in (a, b, c)]
    lams = []
    if a != 0:
        disc = mpmath.sqrt(max(mp[1] ** 2 - 4 * mp[0] * mp[2], 0))
        lams = [(-mp[1] + disc) / (2 * mp[0]), (-mp[1] - disc) / (2 * mp[0])]
    elif b != 0:
        lams = [-mp[2] / mp[1]]
    Am = [[mpmath.mpf(x.numerator) / x.denominator for x in r] for r in A]
    Bm = [[mpmath.mpf(x.numerator) / x.denominator for x in r] for r in B]
    Pm = [[mpmath.mpf(x.numerator) / x.denominator for x in r] for r in _F(Phi)]
    for lam in lams:
        C = [[Am[i][j] - lam * Bm[i][j] for j in range(2)] for i in range(2)]
        v = [-C[0][1], C[0][0]] if abs(C[0][0]) + abs(C[0][1]) > abs(C[1][0]) + abs(C[1][1]) else [-C[1][1], C[1][0]]
        for sgn in (1, -1):
            z = [sgn * (p[0] * v[0] + p[1] * v[1]) for p in Pm]
            # each row's own rounding scale (relative to the largest row, a row 2^500 smaller could not
            # tell the sides of its wall apart: a cone 1e-91 thin took an eigenvector outside it)
            tol = [mpmath.mpf(10) ** (-digits // 2) * (abs(p[0] * v[0]) + abs(p[1] * v[1])) for p in Pm]
            q = sum(Bm[i][j] * v[i] * v[j] for i in range(2) for j in range(2))
            if q > 0 and all((x >= -t) if s else (x <= t) for x, t, s in zip(z, tol, mask)):
                cands.append(lam)
    return float(max(cands)) if cands else float("-inf")


def pattern_violations(Phi: np.ndarray, U: np.ndarray, features: Any, masks: np.ndarray, witnesses: np.ndarray,
                       bounds: np.ndarray, rng: np.random.Generator, slack: float = 1e-9,
                       maxima: bool = True) -> list[str]:
    """Patterns whose claimed bound is beaten: by an exact interior point (exact objective), or,
    for ``m = 2`` and ``maxima``, by the exact supremum over the chamber's closed cone."""
    n = Phi.shape[0]
    basis = exact_features(features, n)
    bad = []
    for i, (mask, w, u) in enumerate(zip(masks, witnesses, bounds)):
        if not np.any(mask):
            continue
        for p in interior_points(Phi, mask, w, rng, count=4):
            val = exact_objective(Phi, U, basis, p)
            if val is not None and float(val) > u + slack:
                bad.append(f"pattern {i}: bound {u!r} < exact objective {float(val)!r} at an interior point")
                break
        if maxima and Phi.shape[1] == 2:
            top = chamber_max_2d(Phi, U, basis, mask)
            if top > u + slack:
                bad.append(f"pattern {i}: bound {u!r} < exact chamber maximum {top!r}")
    return bad


def _mpm(X: list, mpmath: Any) -> list:
    return [[mpmath.mpf(x.numerator) / x.denominator for x in r] for r in X]


def _pencil(Phi: np.ndarray, U: np.ndarray, basis: list | None, mask: np.ndarray) -> tuple:
    """Exact ``(A, B)`` of a pattern in theta coordinates, any ``m``."""
    return _pencil_2d(Phi, U, basis, mask)


def _cross(a: list, b: list) -> list:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def chamber_max_3d(Phi: np.ndarray, U: np.ndarray, basis: list | None, mask: np.ndarray, digits: int = 80) -> float:
    """Supremum of the objective over the closed cone of a pattern for ``m = 3``, face by face.

    Candidates (all in exact rationals, eigenvalues to ``digits`` with ``mpmath``): the generalized
    eigenvectors of the 3 x 3 pencil lying in the cone (either sign); on each wall plane
    ``g_j^T theta = 0``, the eigenvectors of the pencil restricted to it (2 x 2) lying in the cone;
    the extreme rays ``g_j x g_k`` in the cone.  The supremum of a ratio of quadratics on a
    polyhedral cone is attained at a critical point of one of its faces, so it is among them.
    """
    import mpmath

    mpmath.mp.dps = digits
    A, B = _pencil(Phi, U, basis, mask)
    s = np.asarray(mask, dtype=bool)
    G = [[x if si else -x for x in row] for row, si in zip(_F(Phi), s) if any(row)]
    Gm = _mpm(G, mpmath)
    Am, Bm = _mpm(A, mpmath), _mpm(B, mpmath)

    def quad(M, v):
        return sum(M[i][j] * v[i] * v[j] for i in range(len(v)) for j in range(len(v)))

    def inside(v):
        z = [sum(g[i] * v[i] for i in range(3)) for g in Gm]
        tol = mpmath.mpf(10) ** (-digits // 2) * max(max(abs(x) for x in z), mpmath.mpf(10) ** -digits)
        return all(x >= -tol for x in z)

    cands = []

    def offer(v):
        for sg in (1, -1):
            w = [sg * x for x in v]
            q = quad(Bm, w)
            if q > mpmath.mpf(10) ** (-digits + 10) * max(1, max(abs(x) for x in w)) ** 2 and inside(w):
                cands.append(quad(Am, w) / q)

    def eigvecs(Ar, Br):
        """Generalized eigenvectors of a k x k rational pencil (k = 2 or 3) at high precision."""
        k = len(Ar)
        lam = mpmath.mpf(0)
        # det(A - l B) as a polynomial in l: sample at k + 1 points, interpolate exactly
        pts = [Fraction(t) for t in range(k + 1)]
        vals = []
        for t in pts:
            M = [[Ar[i][j] - t * Br[i][j] for j in range(k)] for i in range(k)]
            vals.append(_det_frac(M))
        coeffs = _interp(pts, vals)  # ascending powers
        while coeffs and coeffs[-1] == 0:
            coeffs.pop()
        if len(coeffs) < 2:
            return []
        roots = mpmath.polyroots([mpmath.mpf(c.numerator) / c.denominator for c in reversed(coeffs)],
                                 maxsteps=400, extraprec=4 * digits)
        out = []
        Am_, Bm_ = _mpm(Ar, mpmath), _mpm(Br, mpmath)
        for lam in roots:
            if abs(mpmath.im(lam)) > mpmath.mpf(10) ** (-digits // 3):
                continue
            lam = mpmath.re(lam)
            M = [[Am_[i][j] - lam * Bm_[i][j] for j in range(k)] for i in range(k)]
            if k == 2:
                v = [-M[0][1], M[0][0]] if abs(M[0][0]) + abs(M[0][1]) >= abs(M[1][0]) + abs(M[1][1]) \
                    else [-M[1][1], M[1][0]]
            else:
                cs = [_cross_mp(M[a], M[b]) for a, b in ((0, 1), (0, 2), (1, 2))]
                v = max(cs, key=lambda c: max(abs(x) for x in c))
            out.append(v)
        return out

    for v in eigvecs(A, B):
        offer(v)
    for j, g in enumerate(G):  # each wall plane: a rational basis, the restricted 2 x 2 pencil
        e = [Fraction(1), Fraction(0), Fraction(0)] if g[0] == 0 and g[1] == 0 else [Fraction(0), Fraction(0), Fraction(1)]
        p1 = _cross(g, e)
        if not any(p1):
            e = [Fraction(0), Fraction(1), Fraction(0)]
            p1 = _cross(g, e)
        p2 = _cross(g, p1)
        P = [p1, p2]
        Ar = [[sum(P[a][i] * A[i][jj] * P[b][jj] for i in range(3) for jj in range(3)) for b in range(2)] for a in range(2)]
        Br = [[sum(P[a][i] * B[i][jj] * P[b][jj] for i in range(3) for jj in range(3)) for b in range(2)] for a in range(2)]
        Pm = _mpm(P, mpmath)
        for w in eigvecs(Ar, Br):
            offer([w[0] * Pm[0][i] + w[1] * Pm[1][i] for i in range(3)])
        for g2 in G[j + 1:]:
            r = _cross(g, g2)
            if any(r):
                offer([mpmath.mpf(x.numerator) / x.denominator for x in r])
    return float(max(cands)) if cands else float("-inf")


def _cross_mp(a: list, b: list) -> list:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _det_frac(M: list) -> Fraction:
    if len(M) == 2:
        return M[0][0] * M[1][1] - M[0][1] * M[1][0]
    return (M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) - M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0])
            + M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0]))


def _interp(xs: list, ys: list) -> list:
    """Coefficients (ascending) of the polynomial through the points, exactly (Newton form)."""
    k = len(xs)
    coef = list(ys)
    for j in range(1, k):
        for i in range(k - 1, j - 1, -1):
            coef[i] = (coef[i] - coef[i - 1]) / (xs[i] - xs[i - j])
    poly = [Fraction(0)] * k
    for i in range(k - 1, -1, -1):  # Horner on the Newton basis
        new = [Fraction(0)] * k
        for d in range(k - 1):
            new[d + 1] += poly[d]
        for d in range(k):
            new[d] -= xs[i] * poly[d]
        new[0] += coef[i]
        poly = new
    return poly


def chamber_max(Phi: np.ndarray, U: np.ndarray, basis: list | None, mask: np.ndarray) -> float:
    """:func:`chamber_max_2d` or :func:`chamber_max_3d` by the number of columns of ``Phi``."""
    return (chamber_max_2d if Phi.shape[1] == 2 else chamber_max_3d)(Phi, U, basis, mask)


def exact_psd(C: Any) -> bool:
    """Whether the symmetric matrix ``C`` (exact values: Fractions, ints or floats read exactly) is
    positive semidefinite: symmetric elimination in Fractions (exact LDL^T), a negative pivot refutes,
    a zero pivot needs its row to vanish."""
    C = [[Fraction(x) for x in row] for row in C]
    live = list(range(len(C)))
    while live:
        if any(C[k][k] < 0 for k in live):
            return False
        k = next((k for k in live if C[k][k] > 0), None)
        if k is None:
            return all(C[a][b] == 0 for a in live for b in live)
        live.remove(k)
        for a in live:
            f = C[a][k] / C[k][k]
            for b in live:
                C[a][b] -= f * C[k][b]
    return True


def exact_projector(H: np.ndarray) -> list[list[Fraction]]:
    """``Pi_H`` in rationals (Gram-Schmidt in fractions over the independent columns)."""
    basis: list[list[Fraction]] = []
    for col in H.T.tolist():
        v = [Fraction(x) for x in col]
        for b in basis:
            f = sum(x * y for x, y in zip(v, b)) / sum(y * y for y in b)
            v = [x - f * y for x, y in zip(v, b)]
        if any(v):
            basis.append(v)
    n = H.shape[0]
    return [[sum((b[i] * b[j] / sum(y * y for y in b) for b in basis), Fraction(0)) for j in range(n)] for i in range(n)]


def spectral_norm_at_most(D: list[list[Fraction]], eta: float) -> bool:
    """``||D||_2 <= eta`` for a symmetric ``D``, decided exactly (``eta I -/+ D`` PSD)."""
    n, e = len(D), Fraction(eta)
    return all(exact_psd([[(e if i == j else 0) + s * D[i][j] for j in range(n)] for i in range(n)]) for s in (-1, 1))
