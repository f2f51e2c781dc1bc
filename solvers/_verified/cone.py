"""Exact cone geometry for the verified path (:mod:`solvers._verified.core`).

For a cone ``{c : M c >= 0}`` with rational rows: implicit equalities are
kept only when *certified* by an exact positive dependence
(``y >= 0``, ``y_E > 0``, ``sum y_i M_i = 0``); the span used is the null
space of the certified rows, a superset of the true span, so bounds computed
on it stay valid.  A relative interior point is accepted only after an exact
check.  Float LPs only propose.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from solvers._norms import norm2

from fractions import Fraction

from solvers._exact import Vec, combine, dot, fr_vector, matvec, nonneg, nullspace, pow2, quad, solve_exact
from solvers._lp import solve_lp

__all__ = ["ExactCone", "exact_cone", "exact_unbounded", "interior_candidates"]

#: At most this many of the tightest rows are tried in exact square solves for an interior point.
TIGHT_ROWS = 7


@dataclass
class ExactCone:
    """``span`` (rational basis, vectors of length n) contains the cone; ``eq`` the
    certified implicit equalities; ``rows`` the other rows not vanishing on the span;
    ``p`` an exact relative interior point (coordinates in R^n) or None, ``pc``
    its coordinates in the basis ``span``."""

    span: list[Vec]
    eq: list[int]
    rows: list[int]
    p: Vec | None
    full: bool
    pc: Vec | None = None


def _identity(n: int) -> list[Vec]:
    return [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]


def _normalized(Mf: np.ndarray) -> np.ndarray:
    nrm = norm2(Mf, axis=1)
    return Mf / np.where(nrm > 0, nrm, 1.0)[:, None]


def _strict(Mq, Mf, rows, x, floats: bool) -> bool:
    """``M_i x > 0`` exactly on ``rows``; ``x`` floats (fast path when ``M`` is exactly ``Mf``)
    or rationals."""
    if isinstance(x, np.ndarray):
        if not np.all(np.isfinite(x)):
            return False
        if floats:
            return nonneg(Mf[rows], x, strict=True)
        x = fr_vector(x)
    return all(dot(Mq[i], x) > 0 for i in rows)


def _equilibrated(N: list[Vec]) -> tuple[np.ndarray, np.ndarray]:
    """``N`` (basis vectors as columns) as floats with rows and columns scaled by powers of
    two to max-abs 1 (row scaling keeps every sign), and the column scales."""
    M = np.array([[float(v) for v in vec] for vec in N]).T
    M = M / np.array([pow2(float(np.abs(r).max())) for r in M])[:, None]
    cs = np.array([pow2(float(np.abs(c).max())) for c in M.T])
    return M / cs[None, :], 1.0 / cs


def _lp_support(N: np.ndarray) -> np.ndarray:
    """Largest support of ``y = N c >= 0`` (float LP: max sum s, N c >= s, 0 <= s <= 1)."""
    q, k = N.shape
    A = np.hstack([N, -np.eye(q)])
    sol = solve_lp(np.r_[np.zeros(k), -np.ones(q)], A, np.zeros(q), np.full(q, np.inf),
                   np.r_[np.full(k, -1e6), np.zeros(q)], np.r_[np.full(k, 1e6), np.ones(q)])
    x = sol.x
    return x[k:] >= 0.5 if sol.status == "optimal" and x is not None else np.zeros(q, dtype=bool)


def _certify(Mq, E: list[int], n: int) -> list[int]:
    """The rows of ``E`` certified implicit equalities by an exact positive dependence."""
    if not E:
        return []
    N = nullspace([[Mq[i][j] for i in E] for j in range(n)], len(E))
    if not N:
        return []
    S = [E[i] for i in np.flatnonzero(_lp_support(_equilibrated(N)[0]))]
    if not S:
        return []
    NS = nullspace([[Mq[i][j] for i in S] for j in range(n)], len(S))
    if not NS:
        return []
    Nf, cs = _equilibrated(NS)
    k = Nf.shape[1]
    sol = solve_lp(np.r_[np.zeros(k), -1.0], np.hstack([Nf, -np.ones((len(S), 1))]), np.zeros(len(S)),
                   np.full(len(S), np.inf), np.r_[np.full(k, -1.0), -np.inf], np.r_[np.full(k, 1.0), 1.0])
    if sol.status != "optimal" or sol.x is None:
        return []
    y = combine(NS, (sol.x[:k] * cs).tolist())
    return S if all(v > 0 for v in y) else []


def interior_candidates(Mf: np.ndarray, hints: list) -> list[np.ndarray]:
    """Float points that may be strictly inside ``{c : Mf c >= 0}``: the hints, a
    max-margin LP point in the basis that whitens ``Mf`` (a thin cone whose
    thinness is a near-dependence of rows becomes fat there)."""
    out = [np.asarray(h, dtype=float) for h in hints if h is not None and np.all(np.isfinite(h))]
    Mn = _normalized(Mf)
    q, n = Mn.shape
    if q == 0:
        return out + [np.ones(n)]
    _, s, Vt = np.linalg.svd(Mn, full_matrices=False)
    if s.size == n and s[-1] > 0:
        T = Vt.T / s  # x = T y
        Mt = _normalized(Mn @ T)
        sol = solve_lp(np.r_[np.zeros(n), -1.0], np.hstack([Mt, -np.ones((q, 1))]), np.zeros(q),
                       np.full(q, np.inf), np.r_[-np.ones(n), -np.inf], np.r_[np.ones(n), 1.0])
        if sol.status == "optimal" and sol.x is not None:
            out.append(T @ sol.x[:n])
    return out


def _square_solves(Mq, Mf: np.ndarray, rows: list[int], ref: np.ndarray | None, n: int):
    """Exact ``M_S^{-1} 1`` for ``n``-subsets ``S`` of the tightest rows (a needle's own
    corner), skipping those that numpy already sees outside the cone."""
    Mn = _normalized(Mf[rows])
    score = np.abs(Mn @ ref) if ref is not None and np.all(np.isfinite(ref)) else np.zeros(len(rows))
    tight = [rows[i] for i in np.argsort(score, kind="stable")[:TIGHT_ROWS]]
    for S in itertools.combinations(tight, n):
        u = solve_exact([Mq[i] for i in S], [Fraction(1)] * n)
        if u is None:
            continue
        uf = np.array([float(v) for v in u])
        if not np.all(np.isfinite(uf)):
            continue
        with np.errstate(under="ignore"):  # a positive multiple with its largest entry in [0.5, 1): no overflow
            uf = np.ldexp(uf, -int(np.frexp(np.abs(uf).max())[1])) if np.any(uf) else uf
        if (Mn @ uf).min() >= -1e-9 * norm2(uf):
            yield u


def exact_cone(Mq, Mf: np.ndarray, hints: list, eq_guess: np.ndarray | None, *, floats: bool) -> ExactCone:
    """Certified span, equalities and (if found) an exact interior point of ``{c : M c >= 0}``.

    ``Mq`` rational rows, ``Mf`` their float values (equal when ``floats``);
    ``eq_guess``: the rows a float LP took for implicit equalities.
    """
    q, n = Mf.shape
    nz = [i for i in range(q) if any(Mq[i])]
    cands = interior_candidates(Mf[nz], hints)
    for x in cands:
        if _strict(Mq, Mf, nz, x, floats):
            return ExactCone(_identity(n), [], nz, fr_vector(x), True, fr_vector(x))
    guess = [i for i in nz if eq_guess is not None and eq_guess[i]]
    if not guess or len(nz) <= TIGHT_ROWS + n:
        for u in _square_solves(Mq, Mf, nz, cands[-1] if cands else None, n):
            if all(dot(Mq[i], u) > 0 for i in nz):
                return ExactCone(_identity(n), [], nz, u, True, u)
    eq = _certify(Mq, guess, n)
    span = nullspace([Mq[i] for i in eq], n) if eq else _identity(n)
    rows = [i for i in nz if i not in eq and any(dot(Mq[i], z) for z in span)]
    eq = [i for i in nz if i not in rows]
    p = pc = None
    if span:
        Zf = np.array([[float(v) for v in z] for z in span]).T
        coords = [np.linalg.lstsq(Zf, x, rcond=None)[0] for x in cands]
        if eq and rows:  # a max-margin LP on the span itself (the cone is full-dimensional there)
            Hs = np.array([[float(dot(Mq[i], z)) for z in span] for i in rows])
            coords += interior_candidates(Hs, [])
        for c in coords:
            y = combine(span, c.tolist())
            if all(dot(Mq[i], y) > 0 for i in rows):
                p, pc = y, fr_vector(c)
                break
    return ExactCone(span, eq, rows, p, len(span) == n and not eq, pc)


def exact_unbounded(Ay, By, H, d: int):
    """Is there ``v`` in the cone ``{H v >= 0}`` with ``B v = 0`` and ``A v != 0``?

    Returns ``("no", None)``, ``("yes", ray)`` (``ray`` exact, in these
    coordinates) or ``("unknown", None)`` when neither can be certified.
    """
    K = nullspace(By, d)
    if not K or all(not any(matvec(Ay, k)) for k in K):
        return "no", None
    Mq = [[dot(h, k) for k in K] for h in H]
    Mf = np.array([[float(v) for v in row] for row in Mq]).reshape(len(H), len(K))
    from solvers._reduction import implicit_equalities

    Mn = _normalized(Mf)
    eq, x, _, _ = implicit_equalities(Mn) if Mn.shape[0] else (np.zeros(0, dtype=bool), np.ones(len(K)), 0, ())
    sub = exact_cone(Mq, Mf, [x], eq, floats=False)
    D = [combine(K, z) for z in sub.span]
    if all(not any(matvec(Ay, v)) for v in D):
        return "no", None
    if sub.p is None:
        return "unknown", None
    for z in [None] + sub.span:
        for t in ((0,) if z is None else (2.0 ** -8, -2.0 ** -8, 2.0 ** -30, -2.0 ** -30)):
            c = sub.p if z is None else [a + t * b for a, b in zip(sub.p, z)]
            if z is not None and not all(dot(Mq[i], c) > 0 for i in sub.rows):
                continue
            v = combine(K, c)
            if quad(Ay, v) > 0:
                return "yes", v
    return "unknown", None

