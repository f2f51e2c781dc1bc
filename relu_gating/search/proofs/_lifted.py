"""Lifted evidence of a tree node (``["d", u, dec, N, mu]``), checked from the stated problem (private).

On a node with rows ``F+`` fixed active, ``F-`` fixed inactive (zero rows of ``Phi`` included) and
``U`` undecided, every neuron is ``h = E x`` with ``x = (v, y)`` (``v`` in the coordinates of ``Q``,
one ``y_i`` per undecided row): ``h_i = q_i^T v`` on ``F+``, ``0`` on ``F-``, ``y_i = relu(q_i^T v)``
on ``U``.  Such an ``x`` satisfies ``G x >= 0`` for the rows of ``G``

* ``s_i q_i^T v`` for the listed decided rows ``i`` in ``dec`` (their sign ``s_i`` on the node),
* ``y_i`` for every ``i`` in ``U`` (in order), then ``y_i - q_i^T v`` for every ``i`` in ``U``,

and ``x^T C_i x = y_i (y_i - q_i^T v) = 0`` with ``C_i`` the symmetric part of
``e_{y_i} (e_{y_i} - (q_i, 0))^T``.  The objective is ``x^T A x / x^T B x`` with ``A = E^T M M^T E``
and ``B = E^T (I - Q_H Q_H^T) E`` (the pencil of :func:`~relu_gating.search.proofs._pattern.pattern_pencils`
with ``S Q`` replaced by ``E``).  If ``u B - A - G^T N G - sum_i mu_i C_i`` is positive semidefinite
for a symmetric entrywise nonnegative ``N`` and any ``mu``, then on every neuron of the node
``x^T A x <= u x^T B x + x^T G^T N G x + 0 <= ...``, i.e. ``u x^T B x - x^T A x >= (G x)^T N (G x) >= 0``:
the objective is at most ``u`` wherever it is defined (``x^T B x > 0``).

The check here rebuilds ``E, A, B, G, C`` from the node's signs and ``(Q, M, Q_H)``, replaces ``N``
by ``max(sym(N), 0)`` (still valid evidence, whatever was sent), and asks that the smallest
eigenvalue of the slack, computed in float64, exceed an allowance that bounds the rounding of
forming it and of the eigenvalue solver (entrywise magnitudes of the products, times
:func:`~relu_gating.search.proofs._pattern._allow`).  It shares no code with the search's solver.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from relu_gating.search.proofs._pattern import _allow

__all__ = ["lifted_leaf_bound", "lifted_pieces", "multiplier_matrix"]


def lifted_pieces(Q: np.ndarray, M: np.ndarray, QH: np.ndarray | None, signs: np.ndarray, zero: np.ndarray,
                  dec: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, float]:
    """``(A, B, G, mu-coefficient rows W, |A| bound, |B| bound)``: ``W`` (|U|, r) holds the ``q_i``."""
    n, r = Q.shape
    plus = np.flatnonzero((signs > 0) & ~zero)
    und = np.flatnonzero((signs == 0) & ~zero)
    k = und.size
    E = np.zeros((n, r + k))
    E[plus, :r] = Q[plus]
    E[und, r + np.arange(k)] = 1.0
    aE = np.abs(E)
    ME = M.T @ E
    A = ME.T @ ME
    aME = np.abs(M).T @ aE
    magA = float((aME.T @ aME).sum())
    B = E.T @ E
    magB = float((aE.T @ aE).sum())
    if QH is not None:
        HE = QH.T @ E
        B = B - HE.T @ HE
        aHE = np.abs(QH).T @ aE
        magB += float((aHE.T @ aHE).sum())
    G = np.zeros((dec.size + 2 * k, r + k))
    G[:dec.size, :r] = signs[dec, None] * Q[dec]
    G[dec.size + np.arange(k), r + np.arange(k)] = 1.0
    G[dec.size + k + np.arange(k), r + np.arange(k)] = 1.0
    G[dec.size + k:, :r] = -Q[und]
    return 0.5 * (A + A.T), 0.5 * (B + B.T), G, Q[und], magA, magB


def multiplier_matrix(N: Any, p: int) -> np.ndarray:
    """The ``p x p`` matrix ``N`` of lifted evidence, written dense (``p`` rows of ``p``) or sparse
    (``{"p": p, "entries": [[k, l, v], ...]}``, ``N_kl = N_lk = v``, each pair at most once, the rest 0);
    ValueError when malformed."""
    if not isinstance(N, dict):
        return np.asarray(N, dtype=float).reshape(p, p)
    if set(N) != {"p", "entries"} or isinstance(N["p"], bool) or not isinstance(N["p"], (int, np.integer)) \
            or int(N["p"]) != p:
        raise ValueError("sparse multipliers: keys p and entries, p the number of constraints")
    E = np.asarray(N["entries"], dtype=float).reshape(-1, 3)
    if not np.all(np.isfinite(E)):
        raise ValueError("sparse multipliers: not finite")
    k, l = E[:, 0], E[:, 1]
    if np.any(k != np.round(k)) or np.any(l != np.round(l)) or np.any(np.minimum(k, l) < 0) \
            or np.any(np.maximum(k, l) >= p):
        raise ValueError("sparse multipliers: an index is not a constraint")
    k, l = np.minimum(k, l).astype(np.int64), np.maximum(k, l).astype(np.int64)
    if np.unique(k * p + l).size != k.size:
        raise ValueError("sparse multipliers: a pair given twice")
    out = np.zeros((p, p))
    out[k, l] = E[:, 2]
    out[l, k] = E[:, 2]
    return out


def lifted_leaf_bound(Q: np.ndarray, M: np.ndarray, QH: np.ndarray | None, signs: np.ndarray, zero: np.ndarray,
                      claim: float, dec: Any, N: Any, mu: Any) -> float:
    """``claim`` if the evidence ``(dec, N, mu)`` proves it on the node with these signs, else ``inf``."""
    n, r = Q.shape
    try:
        dec = np.asarray(dec, dtype=np.int64).reshape(-1)
        mu = np.asarray(mu, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        return float("inf")
    if dec.size and (dec.min() < 0 or dec.max() >= n):
        return float("inf")
    if np.any(signs[dec] == 0) or np.any(zero[dec]) or not np.isfinite(claim):
        return float("inf")
    k = int(np.sum((signs == 0) & ~zero))
    p = dec.size + 2 * k
    try:
        N = multiplier_matrix(N, p)
    except (TypeError, ValueError, OverflowError):
        return float("inf")
    if mu.size != k or not (np.all(np.isfinite(N)) and np.all(np.isfinite(mu))):
        return float("inf")
    A, B, G, W, magA, magB = lifted_pieces(Q, M, QH, signs, zero, dec)
    Nc = np.maximum(0.5 * (N + N.T), 0.0)
    d = r + k
    C = np.zeros((d, d))
    idx = r + np.arange(k)
    C[idx, idx] = mu
    C[idx, :r] -= 0.5 * mu[:, None] * W
    C[:r, idx] = C[idx, :r].T
    aG = np.abs(G)
    magG = float((aG.T @ Nc @ aG).sum())
    magC = float(np.abs(mu).sum() + (np.abs(mu)[:, None] * np.abs(W)).sum())
    slack = claim * B - A - G.T @ Nc @ G - C
    slack = 0.5 * (slack + slack.T)
    mag = abs(claim) * magB + magA + magG + magC
    allow = 4.0 * _allow(n + p, d) * mag + np.finfo(float).tiny
    lam = float(np.linalg.eigvalsh(slack)[0])
    return float(claim) if lam > allow else float("inf")
