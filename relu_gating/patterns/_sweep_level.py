"""One level of the lowest-vertex sweep: the rays of a batch and their signs (private).

The method is described in :mod:`._sweep`.  Here, for a batch of (d-1)-subsets
``S`` of the hyperplanes, with filtered exact predicates (:mod:`._exact`): which
subsets are independent (a ray ``X(a_S)``), the orientation ``sign(c . X)`` of
each ray, the sign of every row on it (simple or non-simple ray), and the one
chamber of each simple ray with a float witness.  No recursion and no
exact-witness providers: those stay in :mod:`._sweep`.

A level's precomputation (float copies, the basis of ``K``, error factors) is
done once by :func:`prepare_level` and passed around as a :class:`SweepLevel`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Iterator, NamedTuple

import numpy as np

from relu_gating._inputs.scaling import pow2_norms
from relu_gating.patterns._exact import U, IntMatrix, across, cross_int, cross_stack_T, det_int, err_factor, kernel_basis_int, rank_int, skinny_matmul
from relu_gating.patterns._subsets import decide

__all__ = ["NonGeneric", "SweepLevel", "Rays", "RowSigns", "LocalRay", "prepare_level", "batch_rays", "row_signs",
           "simple_chambers", "certified_simple", "nonsimple_rays", "dot", "sgn"]


#: Rays per sub-block of :func:`row_signs` (its B x q arrays stay in cache).
_SUB = 512


class NonGeneric(Exception):
    """This level's random functionals c, g were not generic: redraw them."""


def dot(a, b) -> int:
    return sum(x * y for x, y in zip(a, b))


def sgn(x) -> int:
    return (x > 0) - (x < 0)


@dataclass(frozen=True, eq=False)
class SweepLevel:
    """What one level of the sweep computes once for all its batches of rays.

    ``rows`` are q pairwise non-parallel int rows spanning ``R^d``, ``M`` their
    float copy (``fT`` its transpose, ``norms`` its row norms); ``c``, ``g`` the
    sweep functionals (``cf`` float ``c``).  ``Q`` is an integer basis of
    ``K = ker c ∩ ker g``, ``AK`` the rows restricted to ``K`` (float copy ``MK``,
    ``MKfT`` its transpose) and ``kappa`` the orientation of ``(Q, c, g)``.  ``amax_*``
    and ``fac*`` are the magnitude bounds and error factors of the filters (``facX``:
    cross products, ``facD``: determinants of order d, ``facY``: cross products on ``K``).
    """

    rows: list
    q: int
    d: int
    t: int  # generators per ray, d - 1
    c: tuple
    g: tuple
    M: IntMatrix
    fT: np.ndarray
    norms: np.ndarray
    cf: np.ndarray
    Q: list
    AK: list
    kappa: int
    MK: IntMatrix
    MKfT: np.ndarray
    amax_all: float
    amax_bound: float
    facD: float
    facX: float
    facY: float

    @cached_property
    def ker_c(self) -> tuple[list, np.ndarray]:
        """Integer basis (rows) of ``ker c`` and its float copy, where the local arrangement
        of a non-simple ray lives; computed on first use (cached in ``__dict__``)."""
        Qc = kernel_basis_int([self.c])
        return Qc, np.array(Qc, dtype=float)


def prepare_level(rows: list, d: int, c: tuple, g: tuple) -> SweepLevel:
    """The precomputation of one level; raises :class:`NonGeneric` if ``c, g`` are not generic on ``K``."""
    M = IntMatrix(rows, d)
    if d > 2:
        Q = kernel_basis_int([c, g])
        AK = [tuple(dot(r, qv) for qv in Q) for r in rows]
        if any(not any(x) for x in AK):
            raise NonGeneric
        kappa = sgn(det_int(list(Q) + [c, g]))
    else:
        Q, AK = [], [() for _ in rows]
        kappa = sgn(det_int([c, g]))
    if kappa == 0:
        raise NonGeneric
    MK = IntMatrix(AK, d - 2)
    t = d - 1
    amax_all = float(M.amax.max(initial=0.0))
    return SweepLevel(
        rows=rows, q=len(rows), d=d, t=t, c=c, g=g, M=M, fT=np.ascontiguousarray(M.f.T), norms=pow2_norms(M.f, axis=1),
        cf=np.array(c, dtype=float), Q=Q, AK=AK, kappa=kappa, MK=MK, MKfT=np.ascontiguousarray(MK.f.T),
        amax_all=amax_all, amax_bound=max(amax_all, 2.0) * (1 + 2.0 ** -40),
        facD=err_factor(t, M.rel), facX=err_factor(t - 1, M.rel) if t > 1 else 4 * M.rel + 4 * 2.0 ** -53,
        facY=err_factor(max(d - 3, 0), MK.rel))


class Rays(NamedTuple):
    """A batch of rays: independent generator subsets ``S`` (B, t), the rays ``X`` (B, d)
    with magnitude bounds ``PX`` (B, d) and ``sP`` (B,), orientations ``sc = sign(c . X)``."""

    S: np.ndarray
    X: np.ndarray
    PX: np.ndarray
    sP: np.ndarray
    sc: np.ndarray


class RowSigns(NamedTuple):
    """Signs of every row on the rays of a batch.

    ``P`` (B, q) bool: ``a_j . X > 0`` (False on the zero set); ``rowmin`` (B,):
    ``min |a_j . X|`` off the generators (float); ``simple`` (B,) bool: only the
    generators vanish; ``dirty``: the rays whose signs needed a closer look, with
    their exact signs ``Ds`` (int8) and float values ``Dd = X @ fT`` (None if none).
    """

    P: np.ndarray
    rowmin: np.ndarray
    simple: np.ndarray
    dirty: np.ndarray
    Ds: np.ndarray | None
    Dd: np.ndarray | None


class LocalRay(NamedTuple):
    """A non-simple ray, counted at its basis ``S`` of its zero set ``Z``: orientation
    ``sc``, exact row signs ``signs`` (0 on ``Z``), float ray ``X``, ``D = a_j . X``."""

    Z: np.ndarray
    S: np.ndarray
    sc: int
    signs: np.ndarray
    X: np.ndarray
    D: np.ndarray


# --------------------------------------------------------------------------- rays of a batch
def batch_rays(lv: SweepLevel, S: np.ndarray) -> Rays | None:
    """The rays of the independent subsets in ``S`` (None if there is none), oriented."""
    X, PX = cross_stack_T(lv.fT[:, S.T])
    sP = across(np.add, PX)
    indep = _independent(lv, S, X, PX)
    if not indep.all():
        S, X, PX, sP = S[indep], X[indep], PX[indep], sP[indep]
        if S.shape[0] == 0:
            return None
    _recompute_weak(lv, S, X, PX, sP)
    return Rays(S, X, PX, sP, _orientation(lv, S, X, PX))


def _independent(lv: SweepLevel, S: np.ndarray, X: np.ndarray, PX: np.ndarray) -> np.ndarray:
    """Mask of the subsets with independent rows (``X != 0``), exactly."""
    sure = decide(X, PX, lv.facX, lv.M.exact_int)
    indep = across(np.logical_or, sure & (X != 0))
    unsure = ~indep & ~across(np.logical_and, sure)
    for b in np.flatnonzero(unsure):
        if any(cross_int([lv.rows[j] for j in S[b]])):
            indep[b] = True
    return indep


def _recompute_weak(lv: SweepLevel, S: np.ndarray, X: np.ndarray, PX: np.ndarray, sP: np.ndarray) -> None:
    """Rays whose float cross product is inaccurate: recomputed exactly, rounded once (in place)."""
    pmax = across(np.maximum, PX)
    weak = across(np.maximum, np.abs(X)) <= 1e6 * lv.facX * pmax
    if lv.M.exact_int:
        weak &= pmax >= 2.0 ** 51
    for b in np.flatnonzero(weak):
        Xi = cross_int([lv.rows[j] for j in S[b]])
        s = max(abs(x).bit_length() for x in Xi)
        X[b] = [x / 2 ** s for x in Xi]
        PX[b] = np.abs(X[b])
        sP[b] = PX[b].sum()


def _orientation(lv: SweepLevel, S: np.ndarray, X: np.ndarray, PX: np.ndarray) -> np.ndarray:
    """``sign(c . X)`` of every ray, exactly; raises :class:`NonGeneric` if one is 0."""
    cX = X @ lv.cf
    cmag = PX @ np.abs(lv.cf)
    sc = np.sign(cX).astype(np.int64)
    und = ~decide(cX, cmag, lv.facD, False)
    for b in np.flatnonzero(und):
        sc[b] = sgn(det_int([lv.c] + [lv.rows[j] for j in S[b]]))
    if np.any(sc == 0):
        raise NonGeneric
    return sc


# --------------------------------------------------------------------------- signs of the rows
def row_signs(lv: SweepLevel, rays: Rays) -> RowSigns:
    """Signs of every row on every ray: ``D[b, j] = det([a_j; a_S]) = a_j . X``."""
    S, sP = rays.S, rays.sP
    B = S.shape[0]
    Pall = np.empty((B, lv.q), dtype=bool)
    rowmin = np.full(B, np.inf)
    for s in range(0, B, _SUB):  # sub-blocks that stay in cache: 2x faster than one pass (q = 200)
        A = skinny_matmul(rays.X[s:s + _SUB], lv.fT)
        np.greater(A, 0, out=Pall[s:s + _SUB])
        np.abs(A, out=A)  # D is recomputed below for the few rows that need signs
        A[np.arange(A.shape[0])[:, None], S[s:s + _SUB]] = np.inf
        if lv.q > lv.t:
            np.min(A, axis=1, out=rowmin[s:s + _SUB])
    # a row is clean when every non-generator sign is certain and nonzero
    # (the bound fac * sP * amax_j is at most fac * sP * amax_bound)
    clean = rowmin > lv.amax_bound * lv.facD * sP
    if lv.M.exact_int:
        clean |= (sP * lv.amax_all < 2.0 ** 51) & (rowmin > 0)
    simple = clean.copy()
    dirty = np.flatnonzero(~clean)
    Ds = Dd = None
    if dirty.size:
        Ds, Dd = _exact_row_signs(lv, S[dirty], rays.X[dirty], sP[dirty])
        simple[dirty] = np.count_nonzero(Ds == 0, axis=1) == lv.t
        Pall[dirty] = Ds > 0
    return RowSigns(Pall, rowmin, simple, dirty, Ds, Dd)


def _exact_row_signs(lv: SweepLevel, Sd: np.ndarray, Xd: np.ndarray, sPd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact signs ``Ds`` (int8, 0 on the generators) and float values ``Dd`` of the rows on rays ``Xd``."""
    Dd = Xd @ lv.fT
    Ds = np.sign(Dd).astype(np.int8)
    dec = decide(Dd, sPd[:, None] * lv.M.amax[None, :], lv.facD, lv.M.exact_int)
    rd = np.arange(Sd.shape[0])[:, None]
    dec[rd, Sd] = True
    Ds[rd, Sd] = 0
    cache: dict = {}
    for bb, j in zip(*np.nonzero(~dec)):
        Xi = cache.get(bb)
        if Xi is None:
            Xi = cache[bb] = cross_int([lv.rows[k] for k in Sd[bb]])
        Ds[bb, j] = sgn(dot(lv.rows[j], Xi))
    return Ds, Dd


# --------------------------------------------------------------------------- simple rays
def simple_chambers(lv: SweepLevel, rays: Rays, signs: RowSigns):
    """The chamber of each simple ray: ``(P, W, Ss, scs, sure)`` (None if no ray is simple).

    ``P`` (bool) and float witnesses ``W`` of the chambers, generators ``Ss`` and
    orientations ``scs`` of their rays, ``sure``: the witnesses :func:`certified_simple`
    proves (the others still need a check).  May reuse ``signs.P`` as ``P``.
    """
    si = np.flatnonzero(signs.simple)
    if not si.size:
        return None
    Ss, scs = rays.S[si], rays.sc[si]
    Ysg = _generator_signs(lv, Ss)
    if si.size == rays.S.shape[0]:
        P = signs.P
        P ^= (scs < 0)[:, None]
    else:
        P = signs.P[si] ^ (scs < 0)[:, None]
    gen = (scs[:, None] * lv.kappa * Ysg) > 0
    P[np.arange(si.size)[:, None], Ss] = gen
    W, vh, xn, As = _simple_witnesses(lv, rays, signs.rowmin, si, gen)
    return P, W, Ss, scs, certified_simple(lv, rays, signs, si, gen, W, vh, xn, As)


def certified_simple(lv: SweepLevel, rays: Rays, signs: RowSigns, si: np.ndarray, gen: np.ndarray,
                     W: np.ndarray, vh: np.ndarray, xn: np.ndarray, As: np.ndarray) -> np.ndarray:
    """Bool (len(si),): witness ``W[k]`` provably realizes its chamber's signs on every row.

    With ``a_j`` the exact row (its float copy ``M.f`` has relative error ``rel``),
    ``X`` the float ray, ``y = sc X / xn`` (``xn`` the float norm) and ``rho`` a bound
    on ``||W - y||`` (from the computed ``W - vh``, ``vh = fl(sc X / xn)``; ``As``: the
    generator rows' float copies, (B, t, d))::

        a_j . W = sc (a_j . X) / xn + a_j . (W - y),   |a_j . (W - y)| <= ||a_j|| rho.

    Off the generators, ``|D_j - a_j . X| <= E = facD amax sP`` (the bound of
    :func:`row_signs`; ``facD`` dominates the dot product's and the copy's errors), so
    ``rowmin > E + xn sqrt(d) amax (1 + rel) rho`` proves ``sign(a_j . W) = sign(sc D_j)``,
    the chamber's bit, on every such row at once.  The t generator rows are evaluated
    directly: ``|fl(a_i . W) - a_i . W| <= 1.1 ((d + 2) u + 2 rel) sum_k |f_ik W_k|``.
    Only clean rays qualify (``need`` exceeds the clean threshold of :func:`row_signs`, so a
    dirty ray never passes); the rest go to the direct check.
    """
    if not np.isfinite(lv.M.rel) or not si.size:
        return np.zeros(si.size, dtype=bool)
    d, slack = lv.d, 1 + 2.0 ** -30
    rho = _row_norms(W - vh) * (1 + 2.0 ** -40) + 3 * U  # ||vh - y|| <= 1.01 u
    amax = lv.amax_bound * (1 + lv.M.rel)
    need = (lv.facD * lv.amax_bound * rays.sP[si] + xn * np.sqrt(d) * amax * rho) * slack
    ok = across(np.logical_and, np.isfinite(W)) & (signs.rowmin[si] > need)
    G = np.einsum("btd,bd->bt", As, W)
    bound = 1.1 * ((d + 2) * U + 2 * lv.M.rel) * np.einsum("btd,bd->bt", np.abs(As), np.abs(W)) * slack
    ok &= across(np.logical_and, (np.abs(G) > bound) & ((G > 0) == gen))
    return ok


def _generator_signs(lv: SweepLevel, Ss: np.ndarray) -> np.ndarray:
    """``sign(Y_k)``, ``Y`` the cross product of the generators restricted to ``K``, exactly (nonzero)."""
    Y, PY = cross_stack_T(np.transpose(lv.MKfT[:, Ss.T], (1, 0, 2)))
    Ysg = np.sign(Y).astype(np.int64)
    for b, k in zip(*np.nonzero(~decide(Y, PY, lv.facY, lv.MK.exact_int))):
        sub = [lv.AK[j] for kk, j in enumerate(Ss[b]) if kk != k]
        v = det_int(sub)
        Ysg[b, k] = sgn(v if k % 2 == 0 else -v)
    if np.any(Ysg == 0):
        raise NonGeneric
    return Ysg


def _row_norms(A: np.ndarray) -> np.ndarray:
    """Euclidean norms of the rows (relative error at most (d + 2) u, like ``np.linalg.norm``; each row
    scaled by a power of two first, so no square overflows)."""
    return pow2_norms(A, axis=1)


def _simple_witnesses(lv: SweepLevel, rays: Rays, rowmin: np.ndarray, si: np.ndarray, gen: np.ndarray) -> tuple:
    """Witness of the chamber of each simple ray ``si`` (generator signs ``gen``): the top of
    the ray plus a small step into the chamber.  Returns ``(W, vh, xn, As)``: the witnesses,
    the unit rays ``fl(sc X / xn)``, the float norms ``xn`` and the generator rows (B, t, d)."""
    Ss, scs, fT = rays.S[si], rays.sc[si], lv.fT
    Xs = rays.X[si] * scs[:, None]
    xn = pow2_norms(Xs, axis=1)
    vh = Xs / xn[:, None]
    As = lv.M.f[Ss]
    u = _generator_steps(As, np.where(gen, 1.0, -1.0), vh)
    rmin = rowmin[si] / (lv.amax_bound * np.sqrt(lv.d) * xn)  # <= min_j |a_j . vh| / ||a_j||
    un = _row_norms(u)
    eps = np.minimum(0.5 * rmin / np.where(un > 0, un, 1.0), 1.0)  # un = 0: no step (_solve_rows)
    hard = np.flatnonzero(eps < 1e-6)
    if hard.size:  # thin chambers: only rows the step moves towards their wall limit it
        Au = skinny_matmul(u[hard], fT)
        Av = (rays.X[si[hard]] @ fT) * scs[hard, None] / xn[hard, None]
        lim = np.where(Au * Av < 0, np.abs(Av) / np.maximum(np.abs(Au), 1e-300), np.inf)
        lim[np.arange(hard.size)[:, None], Ss[hard]] = np.inf
        eps[hard] = np.minimum(0.5 * lim.min(axis=1), 1.0 / un[hard])
    return vh + eps[:, None] * u, vh, xn, As


def _generator_steps(As: np.ndarray, sg: np.ndarray, vh: np.ndarray) -> np.ndarray:
    """Steps ``u`` (B, d) with ``a_S u = sg`` (B, t) and ``u`` orthogonal to the ray ``vh``.

    ``vh`` is orthogonal to the generators, so the minimum-norm solution
    ``u = a_S^T (a_S a_S^T)^{-1} sg`` is the one; its t x t Gram systems are solved
    by a Cholesky factorization vectorised over the batch (one numpy operation per
    entry, not one LAPACK call per ray).  Where a pivot falls below ``1e-10`` of its
    diagonal entry (nearly parallel generators) the LU solve of ``[a_S; vh]`` is used.
    Only the signs ``a_S u`` matter downstream (the step length is chosen from the
    actual values), so the Gram system's squared condition number is harmless.
    """
    t, B = As.shape[1], As.shape[0]
    AT = np.ascontiguousarray(As.transpose(1, 2, 0))  # (t, d, B): one contiguous row per entry
    zero = np.zeros(B)
    G = {(i, j): np.einsum("db,db->b", AT[i], AT[j]) for i in range(t) for j in range(i + 1)}
    L: dict[tuple[int, int], np.ndarray] = {}
    ok = np.ones(B, dtype=bool)
    for j in range(t):
        dj = G[j, j] - sum((L[j, k] * L[j, k] for k in range(j)), zero)
        ok &= dj > 1e-10 * G[j, j]
        L[j, j] = np.sqrt(np.where(ok, dj, 1.0))
        for i in range(j + 1, t):
            L[i, j] = (G[i, j] - sum((L[i, k] * L[j, k] for k in range(j)), zero)) / L[j, j]
    w: list[np.ndarray] = []
    for i in range(t):  # L y = sg, then L^T w = y
        w.append((sg[:, i] - sum((L[i, j] * w[j] for j in range(i)), zero)) / L[i, i])
    for i in range(t - 1, -1, -1):
        w[i] = (w[i] - sum((L[j, i] * w[j] for j in range(i + 1, t)), zero)) / L[i, i]
    u = sum((AT[i] * w[i] for i in range(t)), np.zeros(AT.shape[1:])).T
    bad = np.flatnonzero(~ok)
    if bad.size:
        Mat = np.concatenate([As[bad], vh[bad, None, :]], axis=1)
        u[bad] = _solve_rows(Mat, np.concatenate([sg[bad], np.zeros((bad.size, 1))], axis=1))
    top = np.abs(u).max(axis=1)
    big = np.flatnonzero(top > 2.0**500)  # generators within 2^-500 of parallel: the step's direction kept,
    if big.size:  # its largest entry brought into [0.5, 1) (only the signs of a_S u matter)
        with np.errstate(under="ignore"):
            u[big] = np.ldexp(u[big], -np.frexp(top[big])[1][:, None])
    return u


def _solve_rows(Mat: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Batched solve; rows singular in float64 (nearly parallel normals) use least squares.  A solution
    beyond the float range (normals within ``2^-1000`` of parallel, a subnormal pivot) is 0: no step, the
    ray itself, which the direct check refuses and repairs (it was ``inf``, and the witness nan)."""
    x = _solve(Mat, rhs)
    x[~np.all(np.isfinite(x), axis=1)] = 0.0
    return x


def _solve(Mat: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(Mat, rhs[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        return np.stack([np.linalg.lstsq(A, b, rcond=None)[0] for A, b in zip(Mat, rhs)])


# --------------------------------------------------------------------------- non-simple rays
def nonsimple_rays(lv: SweepLevel, rays: Rays, signs: RowSigns) -> Iterator[LocalRay]:
    """The non-simple rays of the batch, each once: at the lexicographically first basis of its flat."""
    Ds, Dd, dirty, t = signs.Ds, signs.Dd, signs.dirty, lv.t
    if Ds is None or Dd is None:  # no dirty ray
        return
    for bb in np.flatnonzero(~signs.simple[dirty]):
        b = dirty[bb]
        Z = np.flatnonzero(Ds[bb] == 0)
        Sb = rays.S[b]
        if Sb[0] != Z[0] or (t >= 2 and Sb[1] != Z[1]):
            continue
        if t >= 3 and not _is_greedy_basis(lv.rows, Z, Sb, t):
            continue
        yield LocalRay(Z, Sb, int(rays.sc[b]), Ds[bb], rays.X[b], Dd[bb])


def _is_greedy_basis(rows: list, Z: np.ndarray, S: np.ndarray, t: int) -> bool:
    basis: list = []
    for j in Z.tolist():
        cand = [rows[k] for k in basis] + [rows[j]]
        if rank_int(cand)[0] == len(cand):
            basis.append(j)
            if len(basis) == t:
                break
    return basis == S.tolist()
