"""The strong node bound: a lifted doubly nonnegative relaxation coupling the undecided rows (private).

On a node with rows ``F+`` fixed active, ``F-`` fixed inactive and ``U`` undecided, a neuron is
``h = E x`` with ``x = (v, y)``: ``h_{F+} = Q_{F+} v``, ``h_{F-} = 0``, ``h_U = y``, where
``y_i = relu(q_i^T v)``.  Every such ``x`` satisfies the linear constraints ``g^T x >= 0``

* ``s_i q_i^T v >= 0`` for decided rows ``i`` (sign ``s_i``),
* ``y_i >= 0`` and ``y_i - q_i^T v >= 0`` for ``i`` in ``U``,

and the complementarity ``y_i (y_i - q_i^T v) = 0``.  So for any symmetric ``N >= 0`` (entrywise)
on a chosen list of these constraints and any ``mu``,

.. math::  u B - A - G^T N G - \\sum_i \\mu_i C_i \\succ 0 \\ \\Longrightarrow\\
           x^T A x \\le u\\, x^T B x \\text{ on every neuron of the node,}

with ``A = E^T M M^T E``, ``B = E^T (I - \\Pi_H) E`` and ``C_i = sym(e_{y_i} (e_{y_i} - q_i)^T)``.
The dual SDP (minimize ``u``) is solved with Clarabel; the search then recomputes the bound the
multipliers prove (never the SDP's objective), adds a margin, and claims it.  The evidence
``(dec, N, mu)`` is checked by :mod:`relu_gating.certificate._tree_strong` (slack positive
definite with a rounding allowance, ``N >= 0``), which shares nothing with this module.

When to pay (``benchmarks/bnb_bound_study.py``): only for nodes with at most ``MAX_UNDECIDED``
undecided rows whose cheap bound would not already settle them.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["lifted", "strong_bound", "MAX_UNDECIDED", "N_DECIDED"]

#: The strong bound is tried only on nodes with at most this many undecided rows (PSD size r + |U|).
MAX_UNDECIDED = 24
#: Decided rows used (those nearest the node's interior points; any subset is valid).
N_DECIDED = 12
_SQRT2 = float(np.sqrt(2.0))
_USABLE = ("Solved", "AlmostSolved", "MaxIterations", "InsufficientProgress")
_EPS = float(np.finfo(float).eps)


def lifted(Q: np.ndarray, M: np.ndarray, QH: np.ndarray | None, signs: np.ndarray, zero: np.ndarray,
           dec: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(A, B, G, C, U)`` of the lifted relaxation: ``G`` rows are the decided rows ``dec``, then
    ``y_i >= 0`` and ``y_i - q_i^T v >= 0`` for the undecided rows ``U``; ``C`` (|U|, d, d)."""
    n, r = Q.shape
    U = np.flatnonzero((signs == 0) & ~zero)
    P = np.flatnonzero((signs > 0) & ~zero)
    u = U.size
    d = r + u
    E = np.zeros((n, d))
    E[P, :r] = Q[P]
    E[U, r + np.arange(u)] = 1.0
    ME = M.T @ E
    A = ME.T @ ME
    B = E.T @ E
    if QH is not None:
        HE = QH.T @ E
        B = B - HE.T @ HE
    G = np.zeros((dec.size + 2 * u, d))
    G[:dec.size, :r] = signs[dec, None] * Q[dec]
    G[dec.size + np.arange(u), r + np.arange(u)] = 1.0
    G[dec.size + u + np.arange(u), r + np.arange(u)] = 1.0
    G[dec.size + u:, :r] = -Q[U]
    C = np.zeros((u, d, d))
    k = np.arange(u)
    C[k, r + k, r + k] = 1.0
    C[k, r + k, :r] -= 0.5 * Q[U]
    C[k, :r, r + k] -= 0.5 * Q[U]
    return 0.5 * (A + A.T), 0.5 * (B + B.T), G, C, U


@functools.lru_cache(maxsize=64)
def _svec(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rr, cc = np.tril_indices(d)
    return cc, rr, np.where(cc == rr, 1.0, _SQRT2)


def _solve(A: np.ndarray, B: np.ndarray, G: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Clarabel on ``min u : u B - A - G^T N G - sum mu_i C_i PSD, N >= 0``: ``(N, mu)`` or None."""
    import clarabel

    d, p, c = A.shape[0], G.shape[0], C.shape[0]
    I, J, w = _svec(d)
    K, L = np.triu_indices(p)
    E = G[K][:, I] * G[L][:, J] + G[L][:, I] * G[K][:, J]
    E[K == L] *= 0.5
    E *= w
    npair, nsv = K.size, I.size
    cols = [-(w * B[I, J])[:, None], E.T, (w * C[:, I, J]).T]
    top = np.hstack(cols)
    low = sp.hstack([sp.csc_matrix((npair, 1)), -sp.identity(npair, format="csc"), sp.csc_matrix((npair, c))])
    Ac = sp.vstack([sp.csc_matrix(top), low], format="csc")
    b = np.concatenate([-(w * A[I, J]), np.zeros(npair)])
    q = np.zeros(1 + npair + c)
    q[0] = 1.0
    P = sp.csc_matrix((1 + npair + c, 1 + npair + c))
    st = clarabel.DefaultSettings()
    st.verbose = False
    st.max_iter = 60
    st.tol_gap_abs = st.tol_gap_rel = st.tol_feas = 1e-9
    try:
        sol = clarabel.DefaultSolver(P, q, Ac, b, [clarabel.PSDTriangleConeT(d), clarabel.NonnegativeConeT(npair)],
                                     st).solve()
    except Exception:  # noqa: BLE001 - a solver crash: no strong bound
        return None
    x = np.asarray(sol.x, dtype=float)
    if str(sol.status).split(".")[-1] not in _USABLE or not np.all(np.isfinite(x)) or nsv == 0:
        return None
    N = np.zeros((p, p))
    N[K, L] = np.maximum(x[1:1 + npair], 0.0)
    N = N + np.triu(N, 1).T
    return N, x[1 + npair:]


def proven(A: np.ndarray, B: np.ndarray, G: np.ndarray, C: np.ndarray, N: np.ndarray, mu: np.ndarray) -> float:
    """The bound ``(N, mu)`` prove: top eigenvalue of ``(A + G^T N G + sum mu C, B)`` (B positive
    definite, else ``inf``), with a relative margin for the verifier's own rounding allowance."""
    wB = np.linalg.eigvalsh(B)
    if wB[0] <= 1e-9 * max(wB[-1], 1e-300):
        return float("inf")
    T = A + G.T @ N @ G + np.tensordot(mu, C, axes=1)
    L = np.linalg.cholesky(B)
    Li = np.linalg.inv(L)
    lam = float(np.linalg.eigvalsh(Li @ (0.5 * (T + T.T)) @ Li.T)[-1])
    mag = np.abs(A).sum() + np.abs(B).sum() + (np.abs(G).T @ N @ np.abs(G)).sum() + np.abs(mu) @ np.abs(C).sum((1, 2))
    d = A.shape[0]
    allow = 64.0 * (B.shape[0] + G.shape[0] + d * d) * _EPS * mag
    return lam + 1e-9 * abs(lam) + 4.0 * allow / wB[0] + 1e-12


def pick_decided(Q: np.ndarray, signs: np.ndarray, zero: np.ndarray, V: np.ndarray, k: int = N_DECIDED) -> np.ndarray:
    """The ``k`` decided rows nearest (in angle) to the node's interior points ``V`` (rows)."""
    dec = np.flatnonzero((signs != 0) & ~zero)
    if dec.size <= k:
        return dec
    Gd = Q[dec] / np.linalg.norm(Q[dec], axis=1)[:, None]
    Vn = V / np.linalg.norm(V, axis=1)[:, None]
    near = (signs[dec, None] * (Gd @ Vn.T)).min(axis=1)
    return np.sort(dec[np.argsort(near)[:k]])


def strong_bound(Q: np.ndarray, M: np.ndarray, QH: np.ndarray | None, signs: np.ndarray, zero: np.ndarray,
                 V: np.ndarray, k: int = N_DECIDED) -> tuple[float, Any] | None:
    """``(claim, (dec, N, mu))`` of the lifted relaxation on a node, or None (solver failure,
    singular ``B``)."""
    dec = pick_decided(Q, signs, zero, V, k)
    A, B, G, C, _ = lifted(Q, M, QH, signs, zero, dec)
    got = _solve(A, B, G, C)
    if got is None:
        return None
    N, mu = got
    u = proven(A, B, G, C, N, mu)
    if not np.isfinite(u):
        return None
    return u, (dec, N, mu)
