"""Method ``faces``: exact maximization by enumerating the flats ``null(G_J)``
spanned by faces of the cone, level by level, with batched eigen-solves and
pruning by the incumbent."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from solvers._norms import norm2

from solvers._reduction import polish
from solvers._core import (guarded, EXACT_RTOL, REALIZED_RTOL, Fragile, check_flat, check_options,
                           exact_flat_kernel, finish, interior_lower, sign_tolerance_flat, upper_bound,
                           witness_quotient)
from solvers._linalg import EIG_RTOL, RANK_RTOL, top_eig
from solvers._registry import register
from solvers.problem import ConeEigProblem
from solvers.result import ConeEigResult, Status

__all__ = ["solve_faces"]

#: A facet row vanishes on a flat when ``|H_i V| <= CLOSURE_TOL`` (unit rows, orthonormal V).
CLOSURE_TOL = 1e-9
#: A BOUNDED float result (the gap is then the rounding allowance) is redone on the verified
#: path up to this dimension.
ESCALATE_MAX_DIM = 6
#: Values ``|H_i V|`` strictly inside this band are ambiguous: the verified path takes over.
CLOSURE_BAND = (1e-12, 1e-7)


def _check_band(v: np.ndarray) -> None:
    lo, hi = CLOSURE_BAND
    if np.any((v > lo) & (v < hi)):
        raise Fragile("a facet row nearly vanishes on a flat (|H_i V| between 1e-12 and 1e-7)")


_HASH_W = np.random.default_rng(20261130).integers(1, 2**63, size=4096, dtype=np.uint64)


def _unique_rows(B: np.ndarray) -> np.ndarray:
    """Sorted indices of the first occurrence of each distinct row of a bool matrix.

    Rows are hashed to 64 bits (a fixed random linear hash of the packed
    bytes); a collision is detected by comparing every row with its
    representative, and then the exact (slower) ``np.unique`` is used.
    """
    K = np.packbits(B, axis=1)
    if K.shape[1] > _HASH_W.size:
        return np.sort(np.unique(K, axis=0, return_index=True)[1])
    with np.errstate(over="ignore"):
        h = K.astype(np.uint64) @ _HASH_W[:K.shape[1]]
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    if not np.array_equal(K, K[first[inv]]):
        return np.sort(np.unique(K, axis=0, return_index=True)[1])
    return np.sort(first)


def _children(H: np.ndarray, P: np.ndarray, rows: list[tuple[int, ...]],
              inc: np.ndarray | None, raysin: np.ndarray | None):
    """Flats ``span(P[a]) cap null(H_i)`` one dimension down, deduplicated.

    ``P`` has shape (n, d, dv).  With the ray-facet incidence ``inc`` (r, f)
    and the rays inside each parent face ``raysin`` (n, r), only face spans
    are kept: the child face is the cone of the parent's rays incident to
    row ``i`` (plus the lineality space), identified by that ray set, and the
    child flat is its span iff the rows vanishing on the flat are exactly
    the rows vanishing on those rays.  Every face is reached through a chain
    of faces (the face lattice is graded).  Without ``inc`` every flat is
    kept, deduplicated by the set of rows vanishing on it.

    Returns the bases (n', d, dv - 1), their row tuples and ray sets.
    """
    n, d, dv = P.shape
    HP = np.einsum("fd,ndk->nfk", H, P)
    nrm = norm2(HP, axis=2)
    _check_band(nrm)
    a_idx, i_idx = np.nonzero(nrm > CLOSURE_TOL)
    empty = np.zeros((0, d, dv - 1)), [], None
    if a_idx.size == 0:
        return empty
    child_rays = None
    if inc is not None:
        child_rays = raysin[a_idx] & inc[:, i_idx].T
        first = _unique_rows(child_rays)
        a_idx, i_idx, child_rays = a_idx[first], i_idx[first], child_rays[first]
    u = HP[a_idx, i_idx] / nrm[a_idx, i_idx, None]  # (c, dv)
    v = u.copy()
    v[:, 0] += np.where(u[:, 0] >= 0, 1.0, -1.0)
    # Householder reflector I - 2 v v^T / v^T v: columns 1.. span u^perp
    Hh = np.eye(dv)[None] - 2.0 * v[:, :, None] * v[:, None, :] / np.einsum("ck,ck->c", v, v)[:, None, None]
    C = np.einsum("cdk,ckj->cdj", P[a_idx], Hh[:, :, 1:])
    hc = np.abs(np.einsum("fd,cdj->cfj", H, C)).max(axis=2)
    _check_band(hc)
    closure = hc <= CLOSURE_TOL
    if inc is not None:
        # rows vanishing on every ray of the child face (0/1 float matmul: BLAS, exact)
        eqF = (child_rays.astype(float) @ (~inc).astype(float)) < 0.5
        # drop a flat only when its face is certainly smaller (closure strictly inside eqF);
        # a numerically inconsistent pair (closure not inside eqF) is kept, to be safe
        smaller = np.all(eqF >= closure, axis=1) & np.any(eqF & ~closure, axis=1)
        keep = np.flatnonzero(~smaller)
    else:
        keep = _unique_rows(closure)
    if keep.size == 0:
        return empty
    return (C[keep], [rows[a_idx[j]] + (int(i_idx[j]),) for j in keep],
            None if child_rays is None else child_rays[keep])


def _level_eig(level: np.ndarray, Az: np.ndarray, Bz: np.ndarray, H: np.ndarray, bscale: float):
    """Batched top eigenpairs on a stack of flats, with a numpy realizability test.

    Returns ``(values, settled, bmin, nker)`` (values in the units of ``(Az, Bz)``):
    ``settled[j]`` is True when the flat's top eigenvalue is simple, ``B`` is
    nonsingular on it and neither ``+-v`` lies in the cone (then it is
    certainly not realizable, no further check); ``bmin[j]`` the smallest
    eigenvalue of ``B`` kept on the flat; ``nker[j]`` the dimension of its numerical
    ``ker B`` (checked exactly by the caller).  Singular pencils get their value
    from :func:`top_eig`; an ambiguous one raises :class:`Fragile`.
    """
    Av = np.einsum("ndi,de,nej->nij", level, Az, level)
    Bv = np.einsum("ndi,de,nej->nij", level, Bz, level)
    n, dv = level.shape[0], level.shape[2]
    s, U = np.linalg.eigh(Bv)
    smax = s[:, -1]
    good = s[:, 0] > RANK_RTOL * np.maximum(smax, max(bscale, 1e-300))
    W = U / np.sqrt(np.where(good[:, None], s, 1.0))[:, None, :]
    M = np.einsum("kji,kjl,klm->kim", W, Av, W)
    mu, Y = np.linalg.eigh(0.5 * (M + np.transpose(M, (0, 2, 1))))
    vals = np.where(good, mu[:, -1], np.nan)
    bmin = np.where(good, s[:, 0], np.inf)
    nker = np.zeros(n, dtype=int)
    for j in np.flatnonzero(~good):
        te = top_eig(Av[j], Bv[j], bscale=bscale, ascale=float(np.abs(Az).max()))
        if te.ambiguous:
            raise Fragile("B, or A on ker B, is between rounding and 1e-10 on a flat")
        vals[j], bmin[j], nker[j] = te.value, te.bmin, te.N.shape[1]
    simple = good if dv == 1 else good & (mu[:, -1] - mu[:, -2] > EIG_RTOL * np.abs(mu[:, -1]))
    if H.shape[0] == 0:
        return vals, np.zeros(n, dtype=bool), bmin, nker
    y = np.einsum("nkl,nl->nk", W, Y[:, :, -1])
    hz = np.einsum("fd,nd->nf", H, np.einsum("ndk,nk->nd", level, y))
    settled = np.zeros(n, dtype=bool)
    c = np.flatnonzero(simple & (hz.min(axis=1) < 0) & (hz.max(axis=1) > 0))
    if c.size:  # a float may only accept: beyond the eigenvector's error bound (else check_flat)
        tol = sign_tolerance_flat(Av[c], Bv[c], y[c], mu[c], s[c], W[c])[:, None]
        settled[c] = np.any(hz[c] < -tol, axis=1) & np.any(hz[c] > tol, axis=1)
    return vals, settled, bmin, nker


@register("faces")
def solve_faces(problem: ConeEigProblem, *, max_flats: int = 200_000, face_filter: bool = True,
                max_seconds: float | None = None, **options: Any) -> ConeEigResult:
    r"""Exact maximum over the cone by enumerating face flats.

    At an optimum ``x*`` in the relative interior of a face ``F`` of the cone,
    ``x*`` is a top eigenvector of the pencil compressed to ``span(F)``
    (``null(G_J)`` over the facet rows ``J`` that vanish on ``F``).  So

    .. math::

        \lambda^* = \max_J \{\lambda_{\max}(A, B \mid \operatorname{null}(G_J))
        : \text{the top eigenspace is realizable in } C \cap \operatorname{null}(G_J)\}.

    Flats are visited by decreasing dimension (``J`` grows one facet row at
    a time), their top eigenvalues computed in one batched ``eigh`` per level,
    and a flat is pruned when its eigenvalue is at most the incumbent (it
    only drops as the flat shrinks).  Realized flats are not expanded.

    Parameters
    ----------
    max_flats : int
        Budget of flats; past it the result is BOUNDED with the largest
        eigenvalue of the unexplored flats as ``upper``.
    face_filter : bool
        Visit only flats spanned by faces (from the extreme rays); ``False``
        visits every flat of the facet-row arrangement (slower, same answer).
    max_seconds : float or None
        Time budget of the float enumeration, checked between levels; past it
        the result is BOUNDED as for ``max_flats`` (message "time budget
        ... exhausted").  The verified path, where float64 cannot decide, is
        not bounded by it.

    Returns
    -------
    ConeEigResult
        ``certificate``: ``face`` (rows of ``G`` spanning the optimal face),
        ``eigenvalue``, ``flats`` visited, ``realizability_checks``, ``lps``,
        ``near_ties`` (flats left behind within the exactness tolerance of
        the optimum), plus the cone data (``facet_rows``,
        ``implicit_equalities``, ``lineality_dim``).

    Where float64 cannot decide (thin or lower-dimensional cones, ambiguous
    face lattices, singular pencils the cone sees; see :mod:`solvers._core`)
    the enumeration is redone on the verified path (:mod:`solvers._verified.core`):
    exact flats, exact LDL^T certificates of every bound, exact witnesses.

    References
    ----------
    Prop 4.3, Rem 4.4 of the paper; SPEC 3.2 (face enumeration).
    """
    check_options("faces", options, ())
    def run(ctx, t0: float) -> ConeEigResult:
        res = _faces(ctx, max_flats, face_filter, t0, max_seconds)
        if res.status is Status.BOUNDED and not res.message and ctx.red.dim <= ESCALATE_MAX_DIM:
            # the gap is the rounding allowance of an ill-conditioned pencil: decide it exactly
            raise Fragile("float64 bound too loose (B ill-conditioned)")
        return res

    return guarded(problem, "faces", "faces", run)


@dataclass
class _State:
    """Incumbent and counters of one enumeration (values in the problem's units)."""

    lower: float
    x: np.ndarray | None
    best_up: float = -np.inf
    best_val: float = -np.inf
    best_face: tuple | None = None
    checks: int = 0
    lps: int = 0
    near_ties: int = 0


def _first_incumbent(ctx) -> tuple[float, np.ndarray | None]:
    """The quotient at the interior point and at the best extreme ray."""
    problem, red = ctx.problem, ctx.red
    lower, x = interior_lower(ctx)
    if red.rays is not None and red.rays.shape[0]:
        rq = np.einsum("rm,mn,rn->r", red.rays, problem.A, red.rays)
        rb = np.einsum("rm,mn,rn->r", red.rays, problem.B, red.rays)
        ok = rb > 1e-12 * max(float(np.abs(problem.B).max()), 1e-300)
        if ok.any():
            j = int(np.argmax(np.where(ok, rq / np.where(ok, rb, 1.0), -np.inf)))
            xr = polish(red, problem.G, red.rays[j])
            qr = witness_quotient(ctx, xr)
            if np.isfinite(qr) and qr > lower:
                lower, x = qr, xr
    return lower, x


def _visit(ctx, level: np.ndarray, rows: list, st: _State) -> tuple[list[int], np.ndarray]:
    """Settle one level of flats; returns the flats to expand and their upper bounds."""
    vals, settled, bmin, nker = _level_eig(level, ctx.Az, ctx.Bz, ctx.red.H, ctx.bscale)
    for j in np.flatnonzero(nker):
        exact_flat_kernel(ctx, [int(i) for i in ctx.red.rows[ctx.red.facets[list(rows[j])]]], int(nker[j]))
    ups = upper_bound(ctx, vals, bmin)
    v = vals * ctx.vfactor
    expand, realized = [], []
    for j in np.argsort(-ups, kind="stable"):
        if vals[j] == -np.inf or ups[j] <= max(st.best_up, st.lower):
            break  # sorted: every later flat's supremum is covered too
        if v[j] <= st.lower + REALIZED_RTOL * max(abs(v[j]), ctx.vscale):
            # attained already (to REALIZED_RTOL): its bound stands, no realizability check
            st.best_up = max(st.best_up, float(ups[j]))
            continue
        if settled[j]:
            expand.append(j)
            continue
        fc = check_flat(ctx, level[j])
        st.checks += 1
        st.lps += fc.lps
        if fc.x is not None and fc.lower > st.lower:
            st.lower, st.x = fc.lower, fc.x
        if fc.realized:
            realized.append(j)
            if fc.upper > st.best_up:
                st.best_up, st.best_val, st.best_face = fc.upper, fc.value, rows[j]
        else:
            expand.append(j)
    expand = [j for j in expand if ups[j] > max(st.best_up, st.lower)]
    # near ties: flats left behind whose eigenvalue is within the exactness tolerance
    ref = max(st.best_val, st.lower)
    near = (v <= ref) & (v >= ref - EXACT_RTOL * max(abs(ref), ctx.vscale))
    near[realized] = False
    st.near_ties += int(near.sum())
    return expand, ups


def _faces(ctx, max_flats: int, face_filter: bool, t0: float, max_seconds: float | None = None) -> ConeEigResult:
    """The float enumeration (raises :class:`Fragile` where float64 cannot decide)."""
    red = ctx.red
    inc = red.incidence if face_filter else None
    st = _State(*_first_incumbent(ctx))
    level = np.eye(red.dim)[None]
    raysin = None if inc is None else np.ones((1, inc.shape[0]), dtype=bool)
    rows: list[tuple[int, ...]] = [()]
    flats = 0
    frontier = -np.inf
    late = False
    while len(rows):
        flats += len(rows)
        expand, ups = _visit(ctx, level, rows, st)
        if not expand or level.shape[2] < 2:
            break
        level, rows, raysin = _children(red.H, level[expand], [rows[j] for j in expand], inc,
                                        None if raysin is None else raysin[expand])
        late = max_seconds is not None and time.perf_counter() - t0 > max_seconds
        if flats + len(rows) > max_flats or late:  # the flats left bound everything below them
            frontier = max(float(ups[j]) for j in expand)
            break
    cert = {"face": None if st.best_face is None else red.rows[red.facets[list(st.best_face)]].tolist(),
            "eigenvalue": st.best_val, "flats": flats, "realizability_checks": st.checks, "lps": st.lps,
            "near_ties": st.near_ties}
    upper = max(st.best_up, frontier, st.lower)
    msg = "" if frontier == -np.inf else (f"time budget max_seconds={max_seconds} exhausted" if late
                                          else f"flat budget max_flats={max_flats} exhausted")
    return finish(ctx, "faces", st.lower, upper, st.x, cert, t0, msg)
