"""Work the branch and bound does once and reuses: forced rows proven at one node and used wherever
their premises hold (``bnb/_implications.py``), rows an exhaustive search proved neither way not
searched again below, and strong-branching scores on nearly dependent ``+`` blocks (greedy steps).

Oracles: exact rationals written here (every reused implication is checked as a nonnegative
combination, independently of the search's Farkas code), the enumeration's certified value, the
independent verifier on the tree, and full node bounds against the strong-branching scores.
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np

from relu_gating.search.bnb._implications import Implications


def _padded(n: int, signs: dict) -> np.ndarray:
    out = np.zeros(n + 1, dtype=np.int8)
    for j, s in signs.items():
        out[j] = s
    return out


def test_store_answers_only_where_the_premises_hold():
    store = Implications(3)
    signs = np.zeros(6, dtype=np.int8)
    signs[[0, 1]] = [1, -1]
    store.add(3, 1, (0, 1), signs)
    store.add(3, 1, (0, 1), signs)  # the same implication: kept once
    assert len(store) == 1
    assert store.find(3, (1,), _padded(6, {0: 1, 1: -1})) == (1, (0, 1))
    assert store.find(3, (1,), _padded(6, {0: 1, 1: -1, 4: 1})) == (1, (0, 1))  # more decided rows
    assert store.find(3, (1,), _padded(6, {0: 1, 1: 1})) is None  # a premise with the other sign
    assert store.find(3, (1,), _padded(6, {0: 1})) is None  # a premise undecided
    assert store.find(3, (-1,), _padded(6, {0: 1, 1: -1})) is None  # the other side is not claimed
    assert store.find(2, (1, -1), _padded(6, {0: 1, 1: -1})) is None


def test_store_grows_and_keeps_every_premise():
    """Premises of several lengths for one target, past the arrays' first capacity: each is found
    exactly where it holds, and padding never matches a decided row."""
    n = 40
    store = Implications(3)
    rng = np.random.default_rng(0)
    premises = []
    for _ in range(30):
        rows = tuple(sorted(rng.choice(np.arange(1, n), size=int(rng.integers(1, 4)), replace=False).tolist()))
        signs = np.zeros(n, dtype=np.int8)
        signs[list(rows)] = rng.choice([-1, 1], size=len(rows))
        store.add(0, -1, rows, signs)
        premises.append((rows, {j: int(signs[j]) for j in rows}))
    for _rows, sg in premises:
        got = store.find(0, (-1,), _padded(n, sg))
        assert got is not None and got[0] == -1
        assert set(got[1]) <= set(sg)  # a premise of rows decided here (their signs: the padded test)
    too_long = np.ones(n, dtype=np.int8)
    store.add(5, 1, (1, 2, 3, 4), too_long)  # more rows than the rank: no Farkas claim has them
    assert store.find(5, (1,), _padded(n, {j: 1 for j in range(n)})) is None


def _nonnegative_combination(Phi: np.ndarray, i: int, s: int, rows: tuple, signs: list) -> bool:
    """``s phi_i = sum_j y_j signs_j phi_j`` with every ``y_j >= 0``, in exact rationals (rows
    independent: the unique solution of the consistent system)."""
    A = [[Fraction(float(signs[c] * Phi[j, t])) for c, j in enumerate(rows)] + [Fraction(float(s * Phi[i, t]))]
         for t in range(Phi.shape[1])]
    k, piv, r = len(rows), [], 0
    for c in range(k):
        p = next((t for t in range(r, len(A)) if A[t][c] != 0), None)
        if p is None:
            return False  # dependent rows: not the case this oracle decides
        A[r], A[p] = A[p], A[r]
        A[r] = [x / A[r][c] for x in A[r]]
        for t in range(len(A)):
            if t != r and A[t][c] != 0:
                f = A[t][c]
                A[t] = [a - f * b for a, b in zip(A[t], A[r])]
        piv.append(c)
        r += 1
    if any(A[t][k] != 0 for t in range(r, len(A))):
        return False
    return all(A[t][k] >= 0 for t in range(r))


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


def test_reused_implications_are_exact_and_the_answer_is_the_enumerations(monkeypatch):
    """On grid data, every implication the search takes from its store holds at the node that takes
    it (exact rationals, checked here), some are taken, and the certified value is the
    enumeration's; the tree verifies."""
    from relu_gating import best_neuron, verify
    from relu_gating.search.bnb import _search

    Phi, U = _grid_data(40, 0)
    taken = []
    orig = _search.Search._stored

    def stored(self, signs, rows, pos, neg):
        chain = orig(self, signs, rows, pos, neg)
        taken.extend((i, s, rows_, [int(signs[j]) for j in rows_], self.obj.Phi) for i, s, rows_ in chain)
        return chain

    monkeypatch.setattr(_search.Search, "_stored", stored)
    b = best_neuron(Phi, U, strategy="branch-and-bound")
    assert b.tree["stats"]["reused"] == len(taken) > 0
    checked = [_nonnegative_combination(P, i, s, rows, sg) for i, s, rows, sg, P in taken]
    assert all(checked)
    e = best_neuron(Phi, U)
    assert b.certified and e.certified and abs(b.value - e.value) <= 1e-9
    rep = verify(json.loads(json.dumps(b.to_dict())), Phi, U, "bias")
    assert rep.valid and rep.certified


def test_refuted_rows_are_not_searched_again_below(monkeypatch):
    """A row the exhaustive search proved neither way at a node is not searched again in its
    subtree: fewer exhaustive searches than when every node searches afresh, the same certified
    value."""
    from relu_gating import BranchAndBoundOptions, best_neuron
    from relu_gating.search.bnb import _thin
    from relu_gating.search.bnb._tree_build import Node

    monkeypatch.setattr(_thin, "MAX_CHAMBERS", 0)  # as beyond the exact chamber list's bound
    Phi, U = _grid_data(60, 1)
    opts = BranchAndBoundOptions(lifted=False)
    once = best_neuron(Phi, U, strategy="branch-and-bound", options=opts)
    monkeypatch.setattr(Node, "refuted", property(lambda self: frozenset(), lambda self, v: None))
    afresh = best_neuron(Phi, U, strategy="branch-and-bound", options=opts)
    assert once.certified and afresh.certified and abs(once.value - afresh.value) <= 1e-9
    assert once.tree["stats"]["exhaustive"] < afresh.tree["stats"]["exhaustive"]


def test_strong_branching_scores_nearly_dependent_plus_blocks():
    """A greedy step's node: the feature ``relu(Phi theta_1)`` equals ``Phi theta_1`` on the node's
    active rows up to rounding, so the + block's columns are nearly dependent.  The scores exist
    (before: None, and every candidate's children were bounded in full), and the row they pick has
    children whose full bounds are within the best fifth of the candidates'."""
    from relu_gating.certificate._tree import node_bound, node_problem
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
