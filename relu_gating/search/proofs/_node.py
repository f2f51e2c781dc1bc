"""The branch and bound's node bound, and the tree certificate it proves (private; the certificate
is written by :func:`relu_gating.certificate.result_to_dict`, laid out in ``FORMAT.md``, and checked
by :mod:`relu_gating.checker._tree`, with its own primitives).

A node of the tree is the closed cone of weights on which some rows of ``Phi``
have a fixed sign (``+1`` active, ``-1`` inactive, ``0`` undecided); the root
fixes nothing (rows of ``Phi`` that are exactly zero are always inactive).
Nodes are listed in preorder, each a short JSON list:

* ``["s", i]``: split on the sign of row ``i`` (undecided here); the ``+``
  subtree follows, then the ``-`` subtree;
* ``["i", i, s, rows]``: row ``i`` has sign ``s`` on the whole node, because
  ``s phi_i`` is a nonnegative combination of the signed rows ``rows``
  (Farkas), checked in exact rational arithmetic; one subtree follows;
* ``["b", u]``: a leaf bounded by ``u`` from its signs alone (:func:`node_bound`);
* ``["c", u, rows, N]``: a chamber leaf (every nonzero row decided) bounded by
  ``u`` from its signs or by dual evidence (``u B_S - A_S - G_T^T N G_T`` PSD);
* ``["x"]``: a chamber leaf all of whose neurons are excluded; ``["x", rows, y]``: a chamber
  leaf holding only ``h = 0``, by an exact positive dependency of its signed rows
  (:mod:`relu_gating.search.bnb._zero`).
* ``["d", u, dec, N, mu]``: a leaf of any depth bounded by ``u`` from lifted evidence
  coupling its undecided rows (:mod:`relu_gating.search.proofs._lifted`).

Every weight lies in some leaf's closed cone (a split covers its parent; an
implied sign loses only the face ``phi_i theta = 0``, which the child holds),
so the largest proven leaf bound bounds every neuron.

The node bound.  With ``F+``/``F-`` the rows fixed active/inactive and ``U``
the undecided ones, every neuron of the node lies in
``S = col(D+ Q) + span{e_i : i in U}``, so ``G(h) <= lambda_max(M^T P_{S+H} M)
= lambda_max(M^T M - M^T P_Z M)`` for any ``Z`` orthogonal to ``S + H``.  Here
``Z`` is the orthogonal sum of the complement, inside the ``F-`` coordinates,
of ``col(QH_{F-})`` and, inside the ``F+`` coordinates, of ``col(X+)`` with
``X+ = Q_{F+}`` (``[Q_{F+}, QH_{F+}]`` when ``H`` is not in ``col(Phi)``).  A
computed basis ``O`` of ``col(X)`` gives ``||P_X - O O^T|| <= eta``, proven a
posteriori from the residuals ``O^T O - I`` and ``X - O O^T X`` with float error
bounds (:func:`_projector_gap`; nothing is trusted from the SVD), which adds at
most ``eta ||M||_F^2``; a block whose proven ``sigma_min(X)`` is below
``SIGMA_MIN`` is dropped (a smaller ``Z``: still valid).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from relu_gating._inputs.scaling import pow2_norms
from relu_gating.search.proofs._farkas import implied_exact
from relu_gating.search.proofs._problem import pow2_scales
from relu_gating.search.proofs._pattern import _allow

__all__ = ["NodeProblem", "node_problem", "node_bound", "bound_matrix", "bound_parts", "implied_exact", "chamber_bound",
           "SIGMA_MIN"]

#: A complement block whose spanning matrix has a smaller singular value is dropped.
SIGMA_MIN = 1e-6
_EPS = np.finfo(float).eps


class NodeProblem:
    """The data of the node bound: ``Q`` (basis of ``col(Phi)``), ``M``, ``QH`` and ``Hp``, the
    feature columns the ``+`` block keeps (:func:`plus_features`; None when it keeps none);
    ``Phis`` and ``Hs``, ``Phi`` and ``H`` with columns scaled by powers of two (exact data, for
    the whitened bases of ill-conditioned blocks)."""

    def __init__(self, Q: np.ndarray, M: np.ndarray, QH: np.ndarray | None, Hp: np.ndarray | None,
                 zero_rows: np.ndarray, cap: float, Phis: np.ndarray, Hs: np.ndarray | None) -> None:
        self.Q, self.M, self.QH, self.Hp, self.zero_rows = Q, M, QH, Hp, zero_rows
        self.Phis, self.Hs = Phis, Hs
        self.cap = cap
        self.n, self.r = Q.shape
        self.K = M.shape[1]
        self.q = 0 if QH is None else QH.shape[1]
        self.MtM = M.T @ M
        self.trM = float(np.trace(self.MtM))
        self.form = _allow(self.n, self.K + self.r + self.q) * (3.0 * self.trM + 1.0)

    def plus_span(self, rows: np.ndarray, cols: np.ndarray | None = None, exact: bool = False) -> np.ndarray:
        """``[Q, Hp]`` on ``rows`` (``[Phis, Hp]`` with ``exact``): spans ``[Phi, H]`` there
        (:func:`plus_features`). ``Hp``'s columns ``cols``, by default those not exactly 0 on
        ``rows`` (dropping those changes no span)."""
        B = (self.Phis if exact else self.Q)[rows]
        if self.Hp is None:
            return B
        Hb = self.Hp[rows]
        return np.hstack([B, Hb[:, np.any(Hb != 0, axis=0) if cols is None else cols]])

    def plus_columns(self, rows: np.ndarray) -> np.ndarray | None:
        """The columns of ``Hp`` that :meth:`plus_span` keeps on ``rows``."""
        return None if self.Hp is None else np.any(self.Hp[rows] != 0, axis=0)


def ones_column(Phi: np.ndarray) -> bool:
    """``Phi`` has a constant nonzero column (exactly): the bias lies in ``col(Phi)``."""
    return bool(np.any(np.all(Phi == Phi[:1], axis=0) & (Phi[0] != 0)))


def in_phi_columns(Phi: np.ndarray, H: np.ndarray) -> np.ndarray:
    """Which columns of ``H`` lie in ``col(Phi)``, decided exactly: a column equal to a column of
    ``Phi``, or a constant one when ``Phi`` has a constant nonzero column (the bias)."""
    const = np.all(H == H[:1], axis=0) & ones_column(Phi)
    equal = np.array([any(np.array_equal(H[:, j], Phi[:, k]) for k in range(Phi.shape[1]))
                      for j in range(H.shape[1])], dtype=bool)
    return const | equal


def plus_features(Phis: np.ndarray, Hs: np.ndarray | None) -> np.ndarray | None:
    """The columns of ``Hs`` not in ``col(Phis)`` (``H`` and ``Phi`` with columns scaled by powers
    of two; None when there are none).
    On any rows ``S``, ``span([Phi_S, H_S]) = span([Phi_S, H'_S])`` for those columns ``H'``: the
    ``+`` block, whose ``h`` is ``Phi_S theta``, may drop the others, and must (``[Phi_S, H_S]`` is
    then rank-deficient and its basis unprovable). Scaling by powers of two changes neither test."""
    if Hs is None:
        return None
    keep = ~in_phi_columns(Phis, Hs)
    return Hs[:, keep] if keep.any() else None


def node_problem(Phi: np.ndarray, Q: np.ndarray, M: np.ndarray, QH: np.ndarray | None,
                 H: np.ndarray | None, cap: float = np.inf) -> NodeProblem:
    """The node bound's data; ``H`` the features as a matrix (the ones column for the bias)."""
    Phis, Hs = Phi * pow2_scales(Phi), None if H is None else H * pow2_scales(H)
    return NodeProblem(Q, M, QH, plus_features(Phis, Hs), ~np.any(Phi != 0, axis=1), cap, Phis, Hs)


def _gamma(j: int) -> float:
    """Higham's ``gamma_j = j u / (1 - j u)``: relative error of a j-term float dot product."""
    return j * _EPS / (1.0 - j * _EPS)


def _fro(A: np.ndarray) -> float:
    """``np.linalg.norm(A)`` (Frobenius): the same dot product of the raveled array, without the
    dispatch (the node bound computes a dozen per block).  Where the sum of squares leaves
    ``[2^-900, 2^1000]`` (it overflowed, or entries near ``2^-537`` lost their squares) the norm is
    taken with each entry scaled by a power of two (:func:`pow2_norms`); ``nan`` stays ``nan``."""
    a = A.ravel()
    with np.errstate(over="ignore", invalid="ignore"):
        s = float(a @ a)
    if 2.0**-900 <= s <= 2.0**1000 or s == 0.0 and not a.any():
        return math.sqrt(s)
    return float(pow2_norms(a))


def _sigma_min_lower(Y: np.ndarray, Z: np.ndarray | None = None) -> float:
    """A proven lower bound on ``sigma_min(Y)`` of a small square ``Y`` (0 if none is found):
    with any ``Z ~ Y^{-1}`` (the inverse computed here when none is given) and
    ``beta >= ||I - Z Y||_2 < 1``, ``||Y^{-1}|| <= ||Z||_F / (1 - beta)``."""
    c = Y.shape[0]
    if Z is None:
        try:
            Z = np.linalg.inv(Y)
        except np.linalg.LinAlgError:
            return 0.0
    if not np.isfinite(Z).all():
        return 0.0
    with np.errstate(over="ignore", invalid="ignore"):  # Z far beyond 1/2^1000: beta inf or nan, no bound
        E = np.eye(c) - Z @ Y
        beta = (_fro(E) + _gamma(c + 1) * _fro(np.abs(Z) @ np.abs(Y)) + c * _EPS) * (1 + 4 * _EPS)
    if not beta < 0.5:
        return 0.0
    return (1.0 - beta) / (_fro(Z) * (1 + 4 * _EPS)) * (1 - 4 * _EPS)


def _projector_gap(O: np.ndarray, X: np.ndarray, Z: np.ndarray | None = None) -> tuple[float, float]:
    """``(eta, s)``: a proven ``eta >= ||P_X - O O^T||_2`` (``inf`` if none is found) and a proven
    ``s <= sigma_min(X)``, from residuals computed here (no trust in the SVD that gave ``O``;
    ``Z``, any approximate inverse of ``O^T X`` such as ``V diag(1/sv)`` from that SVD, only
    sharpens the bound when it is good).

    With ``delta >= ||O^T O - I||``, ``Y = O^T X`` and ``R = X - O Y``: ``sigma_min(X) >=
    sqrt(1 - delta) sigma_min(Y) - ||R||``; every unit ``x`` in ``col(X)`` is within ``||R|| /
    sigma_min(X)`` of ``col(O)`` (same dimension), and ``||P_O - O O^T|| <= (1 + delta) delta /
    (1 - delta)``.  Float products are bounded by ``gamma_j`` terms (Higham, Thm 3.5).
    """
    k, c = X.shape
    aO, aX = np.abs(O), np.abs(X)
    fO = _fro(O)
    delta = (_fro(O.T @ O - np.eye(c)) + _gamma(k + 1) * fO**2 + c * _EPS) * (1 + 4 * _EPS)
    if not delta < 0.5:
        return np.inf, 0.0
    Y = O.T @ X
    R = X - O @ Y
    aOX = aO.T @ aX
    rerr = _gamma(k + c + 2) * 2.0 * _fro(aO @ aOX) + _gamma(1) * _fro(aX)
    rho = (_fro(R) + rerr) * (1 + 4 * _EPS)
    yerr = _gamma(k) * _fro(aOX) * (1 + 4 * _EPS)
    sy = max(_sigma_min_lower(Y, Z) - yerr, 0.0)
    s = (math.sqrt(1.0 - delta) * sy - rho) * (1 - 4 * _EPS)
    if not s > 0:  # nan included: no float decides
        return np.inf, 0.0
    return (rho / s + (1 + delta) * delta / (1 - delta)) * (1 + 4 * _EPS), s


def _complement(Mb: np.ndarray, X: np.ndarray | None,
                exact: Callable[[], np.ndarray] | None = None) -> tuple[np.ndarray, float]:
    """``M_b^T (I - O O^T) M_b`` inside a block of coordinates (``O`` an orthonormal basis of
    ``col(X)`` from the SVD) and the proven allowance ``eta >= ||P_X - O O^T||``; ``(0, 0)`` when
    the complement is empty or ``X`` is too ill-conditioned to trust (dropping it is valid). Where
    it is, the whitened basis of ``exact()`` (the same column space in the stated data, not in a
    computed basis like ``Q``, whose rounding moves a nearly dependent span) is tried."""
    K = Mb.shape[1]
    if Mb.shape[0] == 0:
        return np.zeros((K, K)), 0.0
    if X is None or X.shape[1] == 0:
        return Mb.T @ Mb, 0.0
    k, c = X.shape
    if k <= c:
        return np.zeros((K, K)), 0.0
    O, sv, Vt = np.linalg.svd(X, full_matrices=False)
    with np.errstate(over="ignore"):  # sv[-1] subnormal: Z inf, which gives no bound (0), never a false one
        Z = Vt.T / sv if sv[-1] > 0 else None
    eta, s = _projector_gap(O, X, Z)
    if not np.isfinite(eta) or s <= SIGMA_MIN * max(1.0, float(sv[0])) or eta >= 1.0:
        O, eta = _whitened_basis(exact()) if exact is not None else (X, np.inf)
        if not eta < 1.0:
            return np.zeros((K, K)), 0.0
    C = Mb.T @ O
    return Mb.T @ Mb - C @ C.T, eta


def _whitened_basis(X: np.ndarray) -> tuple[np.ndarray, float]:
    """An orthonormal basis of ``col(X)`` from ``X W`` (``W`` the float inverse of ``X``'s R factor:
    the same column space whenever ``X W`` has full rank) and its proven ``eta`` (inf: none).

    For a nearly rank-deficient ``X`` whose last directions are small but real (features that equal
    ``Phi theta`` on a block's rows up to rounding, as a greedy layer's are): ``fl(X W)`` is
    computed in twice the working precision with a proven error ``||E||`` (``solvers.matmul2``),
    so ``sigma_min(X W) >= s - ||E|| > 0`` and ``||P_{XW} - P_{fl(XW)}|| <= ||E|| / (s - ||E||)``."""
    from solvers import matmul2

    with np.errstate(all="ignore"):
        try:
            W = np.linalg.inv(np.linalg.qr(X, mode="r"))
        except np.linalg.LinAlgError:
            return X, np.inf
        if not np.isfinite(W).all():
            return X, np.inf
        Xw, err = matmul2(X, W)
        if not (np.isfinite(err) and np.isfinite(Xw).all()):
            return X, np.inf
        O, sv, Vt = np.linalg.svd(Xw, full_matrices=False)
        eta, s = _projector_gap(O, Xw, Vt.T / sv if sv[-1] > 0 else None)
    if not (np.isfinite(eta) and s > err):
        return X, np.inf
    return O, float((eta + err / (s - err)) * (1 + 4 * _EPS))


def bound_matrix(P: NodeProblem, signs: np.ndarray) -> tuple[np.ndarray, float]:
    plus = (signs > 0) & ~P.zero_rows
    minus = (signs < 0) | P.zero_rows
    QHm = None if P.QH is None else P.QH[minus]
    Hs = P.Hs
    Cm, em = _complement(P.M[minus], QHm, None if Hs is None else lambda: Hs[minus])
    Cp, ep = _complement(P.M[plus], P.plus_span(plus), lambda: P.plus_span(plus, exact=True))
    T = P.MtM - Cm - Cp
    return 0.5 * (T + T.T), max(em, ep)


def bound_parts(P: NodeProblem, signs: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """:func:`node_bound` with its parts: ``(bound, z, T)``, ``z`` the top eigenvector of the
    K x K matrix ``T`` (``M z`` is the bound's maximizer off ``Z``)."""
    T, eta = bound_matrix(P, signs)
    w, V = np.linalg.eigh(T)
    return float(w[-1]) + eta * P.trM + P.form, V[:, -1], T


def node_bound(P: NodeProblem, signs: np.ndarray, want_vector: bool = False) -> Any:
    """Proven bound of the objective over the node with these signs (and, if asked, the top
    eigenvector ``z`` of the K x K matrix, whose ``M z`` is the bound's maximizer off ``Z``)."""
    u, z, _ = bound_parts(P, signs)
    return (u, z) if want_vector else u


def chamber_bound(S: Any, mask: np.ndarray, claim: float, rows: np.ndarray, N: np.ndarray) -> float:
    """Bound proven for a chamber's claim as for a pattern of the enumeration certificate: the pencil
    inequality at the claim, the support bound, the dual evidence ``(rows, N)`` (ignored if
    malformed), exactly where floats are too coarse (:func:`relu_gating.search.proofs._checker._prove`)."""
    from relu_gating.search.proofs._checker import _prove

    ok = rows.size == 0 or (rows.min() >= 0 and rows.max() < mask.size and np.all(np.isfinite(N)))
    evidence = {0: (rows, N)} if ok else {}  # no rows: the pencil's own bound, claim-free
    return float(_prove(S, mask[None], np.array([claim]), evidence, np.zeros(1, dtype=bool))[0])
