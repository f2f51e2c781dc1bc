"""Slow brute-force oracle for cone-constrained generalized eigenvalue problems,
and instance generators, for the tests of :mod:`solvers`.

Independent of :mod:`solvers` (SciPy, mpmath): for EVERY subset ``J`` of the rows
of ``G`` with ``|J| <= m - 1`` (every flat ``null(G_J)`` of the row
arrangement is spanned that way), compute the top generalized eigenpair of
the pencil compressed to ``null(G_J)`` and decide with ``scipy.optimize.linprog``
whether some point of the top eigenspace (plus ``ker B``) lies in the cone.
The optimum is the largest realizable eigenvalue (an optimum lies in the
relative interior of a face, where it is a top eigenvector of the face's
span).  Subsets are examined in decreasing eigenvalue order, so the first
realizable one is the answer; all eigenvalues are still computed.

The input floats are the exact rationals they are: flats, the rows vanishing on
them, ``ker B`` on a flat and whether ``A`` vanishes on it are decided exactly
(Fractions), never by a float threshold (a rounding-level eigenvalue of ``B``
is not a kernel: it may carry the optimum).  Eigenvalues of the remaining
definite pencil are computed in floats (mpmath at 50 digits when ``B`` is
ill conditioned there; an exactly indefinite ``B`` raises), realizability by
float LPs (a point of a face's relative interior is accepted only when it is
inside exactly).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import scipy.linalg as sla
from scipy.optimize import linprog

from _thin_cone_reference import nullspace as _nullspace  # the tests' own exact null space

RTOL = 1e-10
#: Above this float condition number a flat's definite pencil is solved with mpmath (50 digits).
COND_MAX = 1e8


@dataclass(frozen=True)
class Reference:
    status: str  # "exact" / "infeasible" / "unbounded"
    value: float
    x: np.ndarray | None
    subsets: int


def _fr(M) -> list:
    return [[Fraction(v) for v in row] for row in np.atleast_2d(np.asarray(M, dtype=float)).tolist()]


def _dot(u, v) -> Fraction:
    return sum((a * b for a, b in zip(u, v) if a and b), Fraction(0))


def _compress(M: list, V: list) -> list:
    """``V^T M V`` for the columns ``V`` (lists), exactly."""
    MV = [[_dot(row, v) for row in M] for v in V]
    return [[_dot(u, w) for w in MV] for u in V]


def _floats(V: list, n: int) -> np.ndarray:
    """Columns ``V`` (lists of Fractions, length ``n``) as a float ``n x len(V)`` array."""
    return np.array([[float(x) for x in v] for v in V], dtype=float).T.reshape(n, len(V))


def _unit(M: np.ndarray) -> np.ndarray:
    """Rows scaled to unit norm (for the float LPs only; no decision rests on it)."""
    nrm = np.linalg.norm(M, axis=1) if M.size else np.zeros(0)
    return M / np.where(nrm > 0, nrm, 1.0)[:, None] if M.size else M


def _lp_feasible(A_ub, b_ub, A_eq=None, b_eq=None):
    n = A_ub.shape[1] if A_ub.size else A_eq.shape[1]
    res = linprog(np.zeros(n), A_ub=A_ub if A_ub.size else None, b_ub=b_ub if A_ub.size else None,
                  A_eq=A_eq, b_eq=b_eq, bounds=[(None, None)] * n, method="highs")
    return res.status == 0, (res.x if res.status == 0 else None)


def _relint(Gq: list, rest: list, K: list) -> bool:
    """Does ``C cap span(K)`` have a point strictly inside every row of ``rest`` (rows not
    vanishing on ``span(K)``, decided exactly)?  A float LP finds a point, accepted only when
    exactly strictly inside; an infeasible LP is trusted (the rows do not vanish on the span,
    so an empty relative interior is a clear, scale-free answer)."""
    if not rest:
        return True
    n = len(Gq[0])
    Kf = _floats(K, n)
    Hr = _unit(np.array([[float(x) for x in Gq[i]] for i in rest]) @ Kf)
    ok, w = _lp_feasible(-Hr, -np.ones(len(rest)))
    if not ok:
        return False
    wq = [Fraction(float(t)) for t in w]
    x = [sum((c * k[j] for c, k in zip(wq, K)), Fraction(0)) for j in range(n)]
    if all(_dot(Gq[i], x) > 0 for i in rest):
        return True
    return _relint_exact([[_dot(Gq[i], k) for k in K] for i in rest])


def _relint_exact(H: list) -> bool:
    """``H w > 0`` for some ``w``, exactly (rows nonzero): the sum of the extreme rays of the
    pointed part of ``{w : H w >= 0}`` (modulo its lineality space) is strictly inside iff
    anything is.  For the thin faces a float LP cannot see (a row within rounding of another)."""
    k = len(H[0])
    L = _nullspace(H, k)
    C = _nullspace(L, k) if L else [[Fraction(int(i == j)) for j in range(k)] for i in range(k)]
    Hc = [[_dot(h, c) for c in C] for h in H]  # the pointed part, in a complement of L
    kc = len(C)
    total = [Fraction(0)] * kc
    for J in itertools.combinations(range(len(Hc)), kc - 1):
        N = _nullspace([Hc[j] for j in J], kc)
        if len(N) != 1:
            continue
        for z in (N[0], [-v for v in N[0]]):
            if all(_dot(h, z) >= 0 for h in Hc):
                total = [a + b for a, b in zip(total, z)]
    return all(_dot(h, total) > 0 for h in Hc)


def _top_pencil(Aw: list, Bw: list) -> tuple[float, np.ndarray]:
    """Top eigenvalue and top eigenvectors (columns, clustered at RTOL) of the exactly
    nonsingular pencil ``(Aw, Bw)``: scipy when ``Bw`` is well conditioned in floats, else
    mpmath at 50 digits (a Cholesky factor of the exact rationals)."""
    Af, Bf = np.array([[float(x) for x in r] for r in Aw]), np.array([[float(x) for x in r] for r in Bw])
    sb = np.linalg.eigvalsh(Bf)
    if sb[0] > 0 and sb[-1] <= COND_MAX * sb[0]:
        mu, Y = sla.eigh(Af, Bf)
    else:
        import mpmath

        with mpmath.workdps(50):
            Am = mpmath.matrix([[mpmath.mpf(x.numerator) / x.denominator for x in r] for r in Aw])
            Bm = mpmath.matrix([[mpmath.mpf(x.numerator) / x.denominator for x in r] for r in Bw])
            L = mpmath.cholesky(Bm)  # raises for a B that is not positive definite exactly
            Li = mpmath.inverse(L)
            ev, Q = mpmath.eigsy(Li * Am * Li.T)
            Y = Li.T * Q
            mu = np.array([float(v) for v in ev])
            Y = np.array([[float(Y[i, j]) for j in range(Y.cols)] for i in range(Y.rows)])
            order = np.argsort(mu)
            mu, Y = mu[order], Y[:, order]
    top = float(mu[-1])
    return top, Y[:, mu >= top - RTOL * max(1.0, abs(top))]


def _subsets(p, m):
    for k in range(0, min(m - 1, p) + 1):
        yield from itertools.combinations(range(p), k)


def reference(A, B, G) -> Reference:
    """Exact ``sup x^T A x / x^T B x`` over ``G x >= 0, B x != 0`` by brute force.

    The inputs are read as the exact rationals they are (``A``, ``B`` symmetrized in
    floats first, as the problem does).  Flats ``null(G_J)``, the rows vanishing on them,
    ``ker B`` on a flat and ``A`` on it are decided exactly (Fractions); eigenvalues of the
    definite remainder in floats (mpmath when ill conditioned); realizability by float LPs.
    """
    A, B, G = (np.asarray(v, dtype=float) for v in (A, B, G))
    A, B = 0.5 * (A + A.T), 0.5 * (B + B.T)
    m = A.shape[0]
    G = G.reshape(-1, m)
    G = G[np.any(G != 0, axis=1)]
    Gq, Aq, Bq = _fr(G) if G.size else [], _fr(A), _fr(B)
    Gu = _unit(G)
    p = len(Gq)
    cands = []
    feasible = unbounded = False
    count = 0
    seen: set = set()
    for J in _subsets(p, m):
        count += 1
        V = _nullspace([Gq[j] for j in J], m) if J else [[Fraction(int(i == j)) for j in range(m)] for i in range(m)]
        if not V:
            continue
        # rows vanishing on the flat (exactly): they define it, so flats are deduplicated by them
        zero = frozenset(i for i in range(p) if all(_dot(Gq[i], v) == 0 for v in V))
        if zero in seen:
            continue
        seen.add(zero)
        rest = [i for i in range(p) if i not in zero]
        Bv, Av = _compress(Bq, V), _compress(Aq, V)
        k = len(V)
        if any(any(r) for r in Bv) and _relint(Gq, rest, V):
            feasible = True
        # a ray in the cone and in ker B with A != 0: relatively open set in K = V cap ker B
        N = _nullspace(Bv, k)
        KV = [[sum((c * v[j] for c, v in zip(n_, V)), Fraction(0)) for j in range(m)] for n_ in N]
        if KV and any(any(r) for r in _compress(Aq, KV)):
            restK = [i for i in range(p) if any(_dot(Gq[i], v) != 0 for v in KV)]
            if _relint(Gq, restK, KV):
                unbounded = True
        if not any(any(r) for r in Bv):
            continue
        if N and any(_dot(row, n_) != 0 for n_ in N for row in Av):
            continue  # A does not vanish on ker B here: +inf on this flat, not attained
        W = _nullspace(N, k) if N else [[Fraction(int(i == j)) for j in range(k)] for i in range(k)]
        top, Y = _top_pencil(_compress(Av, W), _compress(Bv, W))
        Vf = _floats(V, m)
        E = Vf @ _floats(W, k) @ Y  # top eigenvectors, m-space
        Nm = _floats(KV, m) if KV else np.zeros((m, 0))
        cands.append((top, rest, E, Nm))
    if not feasible:
        return Reference("infeasible", -np.inf, None, count)
    if unbounded:
        return Reference("unbounded", np.inf, None, count)
    cands.sort(key=lambda c: -c[0])
    for top, rest, E, Nm in cands:
        if not rest:
            return Reference("exact", float(top), E[:, 0], count)
        R, S = Gu[rest] @ E, Gu[rest] @ Nm
        k = E.shape[1]
        M = np.hstack([R, S])
        for i, sgn in itertools.product(range(k), (1.0, -1.0)):
            A_eq = np.zeros((1, M.shape[1]))
            A_eq[0, i] = 1.0
            ok, sol = _lp_feasible(-M, np.zeros(len(rest)), A_eq, [sgn])
            if ok and np.min(M @ sol) >= -1e-9 * max(1.0, np.abs(sol).max()):
                return Reference("exact", float(top), E @ sol[:k] + Nm @ sol[k:], count)
    raise AssertionError("reference: feasible bounded problem without a realizable face")


# ----------------------------------------------------------------------------- instances

def random_psd(rng, m, rank=None):
    M = rng.standard_normal((m, rank or m))
    return M @ M.T


def gating_cone(rng, n, m):
    """``G = diag(sign(X theta0)) X`` with ``X = [Gaussian, 1]`` (n x m): a chamber cone."""
    X = np.c_[rng.standard_normal((n, m - 1)), np.ones(n)]
    theta0 = rng.standard_normal(m)
    return np.sign(X @ theta0)[:, None] * X


def gating_instance(seed, n, m, rankA=None):
    rng = np.random.default_rng(seed)
    G = gating_cone(rng, n, m)
    return random_psd(rng, m, rankA), random_psd(rng, m) + 0.1 * np.eye(m), G


def _int_features(rng, n, m):
    """``Phi = [X, 1]`` with small integer ``X``: every Gram product below is exact, so a
    singular ``B`` is singular exactly (a float-rounded ``Phi^T S Phi`` is not: its tiny
    eigenvalues are rounding, and read as exact rationals it may even be indefinite)."""
    return np.c_[rng.integers(-4, 5, size=(n, m - 1)), np.ones(n)].astype(float)


def _int_frame(rng, n, K):
    """A small integer ``n x K`` matrix of rank ``K`` (stands in for ``U_K``)."""
    while True:
        V = rng.integers(-2, 3, size=(n, K)).astype(float)
        if np.linalg.matrix_rank(V) == K:
            return V


def realistic_instance(seed, n, m, K=3):
    """``A = Phi^T S V V^T S Phi``, ``B = Phi^T S Phi``, ``G = (2S - I) Phi`` (``Phi``, ``V``
    small integers: ``A``, ``B`` exact, ``ker B`` inside ``ker A`` exactly)."""
    rng = np.random.default_rng(seed)
    Phi = _int_features(rng, n, m)
    S = (Phi @ rng.standard_normal(m) > 0).astype(float)
    V = _int_frame(rng, n, K)
    SPhi = S[:, None] * Phi
    C = V.T @ SPhi
    return C.T @ C, SPhi.T @ SPhi, (2 * S - 1)[:, None] * Phi


def marginal_instance(seed, n, m, K=3, all_active=False):
    """Marginal gain over the bias feature (Prop 4.5, ``H = 1``), scaled to integers:
    ``A = Phi^T S M M^T S Phi``, ``B = Phi^T S (n I - 1 1^T) S Phi``, ``M = (n I - 1 1^T) V``.
    With every row active, ``theta = e_bias`` gives ``h = 1`` in col(H): ``B`` is singular
    (exactly: ``Phi``, ``V`` small integers)."""
    rng = np.random.default_rng(seed)
    Phi = _int_features(rng, n, m)
    if all_active:
        theta0 = np.r_[0.1 * rng.standard_normal(m - 1), 10.0]
    else:
        theta0 = rng.standard_normal(m)
    S = (Phi @ theta0 > 0).astype(float)
    V = _int_frame(rng, n, K)
    P = n * np.eye(n) - np.ones((n, n))
    SPhi = S[:, None] * Phi
    C = (P @ V).T @ SPhi
    return C.T @ C, SPhi.T @ P @ SPhi, (2 * S - 1)[:, None] * Phi


def integer_instance(seed):
    """Highly degenerate problems: ``G`` with entries in {-1, 0, 1} (parallel,
    opposite and coplanar rows, lines, lower-dimensional and empty cones),
    ``B`` identity, singular with ``ker B`` inside ``ker A``, or a 0/1/2
    diagonal with an unrelated diagonal ``A`` (infeasible and unbounded cases)."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 6))
    n = int(rng.integers(1, 10))
    G = rng.integers(-1, 2, size=(n, m)).astype(float)
    A = random_psd(rng, m, int(rng.integers(1, m + 1)))
    if seed % 3 == 0:
        B = np.eye(m)
    elif seed % 3 == 1:  # integers: ker B exactly inside ker A
        M = rng.integers(-2, 3, size=(m, max(1, m - 1))).astype(float)
        B = M @ M.T if M.any() else np.eye(m)
        Ai = rng.integers(-2, 3, size=(m, m)).astype(float)
        A = B @ (Ai @ Ai.T) @ B
    else:
        B = np.diag(rng.integers(0, 3, size=m).astype(float))
        A = np.diag(rng.integers(0, 3, size=m).astype(float))
        if not B.any():
            B[0, 0] = 1.0
    return A, B, G


def degenerate_instances():
    """Named degenerate problems ``(name, A, B, G)`` (the reference decides the answer)."""
    rng = np.random.default_rng(7)
    out = []
    A, B, G = gating_instance(11, 7, 4)
    out.append(("duplicate_rows", A, B, np.vstack([G, G[:3], 2.5 * G[1:2], np.zeros((1, 4))])))
    A, B, G = gating_instance(12, 7, 4)
    g = G[0]
    out.append(("lower_dimensional", A, B, np.vstack([G[1:], g, -g])))
    # a line: every row orthogonal to e_0
    G = np.c_[np.zeros(6), gating_cone(rng, 6, 3)]
    out.append(("contains_line", random_psd(rng, 4), random_psd(rng, 4) + 0.1 * np.eye(4), G))
    # singular B with ker B inside ker A (gating-like), few active rows
    Phi = _int_features(rng, 8, 4)
    S = np.zeros(8)
    S[:2] = 1
    SPhi = S[:, None] * Phi
    C = _int_frame(rng, 8, 2).T @ SPhi
    G = (2 * S - 1)[:, None] * Phi
    out.append(("singular_B_few_active", C.T @ C, SPhi.T @ SPhi, G))
    out.append(("singular_B_realistic", *realistic_instance(3, 9, 4, K=2)))
    # repeated top eigenvalue: A = diag(2, 2, 2, 1), B = I
    out.append(("repeated_eigenvalue", np.diag([2.0, 2, 2, 1]), np.eye(4), gating_cone(rng, 8, 4)))
    # A = B: every feasible x attains 1
    Bq = random_psd(rng, 3) + np.eye(3)
    out.append(("A_equals_B", Bq, Bq, gating_cone(rng, 6, 3)))
    # the cone lies in ker B
    out.append(("infeasible", np.eye(3), np.diag([1.0, 0, 0]), np.array([[1.0, 0, 0], [-1, 0, 0], [0, 1, 0]])))
    # a ray in ker B with A != 0
    out.append(("unbounded", np.eye(3), np.diag([1.0, 1, 0]), np.array([[0, 0, 1.0], [1, 0, 0]])))
    # B singular, A vanishes on ker B but the cone still sees ker B
    out.append(("kerB_needed", np.diag([1.0, 0, 0]), np.diag([1.0, 1, 0]),
                np.array([[1.0, 0, 1], [-1, 0, 1], [0, 1, -1], [1, 1, 0]])))
    out.append(("no_rows", random_psd(rng, 3), np.eye(3), np.zeros((0, 3))))
    out.append(("m_equals_1", np.array([[2.0]]), np.array([[1.0]]), np.array([[1.0], [3.0]])))
    return out


# ----------------------------------------------------------------------------- SCIP oracle

def scip_maximize(A, B, G, *, time_limit: float = 60.0, gap: float = 1e-9, params=None):
    """Global optimum by SCIP (spatial branch and bound), B positive definite.

    ``max x^T A x  s.t.  x^T B x = 1, G x >= 0`` with the implied bounds
    ``|x_i| <= sqrt((B^-1)_ii)``.  Returns ``(x, scip_value, dual_bound, status, seconds)``;
    compare quotients recomputed at ``x``: SCIP's own value can exceed the
    optimum by about its feasibility tolerance.

    SoPlex occasionally stops with "error in LP solver" on a badly conditioned
    node LP (seen on ``_pd_realistic(21, 200, 5, 3)``). That is a failure of
    the oracle, not an answer: the same model is solved again with SCIP's
    random seed shifted (a documented SCIP parameter that changes only its
    tie-breaking), at most twice, and a third failure is raised.
    """
    last = None
    for shift in range(3):
        try:
            return _scip_solve(A, B, G, time_limit, gap, {"randomization/randomseedshift": shift, **(params or {})})
        except Exception as exc:  # noqa: BLE001 - pyscipopt raises a bare Exception
            if "LP solver" not in str(exc):
                raise
            last = exc
    raise AssertionError(f"SCIP's LP solver failed with three random seeds: {last}")


def _scip_solve(A, B, G, time_limit, gap, params):
    import time

    from pyscipopt import Model, quicksum

    A, B, G = (np.asarray(v, dtype=float) for v in (A, B, G))
    m = A.shape[0]
    ub = np.sqrt(np.diag(np.linalg.inv(B)))
    model = Model("cone_eig")
    model.hideOutput()
    model.setParam("limits/time", time_limit)
    model.setParam("limits/gap", gap)
    for key, value in params.items():
        model.setParam(key, value)
    x = [model.addVar(f"x{i}", lb=-ub[i], ub=ub[i]) for i in range(m)]
    lam = float(np.linalg.eigvalsh(np.linalg.solve(np.linalg.cholesky(B), np.linalg.solve(np.linalg.cholesky(B), A).T)).max())
    t = model.addVar("t", lb=-1.0, ub=lam + 1.0)
    model.addCons(quicksum(B[i, j] * x[i] * x[j] for i in range(m) for j in range(m)) == 1.0)
    for g in G:
        model.addCons(quicksum(g[i] * x[i] for i in range(m) if g[i] != 0) >= 0.0)
    model.addCons(t <= quicksum(A[i, j] * x[i] * x[j] for i in range(m) for j in range(m)))
    model.setObjective(t, "maximize")
    import os
    import sys

    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)  # SoPlex prints tolerance notices despite hideOutput()
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            os.dup2(devnull.fileno(), 2)
            t0 = time.perf_counter()
            model.optimize()
            secs = time.perf_counter() - t0
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])
    if model.getNSols() == 0:
        return None, np.nan, float(model.getDualbound()), model.getStatus(), secs
    sol = model.getBestSol()
    return (np.array([sol[v] for v in x]), float(model.getObjVal()), float(model.getDualbound()),
            model.getStatus(), secs)
