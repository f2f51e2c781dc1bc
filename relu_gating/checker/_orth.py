"""An orthonormal basis of ``col(H)`` from an exact orthogonal one (the checker's own: nearly dependent
features, condition 2^30..2^52, where the SVD's basis proves no useful ``eta_H``; loaded only then).

Fraction-free Gram-Schmidt on the columns of ``H`` taken as the integers they are (one common power of
two) gives integer columns ``W``, pairwise orthogonal, with exactly the span of ``H``.  Rounded once,
``W~`` is within ``E`` of ``W`` (entrywise half an ulp, plus underflow); with ``sigma_min(W) >=
min_j ||w_j||`` (orthogonal columns), ``s <= sigma_min(W~)`` and ``eta_0 >= ||O O^T - P_{W~}||``
(:func:`relu_gating.checker._floats.projector_gap`), ``||P_W - P_{W~}|| <= E max(1 / sigma_min(W),
1 / s)`` (Wedin; equal ranks), so ``eta = eta_0 + E max(...)`` is of the order of the rounding whatever
the condition of ``H``.
"""

from __future__ import annotations

import math

import numpy as np

from relu_gating.checker._constants import EPS
from relu_gating.checker._floats import fro, gamma, projector_gap
from relu_gating.checker._rational import to_ints

__all__ = ["exact_orthogonal", "orthogonal_basis", "better_basis", "ORTH_WORK", "ORTH_BITS"]

#: At most this many integer multiply-adds (``n q^2``) for the exact basis, ...
ORTH_WORK = 200_000
#: ... and integers of at most this many bits (beyond: the SVD's basis stays).
ORTH_BITS = 20_000


def exact_orthogonal(X: np.ndarray) -> list[list[int]] | None:
    """Pairwise orthogonal integer columns spanning exactly ``col(X)`` (``X``'s columns independent):
    fraction-free Gram-Schmidt, ``w <- (b.b) w - (w.b) b``, each column divided by its gcd; None past
    :data:`ORTH_WORK` or :data:`ORTH_BITS`."""
    n, q = X.shape
    if n * q * q > ORTH_WORK:
        return None
    out: list[list[int]] = []
    for c in zip(*to_ints(X)[0]):
        w = list(c)
        for b in out:
            bb, wb = sum(x * x for x in b), sum(x * y for x, y in zip(w, b))
            if wb:
                w = [bb * x - wb * y for x, y in zip(w, b)]
            if max(map(abs, w)).bit_length() > ORTH_BITS:
                return None
        g = math.gcd(*w)
        out.append([x // g for x in w] if g > 1 else w)
    return out


def orthogonal_basis(X: np.ndarray) -> tuple[np.ndarray, float, float] | None:
    """``(O, eta, s)``: a float orthonormal basis ``O`` of ``col(X)`` (independent columns), a proven
    ``eta >= ||O O^T - P_X||_2`` (module docstring) and a proven ``s <= sigma_min(X)`` (0 if none);
    None where no ``eta`` is proven."""
    cols = exact_orthogonal(X)
    if cols is None or not all(any(w) for w in cols):
        return None
    Wf = np.empty((X.shape[0], len(cols)))
    for j, w in enumerate(cols):
        top = max(map(abs, w)).bit_length()
        Wf[:, j] = [x / (1 << top) for x in w]  # int / int: correctly rounded
    E = (EPS / 2 * fro(Wf) + Wf.size * 2.0**-1074) * (1 + 4 * EPS)
    smin_W = min(fro(Wf[:, j]) for j in range(Wf.shape[1])) * (1 - gamma(X.shape[0] + 2)) - E
    O = np.linalg.svd(Wf, full_matrices=False)[0]
    eta0, s, _ = projector_gap(O, Wf)
    if not (np.isfinite(eta0) and s > 0 and smin_W > 0):
        return None
    return O, float((eta0 + E * max(1.0 / smin_W, 1.0 / s)) * (1 + 4 * EPS)), float(projector_gap(O, X)[1])


def better_basis(X: np.ndarray, O: np.ndarray, eta: float, s: float) -> tuple[np.ndarray, float, float]:
    """The basis ``O`` of ``col(X)`` with its proven ``eta`` and ``s``, or :func:`orthogonal_basis`'s
    where it proves a smaller ``eta`` (then ``s`` the larger of the two proven)."""
    got = orthogonal_basis(X) if X.shape[1] else None
    if got is None or not got[1] < eta:
        return O, eta, s
    return got[0], got[1], max(s, got[2])
