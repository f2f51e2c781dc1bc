"""Shared machinery of the methods: per-problem preparation (cone reduction,
infeasibility and unboundedness), the realizability check of a top
eigenspace inside a flat ``null(G_J)``, and result assembly."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ._cone import ConeReduction, implicit_equalities, polish, reduce_cone
from ._linalg import RANK_RTOL, null_space, top_eig
from ._lp import solve_lp
from .errors import ProblemError
from .problem import ConeEigProblem
from .result import ConeEigResult, Status

__all__ = ["Context", "prepare", "witness_quotient", "FlatCheck", "check_flat", "interior_lower", "finish",
           "check_options", "bound", "REALIZED_RTOL", "EXACT_RTOL", "BOUND_ALLOWANCE"]

# Relative tolerances on values are taken w.r.t. ``max(|value|, vscale)``,
# ``vscale = max|A| / max|B|`` (the problem's value scale).
#: A face counts as realized when the polished witness is this close (relative) to its eigenvalue.
REALIZED_RTOL = 1e-10
#: Status EXACT when ``upper - lower <= EXACT_RTOL * max(|upper|, vscale)``.
EXACT_RTOL = 1e-9
#: Relative allowance added to computed eigenvalues used as upper bounds (eigh rounding).
BOUND_ALLOWANCE = 1e-12


@dataclass
class Context:
    """A prepared problem: the reduction and the pencil in ``span(C)`` coordinates."""

    problem: ConeEigProblem
    red: ConeReduction
    Az: np.ndarray
    Bz: np.ndarray
    vscale: float = 1.0
    bscale: float = 1.0
    early: ConeEigResult | None = None
    lps: int = 0
    failures: list[str] = field(default_factory=list)


def _unbounded_ray(ctx: Context, Nz: np.ndarray) -> np.ndarray | None:
    """A ray ``d`` in ``C`` with ``B d = 0`` and ``A d != 0``, or None (SPEC 4, singular B)."""
    red = ctx.red
    Hk = red.Gn @ red.Q @ Nz
    nrm = np.linalg.norm(Hk, axis=1)
    nz = nrm > 1e-12
    eqk = np.ones(Hk.shape[0], dtype=bool)
    w = np.zeros(Nz.shape[1])
    if nz.any():
        e, w, k, f = implicit_equalities(Hk[nz] / nrm[nz, None])
        ctx.lps += k
        ctx.failures.extend(f)
        eqk[np.flatnonzero(nz)] = e
    S = Nz @ null_space(Hk[eqk]) if eqk.any() else Nz
    if S.shape[1] == 0:
        return None
    As = S.T @ ctx.Az @ S
    if float(np.abs(As).max()) <= RANK_RTOL * max(float(np.abs(ctx.problem.A).max()), 1e-300):
        return None
    r = Nz @ w
    mu, Y = np.linalg.eigh(As)
    e = S @ Y[:, -1]
    he = np.abs(red.Gn[~red.eq] @ (red.Q @ e))
    hr = red.Gn[~red.eq] @ (red.Q @ r)
    pos = hr > 0
    t = 0.5 * float(np.min(hr[pos] / np.maximum(he[pos], 1e-300))) if pos.any() else 1.0
    d = red.Q @ (r + min(t, 1.0) * e)
    return d / np.linalg.norm(d)


def prepare(problem: ConeEigProblem) -> Context:
    """Reduce the cone once per problem (cached) and settle INFEASIBLE / UNBOUNDED."""
    ctx = problem._cache.get("ctx")
    if ctx is not None:
        return ctx
    red = reduce_cone(problem.G, problem.interior)
    Q = red.Q
    Az = Q.T @ problem.A @ Q
    Bz = Q.T @ problem.B @ Q
    ctx = Context(problem, red, 0.5 * (Az + Az.T), 0.5 * (Bz + Bz.T), lps=red.lps, failures=list(red.notes))
    bscale = max(float(np.abs(problem.B).max()), 1e-300)
    # value scale of the quotient: the floor of every relative tolerance on values
    ctx.vscale = max(float(np.abs(problem.A).max()), 1e-300) / bscale
    ctx.bscale = float(np.linalg.eigvalsh(problem.B)[-1])
    if red.dim == 0 or float(np.abs(ctx.Bz).max(initial=0.0)) <= RANK_RTOL * bscale:
        ctx.early = ConeEigResult(-np.inf, -np.inf, None, Status.INFEASIBLE, "",
                                  certificate={"span_dim": red.dim, "implicit_equalities": red.rows[red.eq].tolist()},
                                  message="the cone lies in ker B")
    else:
        s, U = np.linalg.eigh(ctx.Bz)
        Nz = U[:, s <= RANK_RTOL * max(float(s[-1]), 1e-300)]
        if Nz.shape[1]:
            ray = _unbounded_ray(ctx, Nz)
            if ray is not None:
                ctx.early = ConeEigResult(
                    np.inf, np.inf, None, Status.UNBOUNDED, "",
                    certificate={"ray": ray, "ray_Bnorm": float(np.linalg.norm(problem.B @ ray)),
                                 "ray_AxA": float(ray @ problem.A @ ray)},
                    message="a ray d of the cone has B d = 0 and A d != 0: the supremum is +inf")
    problem._cache["ctx"] = ctx
    return ctx


def witness_quotient(ctx: Context, x: np.ndarray) -> float:
    """The quotient at ``x``, or ``nan`` when ``x^T B x`` is at rounding level
    (``x`` numerically in ``ker B``: its quotient would be noise)."""
    B = ctx.problem.B
    den = float(x @ B @ x)
    if not den > RANK_RTOL * float(np.abs(B).max()) * float(x @ x):
        return float("nan")
    return float(x @ ctx.problem.A @ x) / den


@dataclass(frozen=True)
class FlatCheck:
    """Top eigenvalue of the pencil on a flat and whether it is attained in the cone."""

    value: float
    realized: bool
    x: np.ndarray | None
    lower: float
    lps: int = 0


def _lp_realize(R: np.ndarray, S: np.ndarray, ctx: Context) -> tuple[np.ndarray | None, int]:
    """``y != 0, n`` with ``R y + S n >= 0`` (2k LPs at most: fix the sign of one ``y_i``)."""
    f, k = R.shape
    r = S.shape[1]
    A = np.hstack([R, S])
    lps = 0
    for i in range(k):
        for sgn in (1.0, -1.0):
            c = np.zeros(k + r)
            c[i] = -sgn
            cl = np.full(k + r, -np.inf)
            cu = np.full(k + r, np.inf)
            if sgn > 0:
                cu[i] = 1.0
            else:
                cl[i] = -1.0
            sol = solve_lp(c, A, np.zeros(f), np.full(f, np.inf), cl, cu)
            lps += 1
            if sol.failures:
                ctx.failures.extend(sol.failures)
            if sol.status == "optimal" and -sol.objective >= 0.5:
                return sol.x, lps
    return None, lps


def check_flat(ctx: Context, V: np.ndarray) -> FlatCheck:
    """Is the top eigenvalue of the pencil compressed to ``span(V)`` attained in the cone?

    ``V`` (d, dv) is an orthonormal basis of a flat in ``span(C)``
    coordinates.  Realizability is searched over the whole top eigenspace
    plus ``ker B`` on the flat (Rem 4.4): numpy for a simple eigenvalue and
    nonsingular ``B``, else LPs.  The witness is polished to exact
    feasibility and its quotient recomputed.
    """
    prob, red = ctx.problem, ctx.red
    te = top_eig(V.T @ ctx.Az @ V, V.T @ ctx.Bz @ V, bscale=ctx.bscale)
    if not np.isfinite(te.value):
        return FlatCheck(te.value, False, None, -np.inf)
    HV = red.H @ V
    R, S = HV @ te.E, HV @ te.N
    k, r = R.shape[1], S.shape[1]
    z = None
    lps = 0
    if R.shape[0] == 0:
        z = te.E[:, 0]
    elif r == 0:
        for j in range(k):
            col = R[:, j] / max(np.linalg.norm(te.E[:, j]), 1e-300)
            if col.min() >= -1e-9:
                z = te.E[:, j]
                break
            if col.max() <= 1e-9:
                z = -te.E[:, j]
                break
    if z is None and R.shape[0] and (k > 1 or r > 0):
        sol, lps = _lp_realize(R, S, ctx)
        if sol is not None:
            z = te.E @ sol[:k] + te.N @ sol[k:]
    if z is None:
        return FlatCheck(te.value, False, None, -np.inf, lps)
    x = polish(red, prob.G, red.Q @ (V @ z))
    q = witness_quotient(ctx, x)
    if not np.isfinite(q):
        return FlatCheck(te.value, False, None, -np.inf, lps)
    ok = te.value - q <= REALIZED_RTOL * max(abs(te.value), ctx.vscale)
    return FlatCheck(te.value, bool(ok), x, q, lps)


def interior_lower(ctx: Context) -> tuple[float, np.ndarray | None]:
    """The quotient at the relative interior point (a feasible lower bound)."""
    x = polish(ctx.red, ctx.problem.G, ctx.red.x_int) if ctx.red.dim else None
    if x is None:
        return -np.inf, None
    q = witness_quotient(ctx, x)
    return (q, x) if np.isfinite(q) else (-np.inf, None)


def check_options(method: str, options: dict, allowed: tuple[str, ...]) -> None:
    """Reject unknown keyword options, naming them and the allowed ones."""
    bad = sorted(set(options) - set(allowed))
    if bad:
        raise ProblemError(f"method {method!r} got unknown option(s) {bad}; allowed: {sorted(allowed)}")


def bound(value: float, scale: float) -> float:
    """An eigenvalue turned into an upper bound: add the rounding allowance
    (relative to ``max(|value|, scale)``, ``scale`` the problem's value scale)."""
    return value + BOUND_ALLOWANCE * max(abs(value), scale) if np.isfinite(value) else value


def finish(ctx: Context, method: str, lower: float, upper: float, x: np.ndarray | None,
           certificate: dict, t0: float, message: str = "") -> ConeEigResult:
    """Assemble a result: EXACT iff the gap is within ``EXACT_RTOL``; FAILED without any bound."""
    if ctx.early is not None:
        e = ctx.early
        return ConeEigResult(e.lower, e.upper, e.x, e.status, method, time.perf_counter() - t0,
                             dict(e.certificate), e.message)
    upper = max(upper, lower) if np.isfinite(lower) else upper
    if not np.isfinite(upper):
        status = Status.FAILED if upper == np.inf else Status.BOUNDED
    elif x is not None and upper - lower <= EXACT_RTOL * max(abs(upper), ctx.vscale):
        status = Status.EXACT
    else:
        status = Status.BOUNDED
    cert = dict(certificate)
    cert.setdefault("lps", ctx.lps)
    if ctx.failures:
        cert["backend_failures"] = list(ctx.failures)
    cert["implicit_equalities"] = ctx.red.rows[ctx.red.eq].tolist()
    cert["facet_rows"] = ctx.red.rows[ctx.red.facets].tolist()
    cert["lineality_dim"] = int(ctx.red.lineality.shape[1])
    cert["reduction_lps"] = int(ctx.red.lps)
    cert["value_scale"] = ctx.vscale
    return ConeEigResult(float(lower), float(upper), x, status, method, time.perf_counter() - t0, cert, message)
