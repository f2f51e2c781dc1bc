"""Method ``faces``: exact maximization by enumerating the flats ``null(G_J)``
spanned by faces of the cone, level by level, with batched eigen-solves and
pruning by the incumbent."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ._cone import polish
from ._core import bound, check_flat, check_options, finish, interior_lower, prepare
from ._linalg import top_eig, top_values
from ._registry import register
from .problem import ConeEigProblem
from .result import ConeEigResult

__all__ = ["solve_faces"]

#: A facet row vanishes on a flat when ``|H_i V| <= CLOSURE_TOL`` (unit rows, orthonormal V).
CLOSURE_TOL = 1e-9


def _children(H: np.ndarray, P: np.ndarray, rows: list[tuple[int, ...]], inc: np.ndarray | None):
    """All flats ``span(P[a]) cap null(H_i)`` one dimension down, deduplicated.

    ``P`` has shape (n, d, dv).  With the ray-facet incidence ``inc`` (r, f),
    flats that are not the span of a face are dropped: the face they cut out
    is the cone of the rays inside them, and the flat is a face span iff the
    rows vanishing on the flat are exactly the rows vanishing on those rays
    (every face is reached through a chain of faces: the face lattice is
    graded).  Returns the stack of orthonormal bases (n', d, dv - 1) and, for
    each, the row set that generated it.
    """
    n, d, dv = P.shape
    HP = np.einsum("fd,ndk->nfk", H, P)
    nrm = np.linalg.norm(HP, axis=2)
    a_idx, i_idx = np.nonzero(nrm > CLOSURE_TOL)
    if a_idx.size == 0:
        return np.zeros((0, d, dv - 1)), []
    u = HP[a_idx, i_idx] / nrm[a_idx, i_idx, None]  # (c, dv)
    s = np.where(u[:, 0] >= 0, 1.0, -1.0)
    v = u.copy()
    v[:, 0] += s
    # Householder reflector I - 2 v v^T / v^T v: columns 1.. span u^perp
    Hh = np.eye(dv)[None] - 2.0 * v[:, :, None] * v[:, None, :] / np.einsum("ck,ck->c", v, v)[:, None, None]
    C = np.einsum("cdk,ckj->cdj", P[a_idx], Hh[:, :, 1:])
    closure = np.abs(np.einsum("fd,cdj->cfj", H, C)).max(axis=2) <= CLOSURE_TOL
    if inc is not None:
        cl = closure.astype(np.int32)
        inside = (inc.astype(np.int32) @ cl.T) == cl.sum(axis=1)[None, :]  # (r, c) rays in the flat
        eqF = (inside.T.astype(np.int32) @ (~inc).astype(np.int32)) == 0  # rows vanishing on the face
        face = np.all(eqF == closure, axis=1)
        C, closure, a_idx, i_idx = C[face], closure[face], a_idx[face], i_idx[face]
        if not face.any():
            return np.zeros((0, d, dv - 1)), []
    keys = np.packbits(closure, axis=1)
    _, first = np.unique(keys, axis=0, return_index=True)
    first = np.sort(first)
    return C[first], [rows[a_idx[j]] + (int(i_idx[j]),) for j in first]


@register("faces")
def solve_faces(problem: ConeEigProblem, *, max_flats: int = 200_000, face_filter: bool = True,
                **options: Any) -> ConeEigResult:
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

    References
    ----------
    Prop 4.3, Rem 4.4 of the paper; SPEC 3.2 (face enumeration).
    """
    check_options("faces", options, ())
    t0 = time.perf_counter()
    ctx = prepare(problem)
    if ctx.early is not None:
        return finish(ctx, "faces", 0, 0, None, {}, t0)
    red = ctx.red
    H, d = red.H, red.dim
    lower, x = interior_lower(ctx)
    inc = red.incidence if face_filter else None
    if red.rays is not None and red.rays.shape[0]:
        # the quotient at every extreme ray: a cheap first incumbent
        rq = np.einsum("rm,mn,rn->r", red.rays, problem.A, red.rays)
        rb = np.einsum("rm,mn,rn->r", red.rays, problem.B, red.rays)
        ok = rb > 1e-12 * max(float(np.abs(problem.B).max()), 1e-300)
        if ok.any():
            j = int(np.argmax(np.where(ok, rq / np.where(ok, rb, 1.0), -np.inf)))
            xr = polish(red, problem.G, red.rays[j])
            qr = problem.quotient(xr)
            if np.isfinite(qr) and qr > lower:
                lower, x = qr, xr
    best_val, best_face = -np.inf, None
    level = np.eye(d)[None]
    rows: list[tuple[int, ...]] = [()]
    flats = checks = lps = 0
    frontier = -np.inf
    while len(rows):
        flats += len(rows)
        Av = np.einsum("ndi,de,nej->nij", level, ctx.Az, level)
        Bv = np.einsum("ndi,de,nej->nij", level, ctx.Bz, level)
        vals = top_values(Av, Bv)
        for j in np.flatnonzero(np.isnan(vals)):
            vals[j] = top_eig(Av[j], Bv[j]).value
        expand = []
        for j in np.argsort(-vals, kind="stable"):
            v = vals[j]
            if v <= max(best_val, lower) or v == -np.inf:
                break  # sorted: every later flat is pruned too
            fc = check_flat(ctx, level[j])
            checks += 1
            lps += fc.lps
            if fc.x is not None and fc.lower > lower:
                lower, x = fc.lower, fc.x
            if fc.realized:
                if fc.value > best_val:
                    best_val, best_face = fc.value, rows[j]
            else:
                expand.append(j)
        expand = [j for j in expand if vals[j] > max(best_val, lower)]
        if not expand or level.shape[2] < 2:
            break
        level, rows = _children(H, level[expand], [rows[j] for j in expand], inc)
        if flats + len(rows) > max_flats:
            frontier = max(float(vals[j]) for j in expand)
            break
    cert = {"face": None if best_face is None else red.rows[red.facets[list(best_face)]].tolist(),
            "eigenvalue": best_val, "flats": flats, "realizability_checks": checks, "lps": lps}
    upper = bound(max(best_val, frontier, lower))
    msg = "" if frontier == -np.inf else f"flat budget max_flats={max_flats} exhausted"
    return finish(ctx, "faces", lower, upper, x, cert, t0, msg)
