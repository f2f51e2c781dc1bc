r"""ReLU networks on the sample: forward pass and the paper's constructed layers.

Samples are rows: ``H_0 = X`` has shape ``(n, d)`` (the paper writes
``H_0 = X^T`` with its ``d x n`` sample matrix).  Plain layers

.. math:: H_\ell = \sigma(H_{\ell-1} W_\ell + \mathbf 1 b_\ell^T),

concatenated skips (Rem 5.7)

.. math:: H_\ell = [H_{\ell-1}, \sigma(\Phi \Theta_\ell)], \quad \Phi = [H_{\ell-1}, \mathbf 1],

with :math:`\Theta_\ell = [W_\ell; b_\ell^T]`.

References
----------
Paper, "Setting" (Network, Single neuron), Prop 3.3, Thm 5.1, Prop 5.5, Rem 5.7.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from relu_gating._inputs.validate import as_matrix, as_vector, with_ones
from relu_gating.coverage.metrics import check_basis, orthonormal_basis
from relu_gating.errors import InputError

__all__ = [
    "relu",
    "layer_input",
    "forward",
    "NetworkFeatures",
    "copy_neurons",
    "class_spanning_neurons",
    "preserving_layer",
    "PreservingLayer",
]


def relu(z: Any) -> np.ndarray:
    r""":math:`\sigma(z) = \max(z, 0)` entrywise."""
    return np.maximum(np.asarray(z, dtype=float), 0.0)


def layer_input(H: Any, *, name: str = "H") -> np.ndarray:
    r"""Layer input :math:`\Phi = [H, \mathbf 1]`, shape (n, m + 1).

    Parameters
    ----------
    H : array_like, shape (n, m)
        Features of the previous layer (``X`` for the first layer).
    """
    return with_ones(H, name)


@dataclass(frozen=True, eq=False)
class NetworkFeatures:
    """Every layer's features of a forward pass.

    Attributes
    ----------
    layers : tuple of ndarray
        ``layers[l]`` is :math:`H_\\ell`, shape (n, m_l); ``layers[0] = X``.
    skip : bool
        Concatenated skips (Rem 5.7) were used.
    """

    layers: tuple[np.ndarray, ...]
    skip: bool

    @property
    def depth(self) -> int:
        """Number of ReLU layers p."""
        return len(self.layers) - 1

    def phi(self, layer: int) -> np.ndarray:
        r"""Input of layer ``layer`` (1-based): :math:`\Phi = [H_{\ell-1}, \mathbf 1]`."""
        if not 1 <= layer <= self.depth:
            raise InputError(f"layer must be in [1, {self.depth}], got {layer}")
        return layer_input(self.layers[layer - 1])

    @property
    def readout(self) -> np.ndarray:
        r"""Readout features :math:`Z = [H_p, \mathbf 1]`."""
        return layer_input(self.layers[-1])


def forward(
    X: Any,
    weights: Sequence[Any],
    biases: Sequence[Any],
    *,
    skip: bool = False,
) -> NetworkFeatures:
    r"""Forward pass of a ReLU MLP, returning every layer's features.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Samples as rows.
    weights : sequence of array_like, shapes (m_{l-1}, k_l)
        ``W_l``.  Without skips ``m_l = k_l``; with skips ``m_l = m_{l-1} + k_l``.
    biases : sequence of array_like, shapes (k_l,)
    skip : bool
        Concatenated skip connections: :math:`H_\ell = [H_{\ell-1}, \sigma(H_{\ell-1}W_\ell + \mathbf 1 b_\ell^T)]`.

    Returns
    -------
    NetworkFeatures
    """
    H = as_matrix(X, "X")
    if len(weights) != len(biases):
        raise InputError(f"weights and biases must have the same length, got {len(weights)} and {len(biases)}")
    layers = [H]
    for l, (W, b) in enumerate(zip(weights, biases), start=1):
        Wm = as_matrix(W, f"weights[{l - 1}]", rows=H.shape[1], allow_1d=True)
        bv = as_vector(b, f"biases[{l - 1}]", size=Wm.shape[1])
        R = relu(H @ Wm + bv[None, :])
        H = np.hstack([H, R]) if skip else R
        layers.append(H)
    return NetworkFeatures(layers=tuple(layers), skip=skip)


def copy_neurons(H_prev: Any, *, first_layer: bool = False) -> tuple[np.ndarray, np.ndarray]:
    r"""Weights of the copy neurons of Prop 3.3 (b)/(c).

    Parameters
    ----------
    H_prev : array_like, shape (n, m)
        Layer input features (``X`` for the first layer).
    first_layer : bool
        ``False`` (Prop 3.3 b, requires ``H_prev >= 0``): ``m`` neurons with
        weights ``e_k``, zero bias, reproducing ``H_prev``.  ``True`` (Prop 3.3 c):
        ``2m`` neurons with weights ``±e_k``; then ``col([H_1, 1]) ⊇ col([X, 1])``.

    Returns
    -------
    W : ndarray, shape (m, m) or (m, 2m)
    b : ndarray, shape (m,) or (2m,)
    """
    Hm = as_matrix(H_prev, "H_prev", allow_1d=True)
    m = Hm.shape[1]
    if first_layer:
        W = np.hstack([np.eye(m), -np.eye(m)])
    else:
        if Hm.min() < 0:
            raise InputError("H_prev must be nonnegative for copy neurons with weights e_k (Prop 3.3 b); "
                             "use first_layer=True for signed inputs")
        W = np.eye(m)
    return W, np.zeros(W.shape[1])


def _distinct_direction(P: np.ndarray, seed: int, name: str) -> np.ndarray:
    """A direction w such that P @ w has pairwise distinct entries (rows must be distinct)."""
    n, m = P.shape
    if np.unique(P, axis=0).shape[0] < n:
        raise InputError(f"rows of {name} must be pairwise distinct")
    rng = np.random.default_rng(seed)
    scale = max(float(np.abs(P).max()), 1.0)
    best, best_gap = None, -1.0
    for _ in range(20):
        w = rng.standard_normal(m)
        z = np.sort(P @ w)
        gap = float(np.diff(z).min()) / (scale * np.linalg.norm(w)) if n > 1 else 1.0
        if gap > best_gap:
            best, best_gap = w, gap
        if gap > 1e-8:
            break
    if best_gap <= 1e-12:
        raise InputError(f"could not find a direction separating the rows of {name}")
    return best


def class_spanning_neurons(H_prev: Any, *, seed: int = 0) -> np.ndarray:
    r"""The q neurons sharing one direction that span :math:`V_P` (Thm 5.1 b).

    Samples with identical rows of ``H_prev`` form ``q`` classes.  For a generic
    ``w`` separating the class representatives (projections
    :math:`t_1 < \dots < t_q`), the neurons :math:`v_k = \sigma(H w - b_k \mathbf 1)`
    with :math:`b_1 < t_1`, :math:`b_k \in (t_{k-1}, t_k)` are triangular in the
    class-indicator basis, hence span :math:`V_P`.

    Parameters
    ----------
    H_prev : array_like, shape (n, m)

    Returns
    -------
    Theta : ndarray, shape (m + 1, q)
        Columns :math:`(w, -b_k)`: the neurons are ``relu(layer_input(H_prev) @ Theta)``.
    """
    Hm = as_matrix(H_prev, "H_prev", allow_1d=True)
    reps = np.unique(Hm, axis=0)
    w = _distinct_direction(reps, seed, "H_prev (class representatives)")
    t = np.sort(reps @ w)
    gaps = np.diff(t)
    b = np.empty(t.size)
    b[0] = t[0] - (gaps.min() if gaps.size else 1.0)
    b[1:] = 0.5 * (t[:-1] + t[1:])
    return np.vstack([np.repeat(w[:, None], t.size, axis=1), -b[None, :]])


@dataclass(frozen=True, eq=False)
class PreservingLayer:
    r"""The 2r + 2 neurons of Prop 5.5.

    Attributes
    ----------
    Theta : ndarray, shape (m, 2r + 2)
        Columns :math:`\theta_1, -\theta_1, \dots, \theta_r, -\theta_r, w, -w`;
        the neurons are ``relu(Phi @ Theta)``.
    r : int
        :math:`\min(K, \operatorname{rank}\Phi)`.
    principal_vectors : ndarray, shape (n, r)
        :math:`p_i = Q_\Phi y_i = \Phi\theta_i`.
    """

    Theta: np.ndarray
    r: int
    principal_vectors: np.ndarray


def preserving_layer(Phi: Any, U_K: Any, *, seed: int = 0, rtol: float | None = None) -> PreservingLayer:
    r"""Neurons preserving coverage and distinct rows (Prop 5.5).

    With :math:`r = \min(K, \operatorname{rank}\Phi)` and :math:`y_i` the top
    right singular vectors of :math:`U_K^T Q_\Phi`, the layer
    :math:`\sigma(\pm\Phi\theta_i)` (:math:`\Phi\theta_i = Q_\Phi y_i`),
    :math:`\sigma(\pm\Phi w)` satisfies
    :math:`N_K([H_\ell,\mathbf 1]) \ge N_K(\Phi)`,
    :math:`s_K([H_\ell,\mathbf 1]) \le s_K(\Phi)`, and has distinct rows.

    Parameters
    ----------
    Phi : array_like, shape (n, m)
        Layer input with pairwise distinct rows.
    U_K : array_like, shape (n, K)
    seed : int
        Seed for the separating direction ``w``.
    """
    P = as_matrix(Phi, "Phi", allow_1d=True)
    U = check_basis(U_K, n=P.shape[0])
    w = _distinct_direction(P, seed, "Phi")
    Q = orthonormal_basis(P, rtol=rtol, name="Phi")
    r = min(U.shape[1], Q.shape[1])
    _, _, Vt = np.linalg.svd(U.T @ Q)
    Y = Vt[:r].T
    Pv = Q @ Y
    Th, *_ = np.linalg.lstsq(P, Pv, rcond=None)  # Phi @ Th = Pv exactly (Pv in col(Phi))
    cols = []
    for i in range(r):
        cols += [Th[:, i], -Th[:, i]]
    cols += [w, -w]
    return PreservingLayer(Theta=np.column_stack(cols), r=r, principal_vectors=Pv)
