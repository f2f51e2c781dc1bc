"""Gradient ascent on theta for the marginal gain, in numpy (the local method of Rem 5.11; private).

The objective is the marginal gain of Prop 4.5 of one neuron ``h = relu(Phi theta)`` over the
features ``H`` (``None``: the captured features ``N_K(h)``),

    G(theta) = ||U_K^T P h||^2 / ||P h||^2,   P = I - Pi_H,

which is scale invariant in ``theta``; its gradient where no pre-activation is zero is
``Phi^T diag(Phi theta > 0) (2 / ||P h||^2) (P U_K U_K^T P h - G P h)``.  Ascent runs on the unit
sphere with a backtracking step, from several seeded Gaussian starts.  It proves nothing: the
experiments compare what it finds with the certified optimum.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from relu_gating.coverage.metrics import orthonormal_basis

__all__ = ["AscentResult", "gradient_ascent"]

#: A neuron whose part outside col(H) is below this fraction of ||h|| is excluded (as the search does).
_EXCLUDE = 1e-9


@dataclass(frozen=True)
class AscentResult:
    """Best neuron over the restarts: ``theta``, its gain ``value``, gradient evaluations used."""

    theta: np.ndarray
    value: float
    evaluations: int
    restarts: int


def _value_grad(Phi: np.ndarray, U: np.ndarray, Q: np.ndarray, theta: np.ndarray) -> tuple[float, np.ndarray]:
    z = Phi @ theta
    h = np.maximum(z, 0.0)
    ph = h - Q @ (Q.T @ h)
    den = float(ph @ ph)
    if den <= (_EXCLUDE * np.linalg.norm(h)) ** 2 or den == 0.0:
        return -np.inf, np.zeros_like(theta)
    c = U.T @ ph
    val = float(c @ c) / den
    w = U @ c
    gh = (2.0 / den) * ((w - Q @ (Q.T @ w)) - val * ph)
    return val, Phi.T @ (gh * (z > 0))


def _ascend(Phi, U, Q, theta, max_iter, step0) -> tuple[float, np.ndarray, int]:
    theta = theta / np.linalg.norm(theta)
    val, g = _value_grad(Phi, U, Q, theta)
    evals, step = 1, step0
    for _ in range(max_iter):
        g = g - (g @ theta) * theta  # tangent to the sphere (the value is scale invariant)
        gn = float(np.linalg.norm(g))
        if not np.isfinite(val) or gn < 1e-12:
            break
        while step > 1e-10:
            cand = theta + step * g / gn
            cand /= np.linalg.norm(cand)
            cv, cg = _value_grad(Phi, U, Q, cand)
            evals += 1
            if cv > val:
                theta, val, g = cand, cv, cg
                step *= 1.5
                break
            step *= 0.5
        else:
            break
    return val, theta, evals


def gradient_ascent(Phi: Any, U_K: Any, *, features: Any = "bias", restarts: int = 10, max_iter: int = 200,
                    seed: int = 0, step: float = 0.5) -> AscentResult:
    """Best neuron found by ``restarts`` seeded runs of normalized gradient ascent with backtracking.

    Parameters
    ----------
    Phi : ndarray, shape (n, m)
    U_K : ndarray, shape (n, K)
    features : "bias", None or ndarray, shape (n, q)
        Features ``H`` the gain is measured over (as :func:`relu_gating.best_neuron`).
    """
    Phi = np.asarray(Phi, dtype=float)
    U = np.asarray(U_K, dtype=float)
    n, m = Phi.shape
    if features is None:
        Q = np.zeros((n, 0))
    elif isinstance(features, str) and features == "bias":
        Q = np.ones((n, 1)) / np.sqrt(n)
    else:
        Q = orthonormal_basis(np.asarray(features, dtype=float))
    rng = np.random.default_rng(seed)
    best_v, best_t, evals = -np.inf, np.zeros(m), 0
    for _ in range(restarts):
        v, t, e = _ascend(Phi, U, Q, rng.standard_normal(m), max_iter, step)
        evals += e
        if v > best_v:
            best_v, best_t = v, t
    return AscentResult(theta=best_t, value=float(best_v), evaluations=evals, restarts=restarts)
