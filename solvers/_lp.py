"""LP backends: HiGHS called directly through ``highspy`` (fast path), SciPy's
``linprog(method="highs")`` and cvxpy with Clarabel, tried in that order.

Every LP here has the form

.. math::

    \\min_x c^T x \\quad\\text{s.t.}\\quad r_l \\le A x \\le r_u,\\; c_l \\le x \\le c_u .

A backend's status is never trusted alone: an "optimal" answer whose
constraint violation, recomputed with numpy, exceeds ``check_tol`` is
downgraded to a failure and the next backend is tried.  ECOS and SCS are
never used to decide feasibility.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass

import numpy as np
from scipy import sparse

__all__ = ["LPSolution", "solve_lp", "LP_BACKENDS"]

LP_BACKENDS = ("highs", "scipy", "cvxpy")
_local = threading.local()


@dataclass(frozen=True)
class LPSolution:
    """Outcome of one LP: ``status`` is optimal / infeasible / unbounded / error."""

    status: str
    x: np.ndarray | None
    objective: float
    backend: str
    failures: tuple[str, ...] = ()


def quiet_highs(**options: float):
    """A new ``Highs`` object, silent and single-threaded, with ``options`` set before any run.

    The constructor prints a banner on C stdout (where JSON output goes), so it is muted.
    """
    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            h = highspy.Highs()
            h.setOptionValue("output_flag", False)
            h.setOptionValue("threads", 1)  # must precede the first run()
            for k, v in options.items():
                h.setOptionValue(k, v)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    return h


def _highs():
    """One reused ``Highs`` object per thread, configured before its first run."""
    h = getattr(_local, "highs", None)
    if h is None:
        h = _local.highs = quiet_highs(primal_feasibility_tolerance=1e-9, dual_feasibility_tolerance=1e-9)
    return h


def _run_highs(c, A, rl, ru, cl, cu):
    import highspy

    h = _highs()
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    nrow, ncol = A.shape
    lp.num_col_ = ncol
    lp.num_row_ = nrow
    lp.col_cost_ = c
    lp.col_lower_ = np.where(np.isfinite(cl), cl, -inf)
    lp.col_upper_ = np.where(np.isfinite(cu), cu, inf)
    lp.row_lower_ = np.where(np.isfinite(rl), rl, -inf)
    lp.row_upper_ = np.where(np.isfinite(ru), ru, inf)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.num_col_ = ncol
    lp.a_matrix_.num_row_ = nrow
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data
    h.passModel(lp)
    h.run()
    st = h.getModelStatus()
    S = highspy.HighsModelStatus
    if st == S.kOptimal:
        x = np.array(h.getSolution().col_value, dtype=float)
        return "optimal", x
    if st == S.kInfeasible:
        return "infeasible", None
    if st in (S.kUnbounded, S.kUnboundedOrInfeasible):
        return ("unbounded" if st == S.kUnbounded else "error:unbounded_or_infeasible"), None
    return f"error:{h.modelStatusToString(st)}", None


def _run_scipy(c, A, rl, ru, cl, cu):
    from scipy.optimize import linprog

    eq = np.isfinite(rl) & np.isfinite(ru) & (rl == ru)
    up = np.isfinite(ru) & ~eq
    lo = np.isfinite(rl) & ~eq
    A_ub = sparse.vstack([A[np.flatnonzero(up)], -A[np.flatnonzero(lo)]]).tocsr()
    b_ub = np.r_[ru[up], -rl[lo]]
    kw = {}
    if A_ub.shape[0]:
        kw.update(A_ub=A_ub, b_ub=b_ub)
    if eq.any():
        kw.update(A_eq=A[np.flatnonzero(eq)], b_eq=rl[eq])
    bounds = [(a if np.isfinite(a) else None, b if np.isfinite(b) else None) for a, b in zip(cl, cu)]
    res = linprog(c, bounds=bounds, method="highs", **kw)
    if res.status == 0:
        return "optimal", np.asarray(res.x, dtype=float)
    if res.status == 2:
        return "infeasible", None
    if res.status == 3:
        return "unbounded", None
    return f"error:{res.message}", None


def _run_cvxpy(c, A, rl, ru, cl, cu):
    import cvxpy as cp

    x = cp.Variable(A.shape[1])
    cons = []
    fr, fu = np.isfinite(rl), np.isfinite(ru)
    if fr.any():
        cons.append(A[np.flatnonzero(fr)] @ x >= rl[fr])
    if fu.any():
        cons.append(A[np.flatnonzero(fu)] @ x <= ru[fu])
    if np.isfinite(cl).any():
        i = np.flatnonzero(np.isfinite(cl))
        cons.append(x[i] >= cl[i])
    if np.isfinite(cu).any():
        i = np.flatnonzero(np.isfinite(cu))
        cons.append(x[i] <= cu[i])
    prob = cp.Problem(cp.Minimize(c @ x), cons)
    prob.solve(solver=cp.CLARABEL)
    if prob.status in ("optimal", "optimal_inaccurate"):
        return "optimal", np.asarray(x.value, dtype=float)
    if prob.status == "infeasible":
        return "infeasible", None
    if prob.status == "unbounded":
        return "unbounded", None
    return f"error:{prob.status}", None


_RUNNERS = {"highs": _run_highs, "scipy": _run_scipy, "cvxpy": _run_cvxpy}


def _violation(A, rl, ru, cl, cu, x):
    ax = A @ x
    v = np.concatenate([(rl - ax)[np.isfinite(rl)], (ax - ru)[np.isfinite(ru)],
                        (cl - x)[np.isfinite(cl)], (x - cu)[np.isfinite(cu)], [0.0]])
    return float(v.max())


def solve_lp(c, A, rl, ru, cl, cu, *, backends=LP_BACKENDS, check_tol: float = 1e-7) -> LPSolution:
    """Solve the LP with the first backend that gives a checked answer.

    Parameters
    ----------
    c : array_like, shape (n,)
    A : array_like or sparse matrix, shape (k, n)
    rl, ru : array_like, shape (k,)
        Row bounds (``-inf``/``inf`` for none).
    cl, cu : array_like, shape (n,)
        Variable bounds.
    backends : sequence of str
        Order in which to try ``"highs"``, ``"scipy"``, ``"cvxpy"``.
    check_tol : float
        Largest constraint violation (recomputed with numpy, scaled by the
        size of ``x``) accepted from an "optimal" answer.

    Returns
    -------
    LPSolution
        ``status == "error"`` only when every backend failed; ``failures``
        lists what went wrong with each backend tried.
    """
    A = sparse.csr_matrix(A, dtype=float)
    c, rl, ru, cl, cu = (np.asarray(v, dtype=float) for v in (c, rl, ru, cl, cu))
    failures: list[str] = []
    for name in backends:
        try:
            status, x = _RUNNERS[name](c, A, rl, ru, cl, cu)
        except Exception as exc:  # noqa: BLE001 - any backend failure moves on to the next
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        if status == "optimal":
            viol = _violation(A, rl, ru, cl, cu, x)
            if not np.all(np.isfinite(x)) or viol > check_tol * max(1.0, float(np.abs(x).max())):
                failures.append(f"{name}: 'optimal' answer violates the constraints by {viol:.2e}")
                continue
            return LPSolution("optimal", x, float(c @ x), name, tuple(failures))
        if status in ("infeasible", "unbounded"):
            return LPSolution(status, None, np.nan, name, tuple(failures))
        failures.append(f"{name}: {status}")
    return LPSolution("error", None, np.nan, "none", tuple(failures))
