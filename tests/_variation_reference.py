"""Shared pieces of the variation-norm tests: a dyadic ``Phi`` (the cone pricing applies) and an
independent LP over dense sampled neurons, an upper bound on any variation norm."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from relu_gating.layers.variation import normalized_neurons


def dyadic_phi(n: int, seed: int) -> np.ndarray:
    """``n`` points in the plane on a grid of ``2^-10`` with a bias column."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((n, 2)) * 2.0**10) / 2.0**10
    return np.c_[X, np.ones(n)]


def dense_atoms(Phi: np.ndarray, W: np.ndarray) -> np.ndarray:
    """The normalized neurons of ``W`` and of 20,000 seeded random directions."""
    T = np.vstack([W, np.random.default_rng(3).standard_normal((20_000, Phi.shape[1]))])
    return normalized_neurons(Phi, T)[0]


def lp_upper(v: np.ndarray, D: np.ndarray) -> float:
    """``min ||c||_1`` with ``D c = v``: an upper bound on ``v``'s variation norm from the atoms ``D``."""
    J = D.shape[1]
    res = linprog(np.ones(2 * J), A_eq=np.hstack([D, -D]), b_eq=v, bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.fun)
