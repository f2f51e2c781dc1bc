"""Flats of the verified path: exact compressed pencils, certified bounds
(``u B_F - A_F >= 0`` by an exact LDL^T test), realizability of the top
eigenspace, and the children of a flat."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ._exact import Vec, combine, compress, det, dot, float_up, is_psd, matvec, nullspace, pow2, solve_exact
from ._lp import solve_lp

__all__ = ["Flat", "FlatEval", "evaluate", "realize", "children", "verify_up",
           "VERIFY_STEPS", "NOTREAL_TOL", "BISECT_STEPS", "MAX_DOUBLINGS"]

#: Relative increments tried on a float eigenvalue before the exact PSD test accepts it as a bound.
VERIFY_STEPS = (1e-13, 1e-11, 1e-9, 1e-6, 1e-3)
#: A top eigenspace counts as outside the cone only if every candidate violates a row by this
#: (relative), for a float eigenvector ...
NOTREAL_TOL = 1e-9
#: ... and, for an eigenvector refined by exact Rayleigh quotient iteration (REFINE_STEPS
#: steps), by DIST_SAFETY times a rigorous bound on its distance to the true eigenvector line.
DIST_SAFETY = 10.0
REFINE_STEPS = 3
#: At most this many inverse-iteration steps shifted by the certified bound before RQI.
SHIFT_STEPS = 6
#: Refined vectors are rounded to this many bits (relative) between steps.
REFINE_BITS = 160
#: At most this many row subsets are tried in an exact extreme-ray search.
RAY_BUDGET = 3000
#: Bisection steps (exact PSD tests) when the float eigenvalue cannot be certified.
BISECT_STEPS = 60
#: Doublings tried to find any certified bound before giving up (+inf).
MAX_DOUBLINGS = 400
#: Float rows farther than this from vanishing on a flat are not tested exactly.
CLEAR_TOL = 1e-9
#: Kernel convention: where ``B`` (and ``A``) are at rounding level on a flat but not exactly
#: singular, the certificate may add ``KERNEL_SLACK (|A_F| + u |B_F|) P`` (``P`` the projector
#: on those directions): the bound holds up to rounding-level terms there.
KERNEL_SLACK = 1e-12


@dataclass
class Flat:
    """``span(V)`` (exact basis, span coordinates) and ``key``: the enumerated rows vanishing on it."""

    V: list[Vec]
    key: frozenset
    Vf: np.ndarray = field(init=False)

    def __post_init__(self):
        self.Vf = np.array([[float(v) for v in col] for col in self.V]).T


@dataclass
class FlatEval:
    """``kind``: empty (B = 0 on the flat), pruned (sup <= lower), inf (A does not
    vanish on ker B_F: never attained in a bounded problem), finite (``up`` certified)."""

    kind: str
    up: float = np.inf
    lam: float = np.nan
    E: np.ndarray | None = None  # top eigenvectors, flat coordinates (k, r)
    K: list[Vec] = field(default_factory=list)  # exact ker B_F, flat coordinates
    convention: bool = False  # ``up`` certified with the KERNEL_SLACK term
    Af: list | None = None  # the exact compressed pencil
    Bf: list | None = None
    gap: float = 0.0  # float estimate of the gap below the top eigenvalue


def _scaled(v: Vec) -> Vec:
    s = max(abs(a) for a in v)
    return [a / Fraction(pow2(float(s))) for a in v] if s else v


def _hyperplane_basis(w: Vec) -> list[Vec]:
    """Basis of ``{c : w . c = 0}`` pivoting on the largest ``|w_p|`` (entries <= 1: well conditioned)."""
    k = len(w)
    p = max(range(k), key=lambda j: abs(w[j]))
    out = []
    for j in range(k):
        if j != p:
            v = [Fraction(0)] * k
            v[j] = Fraction(1)
            v[p] = -w[j] / w[p]
            out.append(v)
    return out


def _shifted(Af, Bf, u: Fraction, slack=None):
    """``u B_F - A_F`` (plus the kernel-convention term ``slack = (P, amax, bmax)``)."""
    M = [[u * b - a for a, b in zip(ra, rb)] for ra, rb in zip(Af, Bf)]
    if slack is not None:
        P, amax, bmax = slack
        t = Fraction(KERNEL_SLACK) * (amax + abs(u) * bmax)
        M = [[m + t * p for m, p in zip(rm, rp)] for rm, rp in zip(M, P)]
    return M


def verify_up(Af, Bf, lam: float, scale: float, slack=None) -> float:
    """Smallest float ``u`` found with ``u B_F - A_F >= 0`` exactly (``+inf`` if none);
    ``slack``: see KERNEL_SLACK."""
    mag = max(abs(lam) if np.isfinite(lam) else 0.0, scale, 1e-300)
    psd = lambda u: is_psd(_shifted(Af, Bf, Fraction(u), slack))  # noqa: E731
    lo, hi = None, None
    if np.isfinite(lam):
        prev = lam - VERIFY_STEPS[0] * mag
        for rel in VERIFY_STEPS:
            u = float_up(Fraction(lam) + Fraction(rel * mag))
            if psd(u):
                if rel == VERIFY_STEPS[0]:
                    return u
                lo, hi = prev, u
                break
            prev = u
    if hi is None:
        if psd(0.0):
            return 0.0
        lo, hi = 0.0, mag
        for _ in range(MAX_DOUBLINGS):
            if psd(hi):
                break
            lo, hi = hi, 2.0 * hi
        else:
            return np.inf
    for _ in range(BISECT_STEPS):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi or hi - lo <= VERIFY_STEPS[0] * mag:
            break
        lo, hi = (lo, mid) if psd(mid) else (mid, hi)
    return hi


def _slack(Kd: np.ndarray, Af, Bf):
    """The kernel-convention term for the rounding-level directions ``Kd`` (flat coordinates)."""
    Kq = [[Fraction(v) for v in col] for col in Kd.T.tolist()]
    k = len(Af)
    P = [[sum((c[i] * c[j] for c in Kq), Fraction(0)) for j in range(k)] for i in range(k)]
    amax = max(abs(v) for r in Af for v in r)
    bmax = max(abs(v) for r in Bf for v in r)
    return P, amax, bmax


def _float_top(Aw, Bw) -> tuple[float, np.ndarray | None]:
    """Float top eigenpairs of the exact PD pencil ``(Aw, Bw)`` (power-of-two scaled): a
    proposal only (the bound is certified exactly, witnesses checked exactly).  Directions
    where ``B`` is at rounding level are dropped from the proposal and returned third."""
    sa = pow2(float(max((abs(v) for r in Aw for v in r), default=0)))
    sb = pow2(float(max(abs(v) for r in Bw for v in r)))
    Af = np.array([[float(v / Fraction(sa)) for v in r] for r in Aw])
    Bf = np.array([[float(v / Fraction(sb)) for v in r] for r in Bw])
    s, U = np.linalg.eigh(Bf)
    keep = s > 64 * len(s) * np.finfo(float).eps * s[-1]
    if not keep.any():
        return np.nan, None, U, 0.0
    W = U[:, keep] / np.sqrt(s[keep])
    M = W.T @ Af @ W
    mu, Y = np.linalg.eigh(0.5 * (M + M.T))
    top = float(mu[-1])
    r = int(np.sum(mu >= top - 1e-9 * max(float(np.abs(mu).max()), 1e-300)))
    gap = float(top - mu[-r - 1]) * sa / sb if r < mu.size else np.inf
    return top * sa / sb, W @ Y[:, -r:], U[:, ~keep], gap


def evaluate(Ay, By, flat: Flat, lower: float, convention: bool = False) -> FlatEval:
    """Kind and certified bound of the flat (see :class:`FlatEval`).  ``convention``: the
    problem's ``B`` has rounding-level eigenvalues that are not exact zeros; the bound is
    then certified up to KERNEL_SLACK on the rounding-level directions of ``B_F`` from the
    start (otherwise only if no exact bound exists)."""
    V = flat.V
    k = len(V)
    Af, Bf = compress(Ay, V), compress(By, V)
    if not any(any(r) for r in Bf):
        return FlatEval("empty")
    if np.isfinite(lower) and is_psd(_shifted(Af, Bf, Fraction(lower))):
        return FlatEval("pruned")
    if k == 1:
        lam = Af[0][0] / Bf[0][0]
        return FlatEval("finite", float_up(lam), float(lam), np.ones((1, 1)), Af=Af, Bf=Bf, gap=np.inf)
    K = nullspace(Bf, k)
    if K and any(any(matvec(Af, v)) for v in K):
        return FlatEval("inf")
    W = nullspace(K, k) if K else [[Fraction(int(i == j)) for j in range(k)] for i in range(k)]
    lam, Y, Kd, gap = _float_top(compress(Af, W), compress(Bf, W))
    amax = float(max(abs(v) for r in Af for v in r))
    bmax = float(max(abs(v) for r in Bf for v in r))
    Wf = np.array([[float(v) for v in w] for w in W]).T
    convention = convention and Kd.shape[1] > 0
    up = verify_up(Af, Bf, lam, amax / bmax, _slack(Wf @ Kd, Af, Bf) if convention else None)
    if not np.isfinite(up) and Kd.shape[1] and not convention:
        up = verify_up(Af, Bf, lam, amax / bmax, _slack(Wf @ Kd, Af, Bf))
        convention = bool(np.isfinite(up))
    E = None if Y is None else Wf @ Y
    return FlatEval("finite", up, lam if np.isfinite(lam) else up, E, K, convention, Af, Bf, gap)


def _exact_inside(H, rows, Hf, z: Vec, zf: np.ndarray) -> bool:
    """Exact ``H_i z >= 0`` on ``rows``; rows clearly positive in floats are skipped."""
    nz = float(np.linalg.norm(zf))
    vals = Hf[rows] @ zf if len(rows) else np.zeros(0)
    for i, v in zip(rows, vals.tolist()):
        if v > CLEAR_TOL * nz:
            continue
        if v < -CLEAR_TOL * nz or dot(H[i], z) < 0:
            return False
    return True


def _lp_point(R: np.ndarray, S: np.ndarray) -> tuple[float, np.ndarray | None]:
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
            if sol.status == "optimal" and sol.x[-1] > best:
                best, arg = float(sol.x[-1]), sol.x[:-1] / c
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
    z = _rounded([Fraction(v) for v in (ev.E[:, 0] if ev.E is not None else np.ones(k)).tolist()])
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
    W2 = nullspace([Bz], k)
    A2, B2 = compress(Af, W2), compress(Bf, W2)
    if any(any(r) for r in B2):
        lam2 = _float_top(A2, B2)[0] if not nullspace(B2, len(B2)) else np.nan
        amax = float(max(abs(v) for r in A2 for v in r))
        u2 = verify_up(A2, B2, lam2, amax / float(max(abs(v) for r in B2 for v in r)))
    else:
        u2 = -np.inf
    delta = float(rho) - u2
    tr, dt = sum((Bf[i][i] for i in range(k)), Fraction(0)), det(Bf)
    if not delta > 0 or dt <= 0:
        return np.inf
    r = [a - rho * b for a, b in zip(matvec(Af, z), Bz)]
    lmin = float(dt / tr ** (k - 1))
    rn = float(np.linalg.norm([float(v) for v in r]))
    zn = float(np.linalg.norm([float(v) for v in z]))
    return DIST_SAFETY * float(np.sqrt(float(tr))) * rn / (lmin * delta * float(np.sqrt(float(dot(z, Bz)))) * zn)


def _violation(H, rows, Hf, y: Vec) -> float:
    """``min_i H_i y / (|H_i| |y|)`` over ``rows`` (exact products, float result)."""
    ny = float(np.linalg.norm([float(v) for v in y]))
    hn = np.linalg.norm(np.array([[float(v) for v in H[i]] for i in rows]), axis=1) if rows else []
    return min((float(dot(H[i], y)) / (h * ny) for i, h in zip(rows, hn)), default=0.0)


def _realize_simple(H, Hf, flat: Flat, ev: FlatEval, rows) -> tuple[str, Vec | None]:
    """A simple top eigenvalue, ``B_F`` nonsingular: test ``+-v`` (refined exactly).

    "not" when both ``+-v`` violate a row by more than the distance bound of the refined
    vector (scaled by the flat's basis: ``_violation`` is in span coordinates), or, for an
    unrefined float vector, by NOTREAL_TOL."""
    z = _refine(ev)
    trusted = ev.E is not None and abs(ev.up - ev.lam) <= 1e-6 * max(abs(ev.up), 1e-300)
    if z is None and not trusted:
        return "unsure", None  # the float proposal is not the top eigenvector
    if z is None:
        e = ev.E[:, 0]
        cands, tol = [(combine(flat.V, (s * e).tolist()), flat.Vf @ (s * e)) for s in (1.0, -1.0)], NOTREAL_TOL
    else:
        y = combine(flat.V, z)
        yf = np.array([float(v) for v in y])
        cands = [(y, yf), ([-v for v in y], -yf)]
        sv = np.linalg.svd(flat.Vf, compute_uv=False)
        tol = _distance(ev, z) * float(sv[0] / sv[-1]) if sv[-1] > 0 else np.inf
    for y, yf in cands:
        if _exact_inside(H, rows, Hf, y, yf):
            return "realized", y
    worst = max(_violation(H, rows, Hf, y) for y, _ in cands)
    return ("not" if worst < -tol else "unsure"), None


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
    k = len(flat.V)
    W = nullspace(ev.K, k)
    Wf = np.array([[float(v) for v in w] for w in W]).T
    Aw, Bw = compress(ev.Af, W), compress(ev.Bf, W)
    Y = np.linalg.lstsq(Wf, ev.E, rcond=None)[0]
    zw = _refine(FlatEval("finite", ev.up, ev.lam, Y, [], False, Aw, Bw, ev.gap))
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
    mu, sol = _lp_point(R, S)
    if sol is not None and mu > 0:
        k = ev.E.shape[1]
        c = [Fraction(v) for v in (ev.E @ sol[:k]).tolist()]
        if ev.K:
            c = [a + b for a, b in zip(c, combine(ev.K, sol[k:].tolist()))]
        z = combine(flat.V, c)
        if _exact_inside(H, rows, Hf, z, flat.Vf @ np.array([float(v) for v in c])):
            return "realized", z
    return ("not" if mu < -NOTREAL_TOL else "unsure"), None


def children(H, Hf: np.ndarray, flats: list[Flat], seen: set) -> list[Flat]:
    """Flats one dimension down (``V cap null(H_i)``), deduplicated by their exact key."""
    out = []
    for fl in flats:
        k = len(fl.V)
        if k <= 1:
            continue
        for i in range(len(H)):
            if i in fl.key:
                continue
            w = [dot(H[i], v) for v in fl.V]
            if not any(w):
                continue
            Vc = [_scaled(combine(fl.V, n)) for n in _hyperplane_basis(w)]
            Vcf = np.array([[float(v) for v in col] for col in Vc]).T
            near = np.flatnonzero(np.abs(Hf @ Vcf).max(axis=1) <= CLEAR_TOL * max(1.0, float(np.abs(Vcf).max())))
            key = frozenset(int(j) for j in near if all(dot(H[j], v) == 0 for v in Vc))
            if key not in seen:
                seen.add(key)
                out.append(Flat(Vc, key))
    return out
