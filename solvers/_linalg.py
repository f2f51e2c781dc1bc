"""Small dense linear algebra: null spaces and top generalized eigenpairs with
a possibly singular ``B`` (single pencils and stacks)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["null_space", "TopEig", "top_eig", "sup_quotient", "EIG_RTOL", "RANK_RTOL", "NOISE_RTOL"]

#: Relative size below which an eigenvalue of ``B`` counts as zero.
RANK_RTOL = 1e-10
#: Relative size below which a value is rounding noise.  Eigenvalues of ``B`` (or values of
#: ``A`` on ``ker B``) between NOISE_RTOL and RANK_RTOL are ambiguous: float64 cannot tell a
#: tiny exact value from rounding, and the caller falls back on exact arithmetic.
NOISE_RTOL = 1e-13
#: Relative gap below which generalized eigenvalues count as equal (one eigenspace).
EIG_RTOL = 1e-10


def null_space(M: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """Orthonormal basis, shape ``(n, k)``, of ``{x : M x = 0}`` for ``M`` of shape ``(r, n)``.

    Singular values below ``rtol * max(1, s_max)`` count as zero: the rows
    of ``M`` are expected to have unit scale (normalized cone rows, bases).
    """
    n = M.shape[1]
    if M.shape[0] == 0:
        return np.eye(n)
    _, s, Vt = np.linalg.svd(M, full_matrices=M.shape[0] < n)
    tol = rtol * max(1.0, s[0] if s.size else 0.0)
    rank = int(np.sum(s > tol))
    return Vt[rank:].T.copy()


@dataclass(frozen=True)
class TopEig:
    """Top generalized eigenpair of ``(A, B)`` on ``range(B)``.

    ``value`` is ``+inf`` when ``A`` does not vanish on ``ker B`` and ``-inf``
    when ``B = 0``.  ``E`` (n, k) spans the top eigenspace with
    ``E^T B E = I``; ``N`` (n, r) spans ``ker B``.  ``bmin``: the smallest
    eigenvalue of ``B`` kept (its rounding errors are amplified by ``1/bmin``);
    ``ambiguous``: an eigenvalue of ``B``, or ``A`` on ``ker B``, lies between
    NOISE_RTOL and RANK_RTOL (relative), where float64 cannot decide.
    """

    value: float
    E: np.ndarray
    N: np.ndarray
    bmin: float = np.inf
    ambiguous: bool = False


def top_eig(A: np.ndarray, B: np.ndarray, *, rtol: float = RANK_RTOL, eig_rtol: float = EIG_RTOL,
            bscale: float = 0.0, ascale: float = 0.0) -> TopEig:
    """Top generalized eigenvalue and eigenspace of the PSD pencil ``(A, B)``.

    Eigenvalues of ``B`` below ``rtol * max(lambda_max(B), bscale)`` count as
    zero (``bscale``: the size of the uncompressed ``B``, so that a flat
    lying numerically in ``ker B`` gets ``-inf``); ``A`` on ``ker B`` is measured
    against ``max(max|A|, ascale)`` alike (``ascale``: the uncompressed ``A``; else a
    flat nearly inside ``ker B``, where ``A`` and ``B`` are both tiny, would read ``+inf``).
    """
    n = A.shape[0]
    s, U = np.linalg.eigh(B)
    smax = max(float(s[-1]), 0.0) if n else 0.0
    ref = max(smax, bscale, 1e-300)
    keep = s > rtol * ref
    amb = bool(np.any(~keep & (np.abs(s) > NOISE_RTOL * ref)))
    N = U[:, ~keep]
    ascale = max(float(np.abs(A).max()) if n else 0.0, ascale, 1e-300)
    an = float(np.abs(N.T @ A @ N).max()) if N.shape[1] else 0.0
    amb = amb or NOISE_RTOL * ascale < an <= rtol * ascale
    if not keep.any():
        return TopEig(-np.inf if an <= rtol * ascale else np.inf, np.zeros((n, 0)), N, np.inf, amb)
    if an > rtol * ascale:
        return TopEig(np.inf, np.zeros((n, 0)), N, float(s[keep][0]), amb)
    W = U[:, keep] / np.sqrt(s[keep])
    M = W.T @ A @ W
    mu, Y = np.linalg.eigh(0.5 * (M + M.T))
    top = float(mu[-1])
    k = int(np.sum(mu >= top - eig_rtol * abs(top)))
    return TopEig(top, W @ Y[:, -k:], N, float(s[keep][0]), amb)


def sup_quotient(M: np.ndarray, B: np.ndarray, *, rtol: float = RANK_RTOL) -> float:
    """``sup {x^T M x / x^T B x : B x != 0}`` for symmetric ``M`` (any sign), PSD ``B``.

    Equals ``min {lam : M <= lam B}``.  With ``B`` singular, ``x = W y + N n``
    (``N`` spanning ``ker B``) and the sup over ``n`` is a Schur complement;
    it is ``+inf`` unless ``M`` is negative semidefinite on ``ker B`` with no
    coupling along its null directions.
    """
    s, U = np.linalg.eigh(B)
    smax = float(s[-1])
    if smax <= 0:
        return -np.inf
    keep = s > rtol * smax
    W = U[:, keep] / np.sqrt(s[keep])
    N = U[:, ~keep]
    Mww = W.T @ M @ W
    if N.shape[1]:
        scale = max(float(np.abs(M).max()), 1e-300)
        Mnn = N.T @ M @ N
        Mwn = W.T @ M @ N
        mu, V = np.linalg.eigh(0.5 * (Mnn + Mnn.T))
        tol = rtol * scale
        if mu[-1] > tol:
            return np.inf
        zero = mu >= -tol
        if zero.any() and float(np.abs(Mwn @ V[:, zero]).max()) > 1e-8 * scale:
            return np.inf
        neg = ~zero
        if neg.any():
            C = Mwn @ V[:, neg]
            Mww = Mww - C @ np.diag(1.0 / mu[neg]) @ C.T
    return float(np.linalg.eigvalsh(0.5 * (Mww + Mww.T))[-1])
