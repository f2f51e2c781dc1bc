r"""A fast, checkable dual certificate for an upper bound on a cone-constrained
generalized Rayleigh quotient: the dual of the doubly nonnegative (DNN)
relaxation, solved with the ``clarabel`` Python API directly (no cvxpy).

For every symmetric, elementwise nonnegative ``N`` (``p x p``) and every
``x`` in the cone ``{x : G x >= 0}``, ``(G x)^T N (G x) >= 0``.  Hence

.. math::

    u B - A - G^T N G \succeq 0 \quad\Longrightarrow\quad
    x^T A x \le u\, x^T B x \ \text{ for all } x \text{ with } G x \ge 0,

and :func:`cone_dual` solves

.. math::

    \min_{u, N}\ u \quad\text{s.t.}\quad u B - A - G^T N G \succeq 0,\
    N = N^T \ge 0 \text{ (elementwise)}.

The reported bound is recomputed from the clipped, symmetrized ``N``
(never the SDP objective) by :func:`certified_upper`: the smallest ``u``
with ``u B - A - G^T N G`` positive semidefinite, i.e. the top generalized
eigenvalue of ``(A + G^T N G, B)`` on ``range(B)``, the ``ker B`` block
entering through a Schur complement, plus a rounding allowance.  The SDP's
accuracy therefore affects only tightness.

Singular ``B``.  Assumption (checked exactly; status ``"kernel"`` and
``upper = +inf`` if it fails): ``ker B`` (as many exact null vectors as
eigenvalues below ``RANK_RTOL``) lies in ``ker A``, true when
``0 <= A <= c B`` (the gating use).  On ``ker B`` the certificate reads
``(G z)^T N (G z) <= 0``, and ``u B - A - G^T N G`` must vanish on every
``z`` in ``ker B`` with ``G z >= 0``.  For facet rows of a full-dimensional
cone this forces ``N`` to be zero on every row that is positive somewhere on
``ker B cap C`` (repeatedly, as dropping rows enlarges that cone); those rows
are found by LPs and left out, and the SDP keeps the rest of the ``ker B``
block of the slack definite by a margin (``KERNEL_MARGINS``), so that the
bound is a Schur complement that can be evaluated in floating point.  When
the optimum lies on that boundary, the rounding allowance of the Schur
complement grows as the margin shrinks, and the bound is looser than the SDP
value by up to about 3e-7 (relative).  If the SDP fails, ``N`` is
restricted to the rows blind to ``ker B``.

Numerical meaning of singular: eigenvalues of ``B`` below
``RANK_RTOL * lambda_max(B)`` are zero, and ``A``, ``G^T N G`` on the part
of ``ker B`` that ``supp(N)`` does not see are taken to be zero.  At points
lying mostly in ``ker B``, the rounding of the data itself moves the quotient
by more than the allowance (by ``eps (|x|^T |A| |x| + q |x|^T |B| |x|) / x^T B x``):
the bound is for the singular problem, not for its rounded float copy.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from solvers._norms import norm2
import scipy.sparse as sp

from solvers._reduction import implicit_equalities
from solvers._linalg import RANK_RTOL
from solvers.errors import BackendError

__all__ = ["ConeDual", "certified_upper", "cone_dual"]

#: Clarabel's gap and feasibility tolerances for the SDP (scaled problem, value ~ 1): tight, since the
#: bound recomputed from N is claimed against exact values at a 1e-9 certification tolerance.
SDP_TOL = 1e-12
#: Clarabel iteration cap (the tiny SDPs converge in 10-25 iterations).
SDP_MAX_ITER = 100
#: Relative rounding allowance added to the recomputed bound, times ``max(|value|, max|A| / max|B|)``.
UPPER_ALLOWANCE = 1e-12
#: Unit rounding of the products in :func:`certified_upper`, amplified there by the Schur complement.
ROUNDING_EPS = 4 * float(np.finfo(float).eps)
#: ``ker B`` counts as inside ``ker A`` when ``max |A Z| <= KERNEL_RTOL * max |A|`` (``Z``: orthonormal ``ker B``).
KERNEL_RTOL = 1e-8
#: Row ``g`` sees ``ker B`` when ``||Z^T g|| > SEEN_RTOL * ||g||``; singular values of such rows below it are zero.
SEEN_RTOL = 1e-10
#: Rows of ``G`` (reduced basis) shorter than this fraction of the longest are dropped as zero rows.
ZERO_ROW_RTOL = 1e-12
#: Margins (scaled units: cone-free bound 1, unit rows) keeping the seen ``ker B`` block of the slack
#: definite: all those up to ``KERNEL_MARGIN_MIN_TRIED`` are tried (a margin costs about itself in
#: tightness when the optimum lies on the boundary of ``ker B cap C``; the SDP's accuracy is not
#: monotone in it), the larger ones in turn while the rounding allowance exceeds ``RETRY_RTOL``.
KERNEL_MARGINS = (1e-11, 1e-10, 1e-9, 1e-8, 1e-7)
#: Every kernel margin up to this one is tried; the best certified bound is kept.
KERNEL_MARGIN_MIN_TRIED = 1e-9
#: Relative size of the rounding allowance above which a larger kernel margin is tried.
RETRY_RTOL = 1e-9
#: With ``target``, the SDP is skipped when the cone-free bound is within this relative distance of it.
TARGET_RTOL = 1e-9

_SQRT2 = float(np.sqrt(2.0))
_SDP_USABLE = ("Solved", "AlmostSolved", "MaxIterations", "InsufficientProgress")


@dataclass(frozen=True)
class ConeDual:
    """A dual certificate ``upper B - A - G^T N G >= 0`` (PSD), ``N >= 0`` elementwise.

    Attributes
    ----------
    upper : float
        Upper bound on ``sup {x^T A x / x^T B x : G x >= 0, B x != 0}``,
        recomputed from ``N`` with numpy (``+inf`` if ``A`` is not zero on
        ``ker B``; ``-inf`` if ``B = 0``).
    N : ndarray, shape (p, p)
        Symmetric, elementwise nonnegative multiplier (``p = G.shape[0]``;
        zero outside ``rows``).  ``N = 0`` certifies the cone-free bound.
    status : str
        ``"solved"`` (SDP solved to tolerance), ``"inaccurate"`` (SDP stopped
        early; its ``N`` still gives a valid, maybe looser bound),
        ``"cone-free"`` (``N = 0``: no usable rows, ``A = 0`` on
        ``range(B)``, ``target`` already met by the cone-free bound, or the
        SDP did not improve on it), ``"failed: <reason>"`` (``N = 0``, the
        cone-free bound) or ``"kernel"`` (``upper = +inf``: ``A`` not zero on
        ``ker B``, or ``B`` singular to rounding (``RANK_RTOL``) but not
        exactly, or ``A`` not zero on the exact ``ker B``; decided exactly).
    seconds : float
        Wall time.
    """

    upper: float
    N: np.ndarray
    status: str
    seconds: float


def certified_upper(A: np.ndarray, B: np.ndarray, G: np.ndarray, N: np.ndarray) -> float:
    r"""The bound certified by ``N``: ``min {u : u B - A - G^T N G PSD}`` plus a rounding allowance.

    ``N`` is symmetrized and clipped at zero first, so any ``N`` gives a
    valid bound.  With ``M = A + G^T N G``, ``W^T B W = I`` on ``range(B)``,
    and ``Z1`` the part of ``ker B`` seen by the rows in the support of
    ``N`` (on the rest of ``ker B``, ``M`` vanishes given ``A Z = 0``), the
    bound is the top eigenvalue of ``W^T M W - C (Z1^T M Z1)^{-1} C^T``,
    ``C = W^T M Z1``; it is ``+inf`` unless ``Z1^T M Z1`` is negative
    definite.  The allowance covers the rounding of ``M`` (entries off by
    ``e0 = ROUNDING_EPS (m + p) max(|A| + |G|^T N |G|)``) carried through
    the whitening and the Schur complement, ``e0 (max|W| + ||C|| / |mu_max|)^2``
    (first-order perturbation of ``W^T M W - C mu^{-1} C^T``), plus
    ``UPPER_ALLOWANCE * max(|value|, max|A| / max|B|)``.

    Parameters
    ----------
    A, B : ndarray, shape (m, m)
        Symmetric, ``B`` positive semidefinite, ``A`` zero on ``ker B``
        (checked by :func:`cone_dual`, not here).
    G : ndarray, shape (p, m)
    N : ndarray, shape (p, p)

    Returns
    -------
    float
        ``-inf`` when ``B = 0``.
    """
    value, allowance = _certify(A, B, G, N)
    return value + allowance


def _certify(A: np.ndarray, B: np.ndarray, G: np.ndarray, N: np.ndarray) -> tuple[float, float]:
    """:func:`certified_upper` as ``(value, allowance)``."""
    N = np.maximum(0.5 * (N + N.T), 0.0)
    M = A + G.T @ N @ G
    M = 0.5 * (M + M.T)
    W, Z = _whiten(B)
    if not W.shape[1]:
        return -np.inf, 0.0
    Z1 = _kernel_seen(Z, G[(N > 0).any(axis=1)])
    S = W.T @ M @ W
    Ga = np.abs(G)
    e0 = ROUNDING_EPS * (M.shape[0] + G.shape[0]) * float((np.abs(A) + Ga.T @ N @ Ga).max())
    amp = float(np.abs(W).max())
    if Z1.shape[1]:
        mu, V = np.linalg.eigh(Z1.T @ M @ Z1)
        if not mu[-1] < 0:
            return np.inf, 0.0
        C = (W.T @ M @ Z1) @ V
        S = S - (C / mu) @ C.T
        amp += np.linalg.norm(C, 2) / -mu[-1]
    value = float(np.linalg.eigvalsh(0.5 * (S + S.T))[-1])
    return value, e0 * amp ** 2 + UPPER_ALLOWANCE * max(abs(value), _vscale(A, B))


def _vscale(A: np.ndarray, B: np.ndarray) -> float:
    """The problem's value scale ``max|A| / max|B|``."""
    return float(np.abs(A).max()) / max(float(np.abs(B).max()), 1e-300)


def _whiten(B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``W`` with ``W^T B W = I`` on ``range(B)`` and an orthonormal basis ``Z`` of ``ker B``."""
    s, U = np.linalg.eigh(B)
    live = s > RANK_RTOL * max(float(s[-1]), 1e-300)
    return U[:, live] / np.sqrt(s[live]), U[:, ~live]


def _exact_kernel(A: np.ndarray, B: np.ndarray, dim: int) -> bool:
    """``ker B`` (the input rationals) has dimension ``dim`` exactly and lies in ``ker A``
    exactly: a float threshold never makes a kernel (issue 23).  Exact elimination."""
    from solvers._exact import fr_matrix, matvec, nullspace

    Z = nullspace(fr_matrix(B), B.shape[0])
    if len(Z) != dim:
        return False
    Aq = fr_matrix(A)
    return not any(any(matvec(Aq, z)) for z in Z)


def _seen(Z: np.ndarray, G: np.ndarray) -> np.ndarray:
    """Mask of the rows of ``G`` that see ``ker B = span(Z)``."""
    if not Z.shape[1]:
        return np.zeros(G.shape[0], dtype=bool)
    return norm2(G @ Z, axis=1) > SEEN_RTOL * norm2(G, axis=1)


def _kernel_seen(Z: np.ndarray, G: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the part of ``ker B = span(Z)`` seen by the rows of ``G``
    (the orthogonal complement of ``ker B cap ker G`` in ``ker B``)."""
    seen = _seen(Z, G)
    if not seen.any():
        return Z[:, :0]
    Gs = G[seen]
    _, s, Vt = np.linalg.svd((Gs @ Z) / norm2(Gs, axis=1)[:, None], full_matrices=False)
    return Z @ Vt[:int(np.sum(s > SEEN_RTOL))].T


def _kernel_rows(G: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Mask of the rows a certificate may use: not positive anywhere on ``{z in ker B : G_H z >= 0}``,
    ``H`` the rows kept so far (iterated to a fixed point; LPs).  Raises BackendError."""
    usable = np.ones(G.shape[0], dtype=bool)
    for _ in range(G.shape[0]):
        idx = np.flatnonzero(usable & _seen(Z, G))
        if not idx.size:
            break
        GZ = G[idx] @ Z
        eq = implicit_equalities(GZ / norm2(GZ, axis=1)[:, None])[0]
        if eq.all():
            break
        usable[idx[~eq]] = False
    return usable


@dataclass(frozen=True)
class _Reduced:
    """Scaled SDP data: ``x = T y``, pencil ``(Ar, diag(1_r, 0))``, unit rows ``Gn``."""

    T: np.ndarray        # (m, d): [W, Z1], W^T B W = I_r, Z1 the seen part of ker B
    r: int               # rank of B
    Ar: np.ndarray       # (d, d): W^T A W / a in the top-left block, zero elsewhere
    a: float             # value scale: the cone-free bound lambda_max(W^T A W)
    Gn: np.ndarray       # (q, d) unit rows
    keep: np.ndarray     # (q,) indices into the rows passed in
    cnorm: np.ndarray    # (q,) norms of those rows of G T before normalization


def _reduce(A: np.ndarray, W: np.ndarray, Z: np.ndarray, G: np.ndarray) -> _Reduced | None:
    """Scale the problem (``None`` when ``W^T A W = 0``: the bound is 0 with ``N = 0``)."""
    Aw = W.T @ A @ W
    a = float(np.linalg.eigvalsh(0.5 * (Aw + Aw.T))[-1]) if Aw.size else 0.0
    if not a > 0:
        return None
    T = np.hstack([W, _kernel_seen(Z, G)])
    r, d = W.shape[1], T.shape[1]
    Ar = np.zeros((d, d))
    Ar[:r, :r] = 0.5 * (Aw + Aw.T) / a
    GT = G @ T
    nrm = norm2(GT, axis=1)
    keep = np.flatnonzero(nrm > ZERO_ROW_RTOL * max(float(nrm.max(initial=0.0)), 1e-300))
    return _Reduced(T, r, Ar, a, GT[keep] / nrm[keep, None], keep, nrm[keep])


@functools.lru_cache(maxsize=64)
def _svec_index(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row, column, weight of clarabel's PSD triangle: upper triangle column-major, off-diagonals * sqrt(2)."""
    rr, cc = np.tril_indices(d)  # row-major lower triangle, transposed
    return cc, rr, np.where(cc == rr, 1.0, _SQRT2)


def _sdp_data(red: _Reduced, margin: float) -> tuple[Any, np.ndarray, Any, np.ndarray, list]:
    """Clarabel's ``(P, q, A, b, cones)``: variables ``(u, triu(N))``, ``b - A v`` in the cones."""
    import clarabel

    d, q = red.T.shape[1], red.Gn.shape[0]
    I, J, w = _svec_index(d)
    K, L = np.triu_indices(q)
    Gn = red.Gn
    E = Gn[K][:, I] * Gn[L][:, J] + Gn[L][:, I] * Gn[K][:, J]
    E[K == L] *= 0.5
    E *= w
    Bd = np.zeros((d, d))
    Bd[np.arange(red.r), np.arange(red.r)] = 1.0
    D = red.Ar + margin * (np.eye(d) - Bd)  # slack >= margin on the seen ker B block
    npair = K.size
    # sparse: the sign block is -I (q = 400 cone rows make 80,200 pairs: dense, 48 GB)
    top = sp.csc_matrix(np.hstack([-(w * Bd[I, J])[:, None], E.T]))
    low = sp.hstack([sp.csc_matrix((npair, 1)), -sp.identity(npair, format="csc")], format="csc")
    Ad = sp.vstack([top, low], format="csc")
    b = np.concatenate([-(w * D[I, J]), np.zeros(npair)])
    c = np.zeros(1 + npair)
    c[0] = 1.0
    P = sp.csc_matrix((np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(2 + npair, dtype=np.int64)),
                      shape=(1 + npair, 1 + npair))
    cones = [clarabel.PSDTriangleConeT(d), clarabel.NonnegativeConeT(npair)]
    return P, c, Ad, b, cones


def _solve_sdp(red: _Reduced, margin: float) -> tuple[np.ndarray | None, str]:
    """Solve the scaled SDP: the scaled multiplier ``(q, q)`` (or None) and a status."""
    import clarabel

    P, c, Ac, b, cones = _sdp_data(red, margin)
    st = clarabel.DefaultSettings()
    st.verbose = False
    st.max_iter = SDP_MAX_ITER
    st.tol_gap_abs = st.tol_gap_rel = st.tol_feas = SDP_TOL
    try:
        sol = clarabel.DefaultSolver(P, c, Ac, b, cones, st).solve()
    except Exception as exc:  # noqa: BLE001 - a solver crash: the caller keeps the cone-free bound
        return None, f"failed: clarabel raised {type(exc).__name__}: {exc}"
    name = str(sol.status).split(".")[-1]
    x = np.asarray(sol.x, dtype=float)
    if name not in _SDP_USABLE or not np.all(np.isfinite(x)):
        return None, f"failed: clarabel {name}"
    q = red.Gn.shape[0]
    Nn = np.zeros((q, q))
    Nn[np.triu_indices(q)] = np.maximum(x[1:], 0.0)
    return Nn + np.triu(Nn, 1).T, "solved" if name == "Solved" else "inaccurate"


def _attempt(A: np.ndarray, B: np.ndarray, G: np.ndarray, W: np.ndarray, Z: np.ndarray,
             idx: np.ndarray) -> tuple[float, np.ndarray | None, str]:
    """SDPs with ``N`` supported on the rows ``idx`` (one per kernel margin while the rounding
    allowance is large): the best ``(upper, N, status)``, ``N`` None if none was solved."""
    red = _reduce(A, W, Z, G[idx]) if idx.size else None
    if red is None or not red.keep.size:
        return np.inf, None, "cone-free"
    best: tuple[float, np.ndarray | None, str] = (np.inf, None, "cone-free")
    sel = idx[red.keep]
    for margin in KERNEL_MARGINS if red.T.shape[1] > red.r else (0.0,):
        Nn, status = _solve_sdp(red, margin)
        if Nn is None:
            return best if best[1] is not None else (np.inf, None, status)
        N = np.zeros((G.shape[0], G.shape[0]))
        N[np.ix_(sel, sel)] = _unnormalized(Nn, red.a, red.cnorm)
        value, allowance = _certify(A, B, G, N)
        if value + allowance < best[0]:
            best = (value + allowance, N, status)
        if margin >= KERNEL_MARGIN_MIN_TRIED and allowance <= RETRY_RTOL * max(abs(value), _vscale(A, B)):
            break
    return best


def _unnormalized(Nn: np.ndarray, a: float, c: np.ndarray) -> np.ndarray:
    """``a Nn_ij / (c_i c_j)``, the multipliers of the unit rows for the rows of norms ``c``: the
    exponents of ``c`` apply by ``ldexp`` (``c_i c_j`` may pass ``2^±1023`` where the product does not);
    an entry beyond the float range is 0 (any ``N >= 0`` gives a valid bound: only a weaker one)."""
    m, k = np.frexp(c)  # c = m 2^k, m in [0.5, 1)
    base = a * Nn / np.outer(m, m)
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(base, -(k[:, None] + k[None, :]))
    return np.where(np.isfinite(out), out, 0.0)


def _prepare(A: Any, B: Any, G: Any, rows: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Float arrays, symmetrized ``A, B``, ``G`` as ``(p, m)`` and the sorted row subset."""
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    m = A.shape[0]
    G = np.asarray(G, dtype=float).reshape(-1, m)
    idx = np.arange(G.shape[0]) if rows is None else np.unique(np.asarray(rows, dtype=int).reshape(-1))
    if idx.size and (idx.min() < 0 or idx.max() >= G.shape[0]):
        raise ValueError(f"rows must index the {G.shape[0]} rows of G, got {idx.tolist()}")
    return 0.5 * (A + A.T), 0.5 * (B + B.T), G, idx


def cone_dual(A: Any, B: Any, G: Any, *, target: float | None = None, rows: Any = None) -> ConeDual:
    r"""Dual DNN certificate for ``sup {x^T A x / x^T B x : G x >= 0, B x != 0}``.

    Solves ``min u  s.t.  u B - A - G^T N G PSD, N = N^T >= 0`` with clarabel (scaled:
    ``B`` whitened, unit rows, cone-free bound 1), then recomputes the bound from the
    clipped ``N`` (:func:`certified_upper`); never worse than the cone-free bound.

    Parameters
    ----------
    A, B : array_like, shape (m, m)
        Symmetric PSD; ``B`` may be singular if ``ker B`` lies in ``ker A``
        (checked, else status ``"kernel"``).
    G : array_like, shape (p, m)
        Cone rows; facet rows of a full-dimensional cone are best (with
        implicit equalities the dual optimum may be unattained: looser).
    target : float, optional
        A value to certify (say, an optimum found by face enumeration): when
        the cone-free bound is within ``TARGET_RTOL`` of it, no SDP, ``N = 0``.
    rows : array_like of int, optional
        Use only these rows of ``G`` (say, its facets); ``N`` is zero elsewhere.

    Returns
    -------
    ConeDual

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import cone_dual
    >>> A, B = np.diag([2.0, 1.0]), np.eye(2)
    >>> cone_dual(A, B, np.eye(2)).status         # x >= 0 holds e_0: the cone does not bind
    'cone-free'
    >>> d = cone_dual(A, B, [[-1.0, 1.0], [1.0, 1.0]])      # |x_0| <= x_1: the optimum is 1.5
    >>> d.status, abs(d.upper - 1.5) < 1e-8, bool((d.N >= 0).all())
    ('solved', True, True)
    """
    t0 = time.perf_counter()
    A, B, G, idx = _prepare(A, B, G, rows)
    N0 = np.zeros((G.shape[0], G.shape[0]))
    W, Z = _whiten(B)
    if Z.shape[1] and (float(np.abs(A @ Z).max()) > KERNEL_RTOL * max(float(np.abs(A).max()), 1e-300)
                       or not _exact_kernel(A, B, Z.shape[1])):
        return ConeDual(np.inf, N0, "kernel", time.perf_counter() - t0)
    best = (certified_upper(A, B, G, N0), N0, "cone-free")
    if target is not None and best[0] <= target + TARGET_RTOL * max(abs(float(target)), abs(best[0])):
        return ConeDual(*best, time.perf_counter() - t0)
    seen = _seen(Z, G[idx])
    try:
        usable = idx[_kernel_rows(G[idx], Z)] if seen.any() else idx
    except BackendError as exc:
        usable, best = idx[~seen], (best[0], N0, f"failed: kernel-row LP: {exc}")
    trials = [usable] + ([idx[~seen]] if seen.any() and idx[~seen].size < usable.size else [])
    for k, sub in enumerate(trials):
        upper, N, status = _attempt(A, B, G, W, Z, sub)
        if N is not None and upper < best[0]:
            best = (upper, N, status)
            break
        if k == 0 and status.startswith("failed") and best[1] is N0:
            best = (best[0], N0, status)
    return ConeDual(*best, time.perf_counter() - t0)
