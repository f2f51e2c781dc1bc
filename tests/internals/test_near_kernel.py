"""Evidence for patterns whose pencil is singular to rounding only (relu_gating.search._exact.near_kernel).

A greedy layer's second step: ``Phi = [x, h1, 1]`` with ``h1 = fl(relu(a x + b))`` and the features
``H = Phi`` (so ``col(Phi)`` is in ``col(H)``).  On the rows where ``h1 > 0`` the columns of
``Phi`` are dependent to 1e-16 but not exactly, so ``B_S = Phi^T S (I - Pi_H) S Phi`` of a
pattern whose inactive rows are among them has an eigenvalue near 1e-32 and no exact kernel: the
solver's float multipliers leave an O(1e-16) coupling against it, the exact check refuted every
claim near the solver's, and the query ended uncertified (upper bound 0.846 against the value
0.722).  Multipliers solved again in exactly rescaled coordinates prove each claim; the checker
accepts them, and each proven bound is compared with the exact chamber maximum (face enumeration
in rationals, 80-digit eigenvalues, ``tests/_exact_reference.py``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _exact_reference import chamber_max, exact_features

from relu_gating import best_neuron, verify
from relu_gating.search._claims import _exact_H
from relu_gating.search._exact.kernel_evidence import exact_nullspace
from relu_gating.search._exact.near_kernel import near_kernel_evidence
from relu_gating.search.objectives import make_objective
from relu_gating.search.proofs import exact_pencil


def _instance(seed: int = 37, n: int = 10, K: int = 2) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    Phi1 = np.c_[x, np.ones(n)]
    h1 = np.maximum(Phi1 @ rng.standard_normal(2), 0)
    U = np.linalg.qr(rng.standard_normal((n, K)))[0]
    return np.c_[x, h1, np.ones(n)], U


@pytest.fixture(scope="module")
def solved():
    Phi, U = _instance()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = best_neuron(Phi, U, features=Phi, strategy="enumerate")
    return Phi, U, res


def _near_only(Phi: np.ndarray, U: np.ndarray, mask: np.ndarray) -> bool:
    """``B_S`` singular to rounding, with no exact kernel."""
    obj = make_objective(Phi, U, Phi)
    A, B = exact_pencil(Phi, U, _exact_H(obj), mask)
    w = np.linalg.eigvalsh(np.array([[float(v) for v in r] for r in B]))
    return bool(w[0] < 1e-12 * w[-1]) and not exact_nullspace(B, len(B))


def test_col_phi_in_features_is_certified_and_verified(solved):
    Phi, U, res = solved
    assert res.certified, (res.value, res.upper_bound, res.notes)
    rep = verify(res, Phi, U, Phi)
    assert rep.valid and rep.certified, rep.reasons


def test_near_kernel_bounds_against_exact_chamber_maxima(solved):
    Phi, U, res = solved
    n = Phi.shape[0]
    masks = np.unpackbits(res.packed, axis=1)[:, :n].astype(bool)
    obj = make_objective(Phi, U, Phi)
    order = [int(k) for k in np.argsort(-res.bounds) if masks[k].any() and not masks[k].all()]
    near = [k for k in order[:40] if _near_only(Phi, U, masks[k])][:3]
    assert near
    basis = exact_features(Phi, n)
    for k in near:
        exact = chamber_max(Phi, U, basis, masks[k])
        got = near_kernel_evidence(obj, _exact_H(obj), masks[k], [exact])
        assert got is not None
        # the chamber maximum counts every neuron of the closed cone: below it, a bound would rest on
        # exclusions (none here); above it, within the dual solver's accuracy
        assert exact - 1e-12 <= got[0] <= exact + 1e-5, (k, got[0], exact)
        assert exact - 1e-12 <= res.bounds[k], (k, res.bounds[k], exact)


def test_no_features_three_samples_on_a_line_to_rounding():
    """Fuzz instance 4 (no features), pattern {0, 4, 8}: three samples on a line to 1e-16, ``B_S``
    nonsingular exactly.  It used to claim 0.415 (not settled); now its exact chamber maximum, and
    the checker's own proof agrees."""
    from _fuzz_instances import instance

    from relu_gating.search.proofs import prove_bounds
    from relu_gating.search._claims import settle_claims

    I = instance(4)
    obj = make_objective(I.Phi, I.U, I.features)
    mask = np.isin(np.arange(I.n), (0, 4, 8))
    exact = chamber_max(I.Phi, I.U, exact_features(I.features, I.n), mask)
    got = settle_claims(obj, mask[None], np.array([exact]), [(np.zeros(0, np.int64), np.zeros((0, 0)))])
    assert 0 in got.replaced and not got.fallback[0]
    assert exact - 1e-12 <= got.bounds[0] <= exact * (1 + 1e-9) + 1e-9, (got.bounds[0], exact)
    checker = prove_bounds(I.Phi, I.U, I.features, mask[None], got.bounds, {0: got.replaced[0]})
    assert checker[0] <= got.bounds[0]


def test_rounding_containment_is_remarked():
    """Prop 5.5 features from float products contain col(Phi) to rounding only: the query is not
    certified, and the result says why and what to do; generic features get no such remark."""
    from relu_gating.experiments._theory import column_basis
    from relu_gating.layers.networks import layer_input, preserving_layer

    rng = np.random.default_rng(0)
    X = rng.standard_normal((8, 2))
    Phi = layer_input(X)
    U = np.linalg.qr(rng.standard_normal((8, 2)))[0]
    H = column_basis(np.c_[np.maximum(Phi @ preserving_layer(Phi, U, seed=0).Theta, 0), np.ones(8)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = best_neuron(Phi, U, features=H, strategy="enumerate")
    assert not res.certified and any("not proven" in r for r in res.notes), res.notes
    assert any("contains col(Phi) to within" in r for r in res.notes), res.notes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = best_neuron(Phi, U, features=H, strategy="branch-and-bound")
    hinted = [r for r in tree.notes if "contains col(Phi) to within" in r]
    assert len(hinted) == (1 if any("not proven" in r for r in tree.notes) else 0), tree.notes  # once, if any
    generic = best_neuron(Phi, U, features=rng.standard_normal((8, 2)), strategy="enumerate")
    assert not any("contains col(Phi)" in r for r in generic.notes)
