"""Thin-cone fuzz suite: every method of :mod:`solvers` against an exact /
100-digit reference (``_thin_cone_reference``, which shares no code with
``solvers``; see its docstring for how it decides).

Cases (all seeded, ``m = 2, 3``): fat integer cones squashed EXACTLY by
``2^-33`` or ``2^-43`` along a sheared direction; rows ``fl(a r0 + b r1)``
(needles of width ~1e-16, near-redundant sliver rows, thin wedges); ``B``
singular or nearly singular (``+ 2^-20 k k^T``) along the thin normal, the
cone's axis, or everything but the normal; ordinary gating cones for contrast.
Every cone has a rational point with ``G p > 0`` (checked exactly).

The promise checked, with no float tolerance (comparisons in 100-digit
arithmetic, to the reference's precision ``REF_RTOL = 1e-40`` relative):

* never INFEASIBLE (the cone has an interior point and ``B != 0``);
* ``lower <= optimum <= upper``; UNBOUNDED only when the optimum is ``+inf``,
  and then with a ray ``d`` that is exactly in the cone with ``B d = 0`` and
  ``d^T A d > 0``;
* a witness ``x`` lies exactly in the closed cone, with ``x^T B x > 0`` and
  exact quotient ``>= lower``.

Plus the family of issue 23 (:func:`tilted_case`): the tiny eigenvector of ``B``
tilted ~1e-9 off the thin axis, or not; there every upper bound is also checked
against the exact quotient at exact interior points.

The default run takes 48 cases (every method, and ``auto`` again with the
interior hint when it is a float; a few seconds); ``-m slow`` runs 520 more.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import solvers
from solvers import ConeEigProblem, Status
from _thin_cone_reference import (DPS, ZERO_RTOL, Vec, dot, frac, in_closed_cone, matvec, nullspace, quad, reference,
                                  solve, strictly_inside)

REF_RTOL = ZERO_RTOL

# ----------------------------------------------------------------------------- seeded generators

@dataclass(frozen=True)
class ThinCase:
    """One fuzz case: data (floats, exact rationals), a rational strict interior point,
    and a float ``hint`` (the same point when it is a float strictly inside, else None)."""

    name: str
    A: np.ndarray
    B: np.ndarray
    G: np.ndarray
    interior: tuple
    hint: np.ndarray | None
    points: tuple = ()  # more exact strict interior points (rational tuples), if known


def _int_psd(rng, m, rank, lo=-3, hi=3):
    M = rng.integers(lo, hi + 1, size=(rank, m)).astype(float)
    return M.T @ M  # small integers: exact


def _int_basis_perp(K: list[Vec], m: int) -> np.ndarray:
    """Integer basis (rows) of the orthogonal complement of the rational vectors K."""
    N = nullspace(K, m) if K else [[Fraction(int(i == j)) for j in range(m)] for i in range(m)]
    out = []
    for v in N:
        den = np.lcm.reduce([int(a.denominator) for a in v])
        out.append([float(a * den) for a in v])
    return np.array(out).reshape(-1, m)


def _pencil(rng, m, kernel: list[Vec], nearly: bool, shared: bool):
    """``(A, B)`` integer PSD with ``ker B ⊇ kernel`` (``+ 2^-20 k k^T`` if ``nearly``)."""
    P0 = _int_basis_perp(kernel, m)
    if P0.shape[0] == 0:
        P0 = np.zeros((1, m))
    R = rng.integers(-2, 3, size=(max(P0.shape[0], 1), P0.shape[0])).astype(float)
    if not R.any():
        R[0, 0] = 1.0
    P = R @ P0
    B = P.T @ P
    if not B.any():
        B = P0.T @ P0
    if nearly and kernel:
        k = [Fraction(a) for a in kernel[0]]
        den = np.lcm.reduce([int(a.denominator) for a in k])
        kf = np.array([float(a * den) for a in k])
        Bn = B + 2.0 ** -20 * np.outer(kf, kf)
        exact = all(Fraction(Bn[i, j]) == Fraction(B[i, j]) + Fraction(1, 2**20) * Fraction(kf[i]) * Fraction(kf[j])
                    for i in range(m) for j in range(m))
        B = Bn if exact else B
    if shared:
        T = _int_psd(rng, P.shape[0], int(rng.integers(1, P.shape[0] + 1)))
        A = P.T @ T @ P
    else:
        A = _int_psd(rng, m, int(rng.integers(1, m + 1)))
    if not A.any():
        A = np.eye(m)
    return A, B


def _fat_cone(rng, m, n):
    """Integer rows ``sign(X y0) X`` and the integer interior point ``y0``."""
    while True:
        y0 = rng.integers(-3, 4, size=m).astype(float)
        X = rng.integers(-4, 5, size=(n, m)).astype(float)
        s = X @ y0
        if y0.any() and np.all(s != 0):
            return np.sign(s)[:, None] * X, y0


def _unimodular(rng, m):
    L = np.eye(m) + np.tril(rng.integers(-1, 2, size=(m, m)), -1)
    U = np.eye(m) + np.triu(rng.integers(-1, 2, size=(m, m)), 1)
    M = L @ U
    Minv = np.rint(np.linalg.inv(M))
    assert np.array_equal(M @ Minv, np.eye(m))
    return M, Minv


def scaled_case(seed: int, m: int, width_exp: int) -> ThinCase:
    """A fat integer cone squashed EXACTLY by ``2^-width_exp`` along one direction
    (``x = U D y``, ``U`` unimodular), with ``B`` singular (or nearly) along the
    thin normal, the in-plane axis, or everything but the normal."""
    rng = np.random.default_rng([seed, m, width_exp, 1])
    G0, y0 = _fat_cone(rng, m, int(rng.integers(m, m + 4)))
    k = int(rng.integers(m))
    w = 2.0 ** -width_exp
    D = np.ones(m)
    D[k] = w
    U, Uinv = _unimodular(rng, m)
    G = (G0 / D[None, :]) @ Uinv
    Dinv = [[Fraction(int(i == j)) / Fraction(D[j]) for j in range(m)] for i in range(m)]
    exact = [[dot(g, [sum((Dinv[j][t] * Fraction(Uinv[t, c]) for t in range(m)), Fraction(0)) for j in range(m)])
              for c in range(m)] for g in frac(G0)]
    assert frac(G) == exact, "G not exact"
    x0 = U @ (D * y0)
    normal = [Fraction(v) for v in Uinv.T[:, k]]  # (U^{-T} e_k): the cone nearly lies in normal^perp
    Dp = np.ones(m)
    Dp[k] = 0.0
    axis = [Fraction(v) for v in U @ (Dp * y0)]
    kind = ["none", "normal", "axis", "plane", "normal"][int(rng.integers(5))]
    kernel = {"none": [], "normal": [normal], "axis": [axis] if any(axis) else [normal],
              "plane": nullspace([normal], m)}[kind]
    nearly = bool(rng.random() < 0.25)
    A, B = _pencil(rng, m, kernel, nearly, shared=bool(rng.random() < 0.3))
    p = tuple(Fraction(v) for v in x0)
    return ThinCase(f"scaled(seed={seed},m={m},w=2^-{width_exp},ker={kind},nearly={nearly})",
                    A, B, G, p, x0 if strictly_inside(frac(G), p) else None)


def _interior_from_lp(Gq, G) -> tuple | None:
    """A max-margin LP point (SciPy), kept if it is strictly inside exactly."""
    from scipy.optimize import linprog

    q, m = G.shape
    Gn = G / np.linalg.norm(G, axis=1)[:, None]
    res = linprog(np.r_[np.zeros(m), -1.0], A_ub=np.hstack([-Gn, np.ones((q, 1))]), b_ub=np.zeros(q),
                  bounds=[(-1, 1)] * m + [(None, 1)], method="highs")
    if res.status == 0:
        p = tuple(Fraction(float(v)) for v in res.x[:m])
        if strictly_inside(Gq, p):
            return p
    return None


def rounded_case(seed: int, m: int) -> ThinCase | None:
    """Rows ``fl(a r0 + b r1)``: a needle (m = 3, simplicial, width by rounding), a
    near-redundant sliver row, or a thin wedge (m = 2, ``|b/a| ~ 2^-40``); ``B``
    singular (or nearly) along the needle's axis or a thin normal."""
    rng = np.random.default_rng([seed, m, 2])
    r0, r1 = (rng.integers(-4, 5, size=m).astype(float) for _ in range(2))
    if m == 2:
        a = -rng.uniform(0.5, 2.0)
        b = rng.choice([-1, 1]) * rng.uniform(0.5, 2.0) * 2.0 ** -int(rng.integers(30, 46))
        rows = [r0, a * r0 + b * r1]
    else:
        a, b = rng.uniform(0.3, 3.0, size=2) * rng.choice([-1.0, 1.0], size=2)
        rows = [r0, r1, a * r0 + b * r1]
        if a > 0 and b > 0:  # sliver: close the cone with more rows
            G0, _ = _fat_cone(rng, m, 3)
            rows += list(G0)
    G = np.array(rows)
    Gq = frac(G)
    if len(nullspace(Gq, m)):
        return None
    p = None
    if G.shape[0] == m:
        p = solve(Gq, [Fraction(1)] * m)
        p = tuple(p) if p is not None and strictly_inside(Gq, p) else None
    if p is None:
        p = _interior_from_lp(Gq, G)
    if p is None:
        return None
    axis = nullspace(frac(np.array([r0, r1]))[: m - 1], m) if m == 3 else nullspace([frac(r0[None])[0]], m)
    normal = [frac(r0[None])[0]]
    kind = ["axis", "normal", "none", "axis"][int(rng.integers(4))]
    kernel = {"axis": axis[:1], "normal": normal, "none": []}[kind]
    nearly = bool(rng.random() < 0.25)
    A, B = _pencil(rng, m, kernel, nearly, shared=bool(rng.random() < 0.3))
    hint = np.array([float(v) for v in p])
    hint = hint if strictly_inside(Gq, tuple(Fraction(v) for v in hint)) else None
    return ThinCase(f"rounded(seed={seed},m={m},a={a:.3g},b={b:.3g},ker={kind},nearly={nearly})",
                    A, B, G, p, hint)


def gating_control(seed: int, m: int) -> ThinCase:
    """An ordinary (fat) integer gating cone, for contrast."""
    rng = np.random.default_rng([seed, m, 3])
    G, y0 = _fat_cone(rng, m, int(rng.integers(m, m + 5)))
    kind = ["none", "random"][int(rng.integers(2))]
    kernel = [] if kind == "none" else [[Fraction(int(v)) for v in rng.integers(-2, 3, size=m)]]
    kernel = [k for k in kernel if any(k)]
    A, B = _pencil(rng, m, kernel, False, shared=bool(rng.random() < 0.3))
    p = tuple(Fraction(v) for v in y0)
    return ThinCase(f"gating(seed={seed},m={m},ker={kind})", A, B, G, p, y0)


def tilted_case(seed: int, m: int, tilted: bool) -> ThinCase:
    """A cone ``0 <= x_j <= w x_0`` (``j >= 1``, width ``w = 2^-30..2^-45``) whose ``B`` has one
    eigenvalue ``eps = 2^-67..2^-86`` (1e-20..1e-26), EXACTLY: ``B = N^T C N + eps e_0 e_0^T``
    with rows ``n_j = e_j - tau_j e_0`` and ``C`` an integer PD matrix, so that
    ``B u = eps e_0`` for ``u = e_0 + sum_j tau_j e_j``.  ``tilted``: ``tau_j = a_j 2^-30``
    (``a_j`` odd, ``|tau| ~ 1e-9``): the tiny eigenvector is tilted off the thin axis ``e_0``
    (the attack class of issue 23); else ``tau = 0``.  Coordinates are then signed-permuted
    (exact).  ``A``: a small integer PSD matrix."""
    rng = np.random.default_rng([seed, m, 4, int(tilted)])
    w = 2.0 ** -int(rng.integers(30, 46))
    eps = 2.0 ** -int(rng.integers(67, 87))
    G = np.zeros((2 * (m - 1), m))
    for j in range(1, m):
        G[2 * j - 2, j] = 1.0
        G[2 * j - 1, 0], G[2 * j - 1, j] = w, -1.0
    tau = (rng.choice([-7, -5, -3, -1, 1, 3, 5, 7], size=m - 1) * 2.0 ** -30) if tilted else np.zeros(m - 1)
    L = rng.integers(-2, 3, size=(m - 1, m - 1)).astype(float)
    C = L @ L.T + np.eye(m - 1)
    N = np.hstack([-tau[:, None], np.eye(m - 1)])
    B = N.T @ C @ N
    B[0, 0] += eps
    Bq = [[sum((Fraction(N[a, i]) * Fraction(C[a, b]) * Fraction(N[b, j]) for a in range(m - 1)
                for b in range(m - 1)), Fraction(0)) + (Fraction(eps) if i == j == 0 else 0) for j in range(m)]
          for i in range(m)]
    assert frac(B) == Bq, "B not exact"
    A = _int_psd(rng, m, int(rng.integers(1, m + 1)))
    if not A.any():
        A = np.eye(m)
    P = np.eye(m)[rng.permutation(m)] * rng.choice([-1.0, 1.0], size=m)[None, :]  # x = P y
    x0 = np.r_[1.0, np.full(m - 1, w / 2)]
    y0 = P.T @ x0
    fr_ = [Fraction(1, 2 ** 20), Fraction(1, 8), Fraction(7, 8), 1 - Fraction(1, 2 ** 20)]
    Pq = frac(P)
    pts = []
    for fs in itertools.product(fr_, repeat=m - 1):
        xq = [Fraction(1)] + [f * Fraction(w) for f in fs]  # strictly inside, exactly
        pts.append(tuple(sum((Pq[i][j] * xq[i] for i in range(m)), Fraction(0)) for j in range(m)))  # P^T x
    pts = tuple(pts)
    name = f"{'tilted' if tilted else 'untilted'}(seed={seed},m={m},w=2^{np.log2(w):.0f},eps=2^{np.log2(eps):.0f})"
    return ThinCase(name, P.T @ A @ P, P.T @ B @ P, G @ P, tuple(Fraction(v) for v in y0), y0, pts)


def make_case(family: str, seed: int, m: int) -> ThinCase:
    """The seeded case ``(family, seed, m)``; ``rounded`` resamples until a cone is full-dimensional."""
    if family in ("tilted", "untilted"):
        return tilted_case(seed, m, family == "tilted")
    if family == "scaled33":
        return scaled_case(seed, m, 33)
    if family == "scaled43":
        return scaled_case(seed, m, 43)
    if family == "gating":
        return gating_control(seed, m)
    for k in range(100):
        c = rounded_case(seed * 101 + k, m)
        if c is not None:
            return c
    raise RuntimeError("no full-dimensional rounded cone")


# ----------------------------------------------------------------------------- the suite

METHODS = ("spectral", "faces", "dnn", "auto")
FAMILIES = ("scaled33", "scaled43", "rounded", "gating")
FAST = [(f, seed, m) for f in FAMILIES for m in (2, 3) for seed in range(5)]
SLOW = [(f, seed, m) for f in FAMILIES for m in (2, 3) for seed in range(5, 45)]


@functools.lru_cache(maxsize=None)
def _case(family: str, seed: int, m: int):
    c = make_case(family, seed, m)
    return c, reference(c.A, c.B, c.G, c.interior)


def _check_witness(c, r) -> list[str]:
    """The witness exactly in the closed cone, with positive B-mass and quotient >= lower."""
    Gq, Aq, Bq = frac(c.G), frac(c.A), frac(c.B)
    x = [Fraction(float(v)) for v in r.x]
    if not in_closed_cone(Gq, x):
        return ["witness not in the closed cone (exact check)"]
    den = quad(Bq, x, x)
    if den <= 0:
        return ["witness has x^T B x = 0"]
    q = quad(Aq, x, x) / den
    if Fraction(r.lower) > q:
        return [f"lower {r.lower!r} above the witness's exact quotient {float(q)!r}"]
    return []


def _check_points(c, r) -> list[str]:
    """No upper bound (so no EXACT value) below the exact quotient at an exact interior point
    (the elementary oracle of issue 23, independent of the reference)."""
    Gq, Aq, Bq = frac(c.G), frac(c.A), frac(c.B)
    out = []
    for z in (c.interior,) + c.points:
        assert strictly_inside(Gq, list(z)), "test bug: point not strictly inside"
        den = quad(Bq, list(z), list(z))
        if den > 0 and r.upper != np.inf and Fraction(r.upper) < quad(Aq, list(z), list(z)) / den:
            q = quad(Aq, list(z), list(z)) / den
            out.append(f"upper {r.upper!r} below the exact quotient {float(q)!r} at an interior point")
            break
    return out


def _check_ray(c, r) -> list[str]:
    """The ray certificate (``ray_exact`` strings if given, else the float ``ray``) checked exactly."""
    cert = r.certificate
    d = [Fraction(v) for v in cert["ray_exact"]] if "ray_exact" in cert else \
        [Fraction(float(v)) for v in cert.get("ray", [])]
    Gq, Aq, Bq = frac(c.G), frac(c.A), frac(c.B)
    if len(d) != c.A.shape[0] or not in_closed_cone(Gq, d) or any(matvec(Bq, d)) or quad(Aq, d, d) <= 0:
        return ["UNBOUNDED without an exact ray certificate (G d >= 0, B d = 0, d^T A d > 0)"]
    return []


def violations(family: str, seed: int, m: int, method: str, hint: bool) -> list[str]:
    """Every way the result of ``method`` breaks the promise on the case (empty: kept)."""
    c, ref = _case(family, seed, m)
    P = ConeEigProblem(c.A, c.B, c.G, interior=c.hint if hint else None)
    r = solvers.solve(P, method)
    out = []
    with mpmath.workdps(DPS):
        lo, up = mpmath.mpf(r.lower), mpmath.mpf(r.upper)
        slack = REF_RTOL * abs(ref.value) if mpmath.isfinite(ref.value) else 0
        if r.status is Status.INFEASIBLE:
            out.append("INFEASIBLE although the cone has a strict interior point and B != 0")
        elif ref.status == "unbounded":
            if r.upper != np.inf:
                out.append(f"finite upper {r.upper!r} on an unbounded problem")
            if r.status is Status.UNBOUNDED:
                out += _check_ray(c, r)
        else:
            if r.status is Status.UNBOUNDED:
                out.append(f"UNBOUNDED, but the optimum is {mpmath.nstr(ref.value, 17)}")
            if not lo <= ref.value + slack:
                out.append(f"lower {r.lower!r} > optimum {mpmath.nstr(ref.value, 17)}")
            if not up >= ref.value - slack:
                out.append(f"upper {r.upper!r} < optimum {mpmath.nstr(ref.value, 17)}")
    if r.x is not None and r.status is not Status.UNBOUNDED:
        out += _check_witness(c, r)
    out += _check_points(c, r)
    return [f"{method}{' (hint)' if hint else ''} on {c.name}: {v} [{r.status.name}]" for v in out]


def _run(family, seed, m):
    c, _ = _case(family, seed, m)
    bad = []
    for method in METHODS:
        bad += violations(family, seed, m, method, hint=False)
    if c.hint is not None:
        bad += violations(family, seed, m, "auto", hint=True)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("family,seed,m", FAST)
def test_thin_cones_bracket_the_truth(family, seed, m):
    _run(family, seed, m)


@pytest.mark.slow
@pytest.mark.parametrize("family,seed,m", SLOW)
def test_thin_cones_bracket_the_truth_slow(family, seed, m):
    _run(family, seed, m)


#: The thin-cone sweep of issue 23: cones of width 2^-30..2^-45 whose one tiny eigenvalue of B
#: (1e-20..1e-26) has its eigenvector tilted ~1e-9 off the thin axis, or not.  A few run by
#: default, the 200-cone sweep in the slow tier.
TILT_FAST = [(f, seed, m) for f in ("tilted", "untilted") for m in (2, 3) for seed in (0, 1)]
TILT_SLOW = [(f, seed, m) for f in ("tilted", "untilted") for m in (2, 3) for seed in range(2, 52)]


@pytest.mark.parametrize("family,seed,m", TILT_FAST)
def test_tilted_thin_cones(family, seed, m):
    _run(family, seed, m)


@pytest.mark.parametrize("family,seed,m", TILT_FAST)
def test_tilted_thin_cones_are_settled(family, seed, m):
    """Exact arithmetic settles them (the exact Davis-Kahan sign test of the verified path:
    without it half of these stay BOUNDED), and the value is the reference's (``spectral``, the
    cone-free bound, may stay BOUNDED)."""
    c, ref = _case(family, seed, m)
    for method in ("faces", "dnn", "auto"):
        r = solvers.solve(ConeEigProblem(c.A, c.B, c.G), method)
        assert r.status is Status.EXACT, (method, r.status, r.message)
        with mpmath.workdps(DPS):
            assert abs(mpmath.mpf(r.lower) - ref.value) <= 1e-9 * ref.value, (method, r.lower)


@pytest.mark.slow
@pytest.mark.parametrize("family,seed,m", TILT_SLOW)
def test_tilted_thin_cones_slow(family, seed, m):
    _run(family, seed, m)


@pytest.mark.parametrize("family,seed,m", TILT_FAST)
def test_tilted_thin_cones_dual(family, seed, m):
    """:func:`solvers.cone_dual` never certifies below the optimum either: a tiny eigenvalue of
    ``B`` that is not an exact zero is not a kernel (``"kernel"``, ``upper = inf``)."""
    c, ref = _case(family, seed, m)
    d = solvers.cone_dual(c.A, c.B, c.G)
    with mpmath.workdps(DPS):
        assert d.upper == np.inf or mpmath.mpf(d.upper) >= ref.value * (1 - REF_RTOL), (d.upper, ref.value, d.status)


def test_rounding_level_kernel_is_not_a_kernel():
    """``B = diag(1, 2^-70)``, ``A = diag(1, 2^-50)`` on ``x >= 0``: both vanish on ``e_1`` to
    rounding, but not exactly, and the optimum is ``2^20`` at ``e_1``.  The float path's
    "rounding-level common kernel" and cone_dual's ``RANK_RTOL`` kernel both reported 1."""
    A, B, G = np.diag([1.0, 2.0 ** -50]), np.diag([1.0, 2.0 ** -70]), np.eye(2)
    for method in METHODS:
        r = solvers.solve(ConeEigProblem(A, B, G), method)
        assert r.upper >= 2.0 ** 20, (method, r.status, r.upper)
        assert r.status is Status.EXACT and 2.0 ** 20 * (1 - 1e-12) <= r.lower <= 2.0 ** 20, (method, r.lower)
    assert solvers.cone_dual(A, B, G).upper >= 2.0 ** 20


def test_tilted_kernel_regression():
    """Issue 23, the repro class (``tilted_case(48, 2)``, written out): ``B`` has the exact
    eigenvalue ~2^-80 along ``(1, -3 2^-30)``, 1e-9 off the thin cone ``0 <= x_1 <= 2^-30 x_0``.
    The kernel convention took that direction for a common kernel and every method reported
    EXACT 9.41e16, 27% below the exact quotient at interior points (1.281e17)."""
    A = np.array([[2.0, 1.0], [1.0, 13.0]])
    B = np.array([[float.fromhex("0x1.2000010000000p-56"), float.fromhex("0x1.8p-28")],
                  [float.fromhex("0x1.8p-28"), 2.0]])
    G = np.array([[0.0, 1.0], [2.0 ** -30, -1.0]])
    Aq, Bq = frac(A), frac(B)
    best = Fraction(0)
    for j in (1, 2 ** 10, 2 ** 19, 2 ** 20 - 1):  # z = (1, j 2^-50): G z > 0 exactly
        z = [Fraction(1), Fraction(j, 2 ** 50)]
        assert strictly_inside(frac(G), z)
        best = max(best, quad(Aq, z, z) / quad(Bq, z, z))
    assert float(best) > 1.28e17
    for method in METHODS:
        r = solvers.solve(ConeEigProblem(A, B, G), method)
        assert r.upper == np.inf or Fraction(r.upper) >= best, (method, r.status, r.upper, float(best))
        if r.x is not None:  # the witness is in the cone and its exact quotient is >= lower
            x = [Fraction(float(v)) for v in r.x]
            assert in_closed_cone(frac(G), x) and quad(Aq, x, x) / quad(Bq, x, x) >= Fraction(r.lower)


def test_reference_sanity():
    """The reference on hand-made problems: a thin wedge whose value needs the width."""
    w = 2.0 ** -40
    G = np.array([[-w, 1.0], [2 * w, -1.0]])  # w x0 <= x1 <= 2 w x0
    p = (Fraction(1), Fraction(3, 2) * Fraction(w))
    r = reference(np.eye(2), np.diag([0.0, 1.0]), G, p)  # 1 + x0^2 / x1^2: 1 + 1/w^2 at x1 = w x0
    with mpmath.workdps(DPS):
        assert r.status == "exact" and abs(r.value - (1 + mpmath.mpf(2) ** 80)) <= mpmath.mpf(10) ** -30
    r = reference(np.eye(2), np.diag([1.0, 0.0]), G, p)  # 1 + x1^2 / x0^2: 1 + 4 w^2
    with mpmath.workdps(DPS):
        assert r.status == "exact" and abs(r.value - (1 + mpmath.mpf(2) ** -78)) <= mpmath.mpf(10) ** -50
    r = reference(np.eye(2), np.diag([1.0, 0.0]), np.array([[0.0, 1.0]]), p)  # ray e1 in ker B
    assert r.status == "unbounded"


@pytest.mark.parametrize("family,seed,m", [(f, s, m) for f in ("scaled43", "rounded") for m in (2, 3) for s in (0, 1)])
def test_thin_cones_any_coordinates(family, seed, m):
    """Exact changes of representation (``A * 2^k``, ``B * 2^j``, rows of ``G`` times powers
    of two, a permutation of coordinates) change the optimum exactly as they should; every
    method still brackets it."""
    c, ref = _case(family, seed, m)
    rng = np.random.default_rng([seed, m, 7])
    perm = rng.permutation(m)
    ka, kb = int(rng.integers(-30, 31)), int(rng.integers(-30, 31))
    rows = 2.0 ** rng.integers(-20, 21, size=c.G.shape[0])
    A, B = (2.0 ** ka) * c.A[np.ix_(perm, perm)], (2.0 ** kb) * c.B[np.ix_(perm, perm)]
    G = rows[:, None] * c.G[:, perm]
    with mpmath.workdps(DPS):
        truth = ref.value * mpmath.mpf(2) ** (ka - kb) if ref.status == "exact" else ref.value
        slack = REF_RTOL * abs(truth) if mpmath.isfinite(truth) else 0
        for method in METHODS:
            r = solvers.solve(ConeEigProblem(A, B, G), method)
            assert r.status is not Status.INFEASIBLE
            if ref.status == "unbounded":
                assert r.upper == np.inf
            else:
                assert r.status is not Status.UNBOUNDED
                assert mpmath.mpf(r.lower) <= truth + slack and mpmath.mpf(r.upper) >= truth - slack, method


@pytest.mark.parametrize("seed", range(6))
def test_sign_tolerance_covers_the_eigenvector_error(seed):
    """:func:`solvers._core.sign_tolerance` and its per-flat form (the float path's only licence to call a top
    eigenvector outside the cone) bounds ``|h^T (y - v)|`` for the float eigenvector ``y``
    and the true ``v`` (60-digit mpmath on the exact rationals), also when the top gap is
    1e-8..1e-12 relative, where the 1e-9 floor alone is far too small."""
    from solvers._core import sign_tolerance, sign_tolerance_flat

    rng = np.random.default_rng([seed, 11])
    gap = 10.0 ** -float(rng.integers(8, 13))
    Q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    k = rng.integers(-3, 4, size=3).astype(float)
    D = np.diag(2.0 ** k)  # B = D^2, A = D Q diag Q^T D: the pencil's top gap is ~gap
    A = D @ (Q @ np.diag([1.0, 1.0 - gap, 0.3]) @ Q.T) @ D
    A = 0.5 * (A + A.T)
    B = D @ D
    s, U = np.linalg.eigh(B)
    W = U / np.sqrt(s)
    mu, Y = np.linalg.eigh(0.5 * (W.T @ A @ W + (W.T @ A @ W).T))
    y = W @ Y[:, -1]
    H = rng.standard_normal((8, 3))
    H /= np.linalg.norm(H, axis=1)[:, None]  # unit rows, as the cone's
    tol = sign_tolerance(A[None], B[None], H[None], y[None], mu[None], s[None], W[None])[0]
    tol_flat = float(sign_tolerance_flat(A[None], B[None], y[None], mu[None], s[None], W[None])[0])
    assert np.all(tol <= tol_flat * (1 + 1e-12))
    with mpmath.workdps(60):
        Am = mpmath.matrix([[mpmath.mpf(v) for v in r] for r in A])
        Bm = mpmath.matrix([[mpmath.mpf(v) for v in r] for r in B])
        Lc = mpmath.cholesky(Bm)
        Li = mpmath.inverse(Lc)
        C = Li * Am * Li.T
        E, V = mpmath.eigsy((C + C.T) / 2)
        v = Li.T * V[:, max(range(3), key=lambda i: E[i])]
        ym = mpmath.matrix([mpmath.mpf(t) for t in y])
        c = (v.T * Bm * ym)[0] / (v.T * Bm * v)[0]
        for i in range(H.shape[0]):
            h = mpmath.matrix([mpmath.mpf(t) for t in H[i]])
            err = abs((h.T * (ym - c * v))[0])
            assert err <= tol[i], (gap, i, float(err), tol[i])
