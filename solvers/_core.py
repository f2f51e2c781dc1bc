"""Shared machinery of the methods: per-problem preparation (cone reduction,
equilibration, and the decision whether float64 can be trusted), the
realizability check of a top eigenspace inside a flat ``null(G_J)``, bounds
with their rounding allowance, and result assembly.

The float path runs only on problems it can decide: a full-dimensional cone
with relative margin at least THIN_MARGIN, an unambiguous face lattice, and a
pencil whose ``ker B`` (if any) is a common kernel of ``A`` and ``B``.
Everything else goes to the verified path (:mod:`solvers._verified.core`):
INFEASIBLE and UNBOUNDED are only ever decided there, exactly.
"""

from __future__ import annotations

import time
from typing import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from solvers._norms import norm2

from solvers._reduction import ConeReduction, polish, reduce_cone
from solvers._exact import dot, fr_matrix, is_psd, matvec, nullspace, pow2, quotient_lower
from solvers._linalg import NOISE_RTOL, RANK_RTOL, top_eig
from solvers._lp import solve_lp
from solvers.errors import LPNumericsError, ProblemError
from solvers.problem import ConeEigProblem, memo
from solvers.result import ConeEigResult, Status

__all__ = ["Context", "prepare", "witness_quotient", "FlatCheck", "check_flat", "interior_lower", "finish",
           "exact_flat_kernel", "sign_tolerance", "sign_tolerance_flat", "DK_SAFETY", "SIGN_FLOOR", "LP_OUTSIDE_MARGIN",
           "check_options", "bound", "upper_bound", "certified_upper", "Fragile", "fallback", "REALIZED_RTOL",
           "EXACT_RTOL", "BOUND_ALLOWANCE", "ALLOWANCE_FACTOR"]

# Relative tolerances on values are taken w.r.t. ``max(|value|, vscale)``,
# ``vscale = max|A| / max|B|`` (the problem's value scale).
#: A face counts as realized when the polished witness is this close (relative) to its eigenvalue.
REALIZED_RTOL = 1e-10
#: Status EXACT when ``upper - lower <= EXACT_RTOL * max(|upper|, vscale)``.
EXACT_RTOL = 1e-9
#: Relative allowance added to computed eigenvalues used as upper bounds (eigh rounding).
BOUND_ALLOWANCE = 1e-12
#: Rounding allowance of a whitened eigenvalue: ``ALLOWANCE_FACTOR (d+1) eps (|A| + |lam| |B|) / bmin``.
ALLOWANCE_FACTOR = 16.0
_EPS = float(np.finfo(float).eps)


class Fragile(Exception):
    """Raised inside a float method when float64 cannot decide: the caller falls back."""


@dataclass
class Context:
    """A prepared problem: the reduction and the equilibrated pencil in ``span(C)`` coordinates.

    ``Az = Q^T (A / sa) Q`` and ``Bz = Q^T (B / sb) Q`` with ``sa``, ``sb`` powers of two
    (exact); a value of the pencil ``(Az, Bz)`` times ``vfactor = sa / sb`` is a value of
    the problem.  ``fragile`` (non-empty) says why the float path is not trusted.
    """

    problem: ConeEigProblem
    red: ConeReduction
    Az: np.ndarray
    Bz: np.ndarray
    vscale: float = 1.0
    bscale: float = 1.0
    early: ConeEigResult | None = None
    lps: int = 0
    failures: list[str] = field(default_factory=list)
    vfactor: float = 1.0
    anorm: float = 0.0
    bmin: float = np.inf
    fragile: str = ""
    notes: dict = field(default_factory=dict)


def _pencil_fragility(ctx: Context, s: np.ndarray, U: np.ndarray) -> str:
    """Why the pencil on ``span(C)`` needs exact arithmetic (empty when it does not)."""
    bmax = float(np.abs(ctx.problem.B).max())
    if ctx.red.dim == 0 or not s[-1] > RANK_RTOL * bmax / pow2(bmax):
        return "the cone may lie in ker B"
    small = s <= RANK_RTOL * s[-1]
    if np.any(small & (np.abs(s) > NOISE_RTOL * s[-1])):
        return "B is singular on span(C) to within 1e-10 but not to rounding"
    ctx.bmin = float(s[~small][0])
    if not small.any():
        return ""
    N = U[:, small]
    if float(np.abs(N.T @ ctx.Az @ N).max()) > NOISE_RTOL * max(float(np.abs(ctx.Az).max()), 1e-300):
        return "A does not vanish on ker B (unboundedness is decided exactly)"
    Z = nullspace(fr_matrix(ctx.problem.B), ctx.problem.m)
    if Z and any(any(matvec(fr_matrix(ctx.problem.A), z)) for z in Z):
        return "A does not vanish on the exact ker B"
    if len(Z) != int(small.sum()):  # a float threshold never makes a kernel (issue 23)
        return "B is singular on span(C) to rounding but not exactly (decided exactly)"
    ctx.notes["kernel"] = "exact"
    return ""


def exact_flat_kernel(ctx: Context, grows: list[int], nker: int) -> None:
    """Raise :class:`Fragile` unless ``dim(ker B cap null(G_J)) == nker`` exactly (``grows``:
    the rows ``J`` of ``G`` that define a flat on which float64 found an ``nker``-dimensional
    ``ker B``).  With the counts equal, the float kernel is the exact one up to rounding (the
    eigenvalues kept are above RANK_RTOL): a float threshold never makes a kernel."""
    key = ("flat_kernel", tuple(sorted(grows)))
    memo_ = memo(ctx.problem)
    dim = memo_.get(key)
    if dim is None:
        GZ = memo_.get("G_kerB")
        if GZ is None:  # G times an exact basis of ker B, once per problem
            Z = nullspace(fr_matrix(ctx.problem.B), ctx.problem.m)
            GZ = memo_["G_kerB"] = (len(Z), [[dot(g, z) for z in Z] for g in fr_matrix(ctx.problem.G)])
        k, rows = GZ
        dim = memo_[key] = len(nullspace([rows[i] for i in grows], k)) if k else 0
    if dim != nker:
        raise Fragile(f"float64 sees a {nker}-dimensional ker B on a flat whose exact one has dimension {dim}")


def _failed_reduction(problem: ConeEigProblem, exc: Exception) -> ConeReduction:
    """A placeholder reduction (no guesses) when the float reduction failed: fragile."""
    m = problem.m
    rows = np.flatnonzero(np.any(problem.G != 0, axis=1))
    return ConeReduction(Gn=problem.G[rows], rows=rows, eq=np.zeros(rows.size, dtype=bool), Q=np.eye(m),
                         x_int=np.full(m, np.nan), margin=0.0, lineality=np.zeros((m, 0)),
                         facets=np.zeros(0, dtype=int), H=np.zeros((0, m)), rays=None,
                         notes=(f"float cone reduction failed: {exc}",),
                         fragile=f"the float cone reduction failed ({exc})")


def prepare(problem: ConeEigProblem) -> Context:
    """Reduce the cone once per problem (cached), equilibrate ``A`` and ``B`` (exact powers
    of two) and decide whether the float path can be trusted (``ctx.fragile``)."""
    ctx = memo(problem).get("ctx")
    if ctx is not None:
        return ctx
    try:
        red = reduce_cone(problem.G, problem.interior)
    except LPNumericsError as exc:  # a float LP gave an impossible answer: the verified path decides
        red = _failed_reduction(problem, exc)
    amax, bmax = float(np.abs(problem.A).max()), float(np.abs(problem.B).max())
    sa, sb = pow2(amax), pow2(bmax)
    Q = red.Q
    Az = Q.T @ (problem.A / sa) @ Q
    Bz = Q.T @ (problem.B / sb) @ Q
    ctx = Context(problem, red, 0.5 * (Az + Az.T), 0.5 * (Bz + Bz.T), lps=red.lps, failures=list(red.notes),
                  vfactor=sa / sb)
    ctx.vscale = max(amax, 1e-300) / max(bmax, 1e-300)
    ctx.fragile = red.fragile
    if red.dim:
        s, U = np.linalg.eigh(ctx.Bz)
        ctx.bscale = float(s[-1])
        ctx.anorm = float(norm2(ctx.Az))  # Frobenius: bounds the 2-norm
        ctx.fragile = ctx.fragile or _pencil_fragility(ctx, s, U)
    else:
        ctx.fragile = ctx.fragile or "the cone may be {0}"
    memo(problem)["ctx"] = ctx
    return ctx


def fallback(ctx: Context, method: str, depth: str, t0: float, reason: str = "") -> ConeEigResult:
    """The verified answer (:mod:`solvers._verified.core`) where float64 cannot decide."""
    from solvers._verified.core import verified_solve

    return verified_solve(ctx.problem, ctx.red, method, depth, reason or ctx.fragile, t0)


def guarded(problem: ConeEigProblem, method: str, depth: str,
            run: Callable[[Context, float], ConeEigResult]) -> ConeEigResult:
    """Run a method's float path ``run(ctx, t0)``, or the verified answer where float64 cannot decide
    (the problem is fragile up front, or ``run`` raises :class:`Fragile`)."""
    t0 = time.perf_counter()
    ctx = prepare(problem)
    if ctx.fragile:
        return fallback(ctx, method, depth, t0)
    try:
        return run(ctx, t0)
    except Fragile as exc:
        return fallback(ctx, method, depth, t0, str(exc))


def upper_bound(ctx: Context, value, bmin):
    """Pencil eigenvalues ``value`` (units of ``(Az, Bz)``; scalar or array) as upper
    bounds in the problem's units: plus the rounding allowance of whitening by ``B``
    (``bmin`` its smallest eigenvalue kept on the flat) and ``BOUND_ALLOWANCE`` relative.
    Infinite values stay infinite."""
    d = max(ctx.red.dim, 1)
    vs = ctx.vscale / ctx.vfactor
    if np.ndim(value) == 0:
        if not np.isfinite(value):
            return float(value)
        err = ALLOWANCE_FACTOR * (d + 1) * _EPS * (ctx.anorm + abs(value) * ctx.bscale) / max(float(bmin), 1e-300)
        return float((value + err + BOUND_ALLOWANCE * max(abs(value), vs)) * ctx.vfactor)
    v = np.asarray(value, dtype=float)
    out = v * ctx.vfactor
    fin = np.isfinite(v)
    if fin.any():
        vf = v[fin]
        va = np.abs(vf)
        b = np.maximum(np.asarray(bmin, dtype=float)[fin], 1e-300)
        err = ALLOWANCE_FACTOR * (d + 1) * _EPS * (ctx.anorm + va * ctx.bscale) / b
        out[fin] = (vf + err + BOUND_ALLOWANCE * np.maximum(va, vs)) * ctx.vfactor
    return float(out) if out.ndim == 0 else out


def certified_upper(ctx: Context, value: float) -> float:
    """``value`` (problem units) plus BOUND_ALLOWANCE, if ``u B - A >= 0`` holds exactly for it
    on the cone's span (full-dimensional cones only), else ``nan``.  Tightens the a priori
    allowance of :func:`upper_bound`, which is pessimistic for an ill-conditioned ``B``."""
    if not np.isfinite(value) or ctx.red.dim != ctx.problem.m:
        return float("nan")
    u = value + BOUND_ALLOWANCE * max(abs(value), ctx.vscale)
    A, B = fr_matrix(ctx.problem.A), fr_matrix(ctx.problem.B)
    uq = Fraction(u)
    return u if is_psd([[uq * b - a for a, b in zip(ra, rb)] for ra, rb in zip(A, B)]) else float("nan")


def witness_quotient(ctx: Context, x: np.ndarray) -> float:
    """A rigorous lower bound on the quotient at ``x`` (rounded down), or ``nan`` when
    ``x^T B x`` is at rounding level (``x`` numerically in ``ker B``: its quotient would be
    noise)."""
    B = ctx.problem.B
    den = float(x @ B @ x)
    if not den > RANK_RTOL * float(np.abs(B).max()) * float(x @ x):
        return float("nan")
    return quotient_lower(ctx.problem.A, B, x)


@dataclass(frozen=True)
class FlatCheck:
    """Top eigenvalue of the pencil on a flat (problem units), whether it is attained in
    the cone, and ``upper``: the eigenvalue with its rounding allowance."""

    value: float
    realized: bool
    x: np.ndarray | None
    lower: float
    lps: int = 0
    upper: float = np.nan


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


#: Safety factor on the a posteriori (Davis-Kahan) bound of a float top eigenvector's error.
DK_SAFETY = 16.0
#: Below this (relative to ``|y|``, unit rows) a row's sign at a float eigenvector is never trusted.
SIGN_FLOOR = 1e-9


def _dk_ratio(Av, Bv, y, mu, s, W) -> np.ndarray:
    """``|r|_{B^-1} / delta`` per flat (see :func:`sign_tolerance`; ``+inf`` without a gap)."""
    dv = y.shape[1]
    ay = np.abs(y)
    top = mu[:, -1]
    r = np.einsum("nij,nj->ni", Av, y) - top[:, None] * np.einsum("nij,nj->ni", Bv, y)
    err_r = (dv + 2) * _EPS * (np.einsum("nij,nj->ni", np.abs(Av), ay)
                               + np.abs(top)[:, None] * np.einsum("nij,nj->ni", np.abs(Bv), ay))
    rB = norm2(np.einsum("nji,nj->ni", W, r), axis=1) + norm2(err_r, axis=1) / np.sqrt(s[:, 0])
    err_mu = 16 * (dv + 2) * _EPS * np.abs(mu).max(axis=1) * np.sqrt(s[:, -1] / s[:, 0])
    delta = mu[:, -1] - mu[:, -2] - 2 * err_mu
    return np.where(delta > 0, rB / np.where(delta > 0, delta, 1.0), np.inf)


def sign_tolerance(Av: np.ndarray, Bv: np.ndarray, Hv: np.ndarray, y: np.ndarray, mu: np.ndarray,
                   s: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Per flat and row ``h`` of ``Hv`` (flat coordinates), a bound on ``|h^T (y - v)|`` for the
    float top eigenvector ``y`` of the PD pencil ``(Av, Bv)`` and the true one ``v`` (scaled
    alike): ``|h^T e| <= |h|_{B^-1} |r|_{B^-1} / delta`` (Davis-Kahan in the ``B``-norm; ``r``
    the residual recomputed from ``Av``, ``Bv``; ``delta`` the gap below the top eigenvalue
    less its rounding), times DK_SAFETY, floored at ``SIGN_FLOOR |y|`` (``Hv``: unit rows of
    the cone projected on the flat; a row that vanishes on the flat is at rounding level,
    never a sign).  ``+inf`` without a gap.

    Batched: ``Av``, ``Bv``, ``W`` (n, k, k) with ``W^T Bv W = I``, ``Hv`` (n, f, k), ``y``,
    ``mu`` (the pencil's eigenvalues, ascending), ``s`` (``Bv``'s) (n, k); returns (n, f).
    """
    n, dv = y.shape
    floor = SIGN_FLOOR * norm2(y, axis=1)[:, None]  # unit rows, before projection
    if dv == 1:
        return np.broadcast_to(floor, Hv.shape[:2]).copy()
    hB = norm2(np.einsum("nfk,nkj->nfj", Hv, W), axis=2)
    dk = DK_SAFETY * hB * _dk_ratio(Av, Bv, y, mu, s, W)[:, None]
    return np.maximum(dk + (dv + 2) * _EPS * np.einsum("nfk,nk->nf", np.abs(Hv), np.abs(y)), floor)


def sign_tolerance_flat(Av: np.ndarray, Bv: np.ndarray, y: np.ndarray, mu: np.ndarray, s: np.ndarray,
                        W: np.ndarray) -> np.ndarray:
    """One bound per flat that covers every unit row: :func:`sign_tolerance` with
    ``|h|_{B^-1} <= 1 / sqrt(lambda_min(Bv))`` and ``|h| <= 1`` (cheap; looser by at most
    the condition of ``Bv``).  Shape (n,)."""
    n, dv = y.shape
    ny = norm2(y, axis=1)
    if dv == 1:
        return SIGN_FLOOR * ny
    dk = DK_SAFETY * _dk_ratio(Av, Bv, y, mu, s, W) / np.sqrt(s[:, 0])
    return np.maximum(dk + (dv + 2) * _EPS * np.sqrt(dv) * ny, SIGN_FLOOR * ny)


def _outside_both(ctx: Context, V: np.ndarray, HV: np.ndarray) -> bool:
    """Both ``+-v`` (``v`` the simple top eigenvector on the flat ``V``, ``B`` nonsingular there)
    violate a row beyond :func:`sign_tolerance`: the flat's top eigenvalue is not attained."""
    Av, Bv = V.T @ ctx.Az @ V, V.T @ ctx.Bz @ V
    s, U = np.linalg.eigh(0.5 * (Bv + Bv.T))
    if not s[0] > 0:
        return False
    W = U / np.sqrt(s)
    M = W.T @ Av @ W
    mu, Y = np.linalg.eigh(0.5 * (M + M.T))
    y = W @ Y[:, -1]
    hz = HV @ y
    tol = sign_tolerance(Av[None], Bv[None], HV[None], y[None], mu[None], s[None], W[None])[0]
    return bool(np.any(hz < -tol) and np.any(hz > tol))


#: A float LP may call a top eigenspace (plus ``ker B``) outside the cone only when its best
#: relative margin (columns equilibrated, unit rows) is below minus this: far beyond the LP's
#: tolerances (1e-9) and the rounding of the float eigenvectors; else the verified path decides.
LP_OUTSIDE_MARGIN = 1e-7


def _lp_margin(R: np.ndarray, S: np.ndarray) -> float:
    """The best margin ``mu`` of ``R y + S n >= mu`` with some ``y_i = +-1`` (equilibrated)."""
    from solvers._verified.realize import lp_point

    return float(lp_point(R, S)[0])


def check_flat(ctx: Context, V: np.ndarray) -> FlatCheck:
    """Is the top eigenvalue of the pencil compressed to ``span(V)`` attained in the cone?

    ``V`` (d, dv) is an orthonormal basis of a flat in ``span(C)``
    coordinates.  Realizability is searched over the whole top eigenspace
    plus ``ker B`` on the flat (Rem 4.4): numpy for a simple eigenvalue and
    nonsingular ``B``, else LPs.  The witness is polished to exact
    feasibility and its quotient recomputed.
    """
    prob, red = ctx.problem, ctx.red
    te = top_eig(V.T @ ctx.Az @ V, V.T @ ctx.Bz @ V, bscale=ctx.bscale, ascale=float(np.abs(ctx.Az).max()))
    if te.ambiguous:
        raise Fragile("B, or A on ker B, is between rounding and 1e-10 on a flat")
    value, upper = te.value * ctx.vfactor, upper_bound(ctx, te.value, te.bmin)
    if not np.isfinite(te.value):
        return FlatCheck(te.value, False, None, -np.inf, 0, te.value)
    HV = red.H @ V
    R, S = HV @ te.E, HV @ te.N
    k, r = R.shape[1], S.shape[1]
    z = None
    lps = 0
    if R.shape[0] == 0:
        z = te.E[:, 0]
    elif r == 0:
        for j in range(k):
            col = R[:, j] / max(norm2(te.E[:, j]), 1e-300)
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
        elif _lp_margin(R, S) > -LP_OUTSIDE_MARGIN:
            raise Fragile("the top eigenspace (plus ker B) may touch the cone: a float LP cannot decide")
    if z is None and k == 1 and r == 0 and R.shape[0] and not _outside_both(ctx, V, HV):
        raise Fragile("a top eigenvector too close to the cone's boundary for float64")
    if z is None:
        return FlatCheck(value, False, None, -np.inf, lps, upper)
    x = polish(red, prob.G, red.Q @ (V @ z))
    q = witness_quotient(ctx, x)
    if not np.isfinite(q):
        return FlatCheck(value, False, None, -np.inf, lps, upper)
    ok = value - q <= REALIZED_RTOL * max(abs(value), ctx.vscale)
    return FlatCheck(value, bool(ok), x, q, lps, upper)


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
    cert.update(ctx.notes)
    return ConeEigResult(float(lower), float(upper), x, status, method, time.perf_counter() - t0, cert, message)
