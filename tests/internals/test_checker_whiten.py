"""The checker's whitened node-bound blocks (``relu_gating.checker._whiten``) against exact rationals.

On clustered data the rows of ``Phi`` a tree node keeps active are nearly dependent (condition
1e6..1e7): a basis from the SVD of ``Phi_r[plus]`` has a proven projector gap of about 1e-6, above
the 1e-7 by which a leaf claim may exceed its proof, so the checker refused node bounds the search
had proven with its orthonormal basis (fuzz seeds 41-43: the search said certified, ``verify`` did
not).  The whitened basis comes from ``X W`` (``W`` the inverse of ``X``'s R factor), the product in
twice the working precision with a proven error.
"""

from __future__ import annotations

import json
import warnings
from fractions import Fraction

import numpy as np
import pytest
from _fuzz_instances import instance

import solvers
from relu_gating import best_neuron, verify
from relu_gating.checker._whiten import basis, basis_whitened, matmul2


def _exact_product_error(X: np.ndarray, W: np.ndarray, out: np.ndarray) -> float:
    """``||out - X W||_F`` with ``X W`` in exact rationals."""
    total = Fraction(0)
    for i in range(X.shape[0]):
        for j in range(W.shape[1]):
            exact = sum(Fraction(float(X[i, t])) * Fraction(float(W[t, j])) for t in range(X.shape[1]))
            total += (Fraction(float(out[i, j])) - exact) ** 2
    return float(total) ** 0.5


@pytest.mark.parametrize("impl", [matmul2, solvers.matmul2], ids=["checker", "solvers"])
@pytest.mark.parametrize("seed", range(40))
def test_matmul2_error_bound_holds_in_rationals(seed, impl):
    """The checker's product and the search's (``solvers.matmul2``, written separately: the checker
    shares nothing with what it checks)."""
    rng = np.random.default_rng(seed)
    k, c = int(rng.integers(1, 9)), int(rng.integers(1, 7))
    X = rng.standard_normal((k, c)) * 10.0 ** rng.integers(-6, 6, size=(1, c))
    W = rng.standard_normal((c, c)) * 10.0 ** int(rng.integers(-9, 9))
    out, bound = impl(X, W)
    err = _exact_product_error(X, W, out)
    assert err <= bound, (err, bound)
    # and it is a product in twice the working precision: far below the plain product's worst case
    assert bound <= 4 * np.finfo(float).eps * np.linalg.norm(out) + 1e-290


def _exact_projector_gap(X: np.ndarray, O: np.ndarray) -> float:
    """``||P_X - O O^T||_2`` with ``P_X`` in exact rationals (the difference rounded once to floats)."""
    k, c = X.shape
    Xf = [[Fraction(float(v)) for v in row] for row in X]
    G = [[sum(Xf[t][a] * Xf[t][b] for t in range(k)) for b in range(c)] for a in range(c)]
    # G^{-1} by Gauss-Jordan in rationals
    aug = [G[a] + [Fraction(int(a == b)) for b in range(c)] for a in range(c)]
    for p in range(c):
        piv = next(r for r in range(p, c) if aug[r][p] != 0)
        aug[p], aug[piv] = aug[piv], aug[p]
        inv = 1 / aug[p][p]
        aug[p] = [v * inv for v in aug[p]]
        for r in range(c):
            if r != p and aug[r][p] != 0:
                f = aug[r][p]
                aug[r] = [v - f * w for v, w in zip(aug[r], aug[p])]
    Gi = [row[c:] for row in aug]
    XG = [[sum(Xf[i][a] * Gi[a][b] for a in range(c)) for b in range(c)] for i in range(k)]
    D = np.array([[float(sum(XG[i][b] * Xf[j][b] for b in range(c)) - Fraction(float(O[i] @ O[j])))
                   for j in range(k)] for i in range(k)])
    return float(np.linalg.norm(D, 2))


@pytest.mark.parametrize("seed", range(12))
def test_whitened_gap_is_proven_and_small_on_nearly_dependent_rows(seed):
    rng = np.random.default_rng(100 + seed)
    k, c = int(rng.integers(4, 9)), 3
    centre = rng.standard_normal(c - 1)
    spread = 10.0 ** -float(rng.uniform(4, 7))  # clustered samples: the bias column and x nearly dependent
    X = np.c_[centre + spread * rng.standard_normal((k, c - 1)), np.ones(k)]
    O1, eta1 = basis(X)
    O2, eta2 = basis_whitened(X)
    for O, eta in ((O1, eta1), (O2, eta2)):
        if np.isfinite(eta):
            assert _exact_projector_gap(X, O) <= eta * (1 + 1e-9), (eta, seed)
    assert eta2 < 1e-11 and eta2 <= eta1, (eta1, eta2)


@pytest.mark.parametrize("seed", [41, 43])
def test_clustered_fuzz_the_checker_proves_the_searchs_node_bounds(seed):
    """Fuzz seeds 41 and 43 (tight clusters): the branch and bound's certified answer is certified by
    ``verify`` too (it was not: the checker's node bound dropped the ill-conditioned blocks)."""
    I = instance(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = best_neuron(I.Phi, I.U, features=I.features, strategy="branch-and-bound")
    rep = verify(json.loads(json.dumps(b.to_dict())), I.Phi, I.U, I.features)
    assert b.certified and rep.valid and rep.certified, rep.reasons
