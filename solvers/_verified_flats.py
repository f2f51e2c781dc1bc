"""Flats of the verified path: exact compressed pencils, certified bounds
(``u B_F - A_F >= 0`` by an exact LDL^T test), realizability of the top
eigenspace, and the children of a flat."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ._exact import Vec, combine, compress, dot, float_up, is_psd, matvec, nullspace, pow2
from ._lp import solve_lp

__all__ = ["Flat", "FlatEval", "evaluate", "realize", "children", "verify_up",
           "VERIFY_STEPS", "NOTREAL_TOL", "BISECT_STEPS", "MAX_DOUBLINGS"]

#: Relative increments tried on a float eigenvalue before the exact PSD test accepts it as a bound.
VERIFY_STEPS = (1e-13, 1e-11, 1e-9, 1e-6, 1e-3)
#: A top eigenspace counts as outside the cone only if every candidate violates a row by this (relative).
NOTREAL_TOL = 1e-9
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
    if np.isfinite(lam):
        for rel in VERIFY_STEPS:
            u = float_up(Fraction(lam) + Fraction(rel * mag))
            if is_psd(_shifted(Af, Bf, Fraction(u), slack)):
                return u
    if is_psd(_shifted(Af, Bf, Fraction(0), slack)):
        return 0.0
    lo, hi = 0.0, mag
    for _ in range(MAX_DOUBLINGS):
        if is_psd(_shifted(Af, Bf, Fraction(hi), slack)):
            break
        lo, hi = hi, 2.0 * hi
    else:
        return np.inf
    for _ in range(BISECT_STEPS):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if is_psd(_shifted(Af, Bf, Fraction(mid), slack)):
            hi = mid
        else:
            lo = mid
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
        return np.nan, None, U
    W = U[:, keep] / np.sqrt(s[keep])
    M = W.T @ Af @ W
    mu, Y = np.linalg.eigh(0.5 * (M + M.T))
    top = float(mu[-1])
    r = int(np.sum(mu >= top - 1e-9 * max(float(np.abs(mu).max()), 1e-300)))
    return top * sa / sb, W @ Y[:, -r:], U[:, ~keep]


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
        return FlatEval("finite", float_up(lam), float(lam), np.ones((1, 1)))
    K = nullspace(Bf, k)
    if K and any(any(matvec(Af, v)) for v in K):
        return FlatEval("inf")
    W = nullspace(K, k) if K else [[Fraction(int(i == j)) for j in range(k)] for i in range(k)]
    lam, Y, Kd = _float_top(compress(Af, W), compress(Bf, W))
    amax = float(max(abs(v) for r in Af for v in r))
    bmax = float(max(abs(v) for r in Bf for v in r))
    Wf = np.array([[float(v) for v in w] for w in W]).T
    convention = convention and Kd.shape[1] > 0
    up = verify_up(Af, Bf, lam, amax / bmax, _slack(Wf @ Kd, Af, Bf) if convention else None)
    if not np.isfinite(up) and Kd.shape[1] and not convention:
        up = verify_up(Af, Bf, lam, amax / bmax, _slack(Wf @ Kd, Af, Bf))
        convention = bool(np.isfinite(up))
    E = None if Y is None else Wf @ Y
    return FlatEval("finite", up, lam if np.isfinite(lam) else up, E, K, convention)


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


def _lp_point(R: np.ndarray, S: np.ndarray, margin: float):
    """``(y, n)`` with ``R y + S n >= margin``, some ``y_i = +-1``, ``|y| <= 1``; or None."""
    f, k = R.shape
    r = S.shape[1]
    M = np.hstack([R, S])
    for i in range(k):
        for sgn in (1.0, -1.0):
            cl = np.r_[-np.ones(k), np.full(r, -1e3)]
            cu = np.r_[np.ones(k), np.full(r, 1e3)]
            cl[i] = cu[i] = sgn
            sol = solve_lp(np.zeros(k + r), M, np.full(f, margin), np.full(f, np.inf), cl, cu)
            if sol.status == "optimal":
                return sol.x[:k], sol.x[k:]
    return None


def realize(H, Hf: np.ndarray, flat: Flat, ev: FlatEval) -> tuple[str, Vec | None]:
    """``("realized", point)`` (exact point of the flat in the cone, span coordinates),
    ``("not", None)`` when clearly outside, ``("unsure", None)`` otherwise."""
    rows = [i for i in range(len(H)) if i not in flat.key]
    if ev.E is None:
        return "unsure", None
    Kf = np.array([[float(v) for v in kv] for kv in ev.K]).T.reshape(len(flat.V), len(ev.K))
    if ev.E.shape[1] == 1 and not ev.K:
        e = ev.E[:, 0]
        worst = []
        for sgn in (1.0, -1.0):
            z = combine(flat.V, (sgn * e).tolist())
            zf = flat.Vf @ (sgn * e)
            if _exact_inside(H, rows, Hf, z, zf):
                return "realized", z
            worst.append(float((Hf[rows] @ zf).min()) / float(np.linalg.norm(zf)) if rows else 0.0)
        return ("not" if max(worst) < -NOTREAL_TOL else "unsure"), None
    R, S = Hf[rows] @ (flat.Vf @ ev.E), Hf[rows] @ (flat.Vf @ Kf)
    sol = _lp_point(R, S, 1e-9)
    if sol is not None:
        c = [Fraction(v) for v in (ev.E @ sol[0]).tolist()]
        c = [a + b for a, b in zip(c, combine(ev.K, sol[1].tolist()) if ev.K else [0] * len(c))]
        z = combine(flat.V, c)
        if _exact_inside(H, rows, Hf, z, flat.Vf @ np.array([float(v) for v in c])):
            return "realized", z
    return ("not" if _lp_point(R, S, -NOTREAL_TOL) is None else "unsure"), None


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
