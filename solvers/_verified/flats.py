"""Flats of the verified path: exact compressed pencils, certified bounds
(``u B_F - A_F >= 0`` by an exact LDL^T test) and the children of a flat.
Realizability is in :mod:`solvers._verified.realize`."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from solvers._exact import Vec, combine, compress, dot, float_up, is_psd, matvec, nullspace, pow2, solve_exact

__all__ = ["Flat", "FlatEval", "evaluate", "children", "verify_up", "VERIFY_STEPS", "BISECT_STEPS",
           "MAX_DOUBLINGS", "CLEAR_TOL", "POWER_STEPS"]

#: Relative increments tried on a float eigenvalue before the exact PSD test accepts it as a bound.
VERIFY_STEPS = (1e-13, 1e-11, 1e-9, 1e-6, 1e-3)
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
#: Bisection steps (exact PSD tests) when the float eigenvalue cannot be certified.
BISECT_STEPS = 60
#: Doublings tried to find any certified bound before giving up (+inf).
MAX_DOUBLINGS = 400
#: Float rows farther than this from vanishing on a flat are not tested exactly.
CLEAR_TOL = 1e-9
#: Exact power steps ``z <- B_F^-1 A_F z`` that refine the float proposal when ``B_F`` has
#: eigenvalues at rounding level (float64 cannot see them; they carry the top eigenvalue).
#: Only a proposal: the bound is certified exactly whatever it is.  There is no kernel
#: convention: a direction is in ``ker B`` only when it is, exactly (issue 23).
POWER_STEPS = 4
#: Refined power vectors are rounded to this many bits (relative) between steps.
POWER_BITS = 120


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
    Af: list = field(default_factory=list)  # the exact compressed pencil
    Bf: list = field(default_factory=list)
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


def _shifted(Af, Bf, u: Fraction):
    """``u B_F - A_F``, exactly."""
    return [[u * b - a for a, b in zip(ra, rb)] for ra, rb in zip(Af, Bf)]


def verify_up(Af, Bf, lam: float, scale: float) -> float:
    """Smallest float ``u`` found with ``u B_F - A_F >= 0`` exactly (``+inf`` if none)."""
    mag = max(abs(lam) if np.isfinite(lam) else 0.0, scale, 1e-300)
    psd = lambda u: is_psd(_shifted(Af, Bf, Fraction(u)))  # noqa: E731
    lo, hi = 0.0, np.nan
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
    if np.isnan(hi):
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


def _rounded_bits(w: Vec) -> Vec:
    """``w`` scaled to max-abs ~1 and rounded to POWER_BITS bits (keeps the integers small)."""
    s = max(abs(v) for v in w)
    den = 1 << POWER_BITS
    return [Fraction(round(v / s * den), den) for v in w]


def _power_refined(Aw, Bw, start: np.ndarray) -> tuple[float, np.ndarray | None]:
    """Rayleigh quotient and vector after POWER_STEPS exact steps ``z <- B^-1 A z`` on the PD
    pencil ``(Aw, Bw)``: the top eigenvalue dominates, so this converges at the ratio of the
    second to the top eigenvalue (fast exactly where float64 is blind: ``B`` nearly
    singular).  A proposal only; ``(-inf, None)`` if ``A z`` vanishes."""
    if not np.all(np.isfinite(start)) or not np.any(start):
        return -np.inf, None
    z = _rounded_bits([Fraction(v) for v in start.tolist()])
    for _ in range(POWER_STEPS):
        w = solve_exact(Bw, matvec(Aw, z))
        if w is None or not any(w):
            return -np.inf, None
        z = _rounded_bits(w)
    den = dot(z, matvec(Bw, z))
    if den <= 0:
        return -np.inf, None
    return float(dot(z, matvec(Aw, z)) / den), np.array([float(v) for v in z])[:, None]


def _float_top(Aw, Bw) -> tuple[float, np.ndarray | None, float]:
    """Top eigenvalue, eigenvectors and the gap below, of the exact PD pencil ``(Aw, Bw)``:
    a proposal only (the bound is certified exactly, witnesses checked exactly).  numpy,
    and, where ``B`` has eigenvalues at rounding level (directions numpy cannot whiten,
    which may carry the top eigenvalue), exact power steps from those directions."""
    sa = pow2(float(max((abs(v) for r in Aw for v in r), default=0)))
    sb = pow2(float(max(abs(v) for r in Bw for v in r)))
    Af = np.array([[float(v / Fraction(sa)) for v in r] for r in Aw])
    Bf = np.array([[float(v / Fraction(sb)) for v in r] for r in Bw])
    s, U = np.linalg.eigh(Bf)
    keep = s > 64 * len(s) * np.finfo(float).eps * s[-1]
    top, E, gap = -np.inf, None, 0.0
    if keep.any():
        W = U[:, keep] / np.sqrt(s[keep])
        M = W.T @ Af @ W
        mu, Y = np.linalg.eigh(0.5 * (M + M.T))
        r = int(np.sum(mu >= mu[-1] - 1e-9 * max(float(np.abs(mu).max()), 1e-300)))
        gap = float(mu[-1] - mu[-r - 1]) * sa / sb if r < mu.size else np.inf
        top, E = float(mu[-1]) * sa / sb, W @ Y[:, -r:]
    if not keep.all():
        start = U[:, ~keep].sum(axis=1) + 2.0 ** -10
        if E is not None:
            start = start + E[:, -1] / max(float(np.abs(E[:, -1]).max()), 1e-300)
        rho, z = _power_refined(Aw, Bw, start)
        if rho > top:
            top, E, gap = rho, z, 0.0
    return (top, E, gap) if E is not None else (np.nan, None, 0.0)


def evaluate(Ay, By, flat: Flat, lower: float) -> FlatEval:
    """Kind and certified bound of the flat (see :class:`FlatEval`).  A direction counts
    as a kernel of ``B_F`` only when it is one exactly."""
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
    lam, Y, gap = _float_top(compress(Af, W), compress(Bf, W))
    amax = float(max(abs(v) for r in Af for v in r))
    bmax = float(max(abs(v) for r in Bf for v in r))
    Wf = np.array([[float(v) for v in w] for w in W]).T
    up = verify_up(Af, Bf, lam, amax / bmax)
    E = None if Y is None else Wf @ Y
    return FlatEval("finite", up, lam if np.isfinite(lam) else up, E, K, Af, Bf, gap)


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
