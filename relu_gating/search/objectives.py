"""Objectives of the best-neuron search, pattern by pattern (Prop 4.3, Prop 4.5).

A neuron is ``h = relu(Phi theta)``.  Two objectives are supported, both ratios
of quadratic forms on the cone ``C_S = {theta : (2S - I) Phi theta >= 0}`` of a
gating pattern ``S``:

* captured features (no features ``H``, Prop 4.3)

  .. math::  N_K(h) = \\frac{\\|U_K^T h\\|^2}{\\|h\\|^2}
             = \\frac{\\theta^T \\Phi^T S P_K S \\Phi \\theta}{\\theta^T \\Phi^T S \\Phi \\theta};

* marginal gain over features ``H`` (Prop 4.5), with ``M = (I - \\Pi_H) U_K``

  .. math::  G_H(h) = \\frac{\\|M^T h\\|^2}{\\|(I - \\Pi_H) h\\|^2}
             = \\frac{\\theta^T \\Phi^T S M M^T S \\Phi \\theta}
                     {\\theta^T \\Phi^T S (I - \\Pi_H) S \\Phi \\theta}.

Every floating-point computation on pencils is done in a well-conditioned
basis of ``col(Phi)``, never in the user's coordinates: the columns of ``Phi``
are scaled by exact powers of two and ``Psi`` is an orthonormal basis of the
column space (``Phi theta = Psi v`` with ``v = to_coords theta`` and
``theta = to_theta v``).  The neurons of ``Phi`` and of ``Phi R`` (``R``
invertible: a translation of ``X``, a change of units, a rotation) are the same
set, so no answer depends on the data's coordinates (SPEC section 4).  Neurons with ``h = 0`` or ``h`` in
``col(H)`` are excluded (value ``nan``), never scored 0/0.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from relu_gating._inputs.scaling import pow2_column_scales, pow2_norms
from relu_gating._inputs.validate import as_matrix, as_vector, check_same_rows
from relu_gating.search._kernels.masked import MaskStack
from relu_gating.coverage.metrics import check_basis
from relu_gating.errors import InputError

__all__ = [
    "Objective",
    "make_objective",
    "with_rank",
    "column_basis",
    "feature_allowances",
    "pattern_matrices",
    "leverage_bounds",
    "support_bounds",
    "neuron_values",
    "vector_values",
    "pencil_values",
    "neuron_value",
    "cone_constraints",
    "containment_remark",
    "EXCLUDE_RTOL",
]

#: Orthonormality required of ``U_K`` (the bounds rely on ``P_K <= I``).
UK_ORTHONORMAL_TOL = 1e-10

#: A neuron whose part outside ``col(H)`` is below this fraction of ``||h||``
#: counts as lying in ``col(H)`` and is excluded.
EXCLUDE_RTOL = 1e-9


@dataclass(frozen=True)
class Objective:
    """Precomputed data of one best-neuron query.

    Attributes
    ----------
    Phi : ndarray, shape (n, m)
    U_K : ndarray, shape (n, K)
    Psi : ndarray, shape (n, r)
        Orthonormal basis of ``col(Phi)`` (``r`` = rank): the coordinates in
        which every pencil is formed.
    to_theta : ndarray, shape (m, r)
        Maps coordinates to weights: ``Phi @ (to_theta @ v) = Psi @ v``.
    to_coords : ndarray, shape (r, m)
        Maps weights to coordinates: ``Psi @ (to_coords @ theta) = Phi @ theta``.
    M : ndarray, shape (n, K)
        ``(I - Pi_H) U_K`` (``U_K`` when there are no features).
    Q_H : ndarray, shape (n, q) or None
        Orthonormal basis of ``col(H)``.
    cap : float
        Global bound on the objective: 1 for ``N_K``, ``s_K(H)^2`` for ``G_H``.
    kind : {"captured", "marginal"}
    features : {"none", "bias", "array"}
        How the features were given.
    H : ndarray, shape (n, q) or None
        The features as given.
    H_basis : relu_gating._inputs.feature_basis.FeatureBasis or None
        ``col(H)`` with its rank decided exactly, ``Q_H`` its float basis, with proven error bounds.
    M_error : float
        Proven ``||M - (I - Pi_H) U_K||_2`` (the float basis ``Q_H``'s error ``eta_H`` and the
        rounding of ``M``; 0 without features): :func:`feature_allowances`.
    """

    Phi: np.ndarray
    U_K: np.ndarray
    Psi: np.ndarray
    to_theta: np.ndarray
    to_coords: np.ndarray
    M: np.ndarray
    Q_H: np.ndarray | None
    cap: float
    kind: str
    features: str = "none"
    features_sha256: str | None = None
    H: np.ndarray | None = None
    H_basis: Any = None
    M_error: float = 0.0

    @property
    def H_pivots(self) -> tuple:
        """The independent columns of the feature matrix (decided exactly; ``Q_H`` spans them)."""
        return () if self.H_basis is None else self.H_basis.pivots

    @property
    def eta_H(self) -> float:
        """Proven ``||Q_H Q_H^T - Pi_H||_2`` (``inf`` where none is found: nearly dependent features)."""
        return 0.0 if self.H_basis is None else self.H_basis.eta

    @property
    def n(self) -> int:
        return self.Phi.shape[0]

    @property
    def rank(self) -> int:
        return self.Psi.shape[1]

    @property
    def feature_matrix(self) -> np.ndarray | None:
        """The features as a matrix: the ones column for ``"bias"``, None without features."""
        return np.ones((self.n, 1)) if self.features == "bias" else self.H

    @property
    def stated_features(self) -> Any:
        """The features as a caller states them to the verifier: None, ``"bias"`` or the matrix ``H``."""
        return {"none": None, "bias": "bias"}.get(self.features, self.H)


def resolve_features(features: Any, n: int) -> np.ndarray | None:
    """Turn the ``features`` argument into an (n, q) matrix or None.

    ``None`` or ``"none"``: no features (objective ``N_K``); ``"bias"``: the
    ones column; otherwise an array with n rows.
    """
    if features is None or (isinstance(features, str) and features == "none"):
        return None
    if isinstance(features, str):
        if features == "bias":
            return np.ones((n, 1))
        raise InputError(f"features must be None, 'none', 'bias' or an array with n = {n} rows, got {features!r}")
    H = as_matrix(features, "features", allow_1d=True)
    check_same_rows(n, features=H)
    if not np.any(H):
        raise InputError("features is all zeros (empty features): pass features=None for the N_K objective")
    return H


def make_objective(Phi: Any, U_K: Any, features: Any = None, *, rank: int | None = None) -> Objective:
    """Validate the inputs of a query and precompute its objective data.

    Parameters
    ----------
    Phi : array_like, shape (n, m)
        Layer input (typically ``[H_{l-1}, 1]``), samples as rows.
    U_K : array_like, shape (n, K)
        Orthonormal low-frequency basis.
    features : None, "none", "bias" or array_like, shape (n, q)
        Features already in the layer; None selects the ``N_K`` objective.
    rank : int, optional
        Rank of ``Phi`` if already decided exactly (by the pattern enumerator);
        otherwise decided by SVD with a relative tolerance.
    """
    Phi = as_matrix(Phi, "Phi")
    n, m = Phi.shape
    U_K = check_basis(U_K, "U_K", n=n)
    K = U_K.shape[1]
    gram_err = np.abs(U_K.T @ U_K - np.eye(K)).max()
    if gram_err > UK_ORTHONORMAL_TOL:  # the bounds rely on P_K <= I
        raise InputError(f"U_K must have orthonormal columns to {UK_ORTHONORMAL_TOL:g} for a certified search "
                         f"(max |U_K^T U_K - I| = {gram_err:.2e}); orthonormalize it, e.g. np.linalg.qr(U_K)[0]")
    if not np.any(Phi):
        raise InputError("Phi is all zeros: every neuron is dead")
    H = resolve_features(features, n)
    Psi, to_theta, to_coords = column_basis(Phi, rank)
    basis = None
    if H is None:
        Q_H, M, cap, kind = None, U_K.copy(), 1.0, "captured"
    else:
        from relu_gating._inputs.feature_basis import feature_basis, m_error

        basis = feature_basis(H)  # the rank of H decided exactly, never by a float threshold
        Q_H = basis.Q
        M = U_K - Q_H @ (Q_H.T @ U_K)
        m_err = m_error(U_K, Q_H, basis.eta)
        # ||(I - Pi_H) U_K||_2 <= ||M||_2 + M_error (the float 2-norm taken to within 1e-12)
        cap = float(min(1.0, (np.linalg.norm(M, 2) * (1 + 1e-12) + m_err) ** 2))
        kind = "marginal"
    spec = "none" if H is None else ("bias" if isinstance(features, str) else "array")
    sha = None
    if spec == "array":
        a = np.ascontiguousarray(H, dtype=np.float64)
        sha = hashlib.sha256(str(a.shape).encode() + a.tobytes()).hexdigest()
    return Objective(Phi=Phi, U_K=U_K, Psi=Psi, to_theta=to_theta, to_coords=to_coords, M=M, Q_H=Q_H,
                     cap=cap, kind=kind, features=spec, features_sha256=sha, H=H, H_basis=basis,
                     M_error=0.0 if H is None else m_err)


_EPS = float(np.finfo(float).eps)


def feature_allowances(obj: "Objective", Psi: np.ndarray | None = None) -> tuple[float, float]:
    """``(a, b)``: proven bounds on the distance of every pattern's true pencil from the one the float
    bounds form with ``M`` and ``Q_H`` (:func:`relu_gating._inputs.feature_basis.pencil_allowances`
    with the proven ``eta_H`` and ``M_error``); ``(0, 0)`` without features."""
    from relu_gating._inputs.feature_basis import pencil_allowances

    if obj.Q_H is None:
        return 0.0, 0.0
    return pencil_allowances(obj.eta_H, obj.M_error, obj.Psi if Psi is None else Psi, obj.U_K.shape[1])


def column_basis(Phi: np.ndarray, rank: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A well-conditioned basis of ``col(Phi)`` and the maps between weights and coordinates.

    The columns are equilibrated by exact powers of two (:func:`relu_gating._inputs.scaling.pow2_column_scales`),
    then ``Phi D = U diag(s) W^T`` (SVD) and ``Psi = U[:, :r]``: orthonormal,
    whatever the units or offsets of the data.  Translating ``X`` leaves
    ``col(Phi)`` unchanged, and its basis is then as accurate as backward
    stability allows (angles of order ``eps * ||Phi D|| / s_r``).  A singular value below
    ``eps * s_0`` (rounding noise) is held at that level in the maps.

    Parameters
    ----------
    Phi : ndarray, shape (n, m)
    rank : int, optional
        The exact rank (decided by the pattern enumerator); otherwise decided
        from the singular values of ``Phi D`` with a relative tolerance.

    Returns
    -------
    Psi : ndarray, shape (n, r)
    to_theta : ndarray, shape (m, r)
        ``theta = to_theta @ v`` gives ``Phi theta = Psi v``.
    to_coords : ndarray, shape (r, m)
        ``v = to_coords @ theta`` (the least-squares coordinates of ``Phi theta``).
    """
    n, m = Phi.shape
    d = pow2_column_scales(Phi)
    U, s, Wt = np.linalg.svd(Phi * d, full_matrices=False)
    if rank is None:
        rank = int(np.sum(s > max(n, m) * np.finfo(float).eps * s[0]))
    Psi = U[:, :rank].copy()
    # a singular value below rounding (eps s_0) is rounding noise whatever its value (0 or subnormal on some
    # LAPACK builds, ~eps s_0 on others): held at that level, so the maps stay finite; every claim is exact
    sr = np.maximum(s[:rank], np.finfo(float).eps * s[0]) if rank else s[:0]
    to_theta = (d[:, None] * Wt[:rank].T) / sr
    to_coords = (sr[:, None] * Wt[:rank]) / d
    return Psi, to_theta, to_coords


def with_rank(obj: Objective, rank: int) -> Objective:
    """The same objective in coordinates of the given (exact) rank.

    Returns ``obj`` itself when its rank already agrees (the usual case);
    otherwise recomputes the basis only.
    """
    if rank == obj.rank:
        return obj
    Psi, to_theta, to_coords = column_basis(obj.Phi, rank)
    return dataclasses.replace(obj, Psi=Psi, to_theta=to_theta, to_coords=to_coords)


def pattern_matrices(obj: Objective, masks: np.ndarray | MaskStack) -> tuple[np.ndarray, np.ndarray]:
    """Pencils ``(A_S, B_S)`` in row-space coordinates for a stack of masks.

    Parameters
    ----------
    obj : Objective
    masks : ndarray of bool, shape (N, n), or MaskStack
        A :class:`~relu_gating._maskstack.MaskStack` reuses its rank-one
        update plan across calls.

    Returns
    -------
    A, B : ndarray, shape (N, r, r)
    """
    ms = masks if isinstance(masks, MaskStack) else MaskStack(masks)
    C = ms.products(obj.M, obj.Psi)  # M^T S Psi, (N, K, r)
    A = np.einsum("nki,nkj->nij", C, C)
    B = ms.products(obj.Psi, obj.Psi)  # Psi^T S Psi
    if obj.Q_H is not None:
        D = ms.products(obj.Q_H, obj.Psi)  # Q^T S Psi
        B = B - np.einsum("nki,nkj->nij", D, D)
    return A, 0.5 * (B + np.transpose(B, (0, 2, 1)))


def single_pattern_matrices(obj: Objective, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Accurate ``(A_S, B_S, G_S)`` of one pattern for an exact per-pattern solve.

    ``B_S`` is formed from ``R = (I - Pi_H) S Psi`` as ``R^T R`` (no
    cancellation); ``G_S = (2S - I) Psi`` restricted to the nonzero rows.
    """
    SPsi = obj.Psi * mask[:, None]
    R = SPsi if obj.Q_H is None else SPsi - obj.Q_H @ (obj.Q_H.T @ SPsi)
    C = obj.M.T @ SPsi
    A = C.T @ C
    B = R.T @ R
    nz = np.any(obj.Phi != 0, axis=1)
    G = (np.where(mask, 1.0, -1.0)[:, None] * obj.Psi)[nz]
    return 0.5 * (A + A.T), 0.5 * (B + B.T), G


def leverage_bounds(obj: Objective, masks: np.ndarray | MaskStack) -> np.ndarray:
    """Prop 4.1 bound ``||U_K[A,:]||_2^2 <= min(1, sum_A l_i)`` per mask.

    Valid for the ``N_K`` objective only, whatever the conditioning of
    ``B_S``; for the marginal gain the global cap ``s_K(H)^2`` is returned.
    """
    ms = masks if isinstance(masks, MaskStack) else MaskStack(masks)
    if obj.kind != "captured":
        return np.full(len(ms), obj.cap)
    G = ms.products(obj.U_K, obj.U_K)
    top = np.linalg.eigvalsh(G)[:, -1]
    lev = ms.apply(np.sum(obj.U_K**2, axis=1)[:, None])[:, 0]
    K = obj.U_K.shape[1]
    return np.minimum(np.minimum(top + 64 * K * np.finfo(float).eps, 1.0), lev + 1e-15)


def pencil_values(A: np.ndarray, B: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Quotients ``x^T A x / x^T B x`` for stacks (``nan`` where ``x^T B x <= 0``).

    A cheap stand-in for :func:`neuron_values` when ``x`` lies in the closed
    cone of the pencil's pattern; used only for incumbents, never reported.
    """
    num = np.einsum("ni,nij,nj->n", x, A, x)
    den = np.einsum("ni,nij,nj->n", x, B, x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def vector_values(obj: Objective, Hn: np.ndarray) -> np.ndarray:
    """Objective of each column of ``Hn`` (shape (n, N)) taken as a neuron ``h``.

    ``nan`` marks an excluded vector (``h = 0``, or ``h`` in ``col(H)`` up to
    ``EXCLUDE_RTOL``).
    """
    hh = np.sum(Hn**2, axis=0)
    if obj.Q_H is None:
        num = np.sum((obj.U_K.T @ Hn) ** 2, axis=0)
        den = hh
    else:
        Y = Hn - obj.Q_H @ (obj.Q_H.T @ Hn)
        num = np.sum((obj.M.T @ Y) ** 2, axis=0)  # M^T Y = U^T (I - Pi_H) Y: projected twice, less cancellation
        den = np.sum(Y**2, axis=0)
    ok = (hh > 0) & (den > (EXCLUDE_RTOL**2) * hh)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, num / np.where(ok, den, 1.0), np.nan)


def support_bounds(obj: Objective, masks: np.ndarray, max_support: int = 32) -> np.ndarray:
    r"""Bound of the marginal gain over all ``h`` supported on the active set.

    .. math::  \max_{h \ne 0,\ \operatorname{supp} h \subseteq A} G_H(h)
               = \lambda_{\max}\big(M_A M_A^T,\ I - Q_A Q_A^T\big),

    the analogue of Prop 4.1 for ``G_H``: it does not depend on ``Phi``, so it
    stays sharp where ``B_S`` is ill-conditioned (active rows dependent to
    within rounding).  ``+inf`` where ``|A| > max_support`` or the pencil is
    itself ill-conditioned; the global cap for the ``N_K`` objective, whose
    Prop 4.1 bound is :func:`leverage_bounds`.
    """
    from solvers import top_generalized_eig

    masks = np.atleast_2d(masks)
    out = np.full(masks.shape[0], np.inf)
    if obj.Q_H is None:
        return out
    sizes = masks.sum(axis=1)
    for a in np.unique(sizes):
        if a == 0 or a > max_support:
            continue
        rows = np.flatnonzero(sizes == a)
        idx = np.nonzero(masks[rows])[1].reshape(rows.size, a)  # active samples per pattern
        Ma, Qa = obj.M[idx], obj.Q_H[idx]  # (k, a, K), (k, a, q)
        A = Ma @ np.transpose(Ma, (0, 2, 1))
        B = np.eye(a) - Qa @ np.transpose(Qa, (0, 2, 1))
        out[rows] = _with_basis_error(obj, A, B, top_generalized_eig(A, B).upper)
    return out


def _with_basis_error(obj: Objective, A: np.ndarray, B: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Bounds ``mu`` of the float support pencils ``(M_A M_A^T, I - Q_A Q_A^T)`` (k, a, a) made bounds
    of the true ones (``(I - Pi_H) U_K`` and ``Pi_H`` in place of ``M`` and ``Q_H Q_H^T``): with
    ``||A' - A|| <= alpha``, ``||B' - B|| <= beta`` and ``w <= lambda_min(B)`` (a float eigenvalue
    less its allowance), ``v^T A' v <= mu v^T B' v + (mu beta + alpha) |v|^2`` and
    ``v^T B' v >= (w - beta) |v|^2`` give ``mu + (mu beta + alpha) / (w - beta)``; ``inf`` where
    ``w <= beta``."""
    if not np.any(np.isfinite(mu)):
        return mu
    a, K = A.shape[1], obj.M.shape[1]
    nU = np.sqrt(1.0 + K * (UK_ORTHONORMAL_TOL + 1e-12))
    d = obj.M_error
    alpha = (2.0 * (nU + d) * d + d * d) * (1 + 1e-6)
    beta = obj.eta_H * (1 + 1e-6)
    w = np.linalg.eigvalsh(B)[:, 0] - 8.0 * (obj.n + a * a) * _EPS * np.abs(np.einsum("kii->k", B)) - 1e-300
    ok = np.isfinite(mu) & (w > beta)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = mu + (np.abs(mu) * beta + alpha) / np.where(ok, w - beta, 1.0) * (1 + 1e-6)
    return np.where(ok, out, np.inf)


#: ``col(Phi)`` within this (spectral norm, orthonormal bases) of ``col(features)`` is "contained to
#: within rounding" for :func:`containment_remark`.
CONTAINMENT_RTOL = 1e-12


def containment_remark(obj: Objective) -> str | None:
    """A remark for a result whose bounds were not all proven: ``col(Phi)`` lies in ``col(features)``
    to within rounding (a float hint: it decides nothing).  Where the containment holds only to
    rounding (features built from float products, ``relu(p) - relu(-p) = p`` to 1e-16), the neurons
    near ``col(features)`` have a residual made of rounding and their bounds cannot be proven tight."""
    if obj.Q_H is None or obj.rank == 0:
        return None
    gap = float(np.linalg.norm(obj.Psi - obj.Q_H @ (obj.Q_H.T @ obj.Psi), 2))
    if gap > CONTAINMENT_RTOL:
        return None
    return (f"col(features) contains col(Phi) to within {gap:.1e}: if only by rounding, the neurons near "
            f"col(features) have an objective set by rounding and their bounds cannot be proven tight; "
            f"state such features exactly (e.g. data and weights on a dyadic grid, docs/experiments.md)")


def neuron_values(obj: Objective, thetas: np.ndarray) -> np.ndarray:
    """Objective value of ``relu(Phi theta)`` for each row of ``thetas``.

    Recomputed from the neuron itself, never from a pencil (floats: the value a result reports is
    :func:`relu_gating.search._value.reported_value`'s, proven to 1e-10 or exact). ``nan`` marks an
    excluded neuron (``h = 0``, or ``h`` in ``col(H)`` up to ``EXCLUDE_RTOL``).
    """
    thetas = np.atleast_2d(thetas)
    Hn = np.maximum(_products(obj.Phi, thetas), 0.0)
    top = Hn.max(axis=0, initial=0.0)
    with np.errstate(under="ignore"):  # a ratio: each neuron brought to a largest entry in [0.5, 1) by a power of
        Hn = np.ldexp(Hn, -np.frexp(np.where(top > 0, top, 1.0))[1])  # two (tiny neurons: squares underflowed)
    vals = vector_values(obj, Hn)
    if obj.Q_H is not None:  # nearly in col(H): floats cancel, the value is recomputed exactly
        Y = Hn - obj.Q_H @ (obj.Q_H.T @ Hn)
        hh, yy = np.sum(Hn**2, axis=0), np.sum(Y**2, axis=0)
        for k in np.flatnonzero((hh > 0) & (yy < EXACT_VALUE_BELOW * hh)).tolist():
            vals[k] = _exact_value(obj, thetas[k], float(vals[k]))
    return vals


#: ``Phi theta`` is recomputed in twice the working precision (``solvers.matmul2``) when its a priori
#: rounding error may exceed this fraction of ``||Phi theta||``: on translated data (a shift of 8,192 on a
#: spread of 1) the weights cancel over seven digits, and the float value of the optimum of a dyadic
#: instance came out 2.5e-10 below its exact value and was not certified (``tests/test_invariance.py``).
CANCELLATION_RTOL = 1e-13


def _products(Phi: np.ndarray, thetas: np.ndarray) -> np.ndarray:
    """``Phi @ thetas.T`` (a column scaled by a power of two, exactly, where it could overflow: the
    objective is a ratio), the columns with heavy cancellation (:data:`CANCELLATION_RTOL`) recomputed
    in twice the working precision."""
    m = Phi.shape[1]
    with np.errstate(over="ignore"):
        size = np.abs(Phi).max(axis=0) @ np.abs(thetas.T)  # >= the largest row's |phi_i| |theta|
    far = np.flatnonzero(~(size < 2.0**1000))
    if far.size:  # large entries times large weights: each such theta brought to a largest weight 2^-bits(m)
        k = (np.frexp(np.abs(thetas[far]).max(axis=1))[1] + m.bit_length() + 1)[:, None]
        with np.errstate(under="ignore"):
            ts = np.ldexp(thetas[far], -k)
        ok = np.all(np.ldexp(ts, k) == thetas[far], axis=1)  # exact multiples only
        thetas = thetas.copy()
        thetas[far[ok]] = ts[ok]
        with np.errstate(over="ignore"):
            size = np.abs(Phi).max(axis=0) @ np.abs(thetas.T)
    with np.errstate(over="ignore", invalid="ignore"):
        P = Phi @ thetas.T
    err = (m * np.finfo(float).eps) * size
    bad = np.flatnonzero(err * np.sqrt(Phi.shape[0]) > CANCELLATION_RTOL * pow2_norms(P, axis=0))
    if bad.size:
        from solvers import matmul2

        P[:, bad] = matmul2(Phi, np.ascontiguousarray(thetas[bad].T))[0]
    return P


#: A neuron whose part off ``col(H)`` has less than this fraction of its squared norm gets its value in
#: exact rationals (:func:`_exact_value`): near-degenerate features (``H`` within 1e-9 of ``col(Phi)``)
#: put the float value 3e-9 off the exact one (``tests/internals/test_near_degenerate.py``, near_features
#: seed 4, with some BLAS kernels), and the verifier, which recomputes it exactly there, refused it.
EXACT_VALUE_BELOW = 1e-6


def _exact_value(obj: Objective, theta: np.ndarray, fallback: float) -> float:
    """The objective of ``relu(Phi theta)`` in exact rationals (``nan`` when excluded), rounded once
    (:func:`relu_gating.search._value.exact_value`); ``fallback`` (the float value) without features."""
    if obj.feature_matrix is None:
        return fallback
    from relu_gating.search._value import exact_value

    return exact_value(obj, theta)


def normalized_theta(obj: Objective, theta: np.ndarray) -> np.ndarray:
    """``theta`` times the positive factor making ``||(I - Pi_H) relu(Phi theta)|| = 1`` (``||h||`` without H).

    The gating pattern and the value are unchanged (both objectives are ratios);
    returned unchanged when that norm is 0 (an excluded neuron).
    """
    theta = np.asarray(theta, dtype=np.float64)
    top = float(np.abs(theta).max(initial=0.0))
    if not (top > 0 and np.isfinite(top)):
        return theta
    # h of theta 2^-k, k bringing the largest weight to 2^-(bit_length(m) + 1): no product or sum overflows;
    # its norm as a mantissa and an exponent (pow2_norms), so that theta / ||h|| is formed by one division
    k = int(np.frexp(top)[1]) + obj.Phi.shape[1].bit_length() + 1
    with np.errstate(under="ignore"):
        h = np.maximum(obj.Phi @ np.ldexp(theta, -k), 0.0)
    if obj.Q_H is not None:
        h = h - obj.Q_H @ (obj.Q_H.T @ h)
    norm = float(pow2_norms(h))
    if not (norm > 0 and np.isfinite(norm)):
        return theta
    f, e = np.frexp(norm)  # ||h(theta)|| = f 2^(e + k)
    q = theta / f  # f in [0.5, 1): no overflow or underflow beyond theta's own
    with np.errstate(under="ignore", over="ignore"):
        out = np.ldexp(q, -(int(e) + k))
        exact = np.array_equal(np.ldexp(out, int(e) + k), q)  # no weight lost bits to the float range
    return out if exact else theta


def neuron_value(Phi: Any, U_K: Any, theta: Any, features: Any = None) -> float:
    """Objective value of the single neuron ``h = relu(Phi theta)``.

    ``N_K(h)`` without features (Lemma 3.5(iii)), the marginal gain ``G_H(h)``
    of Prop 4.5 with features.  Raises :class:`InputError` for an excluded
    neuron (``h = 0`` or ``h`` in ``col(H)``).
    """
    from relu_gating.search._value import reported_value

    obj = make_objective(Phi, U_K, features)
    theta = as_vector(theta, "theta", size=obj.Phi.shape[1])
    v, evaluated = reported_value(obj, theta)
    if np.isnan(v):
        raise InputError("theta gives an excluded neuron: relu(Phi theta) is 0 or lies in col(features)")
    if not evaluated:
        raise InputError("the value of theta cannot be evaluated to 1e-10 here: the features are too nearly "
                         "dependent for floats and the problem too large for exact rationals")
    return v


def cone_constraints(Phi: Any, S: Any, theta_var: Any) -> list:
    """The cone ``C_S = {theta : (2S - I) Phi theta >= 0}`` as cvxpy constraints.

    Parameters
    ----------
    Phi : array_like, shape (n, m)
    S : array_like of bool/0-1, shape (n,)
        The gating pattern (1 = active).
    theta_var : cvxpy.Variable, shape (m,)

    Returns
    -------
    list of cvxpy constraints
        One vector inequality; compose it with any cvxpy objective.

    Examples
    --------
    >>> import cvxpy as cp, numpy as np
    >>> Phi = np.array([[1., 1.], [-1., 1.]])
    >>> t = cp.Variable(2)
    >>> cons = cone_constraints(Phi, [1, 0], t)
    >>> p = cp.Problem(cp.Maximize(t[0]), cons + [cp.norm(t, 2) <= 1]); _ = p.solve()
    >>> bool(np.all((Phi @ t.value) * np.array([1, -1]) >= -1e-6))
    True
    """
    Phi = as_matrix(Phi, "Phi")
    S = as_vector(S, "S", size=Phi.shape[0])
    if not np.all((S == 0) | (S == 1)):
        raise InputError("S must be a 0/1 (or boolean) vector")
    import solvers

    shape = getattr(theta_var, "shape", None)
    if shape != (Phi.shape[1],):
        raise InputError(f"theta_var must be a cvxpy Variable of shape ({Phi.shape[1]},), got shape {shape}")
    return solvers.cone_constraints((2 * S - 1)[:, None] * Phi, theta_var)  # the cone G theta >= 0
