"""Method ``dnn``: the doubly nonnegative SDP relaxation through cvxpy, with a
bound recomputed from the clipped dual multiplier and a lower bound recovered
from the primal."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from solvers._norms import norm2

from solvers._reduction import polish
from solvers._core import (guarded, Fragile, check_flat, check_options, finish, interior_lower, upper_bound,
                    witness_quotient)
from solvers._linalg import RANK_RTOL, null_space, sup_quotient, top_eig
from solvers._registry import register
from solvers.errors import ProblemError
from solvers.problem import ConeEigProblem
from solvers.result import ConeEigResult

__all__ = ["solve_dnn", "SDP_SOLVERS"]

#: SDP-capable cvxpy solvers accepted by ``solver=`` (ECOS cannot solve SDPs).
SDP_SOLVERS = ("CLARABEL", "SCS")
_SETTINGS = {
    "CLARABEL": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10},
    "SCS": {"eps_abs": 1e-7, "eps_rel": 1e-7, "max_iters": 20000},
}
#: Rows with ``|H_i z| <= FACE_GUESS_TOL`` at the SDP's top eigenvector are guessed active.
FACE_GUESS_TOL = 1e-5
#: A row sees ``ker B`` when ``|H_i K| > KERNEL_SEE_TOL |H_i|`` (its multipliers are then zeroed).
KERNEL_SEE_TOL = 1e-12


def dual_bound(Az: np.ndarray, Bz: np.ndarray, H: np.ndarray, N: np.ndarray) -> float:
    r"""``UB(N) = sup_x x^T (A + H^T N H) x / x^T B x`` for the clipped ``N``.

    Valid for any elementwise nonnegative ``N``: on the cone ``H x >= 0``
    the added term ``(Hx)^T N (Hx)`` is nonnegative.  ``N`` is symmetrized
    and clipped at zero here, so the solver's accuracy only affects tightness.
    Rows of ``H`` that see ``ker B`` (``|H_i K| > KERNEL_SEE_TOL``) get zero
    multipliers: on ``ker B`` the added term would make the bound ``+inf``
    (and a small one would hide there as rounding).
    """
    N = np.maximum(0.5 * (N + N.T), 0.0)
    s, U = np.linalg.eigh(Bz)
    K = U[:, s <= RANK_RTOL * max(float(s[-1]), 1e-300)]
    if K.shape[1] and H.shape[0]:
        sees = np.abs(H @ K).max(axis=1) > KERNEL_SEE_TOL * norm2(H, axis=1)
        N[sees, :] = 0.0
        N[:, sees] = 0.0
    return sup_quotient(Az + H.T @ N @ H, Bz)


@register("dnn")
def solve_dnn(problem: ConeEigProblem, *, solver: str = "CLARABEL", **options: Any) -> ConeEigResult:
    r"""Doubly nonnegative relaxation over the facet rows ``H`` (in ``span(C)``).

    .. math::

        \max_X\ \operatorname{tr}(A X)\quad\text{s.t.}\quad \operatorname{tr}(B X) = 1,\
        X \succeq 0,\ H X H^T \ge 0 \text{ (elementwise)}.

    The reported ``upper`` is :func:`dual_bound` of the dual multiplier of
    ``H X H^T >= 0`` (never the solver's objective); it is ``min`` with the
    cone-free bound.  ``lower``: the SDP's top eigenvector, the face it
    touches (rows within ``1e-5``), that face's top eigenspace realized by
    LP, else the polished eigenvector.

    Parameters
    ----------
    solver : {"CLARABEL", "SCS"}
        cvxpy SDP solver.  ``optimal_inaccurate`` answers are used (the
        bound is recomputed and valid anyway); failures are recorded.

    Where float64 cannot decide (see :mod:`solvers._core`) the answer comes
    from the verified path (:mod:`solvers._verified.core`): its exact face
    enumeration bounds the optimum at least as tightly as the relaxation.

    References
    ----------
    Prop 4.3 of the paper (the bound this relaxation tightens); SPEC 3.2.
    """
    check_options("dnn", options, ())
    name = str(solver).upper()
    if name not in SDP_SOLVERS:
        raise ProblemError(f"solver must be one of {SDP_SOLVERS} (ECOS cannot solve SDPs), got {solver!r}")
    return guarded(problem, "dnn", "faces", lambda ctx, t0: _dnn(ctx, name, t0))


def _dnn(ctx, name: str, t0: float) -> ConeEigResult:
    """The float relaxation: cone-free bound, SDP, clipped dual bound, face-guess witness."""
    import cvxpy as cp

    problem, red = ctx.problem, ctx.red
    H, d = red.H, red.dim
    Az, Bz = ctx.Az, ctx.Bz
    te = top_eig(Az, Bz, bscale=ctx.bscale)
    if te.ambiguous:
        raise Fragile("B, or A on ker B, is between rounding and 1e-10")
    spectral_ub = upper_bound(ctx, te.value, te.bmin)
    X = cp.Variable((d, d), PSD=True)
    cons = [cp.trace(Bz @ X) == 1]
    if H.shape[0]:
        cons.append(H @ X @ H.T >= 0)
    prob = cp.Problem(cp.Maximize(cp.trace(Az @ X)), cons)
    cert: dict[str, Any] = {"solver": name, "facets": int(H.shape[0])}
    upper = spectral_ub
    lower, x = interior_lower(ctx)
    msg = ""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            prob.solve(solver=name, **_SETTINGS[name])
        if caught:
            cert["solver_warnings"] = [str(w.message) for w in caught]
        cert["sdp_status"] = prob.status
        cert["sdp_objective"] = float(prob.value) * ctx.vfactor if prob.value is not None else None
    except Exception as exc:  # noqa: BLE001 - solver failure: keep the cone-free bound
        ctx.failures.append(f"dnn/{name}: {type(exc).__name__}: {exc}")
        msg = f"SDP solver {name} failed: {exc}"
        cert["sdp_status"] = "error"
    if H.shape[0] and cons[1].dual_value is not None:
        N = np.maximum(0.5 * (cons[1].dual_value + cons[1].dual_value.T), 0.0)
        ub = upper_bound(ctx, dual_bound(Az, Bz, H, N), ctx.bmin)
        cert["N"] = N
        cert["dual_bound"] = ub
        upper = min(upper, ub)
    elif not H.shape[0]:
        cert["N"] = np.zeros((0, 0))
    if X.value is not None:
        w, U = np.linalg.eigh(0.5 * (X.value + X.value.T))
        z = U[:, -1]
        if H.shape[0] and (H @ z).min() < (H @ -z).min():
            z = -z
        J = np.flatnonzero(np.abs(H @ z) <= FACE_GUESS_TOL) if H.shape[0] else np.zeros(0, dtype=int)
        cert["guessed_face"] = red.rows[red.facets[J]].tolist()
        V = null_space(H[J]) if J.size else np.eye(d)
        if V.shape[1]:
            fc = check_flat(ctx, V)
            if fc.x is not None and fc.lower > lower:
                lower, x = fc.lower, fc.x
        xp = polish(red, problem.G, red.Q @ z)
        qp = witness_quotient(ctx, xp)
        if np.isfinite(qp) and qp > lower:
            lower, x = qp, xp
    return finish(ctx, "dnn", lower, upper, x, cert, t0, msg)
