"""Chamber enumeration of a central arrangement by a lowest-vertex sweep (private).

Setting: ``q`` pairwise non-parallel nonzero integer normals ``a_j`` in ``R^d``
spanning ``R^d`` (an essential central arrangement).  Pick two generic
functionals ``c`` and ``g``.  The rays of the arrangement (its rank-(d-1) flats)
are the lines ``R v`` with ``v = X(a_S)``, the generalised cross product of an
independent (d-1)-subset ``S``; orient ``v`` so that ``c.v > 0``: these are the
vertices of the affine section ``{c.theta = 1}``.  Sweep that section upwards
in ``g``.  Let ``LV`` be the chambers meeting ``{c > 0}`` whose section has a
lowest vertex in ``g`` (each counted at that vertex, so exactly once).  Then

    chambers(A) = LV  +  (-LV)  +  chambers(A restricted to K),   K = ker c ∩ ker g,

a disjoint union.  Proof sketch: a chamber inside ``{c > 0}`` is in ``LV``
(bounded section); inside ``{c < 0}`` it is ``-C`` with ``C`` inside ``{c > 0}``.
A chamber ``C`` cut by ``ker c`` meets it in a chamber ``D`` of ``A|ker c``; its
upper section has a lowest vertex iff ``D`` lies in ``{g > 0}``, and (the same
argument for ``-C``) ``-C`` is in ``LV`` iff ``D`` lies in ``{g < 0}``; when ``D``
meets both sides it is cut by ``ker g``, i.e. it is a chamber of ``A|K``, which
has dimension ``d - 2`` (recursion; nothing for ``d = 2``).

Which chambers have their lowest vertex at ``v``?  The local chambers ``L`` of
the hyperplanes through ``v`` (the zero set ``Z``) lying in ``{h_v > 0}`` with
``h_v = g - (g.v / c.v) c``.  For a simple vertex (``|Z| = d - 1``) that is
exactly one chamber, whose sign on generator ``s_k`` is
``sign(c.v) * kappa * sign(Y_k)``, ``Y`` the cross product of the rows of
``a_S`` restricted to ``K`` (``kappa`` = orientation of the basis of ``K``).  For
a non-simple vertex, counted once at its lexicographically first basis ``S`` of
``Z``, the local arrangement lives on ``ker c`` (a complement of ``R v``), where
``h_v = g``; the chambers of it inside ``{g > 0}`` are the sign vectors ``s`` with
``(s, +)`` a chamber of ``local + {g}`` but ``(s, -)`` not (recursion, d - 1).

Every block of chambers comes with a *provider* of exact integer witnesses
(:mod:`._exact_witness`): for a chamber at ray ``v`` it returns ``M v + u`` with
``u`` solving ``a_S u ~ signs`` exactly (simple ray) or an exact witness of the
local chamber (recursively), or ``Q y`` for a chamber of ``A|K``.  Nothing is
computed until a chamber too thin for float64 asks for it.

Genericity of ``c`` and ``g`` is *checked exactly* (``c.v != 0`` on every ray,
``h_v != 0`` on every edge, no row vanishing on ``K``); on failure new random
functionals are drawn.  All signs come from filtered exact predicates
(:mod:`._exact`), never from a tolerance.
"""

from __future__ import annotations

import math
from functools import cmp_to_key
from itertools import combinations
from typing import Callable

import numpy as np

from relu_gating.errors import SolverFailure
from relu_gating.patterns._exact_witness import combine as _combine, concat_prov as _concat_prov, from_ray, simple_prov as _simple_prov
from relu_gating.patterns._exact import IntMatrix, cross_int, cross_stack_T, det_int, err_factor, kernel_basis_int, rank_int, skinny_matmul
from relu_gating.patterns._rowspace import merge_int_rows
from relu_gating.patterns._subsets import batches, decide, subset_groups

__all__ = ["chambers", "level_sweep", "subset_groups"]

_MAX_ATTEMPTS = 12


class _NonGeneric(Exception):
    """This level's random functionals c, g were not generic: redraw them."""


class _ForbidFail(Exception):
    """The caller's sweep functional vanishes on a ray here: the caller redraws."""


def _dot(a, b) -> int:
    return sum(x * y for x, y in zip(a, b))


def _sgn(x) -> int:
    return (x > 0) - (x < 0)


def _rand_int_vec(rng: np.random.Generator, d: int) -> tuple:
    return tuple(int(x) for x in rng.integers(-(2 ** 40), 2 ** 40, size=d))


def chambers(rows: list, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, Callable]:
    """All chambers of the essential arrangement ``rows`` (pairwise non-parallel) in ``R^d``.

    Returns ``(P, W, prov)``: ``P`` bool (N, q), True where ``a_j . w > 0``, float witnesses
    ``W`` (N, d), and ``prov(idx) -> list of int tuples``, exact integer witnesses of the
    chambers ``idx`` computed on demand (:mod:`._exact_witness`).
    """
    q = len(rows)
    if d == 1:
        s = np.array([r[0] > 0 for r in rows], dtype=bool)
        return np.stack([s, ~s]), np.array([[1.0], [-1.0]]), lambda idx: [(1,) if i == 0 else (-1,) for i in idx]
    if d == 2 and q <= 64:
        return _chambers_plane(rows)
    for _ in range(_MAX_ATTEMPTS):
        c, g = _rand_int_vec(rng, d), _rand_int_vec(rng, d)
        try:
            blocks, child = level_sweep(rows, d, c, g, rng)
        except _NonGeneric:
            continue
        P = np.concatenate([b[0] for b in blocks]) if blocks else np.zeros((0, q), dtype=bool)
        W = np.concatenate([b[1] for b in blocks]) if blocks else np.zeros((0, d))
        Ps, Ws = [P, ~P], [W, -W]
        if child is not None:
            Ps.append(child[0])
            Ws.append(child[1])
        return np.concatenate(Ps), np.concatenate(Ws), _concat_prov(blocks, child)
    raise SolverFailure("pattern enumeration: no generic sweep direction found")


def level_sweep(rows: list, d: int, c: tuple, g: tuple, rng: np.random.Generator, *,
                forbid: tuple | None = None, firsts: list[int] | None = None,
                emit: Callable | None = None, progress=None, with_child: bool = True):
    """One level of the sweep: returns ``(LV blocks, child)`` (see module docstring).

    ``emit(P, W, prov)`` converts each LV block (default: keep ``(P, W, prov)``;
    ``prov(idx)`` gives exact integer witnesses of rows ``idx`` of the block on
    demand); ``child`` is ``(P, W, prov)`` for the chambers of ``A|K`` lifted to this
    level (None if d == 2 or ``with_child`` is False).  Raises ``_NonGeneric`` /
    ``_ForbidFail``.
    """
    q = len(rows)
    t = d - 1
    M = IntMatrix(rows, d)
    if d > 2:
        Q = kernel_basis_int([c, g])
        AK = [tuple(_dot(r, qv) for qv in Q) for r in rows]
        if any(not any(x) for x in AK):
            raise _NonGeneric
        kappa = _sgn(det_int(list(Q) + [c, g]))
    else:
        Q, AK = [], [() for _ in rows]
        kappa = _sgn(det_int([c, g]))
    if kappa == 0:
        raise _NonGeneric
    MK = IntMatrix(AK, d - 2)
    MKfT = np.ascontiguousarray(MK.f.T)
    cf = np.array(c, dtype=float)
    ff = None
    if forbid is not None:
        fm = IntMatrix([forbid], d)
        ff = fm.f[0]
    Qc = None
    norms = np.linalg.norm(M.f, axis=1)
    fT = np.ascontiguousarray(M.f.T)
    amax_all = float(M.amax.max(initial=0.0))
    amax_bound = max(amax_all, 2.0) * (1 + 2.0 ** -40)
    facD = err_factor(t, M.rel)
    facX = err_factor(t - 1, M.rel) if t > 1 else 4 * M.rel + 4 * 2.0 ** -53
    facY = err_factor(max(d - 3, 0), MK.rel)
    emit = emit or (lambda P, W, prov: (P, W, prov))
    blocks = []
    if firsts is None:
        firsts = list(range(0, q - t + 1))
    for S in batches(q, t, firsts):
        B = S.shape[0]
        X, PX = cross_stack_T(fT[:, S.T])
        sP = PX.sum(axis=1)
        # --- independence of a_S (X != 0) ---------------------------------------------
        indep = np.any(decide(X, PX, facX, M.exact_int) & (X != 0), axis=1)
        unsure = ~indep & ~np.all(decide(X, PX, facX, M.exact_int), axis=1)
        for b in np.flatnonzero(unsure):
            if any(cross_int([rows[j] for j in S[b]])):
                indep[b] = True
        if not indep.all():
            S, X, PX, sP = S[indep], X[indep], PX[indep], sP[indep]
            B = S.shape[0]
            if B == 0:
                if progress is not None:
                    progress.update(int(indep.size))
                continue
        # rays whose float cross product is inaccurate: recompute exactly, round once
        weak = np.max(np.abs(X), axis=1) <= 1e6 * facX * np.max(PX, axis=1)
        if M.exact_int:
            weak &= np.max(PX, axis=1) >= 2.0 ** 51
        for b in np.flatnonzero(weak):
            Xi = cross_int([rows[j] for j in S[b]])
            s = max(abs(x).bit_length() for x in Xi)
            X[b] = [x / 2 ** s for x in Xi]
            PX[b] = np.abs(X[b])
            sP[b] = PX[b].sum()
        # --- orientation: sign(c . X) must be nonzero -----------------------------------
        cX = X @ cf
        cmag = PX @ np.abs(cf)
        sc = np.sign(cX).astype(np.int64)
        und = ~decide(cX, cmag, facD, False)
        for b in np.flatnonzero(und):
            sc[b] = _sgn(det_int([c] + [rows[j] for j in S[b]]))
        if np.any(sc == 0):
            raise _NonGeneric
        if ff is not None:
            fX = X @ ff
            fmag = PX @ np.abs(ff)
            fs = np.sign(fX)
            for b in np.flatnonzero(~decide(fX, fmag, err_factor(t, max(M.rel, fm.rel)), False)):
                fs[b] = _sgn(det_int([forbid] + [rows[j] for j in S[b]]))
            if np.any(fs == 0):
                raise _ForbidFail
        # --- signs of every row on the ray: D[b, j] = det([a_j; a_S]) = a_j . X ----------
        D = skinny_matmul(X, fT)
        rowsB = np.arange(B)[:, None]
        Pall = D > 0
        A = np.abs(D, out=D)  # D is recomputed below for the few rows that need signs
        A[rowsB, S] = np.inf
        rowmin = A.min(axis=1) if q > t else np.full(B, np.inf)
        # a row is clean when every non-generator sign is certain and nonzero
        # (the bound fac * sP * amax_j is at most fac * sP * amax_bound)
        clean = rowmin > amax_bound * facD * sP
        if M.exact_int:
            clean |= (sP * amax_all < 2.0 ** 51) & (rowmin > 0)
        simple = clean.copy()
        dirty = np.flatnonzero(~clean)
        Ds = None
        if dirty.size:
            Sd = S[dirty]
            Dd = X[dirty] @ fT
            Ds = np.sign(Dd).astype(np.int8)
            dec = decide(Dd, sP[dirty, None] * M.amax[None, :], facD, M.exact_int)
            rd = np.arange(dirty.size)[:, None]
            dec[rd, Sd] = True
            Ds[rd, Sd] = 0
            cache: dict = {}
            for bb, j in zip(*np.nonzero(~dec)):
                Xi = cache.get(bb)
                if Xi is None:
                    Xi = cache[bb] = cross_int([rows[k] for k in Sd[bb]])
                Ds[bb, j] = _sgn(_dot(rows[j], Xi))
            simple[dirty] = np.count_nonzero(Ds == 0, axis=1) == t
            Pall[dirty] = Ds > 0
        # --- simple vertices: one chamber each ------------------------------------------
        si = np.flatnonzero(simple)
        if si.size:
            Ss = S[si]
            Y, PY = cross_stack_T(np.transpose(MKfT[:, Ss.T], (1, 0, 2)))
            Ysg = np.sign(Y).astype(np.int64)
            for b, k in zip(*np.nonzero(~decide(Y, PY, facY, MK.exact_int))):
                sub = [AK[j] for kk, j in enumerate(Ss[b]) if kk != k]
                v = det_int(sub)
                Ysg[b, k] = _sgn(v if k % 2 == 0 else -v)
            if np.any(Ysg == 0):
                raise _NonGeneric
            scs = sc[si]
            if si.size == B:
                P = Pall
                P ^= (scs < 0)[:, None]
            else:
                P = Pall[si] ^ (scs < 0)[:, None]
            gen = (scs[:, None] * kappa * Ysg) > 0
            P[np.arange(si.size)[:, None], Ss] = gen
            # witness: top of the ray plus a small step into the chamber
            Xs = X[si] * scs[:, None]
            xn = np.linalg.norm(Xs, axis=1)
            vh = Xs / xn[:, None]
            Mat = np.concatenate([M.f[Ss], vh[:, None, :]], axis=1)
            rhs = np.concatenate([np.where(gen, 1.0, -1.0), np.zeros((si.size, 1))], axis=1)
            u = _solve_rows(Mat, rhs)
            rmin = rowmin[si] / (amax_bound * np.sqrt(d) * xn)  # <= min_j |a_j . vh| / ||a_j||
            un = np.linalg.norm(u, axis=1)
            eps = np.minimum(0.5 * rmin / un, 1.0)
            hard = np.flatnonzero(eps < 1e-6)
            if hard.size:  # thin chambers: only rows the step moves towards their wall limit it
                Au = skinny_matmul(u[hard], fT)
                Av = (X[si[hard]] @ fT) * scs[hard, None] / xn[hard, None]
                lim = np.where(Au * Av < 0, np.abs(Av) / np.maximum(np.abs(Au), 1e-300), np.inf)
                lim[np.arange(hard.size)[:, None], Ss[hard]] = np.inf
                eps[hard] = np.minimum(0.5 * lim.min(axis=1), 1.0 / un[hard])
            W = vh + eps[:, None] * u
            blocks.append(emit(P, W, _simple_prov(rows, c, Ss, scs, P)))
        # --- non-simple vertices: local arrangement, once per flat -----------------------
        for bb in np.flatnonzero(~simple[dirty]) if dirty.size else []:
            b = dirty[bb]
            Z = np.flatnonzero(Ds[bb] == 0)
            Sb = S[b]
            if Sb[0] != Z[0] or (t >= 2 and Sb[1] != Z[1]):
                continue
            if t >= 3 and not _is_greedy_basis(rows, Z, Sb, t):
                continue
            if Qc is None:
                Qc = kernel_basis_int([c])
                Qcf = np.array(Qc, dtype=float)
            P, W, prov = _local_up(rows, Z, Sb, int(sc[b]), Ds[bb], X[b], Dd[bb], norms, M, Qc, Qcf, g, rng)
            if P.shape[0]:
                blocks.append(emit(P, W, prov))
        if progress is not None:
            progress.update(int(indep.size))
    child = None
    if with_child and d > 2:
        reps, cls, orient = merge_int_rows(AK)
        Pc, Wc, provc = chambers(reps, d - 2, rng)
        Pl = Pc[:, cls] ^ (orient < 0)[None, :]
        Wl = Wc @ np.array(Q, dtype=float)
        child = (Pl, Wl, lambda idx: [_combine(y, Q) for y in provc(idx)])
    return blocks, child


def _unit2(r) -> tuple[float, float]:
    """Float unit vector along an integer 2-vector (no overflow for huge integers)."""
    e = max(abs(r[0]).bit_length(), abs(r[1]).bit_length())
    x, y = r[0] / 2 ** e, r[1] / 2 ** e
    h = math.hypot(x, y)
    return x / h, y / h


def _chambers_plane(rows: list) -> tuple[np.ndarray, np.ndarray, Callable]:
    """Chambers of q distinct lines through 0 in the plane: the 2q sectors, sorted exactly."""
    q = len(rows)
    if q == 1:
        w = np.array(_unit2(rows[0]))
        a = tuple(rows[0])
        return (np.array([[True], [False]]), np.stack([w, -w]),
                lambda idx: [a if i == 0 else tuple(-x for x in a) for i in idx])
    rays = []
    for j, (b0, b1) in enumerate(rows):
        rays.append((b1, -b0, j))
        rays.append((-b1, b0, j))

    def key(r):
        x, y, _ = r
        return 0 if (y > 0 or (y == 0 and x > 0)) else 1

    def cmp(u, v):
        hu, hv = key(u), key(v)
        if hu != hv:
            return hu - hv
        c = u[0] * v[1] - u[1] * v[0]
        return -1 if c > 0 else (1 if c < 0 else 0)

    rays.sort(key=cmp_to_key(cmp))
    P = np.zeros((2 * q, q), dtype=bool)
    W = np.empty((2 * q, 2))
    for k in range(2 * q):
        u, v = rays[k], rays[(k + 1) % (2 * q)]
        for j, b in enumerate(rows):
            ref = v if j == u[2] else u
            P[k, j] = b[0] * ref[0] + b[1] * ref[1] > 0
        uf, vf = _unit2(u), _unit2(v)
        W[k, 0] = uf[0] + vf[0]
        W[k, 1] = uf[1] + vf[1]

    def prov(idx):  # consecutive rays are less than pi apart: u + v is strictly between them
        out = []
        for k in idx:
            u, v = rays[k], rays[(k + 1) % (2 * q)]
            out.append((u[0] + v[0], u[1] + v[1]))
        return out
    return P, W, prov


def _solve_rows(Mat: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Batched solve; rows singular in float64 (nearly parallel normals) use least squares."""
    try:
        return np.linalg.solve(Mat, rhs[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        return np.stack([np.linalg.lstsq(A, b, rcond=None)[0] for A, b in zip(Mat, rhs)])


def _is_greedy_basis(rows: list, Z: np.ndarray, S: np.ndarray, t: int) -> bool:
    basis: list = []
    for j in Z.tolist():
        cand = [rows[k] for k in basis] + [rows[j]]
        if rank_int(cand)[0] == len(cand):
            basis.append(j)
            if len(basis) == t:
                break
    return basis == S.tolist()


def _local_up(rows, Z, S, sc, Dsb, Xb, Db, norms, M, Qc, Qcf, g, rng):
    """Chambers whose lowest vertex is the non-simple ray ``sc * X`` (see module doc)."""
    d = M.d
    q = len(rows)
    Brows = [tuple(_dot(rows[j], qv) for qv in Qc) for j in Z.tolist()]
    h = tuple(_dot(g, qv) for qv in Qc)
    # genericity: h must not vanish on any ray (edge through v) of the local arrangement
    if d - 2 == 0:
        if not any(h):
            raise _NonGeneric
    else:
        for T in combinations(range(len(Brows)), d - 2):
            sub = [Brows[k] for k in T]
            if det_int([h] + sub) == 0 and any(cross_int(sub)):
                raise _NonGeneric
    reps, cls, orient = merge_int_rows(Brows + [h])
    Pl, Wl, provl = chambers(reps, d - 1, rng)
    Pz = Pl[:, cls] ^ (orient < 0)[None, :]
    keys_neg = {row[:-1].tobytes() for row in Pz if not row[-1]}
    keep = [i for i, row in enumerate(Pz) if row[-1] and row[:-1].tobytes() not in keys_neg]
    nk = len(keep)
    P = np.broadcast_to((sc * Dsb) > 0, (nk, q)).copy()
    if nk == 0:
        return P, np.zeros((0, d)), lambda idx: []
    P[:, Z] = Pz[keep, :-1]
    xn = np.linalg.norm(Xb)
    vh = sc * Xb / xn
    U = Wl[keep] @ Qcf
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    ratio = np.abs(Db) / (xn * norms)
    ratio[Z] = np.inf
    eps = min(0.5 * float(ratio.min()), 1.0) if len(Z) < q else 1.0

    def prov(idx):  # the ray plus the exact local witness (in ker c coordinates), scaled
        v = [sc * x for x in cross_int([rows[j] for j in S.tolist()])]
        ys = provl([keep[int(k)] for k in idx])
        return [from_ray(rows, P[int(k)], v, _combine(y, Qc), Z.tolist()) for k, y in zip(idx, ys)]
    return P, vh[None, :] + eps * U, prov
