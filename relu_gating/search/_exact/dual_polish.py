"""Dual multipliers polished at a supremum on a face of the cone (private; floats, decides nothing).

At a supremum ``lam`` attained on a face of the cone ``{G x >= 0}`` (rows ``J`` zero at the
maximizer ``x``), an optimal dual slack ``lam B - A - G^T N G`` is singular along ``x``: with
``z = G x`` (zero on ``J``, positive on the rows ``P``) it needs

* ``N_bc = 0`` for ``b, c`` in ``P`` (complementary slackness, ``z^T N z = 0``), and
* ``(N z)_j = mu_j`` on ``J``, the KKT multipliers of the face: ``(lam B - A) x = G_J^T mu``,
  ``mu >= 0``.

A solver's ``N`` meets both only to its accuracy (1e-8), which is what keeps the slack indefinite
along ``x`` and its claim that far above ``lam``.  :func:`polish` takes ``x`` from the solver's slack
(its least eigenvector), the face ``J`` where ``G x`` nearly vanishes (:data:`FACE_RTOL`), then ``lam`` and ``x`` again as
the top eigenpair of the pencil restricted to ``null(G_J)``, ``mu`` by least squares, and rescales
the solver's entries ``N_jb`` (``b`` in ``P``) so that ``(N z)_j = mu_j`` exactly up to rounding
(where row ``j`` has none, ``N_jb = mu_j z_b / ||z_P||^2``).  The slack at ``lam + delta`` is then
positive definite by ``delta`` along ``x`` (and wherever the solver's was): the exact test decides.
"""

from __future__ import annotations

import numpy as np

from relu_gating._inputs.scaling import pow2_norms

__all__ = ["polish", "FACE_RTOL"]

#: A row is on the face when ``|g_j x| <= t max |G x|``, for the first ``t`` here whose face gives a
#: maximizer in the cone with nonnegative KKT multipliers (a choice of where to look: the solver's
#: slack tilts its least eigenvector off the face by its own error over the spectral gap).
FACE_RTOL = (1e-8, 1e-6, 1e-4, 1e-3)


def _top(A: np.ndarray, B: np.ndarray) -> tuple[float, np.ndarray] | None:
    """Top eigenpair of ``(A, B)``, ``B`` positive definite (None if it is not, to rounding)."""
    w, V = np.linalg.eigh(0.5 * (B + B.T))
    if w[0] <= 1e-12 * max(float(w[-1]), 1e-300):
        return None
    Wh = V / np.sqrt(w)
    lam, Y = np.linalg.eigh(Wh.T @ (0.5 * (A + A.T)) @ Wh)
    return float(lam[-1]), Wh @ Y[:, -1]


def _face(A: np.ndarray, B: np.ndarray, G: np.ndarray, x: np.ndarray, tol: float) -> tuple | None:
    """``(lam, x, J)``: the face where ``G x`` nearly vanishes and the top eigenpair of the pencil on
    its span, with ``x`` in the closed cone (to ``FACE_RTOL``), or None."""
    z = G @ x
    if z.sum() < 0:
        x, z = -x, -z
    top = float(np.abs(z).max(initial=0.0))
    if top == 0.0:
        return None
    J = np.flatnonzero(np.abs(z) <= tol * top)
    if np.any(np.delete(z, J) < 0):
        return None
    if J.size:
        _, s, Vt = np.linalg.svd(G[J])
        Z = Vt[int(np.sum(s > 1e-12 * s[0])):].T
    else:
        Z = np.eye(A.shape[0])
    if Z.shape[1] == 0:
        return None
    got = _top(Z.T @ A @ Z, Z.T @ B @ Z)
    if got is None:
        return None
    lam, y = got
    x = Z @ y
    z = G @ x
    if z.sum() < 0:
        x, z = -x, -z
    if np.any(z < -1e-12 * float(np.abs(z).max(initial=0.0))):
        return None
    return lam, x, J


def polish(A: np.ndarray, B: np.ndarray, G: np.ndarray, N0: np.ndarray, u0: float) -> tuple[float, np.ndarray] | None:
    """``(lam, N)``: the face supremum ``lam`` near the solver's claim ``u0`` and its multipliers ``N``
    (p x p, floats, entrywise >= 0) polished from the solver's ``N0`` (see the module docstring);
    None when the slack shows no face, or the face's KKT multipliers are negative."""
    A, B, G = (np.asarray(X, dtype=float) for X in (A, B, G))
    N = np.maximum(0.5 * (N0 + N0.T), 0.0)
    if G.shape[0] == 0 or not np.all(np.isfinite(N)) or not np.isfinite(u0):
        return None
    C = u0 * B - A - G.T @ N @ G
    x0 = np.linalg.eigh(0.5 * (C + C.T))[1][:, 0]
    for tol in FACE_RTOL:
        got = _face(A, B, G, x0, tol)
        if got is None:
            continue
        lam, x, J = got
        mu = _kkt(A, B, G, lam, x, J)
        if mu is not None:
            return lam, _rescaled(N, G @ x, J, mu)
    return None


def _kkt(A: np.ndarray, B: np.ndarray, G: np.ndarray, lam: float, x: np.ndarray, J: np.ndarray) -> np.ndarray | None:
    """The face's KKT multipliers ``mu >= 0`` with ``(lam B - A) x = G_J^T mu`` (least squares, to
    rounding), or None."""
    grad = (lam * B - A) @ x
    if J.size == 0:
        return np.zeros(0) if pow2_norms(grad) <= 1e-8 * max(float(pow2_norms(A.ravel())), 1e-300) else None
    mu = np.linalg.lstsq(G[J].T, grad, rcond=None)[0]
    if not pow2_norms(G[J].T @ mu - grad) <= 1e-8 * max(float(pow2_norms(grad)), 1e-300) + 1e-14:  # nan: no
        return None
    if np.any(mu < -1e-9 * max(1.0, float(np.abs(mu).max(initial=0.0)))):
        return None
    return np.maximum(mu, 0.0)


def _rescaled(N: np.ndarray, z: np.ndarray, J: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """The multipliers with complementary slackness on the rows ``P`` positive at the maximizer
    (``N_PP = 0``) and ``(N z)_j = mu_j`` on the face's rows (entries rescaled, or spread along ``z``)."""
    N = N.copy()
    z = z.copy()
    z[J] = 0.0
    P = np.flatnonzero(z > 0)
    N[np.ix_(P, P)] = 0.0
    zP = z[P]
    for j, m in zip(J.tolist(), mu.tolist()):
        y0 = float(N[j, P] @ zP)
        row = N[j, P] * (m / y0) if y0 > 0 else (m * zP / float(zP @ zP) if P.size else N[j, P])
        N[j, P] = row
        N[P, j] = row
    return N
