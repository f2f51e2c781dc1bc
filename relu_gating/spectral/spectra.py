r"""Low-frequency eigenvectors of a graph Laplacian.

Eigenpairs are in ascending order, :math:`0 = \lambda_1 \le \dots \le \lambda_n`,
and :math:`U_K = [u_1, \dots, u_K]`, :math:`P_K = U_K U_K^T`.

The Laplacian is split into its connected components (``scipy.sparse.csgraph``)
and each block is diagonalized separately, so every eigenvector is supported on
one component.  The zero eigenspace, of dimension equal to the number of
components, then has a deterministic basis: one nonnegative null vector per
component, in the order of the component's smallest vertex (for ``L`` these are
the normalized component indicators :math:`\mathbf 1_C / \sqrt{|C|}`; for
``L_sym`` they are :math:`D^{1/2}\mathbf 1_C` normalized).

References
----------
Paper, "Setting and notation".
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse import csgraph

from relu_gating._inputs.validate import check_K
from relu_gating.errors import InputError

__all__ = ["SpectralBasis", "SpectralTieWarning", "low_frequency_basis", "laplacian_basis", "DENSE_LIMIT"]

#: Components up to this size are diagonalized densely (``numpy.linalg.eigh``).
DENSE_LIMIT = 1000
#: Eigenvalues beyond K computed, on a tie, to name the K values at a spectral gap.
GAP_LOOKAHEAD = 8


class SpectralTieWarning(UserWarning):
    """``lambda_K == lambda_{K+1}`` within tolerance: ``span(U_K)`` is not unique."""


@dataclass(frozen=True, eq=False)
class SpectralBasis:
    """The K lowest eigenpairs of a Laplacian.

    Attributes
    ----------
    eigenvalues : ndarray, shape (K,)
        :math:`\\lambda_1 \\le \\dots \\le \\lambda_K` (the zero eigenvalues are exactly 0).
    U_K : ndarray, shape (n, K)
        Orthonormal eigenvectors, each supported on one connected component.
    next_eigenvalue : float
        :math:`\\lambda_{K+1}`; ``nan`` when ``K = n``.
    n_components : int
        Number of connected components = multiplicity of the eigenvalue 0.
    tie_at_K : bool
        :math:`|\\lambda_{K+1} - \\lambda_K| \\le` ``tie_tol``: then ``U_K`` is not
        determined by the Laplacian (a :class:`SpectralTieWarning` was issued).
    tie_tol : float
        Absolute tolerance used for ``tie_at_K``.
    kind : str
        ``"combinatorial"`` (rows sum to 0), ``"sym"`` (unit diagonal) or
        ``"laplacian"`` (neither).
    components : ndarray of int, shape (n,)
        Component label of each vertex (labels ordered by smallest vertex).
    method : str
        ``"dense"`` or ``"sparse"`` (largest component solved with ``eigsh``).
    """

    eigenvalues: np.ndarray
    U_K: np.ndarray
    next_eigenvalue: float
    n_components: int
    tie_at_K: bool
    tie_tol: float
    kind: str
    components: np.ndarray
    method: str

    @property
    def K(self) -> int:
        return int(self.U_K.shape[1])

    @property
    def n(self) -> int:
        return int(self.U_K.shape[0])

    @property
    def normalized(self) -> bool:
        return self.kind == "sym"

    def __repr__(self) -> str:
        ev = ", ".join(f"{v:.4g}" for v in self.eigenvalues[:6]) + (", ..." if self.K > 6 else "")
        tie = ", TIE at K" if self.tie_at_K else ""
        return (f"SpectralBasis(n={self.n}, K={self.K}, kind={self.kind!r}, eigenvalues=[{ev}], "
                f"next_eigenvalue={self.next_eigenvalue:.4g}, n_components={self.n_components}, "
                f"method={self.method!r}{tie})")


def _kind(A: sp.csr_matrix) -> str:
    scale = max(float(abs(A).max()), 1e-300)
    if np.abs(np.asarray(A.sum(axis=1)).ravel()).max() <= 1e-10 * scale:
        return "combinatorial"
    if np.abs(A.diagonal() - 1.0).max() <= 1e-10:
        return "sym"
    return "laplacian"


def _fix_signs(V: np.ndarray) -> np.ndarray:
    """Make the entry of largest magnitude of every column positive (deterministic)."""
    if V.size == 0:
        return V
    idx = np.argmax(np.abs(V) * (1 + 1e-9 * np.arange(V.shape[0], 0, -1))[:, None], axis=0)
    s = np.sign(V[idx, np.arange(V.shape[1])])
    s[s == 0] = 1
    return V * s


def _block_eig(B: sp.csr_matrix, k: int, method: str, seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    """The k smallest eigenpairs of one connected block."""
    size = B.shape[0]
    if method == "dense" or (method == "auto" and size <= DENSE_LIMIT) or k >= size - 1:
        if k >= size:
            w, V = np.linalg.eigh(B.toarray())
        else:
            w, V = sla.eigh(B.toarray(), subset_by_index=[0, k - 1])
        return w[:k], V[:, :k], "dense"
    scale = float(abs(B).sum(axis=1).max())
    shift = -1e-3 * scale  # L - shift*I is positive definite: shift-invert is safe
    v0 = np.random.default_rng(seed).standard_normal(size)
    w, V = spla.eigsh(B.tocsc(), k=k, sigma=shift, which="LM", v0=v0, tol=1e-12)
    order = np.argsort(w)
    return w[order], V[:, order], "sparse"


def low_frequency_basis(
    L: Any,
    K: int,
    *,
    method: str = "auto",
    tie_rtol: float = 1e-8,
    seed: int = 0,
) -> SpectralBasis:
    r"""The K lowest eigenpairs of a graph Laplacian (``L`` or ``L_sym``).

    Parameters
    ----------
    L : array_like or scipy.sparse matrix, shape (n, n)
        A graph Laplacian (symmetric, nonpositive off-diagonal, positive diagonal),
        for example from :func:`relu_gating.laplacian`.
    K : int
        Number of eigenvectors, ``1 <= K <= n``.
    method : {"auto", "dense", "sparse"}
        ``"auto"``: dense ``eigh`` for components of at most ``DENSE_LIMIT``
        vertices, shift-inverted ``scipy.sparse.linalg.eigsh`` beyond.
    tie_rtol : float
        Ties :math:`\lambda_K = \lambda_{K+1}` are detected with the absolute
        tolerance ``tie_rtol * max(1, max_i sum_j |L_ij|)``.
    seed : int
        Seed of the ``eigsh`` start vector.

    Returns
    -------
    SpectralBasis

    Warns
    -----
    SpectralTieWarning
        When :math:`\lambda_K` and :math:`\lambda_{K+1}` tie: ``span(U_K)`` then
        depends on an arbitrary choice inside the eigenspace.

    Raises
    ------
    InputError
        ``L`` is not a valid Laplacian, or ``K`` out of range.
    """
    from relu_gating.spectral.checks import check_laplacian  # the caller's L (one built here needs no check)

    return laplacian_basis(check_laplacian(L, "L"), K, method=method, tie_rtol=tie_rtol, seed=seed)


def laplacian_basis(A: sp.csr_matrix, K: Any, *, method: str = "auto", tie_rtol: float = 1e-8,
                    seed: int = 0) -> SpectralBasis:
    """:func:`low_frequency_basis` of a valid Laplacian, unchecked (the pipeline from samples calls it
    directly on the Laplacian it built).

    Parameters
    ----------
    A : scipy.sparse.csr_matrix, shape (n, n)
        A graph Laplacian, exactly symmetric: as :func:`relu_gating.spectral.graphs.graph_laplacian`
        builds it and :func:`relu_gating.spectral.checks.check_laplacian` returns it.
    K, method, tie_rtol, seed
        As for :func:`low_frequency_basis` (``K`` and ``method`` are checked).

    Returns
    -------
    SpectralBasis
    """
    lap, K = _validated(A, K, method)
    n = lap.A.shape[0]
    want = min(K + 1, n)
    ev, U, used = _assemble(lap, want, method, seed)
    tie_tol = tie_rtol * lap.scale
    nxt, tie = ev[K] if K < n else float("nan"), bool(K < n and abs(ev[K] - ev[K - 1]) <= tie_tol)
    if tie:  # say which K would be at a gap: a few more eigenvalues (rare path; relu_gating.spectral.ties)
        from relu_gating.spectral.ties import tie_message

        more, _, _ = _assemble(lap, min(K + GAP_LOOKAHEAD, n), method, seed)
        warnings.warn(tie_message(more, K, tie_tol), SpectralTieWarning, stacklevel=3)
    U_K = U[:, :K].copy()
    eigvals = ev[:K].copy()
    for arr in (U_K, eigvals, lap.labels):
        arr.setflags(write=False)
    return SpectralBasis(
        eigenvalues=eigvals,
        U_K=U_K,
        next_eigenvalue=nxt,
        n_components=lap.n_comp,
        tie_at_K=tie,
        tie_tol=float(tie_tol),
        kind=lap.kind,
        components=lap.labels,
        method=used,
    )


@dataclass(frozen=True, eq=False)
class _Laplacian:
    """A validated Laplacian (csr ``A``), its kind, scale ``max(1, max_i sum_j |A_ij|)`` and
    its connected components (``labels`` ordered by smallest vertex)."""

    A: sp.csr_matrix
    kind: str
    scale: float
    n_comp: int
    labels: np.ndarray


def _validated(A: sp.csr_matrix, K: Any, method: str) -> tuple[_Laplacian, int]:
    """Check ``method`` and ``K``; the Laplacian split into components."""
    if method not in ("auto", "dense", "sparse"):
        raise InputError(f"method must be 'auto', 'dense' or 'sparse', got {method!r}")
    n = A.shape[0]
    K = check_K(K, n)
    kind = _kind(A)
    scale = max(1.0, float(abs(A).sum(axis=1).max()))
    n_comp, labels = csgraph.connected_components(A, directed=False)
    # relabel by smallest vertex (connected_components already does, keep explicit)
    _, first = np.unique(labels, return_index=True)
    relabel = np.empty(n_comp, dtype=int)
    relabel[np.argsort(first)] = np.arange(n_comp)
    return _Laplacian(A, kind, scale, int(n_comp), relabel[labels]), K


def _component_eigenpairs(lap: _Laplacian, c: int, want: int, method: str,
                          seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """The ``min(want, |C|)`` lowest eigenpairs of component ``c``: ``(vertices, w, V, how)``.

    The zero eigenvalue is checked and set to exactly 0, its eigenvector pinned (the
    normalized indicator for a combinatorial Laplacian) and the signs fixed.
    """
    idx = np.flatnonzero(lap.labels == c)
    k = min(want, idx.size)
    w, V, how = _block_eig(lap.A[idx][:, idx], k, method, seed)
    if abs(w[0]) > 1e-8 * lap.scale:
        raise InputError(
            f"L is not a graph Laplacian: component {c} (vertex {int(idx[0])}) has smallest "
            f"eigenvalue {w[0]:.3g}, not 0"
        )
    w = w.copy()
    w[0] = 0.0
    if lap.kind == "combinatorial":
        V[:, 0] = 1.0 / np.sqrt(idx.size)
        if k > 1 and np.abs(V.T @ V - np.eye(k)).max() > ORTHO_TOL:  # rare path: lambda_2 below rounding
            from relu_gating.spectral.near_null import ritz_beside_constant

            w[1:], V = ritz_beside_constant(lap.A[idx][:, idx], V)
    return idx, w, _fix_signs(V), how


ORTHO_TOL = 1e-12
"""Largest ``|V^T V - I|`` left as the eigensolver gave it once the null vector is pinned."""


def _assemble(lap: _Laplacian, want: int, method: str, seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    """The ``want`` lowest eigenpairs over all components ``(eigenvalues, U, method used)``.

    Eigenvectors are embedded in ``R^n``; ties of eigenvalues are broken by component.
    """
    n = lap.A.shape[0]
    vals, vecs, comps = [], [], []
    used = "dense"
    for c in range(lap.n_comp):
        idx, w, V, how = _component_eigenpairs(lap, c, want, method, seed)
        if how == "sparse":
            used = "sparse"
        for j in range(w.size):
            col = np.zeros(n)
            col[idx] = V[:, j]
            vals.append(w[j])
            vecs.append(col)
            comps.append(c)
    vals_arr = np.asarray(vals)
    order = np.lexsort((np.asarray(comps), vals_arr))[:want]  # ties broken by component
    return vals_arr[order], np.column_stack([vecs[i] for i in order]), used
