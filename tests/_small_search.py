"""A small Gaussian problem with the bias feature and a fresh branch-and-bound ``Search`` on it, for the tests of
the search's counters and tallies (no search is run)."""

from __future__ import annotations

import numpy as np

from relu_gating.search.bnb._search import Search
from relu_gating.search.objectives import make_objective, with_rank
from relu_gating.search.proofs import exact_rank


def instance(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(Phi, U_K)``: ``n`` Gaussian points in ``d`` dimensions with a bias column, a random orthonormal ``U_K`` (K = 3)."""
    rng = np.random.default_rng(seed)
    return np.c_[rng.normal(size=(n, d)), np.ones(n)], np.linalg.qr(rng.normal(size=(n, 3)))[0]


def small_search(n: int = 12, d: int = 2, seed: int = 0) -> Search:
    """A fresh ``Search`` (alpha 1) on :func:`instance`'s problem, features ``"bias"``."""
    Phi, U = instance(n, d, seed)
    obj = make_objective(Phi, U, "bias")
    return Search(with_rank(obj, exact_rank(obj.Phi)), 1.0, 1e-9, "auto")
