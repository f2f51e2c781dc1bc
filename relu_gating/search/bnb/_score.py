"""Strong-branching scores (private): the two children's node bounds for many candidate rows at
once, by rank-one updates of the parent's K x K matrix.

Heuristic only (no rounding allowance, nothing is certified with it).  Fixing row ``i``
inactive adds coordinate ``i`` to the ``F-`` block, fixing it active to the ``F+`` block; the
complement of ``col(X)`` inside a block with ``X = O R`` (QR, ``R`` invertible) then grows by the
one vector ``w = (-O R^{-T} x_i, 1)``, so ``T_child = T - (M^T w)(M^T w)^T / ||w||^2``.  A block
that is empty before and after contributes nothing; the other cases return None (the caller
computes those children's bounds in full).
"""

from __future__ import annotations

import numpy as np

__all__ = ["child_bounds", "split_scores", "SCORE_EPS"]


def _block(Mb: np.ndarray, X: np.ndarray | None, Xi: np.ndarray | None, Mi: np.ndarray):
    """Rank-one terms ``(v, ||w||^2)`` for the candidates' rows ``Xi``/``Mi`` joining a block,
    or ``"same"`` (the block stays empty), or None (not an update)."""
    if X is None:  # no constraint on this block: its complement is everything
        return Mi, np.ones(Mi.shape[0])
    assert Xi is not None  # given with X
    k, c = X.shape
    if k >= c:
        O, R = np.linalg.qr(X)
        d = np.abs(np.diag(R))
        if d.size and d.min() <= INDEPENDENT_RTOL * max(float(d.max()), 1e-300):  # nearly dependent columns
            X, Xi = _independent(X, Xi)
            k, c = X.shape
            O, R = np.linalg.qr(X)
    if k + 1 <= c:
        return "same"
    if k < c:
        return None
    d = np.abs(np.diag(R))
    if d.size == 0 or d.min() <= INDEPENDENT_RTOL * max(float(d.max()), 1e-300):
        return None
    with np.errstate(over="ignore", invalid="ignore"):  # R near 2^-537 against rows near 1: beyond the range
        Y = np.linalg.solve(R.T, Xi.T)  # R^{-T} x_i, shape (c, #cand)
        top = -(O @ Y)  # (k, #cand)
        v = Mi + (Mb.T @ top).T
        w2 = 1.0 + np.sum(top**2, axis=0)
    return (v, w2) if np.isfinite(v).all() and np.isfinite(w2).all() else None  # None: computed in full


def _independent(X: np.ndarray, Xi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The columns of ``X`` (and the same of ``Xi``) a pivoted QR finds clearly independent: a block whose
    features equal ``Phi theta`` up to rounding (a greedy layer's) is scored as if without those
    directions (the search's bound keeps them, in a whitened basis; this is only a score)."""
    from scipy.linalg import qr

    if X.shape[1] < 2 or X.shape[0] < X.shape[1]:
        return X, Xi
    R, piv = qr(X, mode="r", pivoting=True)
    d = np.abs(np.diag(R))
    keep = piv[:int(np.sum(d > INDEPENDENT_RTOL * max(float(d[0]), 1e-300)))]
    return (X, Xi) if keep.size == X.shape[1] else (X[:, keep], Xi[:, keep])


#: :func:`_independent`: a pivot below this fraction of the first marks a nearly dependent column.
INDEPENDENT_RTOL = 1e-8


#: :func:`split_scores`: a child's gain counts as at least this fraction of the parent's gap to the level.
SCORE_EPS = 1e-6


def split_scores(plus: np.ndarray, minus: np.ndarray, claim: float, level: float) -> np.ndarray:
    """Scores of candidate splits from their children's bounds ``plus`` and ``minus`` (larger is better):
    the product of the two children's gains ``claim - max(child, level)``, each at least ``SCORE_EPS``
    of the gap ``claim - level`` (the product rule of mixed-integer solvers).  A child at or below
    ``level`` (the bound that settles a node) gains the whole gap; a child above the parent's ``claim``
    gains nothing.  Unlike the larger child's bound alone (the rule before), the other child counts
    too: a split that lowers both children ranks above one that lowers only one to the same larger
    bound.  A heuristic: nothing is certified with it."""
    claim = float(claim)
    lo = float(level) if np.isfinite(level) and level < claim else claim - max(abs(claim), 1.0)
    eps = SCORE_EPS * (claim - lo)
    gain_p = claim - np.clip(np.nan_to_num(plus, nan=claim, posinf=claim), lo, claim)
    gain_m = claim - np.clip(np.nan_to_num(minus, nan=claim, posinf=claim), lo, claim)
    return np.maximum(gain_p, eps) * np.maximum(gain_m, eps)


def child_bounds(P, signs: np.ndarray, cands: np.ndarray,
                 T: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Approximate node bounds of the ``+`` and ``-`` children of each candidate row (or None);
    ``T``: the node's K x K bound matrix when the caller has it (else computed here)."""
    plus = (signs > 0) & ~P.zero_rows
    minus = (signs < 0) | P.zero_rows
    Xm = None if P.QH is None else P.QH[minus]
    Xmi = None if P.QH is None else P.QH[cands]
    cols = P.plus_columns(plus)
    Xp, Xpi = P.plus_span(plus, cols), P.plus_span(cands, cols)
    from relu_gating.search.proofs import bound_matrix

    if T is None:
        T, _ = bound_matrix(P, signs)
    out = []
    for Mb, X, Xi in ((P.M[plus], Xp, Xpi), (P.M[minus], Xm, Xmi)):
        upd = _block(Mb, X, Xi, P.M[cands])
        if upd is None:
            return None
        if isinstance(upd, str):
            out.append(np.full(cands.size, np.linalg.eigvalsh(T)[-1]))
            continue
        v, ww = upd
        Tc = T[None] - np.einsum("ck,cl->ckl", v, v) / ww[:, None, None]
        out.append(np.linalg.eigvalsh(Tc)[:, -1])
    return out[0], out[1]
