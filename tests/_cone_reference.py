"""Slow brute-force oracle for cone-constrained generalized eigenvalue problems,
and instance generators, for the tests of :mod:`solvers`.

Independent of :mod:`solvers` (SciPy only): for EVERY subset ``J`` of the rows
of ``G`` with ``|J| <= m - 1`` (every flat ``null(G_J)`` of the row
arrangement is spanned that way), compute the top generalized eigenpair of
the pencil compressed to ``null(G_J)`` and decide with ``scipy.optimize.linprog``
whether some point of the top eigenspace (plus ``ker B``) lies in the cone.
The optimum is the largest realizable eigenvalue (an optimum lies in the
relative interior of a face, where it is a top eigenvector of the face's
span).  Subsets are examined in decreasing eigenvalue order, so the first
realizable one is the answer; all eigenvalues are still computed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from scipy.optimize import linprog

RTOL = 1e-10


@dataclass(frozen=True)
class Reference:
    status: str  # "exact" / "infeasible" / "unbounded"
    value: float
    x: np.ndarray | None
    subsets: int


def _rows(G):
    nrm = np.linalg.norm(G, axis=1)
    keep = nrm > 1e-14 * max(nrm.max(initial=0.0), 1e-300)
    return G[keep] / nrm[keep, None]


def _lp_feasible(A_ub, b_ub, A_eq=None, b_eq=None):
    n = A_ub.shape[1] if A_ub.size else A_eq.shape[1]
    res = linprog(np.zeros(n), A_ub=A_ub if A_ub.size else None, b_ub=b_ub if A_ub.size else None,
                  A_eq=A_eq, b_eq=b_eq, bounds=[(None, None)] * n, method="highs")
    return res.status == 0, (res.x if res.status == 0 else None)


def _subsets(p, m):
    for k in range(0, min(m - 1, p) + 1):
        yield from itertools.combinations(range(p), k)


def reference(A, B, G) -> Reference:
    """Exact ``sup x^T A x / x^T B x`` over ``G x >= 0, B x != 0`` by brute force."""
    A, B, G = (np.asarray(v, dtype=float) for v in (A, B, G))
    m = A.shape[0]
    Gn = _rows(G.reshape(-1, m))
    p = Gn.shape[0]
    scale = max(np.abs(A).max(), np.abs(B).max(), 1e-300)
    cands = []
    feasible = unbounded = False
    count = 0
    for J in _subsets(p, m):
        count += 1
        V = sla.null_space(Gn[list(J)]) if J else np.eye(m)
        if V.shape[1] == 0:
            continue
        # rows not vanishing on the flat (rows outside J may vanish on it too)
        rest = np.flatnonzero(np.abs(Gn @ V).max(axis=1) > 1e-9) if p else np.zeros(0, dtype=int)
        # unboundedness / feasibility witnesses on the relative interior of the face with active set J
        Hr = Gn[rest] @ V
        ok_face, w = _lp_feasible(-Hr, -np.ones(len(rest))) if len(rest) else (True, np.ones(V.shape[1]))
        if ok_face:
            if np.abs(V.T @ B @ V).max() > RTOL * scale:
                feasible = True
        # a ray in the cone and in ker B with A != 0: relatively open set in K = V cap ker B
        K = V @ sla.null_space(B @ V)
        if K.shape[1] and np.abs(K.T @ A @ K).max() > RTOL * scale:
            restK = np.flatnonzero(np.abs(Gn @ K).max(axis=1) > 1e-9) if p else np.zeros(0, dtype=int)
            if not len(restK) or _lp_feasible(-Gn[restK] @ K, -np.ones(len(restK)))[0]:
                unbounded = True
        Av, Bv = V.T @ A @ V, V.T @ B @ V
        s, U = np.linalg.eigh(Bv)
        if s[-1] <= RTOL * scale:
            continue
        keep = s > RTOL * s[-1]
        N = U[:, ~keep]
        if N.shape[1] and np.abs(N.T @ Av @ N).max() > RTOL * scale:
            continue  # +inf on this flat: not attained here
        W = U[:, keep] / np.sqrt(s[keep])
        mu, Y = np.linalg.eigh(W.T @ Av @ W)
        top = mu[-1]
        E = W @ Y[:, mu >= top - RTOL * max(1.0, abs(top))]
        cands.append((top, J, V, E, N))
    if not feasible:
        return Reference("infeasible", -np.inf, None, count)
    if unbounded:
        return Reference("unbounded", np.inf, None, count)
    cands.sort(key=lambda c: -c[0])
    for top, _J, V, E, N in cands:
        R, S = Gn @ V @ E, Gn @ V @ N
        k = E.shape[1]
        if p == 0:
            return Reference("exact", float(top), V @ E[:, 0], count)
        for i, sgn in itertools.product(range(k), (1.0, -1.0)):
            A_eq = np.zeros((1, k + S.shape[1]))
            A_eq[0, i] = 1.0
            ok, sol = _lp_feasible(-np.hstack([R, S]), np.zeros(p), A_eq, [sgn])
            if ok and np.min(np.hstack([R, S]) @ sol) >= -1e-9 * max(1.0, np.abs(sol).max()):
                x = V @ (E @ sol[:k] + N @ sol[k:])
                return Reference("exact", float(top), x, count)
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
