"""Realizability on the verified path: is the top eigenspace of a flat's pencil
attained in the cone?  "realized" comes with an exact point of the cone; "not"
is only ever decided for a simple top eigenvalue, from an eigenvector refined
by exact Rayleigh quotient iteration and a rigorous (Davis-Kahan) bound on its
distance to the true one; everything else is "unsure" (the flat's certified
bound then counts)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from solvers._norms import norm2

from solvers._exact import Vec, combine, compress, det, dot, matvec, nullspace, pow2, solve_exact
from solvers._lp import solve_lp
from solvers._verified.flats import CLEAR_TOL, Flat, FlatEval, _float_top, verify_up

__all__ = ["realize", "lp_point", "DIST_SAFETY", "REFINE_STEPS", "SHIFT_STEPS", "REFINE_BITS", "RAY_BUDGET"]

#: A top eigenvector refined by exact Rayleigh quotient iteration (REFINE_STEPS steps) counts
#: as outside the cone only if ``+-`` it violate rows by more than DIST_SAFETY times a rigorous
#: bound on its distance to the true eigenvector line.  Nothing else ever counts as outside.
DIST_SAFETY = 10.0
REFINE_STEPS = 3
#: At most this many inverse-iteration steps shifted by the certified bound before RQI.
SHIFT_STEPS = 6
#: Refined vectors are rounded to this many bits (relative) between steps.
REFINE_BITS = 160
#: At most this many row subsets are tried in an exact extreme-ray search.
RAY_BUDGET = 3000


def _exact_inside(H, rows, Hf, z: Vec, zf=None) -> bool:
    """Exact ``H_i z >= 0`` on ``rows``; rows whose float value (unit rows, ``fl(z)``: errors
    of a few eps) is beyond ``CLEAR_TOL |z|`` are settled in floats."""
    zf = np.array([float(v) for v in z])
    nz = float(norm2(zf))
    vals = Hf[rows] @ zf if len(rows) else np.zeros(0)
    for i, v in zip(rows, vals.tolist()):
        if v > CLEAR_TOL * nz:
            continue
        if v < -CLEAR_TOL * nz or dot(H[i], z) < 0:
            return False
    return True


def lp_point(R: np.ndarray, S: np.ndarray) -> tuple[float, np.ndarray | None]:
    """Max-margin point of ``{(y, n) : R y + S n >= mu}`` with some ``y_i = +-1``.

    Columns are equilibrated (powers of two) first, so that a thin cone, whose rows
    hardly see the eigenvector, still gets a usable margin.  Returns the best ``mu`` (in
    the equilibrated units) and its ``(y, n)`` concatenated, or ``(-inf, None)``.
    """
    f, k = R.shape
    r = S.shape[1]
    M = np.hstack([R, S])
    c = np.array([pow2(float(np.abs(col).max())) for col in M.T]) if f else np.ones(k + r)
    Ms = M / c[None, :]
    best, arg = -np.inf, None
    for i in range(k):
        for sgn in (1.0, -1.0):
            cl = np.r_[-np.ones(k), np.full(r, -1e3), -np.inf]
            cu = np.r_[np.ones(k), np.full(r, 1e3), 1.0]
            cl[i] = cu[i] = sgn
            A = np.hstack([Ms, -np.ones((f, 1))])
            sol = solve_lp(np.r_[np.zeros(k + r), -1.0], A, np.zeros(f), np.full(f, np.inf), cl, cu)
            x = sol.x
            if sol.status == "optimal" and x is not None and x[-1] > best:
                best, arg = float(x[-1]), x[:-1] / c
    return best, arg


def _rounded(w: Vec) -> Vec:
    """``w`` scaled to max-abs ~1 and rounded to REFINE_BITS bits (keeps the integers small)."""
    s = max(abs(v) for v in w)
    den = 1 << REFINE_BITS
    return [Fraction(round(v / s * den), den) for v in w]


def _rq(Af, Bf, z: Vec):
    """``(rho, Bz)``: the exact Rayleigh quotient of ``z`` (``None`` if ``z^T B z <= 0``)."""
    Bz = matvec(Bf, z)
    zBz = dot(z, Bz)
    return (dot(z, matvec(Af, z)) / zBz if zBz > 0 else None), Bz


def _refine(ev: FlatEval) -> Vec | None:
    """The top eigenvector, exactly: inverse iteration shifted by the certified bound ``up``
    (the nearest eigenvalue is the top one, whatever the float proposal) until the Rayleigh
    quotient is within 1e-3 of ``up``, then Rayleigh quotient iteration.  None if it does
    not reach the top eigenvalue."""
    Af, Bf = ev.Af, ev.Bf
    if not np.isfinite(ev.up):
        return None
    k = len(Af)
    up = Fraction(ev.up)
    close = lambda rho: rho is not None and ev.up - float(rho) <= 1e-3 * max(abs(ev.up), 1e-300)  # noqa: E731
    start = np.ones(k) if ev.E is None else ev.E[:, 0]
    z = _rounded([Fraction(v) for v in start.tolist()])
    rq_steps = 0
    for _ in range(SHIFT_STEPS + REFINE_STEPS):
        rho, Bz = _rq(Af, Bf, z)
        sigma = rho if close(rho) else up
        rq_steps += sigma is rho
        if rq_steps > REFINE_STEPS:
            break
        w = solve_exact([[a - sigma * b for a, b in zip(ra, rb)] for ra, rb in zip(Af, Bf)], Bz)
        if w is None or not any(w):
            if sigma is rho:
                break  # rho is exactly an eigenvalue: z is an exact eigenvector
            w = [a + Fraction(1, 1 << 20) for a in z]  # up is exactly an eigenvalue: perturb
        z = _rounded(w)
    rho, _ = _rq(Af, Bf, z)
    if rho is None or ev.up - float(rho) > 1e-6 * max(abs(ev.up), 1e-300):
        return None  # not the top eigenvector
    return z


def _second_bound(Af, Bf, Bz: Vec) -> float:
    """A certified bound ``u2 >= lambda_2`` of the pencil: its top eigenvalue on the
    ``B``-orthogonal complement ``{x : z^T B x = 0}`` of ``z`` (interlacing); ``-inf`` when
    ``B`` vanishes there."""
    k = len(Af)
    W2 = nullspace([Bz], k)
    A2, B2 = compress(Af, W2), compress(Bf, W2)
    if not any(any(r) for r in B2):
        return -np.inf
    lam2 = _float_top(A2, B2)[0] if not nullspace(B2, len(B2)) else np.nan
    amax = float(max(abs(v) for r in A2 for v in r))
    return verify_up(A2, B2, lam2, amax / float(max(abs(v) for r in B2 for v in r)))


def _both_outside(ev: FlatEval, flat: Flat, H, rows, z: Vec) -> bool:
    """Do both ``+-v`` (``v`` the exact top eigenvector, ``B_F`` nonsingular) violate a row?
    Decided exactly, without conditioning losses: with ``z = a v + e`` (``e`` B-orthogonal
    to ``v``, ``a > 0``), Davis-Kahan gives ``|e|_B <= |r|_{B^-1} / delta`` (``r = A z - rho B z``,
    ``delta = rho - u2`` certified), and ``|h^T e| <= |h|_{B^-1} |e|_B``; so ``h^T v`` has the
    sign of ``h^T z`` when ``(h^T z)^2 delta^2 > (h^T B^-1 h) (r^T B^-1 r)``.  All in rationals."""
    Af, Bf = ev.Af, ev.Bf
    k = len(Af)
    rho, Bz = _rq(Af, Bf, z)
    if rho is None:
        return False
    zBz = dot(z, Bz)
    r = [a - rho * b for a, b in zip(matvec(Af, z), Bz)]
    Br = solve_exact(Bf, r)
    if Br is None:
        return False
    rr = dot(r, Br)
    u2 = -np.inf if k == 1 else _second_bound(Af, Bf, Bz)
    delta = Fraction(1) if k == 1 else (rho - Fraction(u2) if np.isfinite(u2) else None)
    if delta is None or delta <= 0 or 4 * rr >= delta * delta * zBz:  # need sin(angle) < 1/2: a > 0
        return False
    sides = set()
    for i in rows:
        h = [dot(H[i], v) for v in flat.V]
        hz = dot(h, z)
        if hz == 0:
            continue
        Bh = solve_exact(Bf, h)
        if Bh is not None and hz * hz * delta * delta > dot(h, Bh) * rr:
            sides.add(hz > 0)
            if len(sides) == 2:
                return True
    return False


def _distance(ev: FlatEval, z: Vec) -> float:
    """A bound on the distance (relative, Euclidean) from ``z`` to the top eigenvector line.

    Davis-Kahan for the pencil: ``sin_B <= |r|_{B^-1} / (delta |z|_B)`` with ``r = A z - rho B z``
    and ``delta = rho - u2``, ``u2`` a certified bound on the pencil on ``{x : z^T B x = 0}``
    (``>= lambda_2`` by interlacing); Euclidean via ``lambda_max(B) <= tr B`` and
    ``lambda_min(B) >= det B / (tr B)^(k-1)``.  ``inf`` when no bound is available.
    """
    Af, Bf = ev.Af, ev.Bf
    k = len(Af)
    rho, Bz = _rq(Af, Bf, z)
    if k == 1:
        return 0.0
    delta = float(rho) - _second_bound(Af, Bf, Bz)
    tr, dt = sum((Bf[i][i] for i in range(k)), Fraction(0)), det(Bf)
    if not delta > 0 or dt <= 0:
        return np.inf
    r = [a - rho * b for a, b in zip(matvec(Af, z), Bz)]
    lmin = float(dt / tr ** (k - 1))
    rn = float(norm2([float(v) for v in r]))
    zn = float(norm2([float(v) for v in z]))
    return DIST_SAFETY * float(np.sqrt(float(tr))) * rn / (lmin * delta * float(np.sqrt(float(dot(z, Bz)))) * zn)


def _violation(H, rows, Hf, y: Vec) -> float:
    """``min_i H_i y / (|H_i| |y|)`` over ``rows`` (exact products, float result)."""
    ny = float(norm2([float(v) for v in y]))
    hn = norm2(np.array([[float(v) for v in H[i]] for i in rows]), axis=1) if rows else []
    return min((float(dot(H[i], y)) / (h * ny) for i, h in zip(rows, hn)), default=0.0)


def _realize_simple(H, Hf, flat: Flat, ev: FlatEval, rows) -> tuple[str, Vec | None]:
    """A simple top eigenvalue, ``B_F`` nonsingular: test ``+-v`` (refined exactly).

    "not" only when both ``+-v`` violate a row by more than the rigorous distance bound of
    the refined vector (times the condition of the flat's basis: ``_violation`` is in span
    coordinates); "unsure" when refinement fails."""
    z = _refine(ev)
    if z is None:
        return "unsure", None
    y = combine(flat.V, z)
    yf = np.array([float(v) for v in y])
    cands = [(y, yf), ([-v for v in y], -yf)]
    for c, cf in cands:
        if _exact_inside(H, rows, Hf, c, cf):
            return "realized", c
    sv = np.linalg.svd(flat.Vf, compute_uv=False)
    tol = _distance(ev, z) * float(sv[0] / sv[-1]) if sv[-1] > 0 else np.inf
    worst = max(_violation(H, rows, Hf, c) for c, _ in cands)
    if worst < -tol or _both_outside(ev, flat, H, rows, z):
        return "not", None
    return "unsure", None


def _exact_ray(Mq, k: int) -> Vec | None:
    """An exact ``z`` with ``M z >= 0`` and ``z[:k] != 0``: a lineality vector or an extreme
    ray of ``{z : M z >= 0}`` (every ``(n - 1 - l)``-subset of rows; ``n <= 4``)."""
    n = len(Mq[0]) if Mq else 0
    if n == 0 or n > 4:
        return None
    L = nullspace(Mq, n)
    for v in L:
        if any(v[:k]):
            return v
    size = n - 1 - len(L)
    if size < 0 or math.comb(len(Mq), size) > RAY_BUDGET:
        return None
    for J in itertools.combinations(range(len(Mq)), size):
        N = nullspace([Mq[j] for j in J] + L, n)
        if len(N) != 1:
            continue
        for z in (N[0], [-v for v in N[0]]):
            if any(z[:k]) and all(dot(row, z) >= 0 for row in Mq):
                return z
    return None


def _realize_kernel(H, flat: Flat, ev: FlatEval, rows) -> Vec | None:
    """Simple top eigenvalue on the complement of an exact ``ker B_F``: refine it exactly
    and search ``e y + K n`` in the cone by exact ray enumeration."""
    if ev.E is None:
        return None
    k = len(flat.V)
    W = nullspace(ev.K, k)
    Wf = np.array([[float(v) for v in w] for w in W]).T
    Aw, Bw = compress(ev.Af, W), compress(ev.Bf, W)
    Y = np.linalg.lstsq(Wf, ev.E, rcond=None)[0]
    zw = _refine(FlatEval("finite", ev.up, ev.lam, Y, [], Aw, Bw, ev.gap))
    if zw is None:
        return None
    cols = [combine(flat.V, combine(W, zw))] + [combine(flat.V, kv) for kv in ev.K]
    Mq = [[dot(H[i], c) for c in cols] for i in rows]
    z = _exact_ray(Mq, 1)
    return None if z is None else [sum((zj * c[i] for zj, c in zip(z, cols)), Fraction(0)) for i in range(len(cols[0]))]


def realize(H, Hf: np.ndarray, flat: Flat, ev: FlatEval) -> tuple[str, Vec | None]:
    """``("realized", point)`` (exact point of the flat in the cone, span coordinates),
    ``("not", None)`` when clearly outside, ``("unsure", None)`` otherwise."""
    rows = [i for i in range(len(H)) if i not in flat.key]
    if not ev.K and (ev.E is None or ev.E.shape[1] == 1):
        return _realize_simple(H, Hf, flat, ev, rows)
    if ev.E is None:
        return "unsure", None
    Kf = np.array([[float(v) for v in kv] for kv in ev.K]).T.reshape(len(flat.V), len(ev.K))
    if ev.K and ev.E.shape[1] == 1:
        z = _realize_kernel(H, flat, ev, rows)
        if z is not None:
            return "realized", z
    R, S = Hf[rows] @ (flat.Vf @ ev.E), Hf[rows] @ (flat.Vf @ Kf)
    mu, sol = lp_point(R, S)
    if sol is not None and mu > 0:
        k = ev.E.shape[1]
        c = [Fraction(v) for v in (ev.E @ sol[:k]).tolist()]
        if ev.K:
            c = [a + b for a, b in zip(c, combine(ev.K, sol[k:].tolist()))]
        z = combine(flat.V, c)
        if _exact_inside(H, rows, Hf, z, flat.Vf @ np.array([float(v) for v in c])):
            return "realized", z
    return "unsure", None  # outside the cone is never decided in floats
