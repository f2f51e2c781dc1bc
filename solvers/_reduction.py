"""Reduction of a polyhedral cone ``{x : G x >= 0}``: implicit equalities,
a relative interior point, the lineality space and the facet rows; and the
polishing of a nearly feasible point into an exactly feasible one."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solvers._norms import norm2

from solvers._exact import fr_matrix, nonneg, nullspace
from solvers._linalg import null_space
from solvers._lp import solve_lp
from solvers.errors import BackendError, LPNumericsError

__all__ = ["ConeReduction", "reduce_cone", "polish", "implicit_equalities", "THIN_MARGIN"]

#: Rows whose norm is below this fraction of the largest are treated as zero rows.
ZERO_ROW_RTOL = 1e-14
#: A cone whose best interior point has relative margin ``min_i Gn_i x / |x|`` below this is
#: thin: LP tolerances (1e-9) and the face-lattice tolerances cannot resolve it.
THIN_MARGIN = 1e-7
#: Ray/facet incidences ``|H_i r|`` strictly between these are ambiguous (float64 cannot decide).
INCIDENCE_BAND = (1e-12, 1e-7)
#: Relative singular values of the unit rows in this band: the cone nearly contains a line.
LINEALITY_BAND = (1e-10, 1e-7)
#: Above this many rows (cone dimension >= 3) qhull runs on a prefiltered subset of the rows.
PREFILTER_MIN_ROWS = 48
#: ... and at most this cone dimension: above it the rounds cost more than they save
#: (``benchmarks/facets.py``: 1.5-4.6x faster on chamber cones at k = 3..5, 0.6x at k = 9).
PREFILTER_MAX_DIM = 6
#: The prefilter starts with this many rows per dimension, plus 8 (the tightest at the interior point).
PREFILTER_START = 4
#: The prefilter gives up (all rows go to qhull) after this many rounds.
PREFILTER_ROUNDS = 6
#: The prefilter trusts rays whose defining unit rows have all singular values above this
#: (a ray's error is about ``eps`` over it: far below ``INCIDENCE_BAND[1]``).
PREFILTER_SVMIN = 1e-6
_EPS = float(np.finfo(float).eps)


@dataclass(frozen=True)
class ConeReduction:
    """A cone ``C = {x : G x >= 0}`` brought to a canonical form.

    Attributes
    ----------
    Gn : ndarray, shape (q, m)
        The nonzero rows of ``G``, scaled to unit norm.
    rows : ndarray of int, shape (q,)
        Their indices in ``G``.
    eq : ndarray of bool, shape (q,)
        Implicit equalities (rows vanishing on all of ``C``).
    Q : ndarray, shape (m, d)
        Orthonormal basis of ``span(C) = null(Gn[eq])``.
    x_int : ndarray, shape (m,)
        Relative interior point, ``Gn[~eq] @ x_int >= margin > 0``, ``||x_int|| = 1``.
    margin : float
    lineality : ndarray, shape (m, l)
        Orthonormal basis of the lineality space ``C cap -C``.
    facets : ndarray of int
        Indices into ``Gn`` of one row per facet of ``C``.
    H : ndarray, shape (f, d)
        Facet rows in the coordinates of ``Q``, unit norm.
    rays : ndarray, shape (r, m) or None
        Extreme rays of the pointed part (``C = cone(rays) + lineality``),
        unit norm; None when qhull was not usable.
    incidence : ndarray of bool, shape (r, f) or None
        ``incidence[a, i]``: facet row ``i`` vanishes on ray ``a``.
    fragile : str
        Why float64 cannot be trusted on this cone (empty if it can): implicit
        equalities found by an LP (not certified), a margin below
        THIN_MARGIN, a lineality space that is nearly there or not exact, or
        ambiguous ray-facet incidences.
    """

    Gn: np.ndarray
    rows: np.ndarray
    eq: np.ndarray
    Q: np.ndarray
    x_int: np.ndarray
    margin: float
    lineality: np.ndarray
    facets: np.ndarray
    H: np.ndarray
    rays: np.ndarray | None = None
    incidence: np.ndarray | None = None
    lps: int = 0
    notes: tuple[str, ...] = field(default=())
    fragile: str = ""

    @property
    def dim(self) -> int:
        return self.Q.shape[1]


def _normalize(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    nrm = norm2(G, axis=1)
    big = nrm.max() if nrm.size else 0.0
    keep = np.flatnonzero(nrm > ZERO_ROW_RTOL * max(big, 1e-300))
    return G[keep] / nrm[keep, None], keep


def _rel_margin(Gn: np.ndarray, x: np.ndarray | None) -> float:
    """``min_i Gn_i x / |x|`` (``-inf`` for a zero or non-finite ``x``)."""
    if x is None or not np.all(np.isfinite(x)):
        return -np.inf
    n = float(norm2(x))
    return float((Gn @ x).min()) / n if n > 0 else -np.inf


def implicit_equalities(Gn: np.ndarray, hint: np.ndarray | None = None
                        ) -> tuple[np.ndarray, np.ndarray, int, tuple[str, ...]]:
    """Implicit equalities and a relative interior point of ``{x : Gn x >= 0}``.

    Cheap tries first (``hint``, least squares for ``Gn x = 1``, a max-margin
    LP over a growing subset of rows); if the cone has no interior point, one
    LP: maximize ``sum(s)`` s.t. ``Gn x >= s``, ``0 <= s <= 1``.  Its
    optimum has ``s_i = 1`` exactly on the rows that are not implicit
    equalities (sum the points that make each such row positive).

    Returns ``(eq, x, lps, failures)``.
    """
    q, m = Gn.shape
    if q == 0:
        return np.zeros(0, dtype=bool), np.zeros(m), 0, ()
    # Cheap tries first: least squares for Gn x = 1, then the hint; either is kept only
    # with a relative margin of at least THIN_MARGIN (a thin cone gets the LPs).
    x = np.linalg.lstsq(Gn, np.ones(q), rcond=None)[0]
    if _rel_margin(Gn, x) >= THIN_MARGIN:
        return np.zeros(q, dtype=bool), x, 0, ()
    if hint is not None and _rel_margin(Gn, hint) >= THIN_MARGIN:
        return np.zeros(q, dtype=bool), hint, 0, ()
    # Max-margin LP (m + 1 columns) with row generation: start from the rows
    # least satisfied by the least-squares point, add violated rows until the
    # point is strictly inside every row.  Settles the full-dimensional case.
    active = np.argsort(Gn @ x)[:min(q, 4 * m + 8)]
    lps = 0
    fails: tuple[str, ...] = ()
    for _ in range(20):
        Ga = Gn[active]
        sol = solve_lp(np.r_[np.zeros(m), -1.0], np.hstack([Ga, -np.ones((len(active), 1))]),
                       np.zeros(len(active)), np.full(len(active), np.inf),
                       np.r_[-np.ones(m), -np.inf], np.r_[np.ones(m), 1.0])
        lps += 1
        fails += sol.failures
        if sol.status != "optimal" or sol.x[m] <= 1e-7:
            break
        v = Gn @ sol.x[:m]
        if np.all(v > 0):
            return np.zeros(q, dtype=bool), sol.x[:m], lps, fails
        bad = np.flatnonzero(v <= 0)
        active = np.union1d(active, bad[np.argsort(v[bad])][:4 * m + 8])
    from scipy import sparse

    A = sparse.hstack([sparse.csr_matrix(Gn), -sparse.identity(q, format="csr")]).tocsr()
    c = np.r_[np.zeros(m), -np.ones(q)]
    sol = solve_lp(c, A, np.zeros(q), np.full(q, np.inf),
                   np.r_[np.full(m, -np.inf), np.zeros(q)], np.r_[np.full(m, np.inf), np.ones(q)])
    if sol.status in ("unbounded", "infeasible"):  # bounded and feasible (x = 0, s = 0): numerics
        raise LPNumericsError(f"interior point LP returned {sol.status!r}")
    if sol.status != "optimal":
        raise BackendError("interior point LP failed: " + "; ".join(sol.failures or (sol.status,)))
    x = sol.x[:m]
    eq = sol.x[m:] < 0.5
    return eq, x, lps + 1, fails + sol.failures


def _first_rows(w: np.ndarray) -> np.ndarray:
    """Sorted indices of the first of each group of equal rows of ``round(w, 11)``: the same
    as ``np.unique(np.round(w, 11), axis=0, return_index=True)[1]`` (rows compared by their
    bytes), by one ``lexsort`` of the bit patterns instead of a sort of row records."""
    r = np.ascontiguousarray(np.round(w, 11))
    if r.shape[0] < 2:
        return np.arange(r.shape[0])
    b = r.view(np.uint64)  # equal bit patterns <=> equal bytes
    order = np.lexsort(b.T[::-1])  # stable: a group's first entry has its smallest index
    s = b[order]
    return np.sort(order[np.r_[True, np.any(s[1:] != s[:-1], axis=1)]])


def _svmin(H: np.ndarray) -> float:
    """Smallest singular value of the rows of ``H`` scaled to unit norm."""
    return float(np.linalg.svd(H / norm2(H, axis=1)[:, None], compute_uv=False)[-1])


def _hull_facets(Hp: np.ndarray, z0: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """:func:`_facets_qhull` on all rows, plus the smallest singular value of the unit rows
    defining a ray (``inf`` when no ray comes from qhull): their accuracy is ``~eps / that``."""
    q, k = Hp.shape
    w = Hp / (Hp @ z0)[:, None]
    # duplicates (positively parallel rows) give the same point: keep the first
    first = _first_rows(w)
    if k == 1:
        return first[:1], (z0 / norm2(z0))[None, :], np.inf
    if first.size <= k:
        return first, np.linalg.inv(Hp[first]).T, _svmin(Hp[first])
    basis = null_space(z0[None, :])  # (k, k-1) coordinates on the cutting hyperplane
    pts = w[first] @ basis
    if k == 2:
        t = pts[:, 0]
        fac = first[[int(np.argmin(t)), int(np.argmax(t))]]
        return fac, np.linalg.inv(Hp[fac]).T, np.inf
    from scipy.spatial import ConvexHull

    hull = ConvexHull(pts)
    fac = np.sort(first[hull.vertices])
    # each simplex spans a hyperplane r^T w = 0: r from the unit rows (not from w, whose rows
    # grow like 1 / margin of z0 and lose the ray's accuracy with it)
    Hf = Hp[first]
    simp = (Hf / norm2(Hf, axis=1)[:, None])[hull.simplices]  # (s, k-1, k)
    _, sv, Vt = np.linalg.svd(simp, full_matrices=True)
    rays = Vt[:, -1, :]
    rays = rays * np.where((rays @ Hp.T).sum(axis=1) < 0, -1.0, 1.0)[:, None]
    _, uniq = np.unique(np.round(rays, 9), axis=0, return_index=True)
    return fac, rays[np.sort(uniq)], float(sv[:, -1].min())


def _prefiltered(Hp: np.ndarray, z0: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_hull_facets` on a subset ``S`` of the rows that gives the same facets, or None.

    ``S`` starts with the rows tightest at ``z0`` and grows by every row that is not clearly
    redundant for ``C_S = {z : Hp_S z >= 0}``: a unit row ``h`` is left out only when
    ``h . r >= INCIDENCE_BAND[1]`` on every unit extreme ray ``r`` of ``C_S``.  Then every
    row is positive on ``C_S``, so ``C_S = C``; the rows left out lie strictly inside the
    dual cone (qhull's input on all rows would not have them as vertices), and every row
    near a facet row (a duplicate, a near-parallel row) or through a ray is in ``S``, so the
    facet rows (first of their duplicates) are those of all rows.  None (use all rows) when
    qhull fails on ``S``, the rays are not accurate to far below the margin, or ``S`` keeps
    growing.
    """
    q, k = Hp.shape
    Hn = Hp / norm2(Hp, axis=1)[:, None]
    c = min(q - 1, PREFILTER_START * k + 8)
    S = np.sort(np.argpartition(Hn @ z0, c)[:c])
    for _ in range(PREFILTER_ROUNDS):
        try:
            loc, rays, svmin = _hull_facets(Hp[S], z0)
        except Exception:  # noqa: BLE001 - qhull precision errors: all rows decide
            return None
        nr = norm2(rays, axis=1)
        if not (svmin > PREFILTER_SVMIN and np.all(np.isfinite(rays)) and np.all(nr > 0)):
            return None
        low = (Hn @ (rays / nr[:, None]).T).min(axis=1)
        out = low < INCIDENCE_BAND[1]
        out[S] = False
        if not out.any():
            return S[loc], rays
        S = np.union1d(S, np.flatnonzero(out))
        if 2 * S.size > q:
            return None
    return None


def _facets_qhull(Hp: np.ndarray, z0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Facet rows and extreme rays of the pointed full-dimensional cone ``{z : Hp z >= 0}``.

    The facets are the extreme rays of the dual cone ``cone(Hp rows)``; cut it
    with the hyperplane ``w . z0 = 1`` and take the convex hull's vertices.
    Each hull facet is an extreme ray of the cone: the normal of the rows
    spanning it.  Returns ``(facet_row_indices, rays)`` with rays (r, k).
    Many rows (``> PREFILTER_MIN_ROWS``, ``3 <= k <= PREFILTER_MAX_DIM``): qhull on a subset that
    provably has the same facets (:func:`_prefiltered`) when there is one.
    """
    q, k = Hp.shape
    if 3 <= k <= PREFILTER_MAX_DIM and q > PREFILTER_MIN_ROWS:
        out = _prefiltered(Hp, z0)
        if out is not None:
            return out
    return _hull_facets(Hp, z0)[:2]


def _facets_lp(Hp: np.ndarray) -> tuple[np.ndarray, int]:
    """Facet rows by one LP per row: row i is redundant iff min h_i z >= 0 over the others."""
    q, k = Hp.shape
    keep = []
    for i in range(q):
        others = np.delete(np.arange(q), i)
        A = np.vstack([Hp[others], Hp[i:i + 1]])
        rl = np.r_[np.zeros(q - 1), -1.0]
        sol = solve_lp(Hp[i], A, rl, np.full(q, np.inf), np.full(k, -np.inf), np.full(k, np.inf))
        if sol.status != "optimal" or sol.objective < -0.5:
            keep.append(i)
    return np.array(keep, dtype=int), q


def _ambiguous_rays(rays: np.ndarray, Hq: np.ndarray) -> str:
    """Why the float face lattice is not trustworthy (empty if it is): an incidence
    ``|H_i r|`` (any row, unit rows and rays) in INCIDENCE_BAND.  Two distinct rays
    closer than ``INCIDENCE_BAND[1]`` show up here too: a row through one of them
    nearly passes through the other."""
    lo, hi = INCIDENCE_BAND
    v = np.abs(rays @ Hq.T)
    if np.any((v > lo) & (v < hi)):
        return "ambiguous ray-facet incidence (a feature of the cone below 1e-7)"
    return ""


def _lineality(Gn: np.ndarray, G: np.ndarray, m: int) -> tuple[np.ndarray, str]:
    """Orthonormal basis of the lineality space ``null(Gn)``, and why it is not trustworthy
    (a singular value of ``Gn`` within LINEALITY_BAND, or a numerical null space that the
    exact rows ``G`` do not have: rounding ``G_i / |G_i|`` can even create one)."""
    if Gn.shape[0] == 0:
        return np.eye(m), ""
    _, sv, Vt = np.linalg.svd(Gn, full_matrices=Gn.shape[0] < m)
    rank = int(np.sum(sv > 1e-10 * max(1.0, float(sv[0]))))  # as null_space
    L = Vt[rank:].T.copy()
    lo, hi = LINEALITY_BAND
    rel = sv / max(float(sv[0]), 1e-300)
    if np.any((rel >= lo) & (rel < hi)):
        return L, "the cone nearly contains a line (a singular value of G below 1e-7)"
    if L.shape[1] and len(nullspace(fr_matrix(G), m)) != L.shape[1]:
        return L, "a numerical lineality space that the exact rows do not have"
    return L, ""


def _fragility(eq: np.ndarray, margin: float, amb: str) -> str:
    """The first reason, if any, why the float reduction cannot be trusted."""
    if eq.any():
        return "implicit equalities found by a float LP (a lower-dimensional or very thin cone)"
    if margin < THIN_MARGIN:
        return f"thin cone (relative margin {margin:.1e} < {THIN_MARGIN:g})"
    return amb


def _facet_data(Gn, idx_ne, P, x_int, m, notes):
    """Facet rows, extreme rays and the number of LPs (qhull, or one LP per row)."""
    Hp = Gn[idx_ne] @ P
    z0 = P.T @ x_int
    try:
        loc, rp = _facets_qhull(Hp, z0)
        rays = rp @ P.T
        rays /= norm2(rays, axis=1)[:, None]
        if not np.all(np.isfinite(rays)) or (Gn[idx_ne] @ rays.T).min() < -1e-9:
            notes.append("extreme rays failed their check: face filter off")
            rays = None
        return idx_ne[loc], rays, 0
    except Exception as exc:  # noqa: BLE001 - qhull precision errors: exact LP fallback
        notes.append(f"qhull failed ({type(exc).__name__}), facets by LP")
        loc, k = _facets_lp(Hp)
        return idx_ne[loc], np.zeros((0, m)), k


def reduce_cone(G: np.ndarray, hint: np.ndarray | None = None) -> ConeReduction:
    """Canonical form of ``{x : G x >= 0}`` (see :class:`ConeReduction`).

    ``hint``: a point believed strictly inside every row (used if it is).
    """
    m = G.shape[1]
    Gn, rows = _normalize(G)
    eq, x, lps, notes = implicit_equalities(Gn, hint)
    Q = null_space(Gn[eq]) if eq.any() else np.eye(m)
    x = Q @ (Q.T @ x)
    nx = norm2(x)
    x_int = x / nx if nx > 0 else x
    ne = ~eq
    margin = float((Gn[ne] @ x_int).min()) if ne.any() else np.inf
    L, lin = _lineality(Gn, G[rows], m)
    # pointed part: span(C) minus the lineality space
    P = Q @ null_space((Q.T @ L).T) if L.shape[1] else Q
    idx_ne = np.flatnonzero(ne)
    notes = list(notes)
    rays = np.zeros((0, m))
    if idx_ne.size == 0 or P.shape[1] == 0:
        fac = np.zeros(0, dtype=int)
    else:
        fac, rays, k = _facet_data(Gn, idx_ne, P, x_int, m, notes)
        lps += k
    H = Gn[fac] @ Q
    hn = norm2(H, axis=1)
    H = H / np.where(hn > 0, hn, 1.0)[:, None]
    inc = None if rays is None else np.abs(rays @ Q @ H.T) <= 1e-9
    amb = lin or ("" if rays is None or eq.any() else _ambiguous_rays(rays, Gn[idx_ne]))
    return ConeReduction(Gn=Gn, rows=rows, eq=eq, Q=Q, x_int=x_int, margin=margin, lineality=L,
                         facets=fac, H=H, rays=rays, incidence=inc, lps=lps, notes=tuple(notes),
                         fragile=_fragility(eq, margin, amb))


def polish(red: ConeReduction, G: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Feasible point near ``x``: ``(G x)_i >= 0`` EXACTLY (for the input rationals) on
    every row that is not an implicit equality (those hold to rounding).

    Projects onto ``span(C)``, then adds the smallest multiple of the
    relative interior point that lifts every row above its float rounding
    bound (so that numpy's sign is certain; the lift is of the order of that
    bound).  ``x`` is normalized to unit length first.
    """
    x = red.Q @ (red.Q.T @ np.asarray(x, dtype=float))
    n = norm2(x)
    if n == 0:
        return x
    x = x / n
    ne = red.rows[~red.eq]
    if ne.size == 0:
        return x
    Gne = G[ne]
    nrm = norm2(Gne, axis=1)
    aG = np.abs(Gne)
    lift = Gne @ red.x_int  # > 0
    for _ in range(60):
        v = Gne @ x
        err = (G.shape[1] + 2) * _EPS * (aG @ np.abs(x))
        bad = v < err
        if not bad.any():
            return x
        t = float(np.max((err[bad] - v[bad]) / lift[bad]))
        t = max(t * 1.0001, 1e-16 * float(np.max(nrm[bad] / lift[bad])))
        x = x + t * red.x_int
    for t in (0.0, 1e-8, 1e-6, 1e-4):  # not reached in practice: check exactly, lift further
        if nonneg(Gne, x + t * red.x_int):
            return x + t * red.x_int
    return x
