"""Work the branch and bound no longer repeats: below a node where an exhaustive Farkas search found
nothing, only the subsets with a newly decided row are checked, and strong branching scores nearly
dependent ``+`` blocks (greedy steps) instead of bounding every candidate's children in full.

Oracles: the enumeration's certified value, the independent verifier on the tree, and full node
bounds against the strong-branching scores.
"""

from __future__ import annotations

import json

import numpy as np


def _grid_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Points on a coarse grid (many collinear triples, as measured data have), standardized, with
    a kNN graph's low eigenvectors."""
    from relu_gating.spectral.graphs import laplacian, sample_graph
    from relu_gating.spectral.spectra import low_frequency_basis

    rng = np.random.default_rng(seed)
    X = np.unique(rng.integers(0, 7, size=(n, 2)).astype(float), axis=0)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    U = np.asarray(low_frequency_basis(laplacian(sample_graph(X, kind="knn")), 3).U_K)
    return np.c_[X, np.ones(X.shape[0])], U


def test_exhaustive_search_skips_the_subsets_an_ancestor_tried(monkeypatch):
    """Grid data (many collinear triples, as measured data have), without the exact chamber list: a
    row the exhaustive search proves neither way at a node is searched below only in the subsets
    with a row decided since.  Fewer exact checks than when every node searches afresh, the very
    same tree (the first combination found is the same), the enumeration's certified value, and
    the tree verifies."""
    from relu_gating import BranchAndBoundOptions, best_neuron, verify
    from relu_gating.search.bnb import _thin
    from relu_gating.search.bnb._tree_build import Node

    monkeypatch.setattr(_thin, "MAX_CHAMBERS", 0)  # as beyond the exact chamber list's bound
    Phi, U = _grid_data(60, 1)
    opts = BranchAndBoundOptions(lifted=False)
    once = best_neuron(Phi, U, strategy="branch-and-bound", options=opts)
    monkeypatch.setattr(Node, "refuted", property(lambda self: {}, lambda self, v: None))
    afresh = best_neuron(Phi, U, strategy="branch-and-bound", options=opts)
    assert once.tree["nodes"] == afresh.tree["nodes"]
    assert once.tree["stats"]["exact_farkas"] < afresh.tree["stats"]["exact_farkas"]
    e = best_neuron(Phi, U)
    assert once.certified and e.certified and abs(once.value - e.value) <= 1e-9
    rep = verify(json.loads(json.dumps(once.to_dict())), Phi, U, "bias")
    assert rep.valid and rep.certified


def test_strong_branching_scores_nearly_dependent_plus_blocks():
    """A greedy step's node: the feature ``relu(Phi theta_1)`` equals ``Phi theta_1`` on the node's
    active rows up to rounding, so the + block's columns are nearly dependent.  The scores exist
    (before: None, and every candidate's children were bounded in full), and the row they pick has
    children whose full bounds are within the best fifth of the candidates'."""
    from relu_gating.search.proofs._node import node_bound, node_problem
    from relu_gating.search.bnb._score import child_bounds
    from relu_gating.search.objectives import make_objective

    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 3))
    Phi = np.c_[X, np.ones(60)]
    U = np.linalg.qr(rng.standard_normal((60, 3)))[0]
    th = rng.standard_normal(4)
    H = np.c_[np.ones(60), np.maximum(Phi @ th, 0)]
    obj = make_objective(Phi, U, H)
    P = node_problem(obj.Phi, obj.Psi, obj.M, obj.Q_H, obj.feature_matrix, obj.cap + 1e-12)
    act = np.flatnonzero(Phi @ th > 0)
    signs = np.zeros(60, dtype=np.int8)
    signs[act[:12]] = 1  # inside theta_1's active side: the feature is Phi theta_1 there
    cands = np.setdiff1d(np.arange(60), act[:12])[:30]
    got = child_bounds(P, signs, cands)
    assert got is not None
    full = []
    for i in cands:
        worst = -np.inf
        for s in (1, -1):
            sg = signs.copy()
            sg[i] = s
            worst = max(worst, node_bound(P, sg))
        full.append(worst)
    full = np.array(full)
    pick = int(np.argmin(np.maximum(*got)))
    assert full[pick] <= np.quantile(full, 0.2) + 1e-12
