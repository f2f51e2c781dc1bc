"""Uncertified baselines: random sampling and local search over neurons.

What convex-reformulation codes and gradient methods do: they find good
neurons but prove nothing, and they miss small chambers (SPEC section 3.1).
Used by ``relu-gating demo`` to show what the certified search adds, by the
benchmarks, and by the tests as an independent *lower-bound* oracle: no
sampled neuron may beat a certified optimum.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from solvers import top_generalized_eig

from relu_gating.search.objectives import make_objective, neuron_values, pattern_matrices

__all__ = ["BaselineResult", "random_search", "local_search"]


@dataclass(frozen=True)
class BaselineResult:
    """Best neuron an uncertified method found.

    Attributes
    ----------
    theta : ndarray, shape (m,)
    value : float
        Objective of ``relu(Phi theta)`` (``-inf`` if nothing admissible).
    evaluations : int
        Neurons evaluated.
    patterns_seen : int
        Distinct gating patterns among the evaluated neurons.
    """

    theta: np.ndarray
    value: float
    evaluations: int
    patterns_seen: int


def random_search(Phi: Any, U_K: Any, *, features: Any = None, n_samples: int = 100_000,
                  seed: int = 0, chunk: int = 20_000) -> BaselineResult:
    """Best of ``n_samples`` Gaussian random neurons ``theta ~ N(0, I_m)``."""
    obj = make_objective(Phi, U_K, features)
    rng = np.random.default_rng(seed)
    m = obj.Phi.shape[1]
    best_v, best_t = -np.inf, np.zeros(m)
    seen: set[bytes] = set()
    done = 0
    while done < n_samples:
        k = min(chunk, n_samples - done)
        T = rng.standard_normal((k, m))
        vals = np.nan_to_num(neuron_values(obj, T), nan=-np.inf)
        j = int(np.argmax(vals))
        if vals[j] > best_v:
            best_v, best_t = float(vals[j]), T[j].copy()
        seen.update(map(bytes, np.packbits(T @ obj.Phi.T > 0, axis=1)))
        done += k
    return BaselineResult(theta=best_t, value=best_v, evaluations=done, patterns_seen=len(seen))


def local_search(Phi: Any, U_K: Any, *, features: Any = None, n_starts: int = 50, max_iter: int = 50,
                 seed: int = 0) -> BaselineResult:
    """Fixed-gating ascent from random starts (the local method of Rem 5.11).

    From ``theta``: take its pattern ``S``, move to the top generalized
    eigenvector of ``(A_S, B_S)`` (the cone dropped), keep it if the neuron
    it gives is better, repeat until no improvement.
    """
    obj = make_objective(Phi, U_K, features)
    rng = np.random.default_rng(seed)
    m = obj.Phi.shape[1]
    best_v, best_t, evals = -np.inf, np.zeros(m), 0
    seen: set[bytes] = set()
    for _ in range(n_starts):
        t = np.asarray(rng.standard_normal(m), dtype=float)
        v = float(np.nan_to_num(neuron_values(obj, t[None])[0], nan=-np.inf))
        evals += 1
        for _ in range(max_iter):
            S = obj.Phi @ t > 0
            seen.add(np.packbits(S).tobytes())
            A, B = pattern_matrices(obj, S[None])
            eig = top_generalized_eig(A, B)
            if not eig.reliable[0]:
                break
            cands = np.array([obj.to_theta @ eig.vectors[0], -(obj.to_theta @ eig.vectors[0])])
            vals = np.nan_to_num(neuron_values(obj, cands), nan=-np.inf)
            evals += 2
            j = int(np.argmax(vals))
            if vals[j] <= v + 1e-15:
                break
            t, v = cands[j], float(vals[j])
        if v > best_v:
            best_v, best_t = v, t.copy()
    return BaselineResult(theta=best_t, value=best_v, evaluations=evals, patterns_seen=len(seen))
