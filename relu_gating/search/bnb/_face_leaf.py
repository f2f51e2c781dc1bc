"""A node whose supremum lies on a face of its boundary, settled as a ``"d"`` leaf by face multipliers (private).

On a node with rows ``F+`` fixed active, ``F-`` inactive and ``U`` undecided, every neuron is supported
on ``T = F+ + U`` with ``h_T >= 0``, and in the lifted coordinates ``x = (v, y)`` of a ``"d"`` leaf
(``relu_gating/certificate/FORMAT.md``) ``h_T = E_T x``: ``h_i = q_i^T v`` on ``F+`` (the rows of
``dec``, sign ``+``) and ``h_i = y_i`` on ``U`` (the rows ``y_i >= 0``).  So with ``N`` on those rows
(and 0 on the rows ``y_i - q_i^T v``, ``mu = 0``),

.. math::  u B - A - G^T N G = E_T^T (R(u) - N_T) E_T, \\qquad R(u) = u (I - \\Pi_H)_{TT} - (M M^T)_{TT},

and the multipliers of a chamber's face (:mod:`relu_gating.search._exact.faces`, the same
construction on ``T``) prove ``u`` on the whole node.  Where the node's best neuron is a one-sample
(or few-sample) neuron on its boundary, the lifted bound of :mod:`relu_gating.search.bnb._strong`
stays above it by its solver's error and the node is split down to its chambers; here it is settled
at once, at ``u`` a little above the face's value: by :data:`FACE_MARGINS` (relative), the least that
the checker's own float test accepts (its allowance for rounding, :func:`relu_gating.search.proofs.
lifted_leaf_bound`), so that float and exact verify both prove it.  Nothing here is trusted: the
evidence is ordinary lifted evidence, decided by that test here and by the checker again.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable

import numpy as np

__all__ = ["face_leaf", "FACE_MARGINS"]

#: ``u = lam + margin max(1, |lam|)`` tried in this order: the slack's least eigenvalue is about the
#: margin, and the float test's allowance about ``1e-13`` to ``1e-11`` of its terms; the claim is one
#: margin more, proven by the search's test at ``u``: the checker, with its basis allowance, refused
#: claims 2.5e-11 above a face and accepted them 1.2e-10 above (2^-33 = 1.2e-10; at most 2^-30 in
#: all, within the search's ``tol`` 1e-9).
FACE_MARGINS = (2.0**-33, 2.0**-32, 2.0**-31)


def face_leaf(obj: Any, signs: np.ndarray, zero: np.ndarray, best: float, target: float,
              room: Callable[[float, tuple], float] | None = None, stated: Callable[[], Any] | None = None
              ) -> tuple[float, tuple] | None:
    """``(u, (dec, N, mu))`` with ``u <= target`` proven on the node by face multipliers (the
    checker's float test of lifted evidence), or None.  Tried only where a one-sample neuron of ``T``
    has the incumbent's value ``best`` (to two of the checker's ladder steps): the node's supremum
    may then be that neuron, on its boundary, and ``target`` (the level that settles the node) is
    reached at a margin of :data:`FACE_MARGINS` above it.  The multipliers are built and proven (by
    the search's copy of the checker's test) at ``u = lam + margin`` and claimed at ``u + max(margin,
    2 room(u, evidence))`` (``room``: the rounding room the checker's basis allowance may need,
    :meth:`~relu_gating.search.bnb._node_bounds.NodeBounds.lifted_room`): the slack there is
    ``(claim - u) B`` above one proven PSD; with ``stated`` (giving the search's stated problem) the
    checker's own float test (:func:`relu_gating.search.proofs.checker_lifted`) must then prove the
    claim as well (the margin alone left 4 of 25 leaves of a line query unproven there, 1 run in 2).  Each is first tested
    on ``T`` in floats (``R(u) - N`` positive semidefinite), then by the checker's test in the lifted
    coordinates."""
    from relu_gating.search._exact import faces as F
    from relu_gating.search.proofs import checker_lifted, lifted_leaf_bound

    live = ~zero
    plus, und = np.flatnonzero((signs > 0) & live), np.flatnonzero((signs == 0) & live)
    T = np.concatenate([plus, und])
    if und.size == 0 or not (np.isfinite(best) and np.isfinite(target)):
        return None
    v = np.nan_to_num(F.one_sample_values(obj)[T], nan=-np.inf)
    lo = best - 2 * F._STEP * max(1.0, abs(best))
    if not np.any((v >= lo) & (v <= target)):
        return None  # no one-sample neuron at the incumbent: nothing listed (a cheap filter)
    Qp = obj.Psi[plus]
    if plus.size < obj.rank or np.linalg.matrix_rank(Qp) < obj.rank:
        return None  # h = 0 for some x != 0: the lifted slack is singular there, never proven in floats
    Ah, Bh = F._float_forms(obj, T)
    for lam, sup, h in F._one_sample_faces(Ah, Bh, lo, target)[:F.FACE_TRIES]:
        for margin in FACE_MARGINS:
            u = lam + margin * max(1.0, abs(lam))
            if u + margin * max(1.0, abs(lam)) > target:
                break
            R = u * Bh - Ah
            ev = _evidence(R, sup, h, plus, und.size)
            if ev is None or np.linalg.eigvalsh(R - _dense(ev[1], T.size))[0] < -1e-12 * max(1.0, abs(u)):
                continue
            claim = u + max(margin * max(1.0, abs(lam)), 0.0 if room is None else 2.0 * room(u, ev))
            if claim <= target and np.isfinite(lifted_leaf_bound(obj.Psi, obj.M, obj.Q_H, signs, zero, u, *ev)) \
                    and (stated is None or checker_lifted(stated(), signs, claim, *ev)):
                return claim, ev  # proven at u by the search's test, and at the claim by the checker's
    return None


def _dense(N: dict, t: int) -> np.ndarray:
    """The ``t x t`` block of the sparse lifted ``N`` on the rows of ``T`` (its first ``t`` rows)."""
    out = np.zeros((t, t))
    E = np.asarray(N["entries"])
    k, l = E[:, 0].astype(np.int64), E[:, 1].astype(np.int64)
    out[k, l] = out[l, k] = E[:, 2]
    return out


def _evidence(R: np.ndarray, sup: tuple, h: np.ndarray, plus: np.ndarray, k: int) -> tuple | None:
    """Lifted evidence ``(dec, N, mu)`` from the face multipliers on ``T`` (:func:`relu_gating.search.
    _exact.faces._multipliers`, its ``"kkt"`` variant, at the slack ``R``): ``dec`` the rows of ``F+``,
    ``N`` sparse on the rows of ``dec`` (``T``'s first ``|F+|`` positions) and of ``y`` (the next
    ``|U|``), ``mu = 0``; None when ``N`` would be 0 (then the lifted bound is tried as before)."""
    from relu_gating.search._exact import faces as F

    N = F._multipliers([[Fraction(float(x)) for x in row] for row in R], sup, h, "kkt")
    kk, ll = np.nonzero(np.triu(N, 1))
    if kk.size == 0:
        return None
    entries = np.column_stack([kk, ll, N[kk, ll]]).astype(float)  # T's position is the row of G
    return np.asarray(plus, dtype=np.int64), {"p": int(plus.size + 2 * k), "entries": entries}, np.zeros(k)
