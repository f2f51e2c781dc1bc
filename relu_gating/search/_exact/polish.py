"""Weights of a neuron polished against the rounding of ``relu(Phi theta)`` (private).

An optimum often lies on walls ``{phi_i^T theta = 0}`` (an edge of its cone).  The
value is recomputed from ``fl(Phi theta)``, whose rows carry rounding noise up to
``(m + 2) eps sum_j |Phi_ij theta_j|``: for an ill-conditioned ``Phi`` (data far
from the origin with a bias column, or mixed coordinates ``Phi R``) that is
``1e-10 .. 1e-8`` of ``max |Phi theta|``, and a wall row that comes out slightly
positive switches on a sample the optimum has off.  The value then drops to
first order in that noise (``7e-10`` on ``tests/test_incumbent_precision.py``),
below the tolerance of the certificate.

:func:`polish_theta` moves ``theta`` by a tiny step ``d`` that keeps the clearly
active rows (``Phi_A d = 0``) and puts every wall row on one side with a margin a
few times the rounding bound, so that any evaluation order gives its sign; each
side of each wall is tried and the candidate with the largest recomputed value
is kept.  ``theta`` itself is a candidate: the value never drops.
"""

from __future__ import annotations

import itertools

import numpy as np

from relu_gating._inputs.scaling import pow2_norms
from relu_gating.search.objectives import neuron_values

__all__ = ["polish_theta", "WALL_FACTOR", "MARGINS"]

#: A row is a wall row when ``|fl(phi_i^T theta)|`` is at most this multiple of its rounding bound.
WALL_FACTOR = 8.0
#: Margins tried, in units of the rounding bound (the step's own rounding is ``<= 2`` units).
MARGINS = (4.0, 32.0)
#: Up to this many wall rows every side assignment is tried; above it, all-off and all-on only.
MAX_SIGNED_WALLS = 3

_EPS = float(np.finfo(float).eps)


def _value(obj, theta: np.ndarray) -> float:
    """The objective exactly as the search reports it (``nan`` -> ``-inf``)."""
    v = float(neuron_values(obj, theta[None, :])[0])
    return v if np.isfinite(v) else -np.inf


def _sides(k: int) -> list[np.ndarray]:
    if k <= MAX_SIGNED_WALLS:
        return [np.array(s, dtype=float) for s in itertools.product((-1.0, 1.0), repeat=k)]
    return [-np.ones(k), np.ones(k)]


def polish_theta(obj, theta: np.ndarray) -> np.ndarray:
    """``theta``, or a nearby neuron with the same active rows and a larger recomputed value.

    Parameters
    ----------
    obj : Objective
    theta : ndarray, shape (m,)

    Returns
    -------
    ndarray, shape (m,)
        The candidate with the largest :func:`~relu_gating.search.objectives.neuron_values`;
        ``theta`` unchanged when no row lies on a wall to within rounding.
    """
    theta = np.asarray(theta, dtype=float)
    Phi = obj.Phi
    z = Phi @ theta
    if not np.all(np.isfinite(z)) or not np.any(z):
        return theta
    noise = (Phi.shape[1] + 2) * _EPS * (np.abs(Phi) @ np.abs(theta))
    wall = (np.abs(z) <= WALL_FACTOR * noise) & (noise > 0)
    if not wall.any():
        return theta
    act = (z > 0) & ~wall
    rows = np.vstack([Phi[act], Phi[wall]])
    scale = pow2_norms(rows, axis=1)  # entries near 2^1023: no square overflows
    Ms = rows / scale[:, None]
    best, best_val = theta, _value(obj, theta)
    for side in _sides(int(wall.sum())):
        for k in MARGINS:
            target = np.concatenate([np.zeros(int(act.sum())), side * k * noise[wall] - z[wall]])
            with np.errstate(all="ignore"):
                rhs = target / scale
            if not (np.all(np.isfinite(Ms)) and np.all(np.isfinite(rhs))):
                continue  # rows at the edge of the float range (Phi ~ 1e-300): no step, theta stays a candidate
            try:
                d = np.linalg.lstsq(Ms, rhs, rcond=None)[0]
            except np.linalg.LinAlgError:
                continue
            cand = theta + d
            val = _value(obj, cand)
            if val > best_val:
                best, best_val = cand, val
    return best
