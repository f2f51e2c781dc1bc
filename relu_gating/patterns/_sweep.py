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
functionals are drawn (:func:`generic_sweep`).  All signs come from filtered
exact predicates (:mod:`._exact`), never from a tolerance.  The per-batch work on
the rays of one level (signs, simple chambers) is :mod:`._sweep_level`; this
module assembles the chambers, their witness providers and the recursions.
"""

from __future__ import annotations

import math
from functools import cmp_to_key
from itertools import combinations
from typing import Callable, TypeVar

import numpy as np

from relu_gating._inputs.scaling import pow2_norms

from relu_gating.errors import SolverFailure
from relu_gating.patterns._exact_witness import combine as _combine, concat_prov as _concat_prov, from_ray, simple_prov as _simple_prov
from relu_gating.patterns._exact import cross_int, det_int
from relu_gating.patterns._rowspace import merge_int_rows
from relu_gating.patterns._subsets import batches, subset_groups
from relu_gating.patterns._sweep_level import (LocalRay, NonGeneric, Rays, RowSigns, SweepLevel, batch_rays, dot,
                                               nonsimple_rays, prepare_level, row_signs, simple_chambers)

__all__ = ["chambers", "level_sweep", "generic_sweep", "subset_groups", "MAX_ATTEMPTS", "NonGeneric", "rand_int_vec"]

MAX_ATTEMPTS = 12

_R = TypeVar("_R")


def rand_int_vec(rng: np.random.Generator, d: int) -> tuple:
    return tuple(int(x) for x in rng.integers(-(2 ** 40), 2 ** 40, size=d))


def generic_sweep(sweep: Callable[[tuple, tuple], _R], d: int, rng: np.random.Generator, *,
                  redraw: bool = True) -> _R:
    """``sweep(c, g)`` for random integer functionals ``c, g`` in ``Z^d``, redrawn while not generic.

    ``sweep`` raises :class:`NonGeneric` for a non-generic pair; up to
    ``MAX_ATTEMPTS`` pairs are drawn.  ``redraw=False``: a non-generic first pair is
    an error (one part of a split work cannot change the functionals of the others).
    """
    for _ in range(MAX_ATTEMPTS):
        c, g = rand_int_vec(rng, d), rand_int_vec(rng, d)
        try:
            return sweep(c, g)
        except NonGeneric:
            if not redraw:
                raise SolverFailure("pattern enumeration: the sweep direction was not generic for this "
                                    "part; run without part=") from None
    raise SolverFailure("pattern enumeration: no generic sweep direction found")


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
    blocks, child = generic_sweep(lambda c, g: level_sweep(rows, d, c, g, rng), d, rng)
    P = np.concatenate([b[0] for b in blocks]) if blocks else np.zeros((0, q), dtype=bool)
    W = np.concatenate([b[1] for b in blocks]) if blocks else np.zeros((0, d))
    Ps, Ws = [P, ~P], [W, -W]
    if child is not None:
        Ps.append(child[0])
        Ws.append(child[1])
    return np.concatenate(Ps), np.concatenate(Ws), _concat_prov(blocks, child)


def _keep(P: np.ndarray, W: np.ndarray, prov: Callable, sure: np.ndarray | None = None) -> tuple:
    return P, W, prov


def level_sweep(rows: list, d: int, c: tuple, g: tuple, rng: np.random.Generator, *,
                firsts: list[int] | None = None, emit: Callable | None = None, progress=None,
                with_child: bool = True):
    """One level of the sweep: returns ``(LV blocks, child)`` (see module docstring).

    ``emit(P, W, prov)`` converts each LV block (default: keep ``(P, W, prov)``;
    ``prov(idx)`` gives exact integer witnesses of rows ``idx`` of the block on
    demand); ``child`` is ``(P, W, prov)`` for the chambers of ``A|K`` lifted to this
    level (None if d == 2 or ``with_child`` is False).  Only the rays whose first
    generator is in ``firsts`` are swept (default: all).  Raises :class:`NonGeneric`.
    """
    lv = prepare_level(rows, d, c, g)
    emit = emit or _keep
    blocks: list = []
    if firsts is None:
        firsts = list(range(0, lv.q - lv.t + 1))
    for S in batches(lv.q, lv.t, firsts):
        # rays and signs are held here until the next batch replaces them: freeing a batch's
        # big arrays before the next one is allocated costs page faults (measured, q = 200)
        rays = batch_rays(lv, S)
        if rays is not None:
            signs = row_signs(lv, rays)
            blocks.extend(_batch_blocks(lv, rays, signs, emit, rng))
        if progress is not None:
            progress.update(int(S.shape[0]))
    child = _child(lv, rng) if with_child and d > 2 else None
    return blocks, child


def _batch_blocks(lv: SweepLevel, rays: Rays, signs: RowSigns, emit: Callable, rng: np.random.Generator) -> list:
    """The emitted LV blocks of one batch of rays: simple rays first, then each non-simple ray."""
    out = []
    simple = simple_chambers(lv, rays, signs)
    if simple is not None:
        P, W, Ss, scs, sure = simple
        out.append(emit(P, W, _simple_prov(lv.rows, lv.c, Ss, scs, P), sure))
    for ray in nonsimple_rays(lv, rays, signs):
        P, W, prov = _local_up(lv, ray, rng)
        if P.shape[0]:
            out.append(emit(P, W, prov))
    return out


def _child(lv: SweepLevel, rng: np.random.Generator) -> tuple:
    """The chambers of ``A|K`` (dimension d - 2), lifted to this level: ``(P, W, prov)``."""
    Q = lv.Q
    reps, cls, orient = merge_int_rows(lv.AK)
    Pc, Wc, provc = chambers(reps, lv.d - 2, rng)
    Pl = Pc[:, cls] ^ (orient < 0)[None, :]
    Wl = Wc @ np.array(Q, dtype=float)
    return Pl, Wl, lambda idx: [_combine(y, Q) for y in provc(idx)]


def _local_up(lv: SweepLevel, ray: LocalRay, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, Callable]:
    """Chambers whose lowest vertex is the non-simple ray ``ray.sc * ray.X`` (see module doc)."""
    d, q, rows, Z = lv.d, lv.q, lv.rows, ray.Z
    Qc, Qcf = lv.ker_c
    Brows = [tuple(dot(rows[j], qv) for qv in Qc) for j in Z.tolist()]
    h = tuple(dot(lv.g, qv) for qv in Qc)
    _check_local_generic(Brows, h, d)
    reps, cls, orient = merge_int_rows(Brows + [h])
    Pl, Wl, provl = chambers(reps, d - 1, rng)
    Pz = Pl[:, cls] ^ (orient < 0)[None, :]
    keys_neg = {row[:-1].tobytes() for row in Pz if not row[-1]}
    keep = [i for i, row in enumerate(Pz) if row[-1] and row[:-1].tobytes() not in keys_neg]
    nk = len(keep)
    P = np.broadcast_to((ray.sc * ray.signs) > 0, (nk, q)).copy()
    if nk == 0:
        return P, np.zeros((0, d)), lambda idx: []
    P[:, Z] = Pz[keep, :-1]
    xn = float(pow2_norms(ray.X))
    vh = ray.sc * ray.X / xn
    U = Wl[keep] @ Qcf
    U /= pow2_norms(U, axis=1)[:, None]
    ratio = np.abs(ray.D) / (xn * lv.norms)
    ratio[Z] = np.inf
    eps = min(0.5 * float(ratio.min()), 1.0) if len(Z) < q else 1.0

    def prov(idx):  # the ray plus the exact local witness (in ker c coordinates), scaled
        v = [ray.sc * x for x in cross_int([rows[j] for j in ray.S.tolist()])]
        ys = provl([keep[int(k)] for k in idx])
        return [from_ray(rows, P[int(k)], v, _combine(y, Qc), Z.tolist()) for k, y in zip(idx, ys)]
    return P, vh[None, :] + eps * U, prov


def _check_local_generic(Brows: list, h: tuple, d: int) -> None:
    """``h`` must not vanish on any ray (edge through v) of the local arrangement ``Brows``."""
    if d - 2 == 0:
        if not any(h):
            raise NonGeneric
        return
    for T in combinations(range(len(Brows)), d - 2):
        sub = [Brows[k] for k in T]
        if det_int([h] + sub) == 0 and any(cross_int(sub)):
            raise NonGeneric


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
