"""The split chosen by the children's pencil bounds where the node bound is at the cap
(``relu_gating.search.bnb._pencil_branch``, issue 39).

Oracles: each child's pencil built afresh from the child's own signs (``_strong._pencil``, no map ``T``)
and its top eigenvalue by a whole ``eigh`` of the whitened pencil; the pencil bound as a maximum over the
child's coordinates, checked from below by the neurons of the child (each a point of its set, valued from
``relu(Phi theta)``); and the enumeration's certified optimum for the search with the rule (every
certificate verified, in floats and exactly).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from relu_gating import best_neuron, verify
from relu_gating.search.bnb import _pencil_branch, branch_and_bound
from relu_gating.search.bnb._pencil_branch import child_pencils, pencil_row
from relu_gating.search.bnb._strong import _pencil
from relu_gating.search.objectives import make_objective


def _greedy(n: int, d: int, seed: int):
    """Gaussian data with the bias, and the features of a greedy step 2 (the bias and a neuron)."""
    rng = np.random.default_rng(seed)
    Phi = np.c_[rng.normal(size=(n, d)), np.ones(n)]
    U = np.linalg.qr(rng.normal(size=(n, 3)))[0]
    H = np.c_[np.ones(n), np.maximum(Phi @ rng.normal(size=d + 1), 0.0)]
    return Phi, U, H, rng


def _top_whole(A: np.ndarray, B: np.ndarray) -> float:
    """The pencil's top eigenvalue, inf where ``B`` is not positive definite (``h = 0`` for some ``x``)."""
    try:
        L = np.linalg.cholesky(B)
    except np.linalg.LinAlgError:
        return float("inf")
    Li = np.linalg.inv(L)
    return float(np.linalg.eigvalsh(Li @ A @ Li.T)[-1])


@pytest.mark.parametrize("seed", range(6))
def test_children_bounds_are_the_childrens_own_pencils(seed):
    """:func:`child_pencils` (rank-one downdates of a ``K x K`` matrix) gives the node's pencil bound and each
    child's pencil bound built from its own signs (a whole ``eigh`` of the whitened pencil); each child's is at
    most the parent's, and at least the value of every neuron of the child."""
    Phi, U, H, rng = _greedy(14, 2, seed)
    obj = make_objective(Phi, U, H)
    Q, M, QH = obj.Psi, obj.M, obj.Q_H
    zero = np.zeros(Phi.shape[0], dtype=bool)
    for _ in range(50):  # a node whose pencil is bounded (its neurons never in col(H))
        v0 = rng.normal(size=Q.shape[1])
        signs = np.where(Q @ v0 > 0, 1, -1)
        signs[rng.choice(Phi.shape[0], size=7, replace=False)] = 0
        A, B, Uu = _pencil(Q, M, QH, signs, zero)
        parent = _top_whole(A, B)
        if np.isfinite(parent):
            break
    assert np.isfinite(parent)
    checked: list = []
    r = Q.shape[1]
    kids = child_pencils(Q, M, QH, signs, zero, Uu)
    assert kids is not None and abs(kids[0] - parent) <= 1e-9 * max(1.0, parent)
    for j, i in enumerate(Uu):
        plus, minus = kids[1][j], kids[2][j]
        for s, got in ((1, plus), (-1, minus)):
            child = signs.copy()
            child[i] = s
            Ac, Bc, _ = _pencil(Q, M, QH, child, zero)
            want = _top_whole(Ac, Bc)
            if not np.isfinite(want):  # B singular: the child's pencil is unbounded (h = 0 for some x)
                assert not np.isfinite(got) or np.linalg.eigvalsh(Bc)[0] <= 1e-12 * np.abs(Bc).max()
                continue
            checked.append(1)
            assert abs(got - want) <= 1e-9 * max(1.0, abs(want))
            assert got <= parent + 1e-9
            # every neuron of the child (its signs on the decided rows and on i) is valued at most its bound
            V = rng.normal(size=(4000, r))
            inside = np.all((child[child != 0, None] * (Q[child != 0] @ V.T)) >= 0, axis=0)
            for v in V[inside][:50]:
                h = np.maximum(Q @ v, 0.0)
                den = h @ h - float(np.sum((QH.T @ h) ** 2))
                if den > 1e-9:
                    assert float(np.sum((M.T @ h) ** 2)) / den <= got + 1e-9
    assert checked


def _bounded_node():
    """A greedy-step objective and a node of 6 undecided rows whose pencil is bounded."""
    Phi, U, H, rng = _greedy(16, 2, 3)
    obj = make_objective(Phi, U, H)
    zero = np.zeros(Phi.shape[0], dtype=bool)
    for _ in range(50):
        signs = np.where(obj.Psi @ rng.normal(size=obj.Psi.shape[1]) > 0, 1, -1)
        signs[:6] = 0
        A, B, _ = _pencil(obj.Psi, obj.M, obj.Q_H, signs, zero)
        if np.isfinite(_top_whole(A, B)):
            break
    return Phi, obj, zero, signs, A, B, rng


def test_pencil_row_returns_a_free_row_or_none():
    """The row is one of the free rows; None below ``MIN_UNDECIDED`` undecided rows and where the pencil
    is at the cap."""
    Phi, obj, zero, signs, A, B, rng = _bounded_node()
    free = np.arange(1, 6)
    row = pencil_row(obj.Psi, obj.M, obj.Q_H, signs, zero, free, 0.1)
    assert row in free.tolist()
    assert pencil_row(obj.Psi, obj.M, obj.Q_H, signs, zero, free, 0.1, cap=0.0) is None
    few = np.where(obj.Psi @ rng.normal(size=obj.Psi.shape[1]) > 0, 1, -1)
    few[:_pencil_branch.MIN_UNDECIDED - 1] = 0
    assert pencil_row(obj.Psi, obj.M, obj.Q_H, few, zero, np.arange(1), 0.1) is None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_search_with_the_rule_finds_the_enumerations_optimum(monkeypatch, seed):
    """With the rule (and without it), the search on greedy-step features certifies the enumeration's
    optimum, the rule was used, and the certificate verifies in floats and exactly."""
    Phi, U, H, _ = _greedy(13, 2, seed)
    en = best_neuron(Phi, U, features=H, strategy="enumerate")
    on = branch_and_bound(Phi, U, features=H, workers=1)
    monkeypatch.setattr(_pencil_branch, "USE", False)
    off = branch_and_bound(Phi, U, features=H, workers=1)
    assert on.tree["stats"].get("pencil_rows", 0) > 0 and off.tree["stats"].get("pencil_rows", 0) == 0
    for res in (on, off):
        assert res.certified and en.certified and abs(res.value - en.value) <= 1e-9 * max(1.0, en.value)
        cert = json.loads(json.dumps(res.to_dict()))
        for exact in (False, True):
            rep = verify(cert, Phi, U, features=H, exact=exact)
            assert rep.valid and rep.certified


def test_choose_stops_asking_where_the_pencil_is_at_the_cap_too():
    """Where the pencil is at the cap as well (here: a cap of 0) no row is chosen; after ``GATE_AFTER`` calls
    :func:`choose` asks only every ``RETRY``-th time, and counts what it did."""
    from types import SimpleNamespace

    Phi, obj, zero, signs, A, B, rng = _bounded_node()
    s = SimpleNamespace(stats={}, obj=obj, P=SimpleNamespace(cap=0.0, zero_rows=zero))
    got = [_pencil_branch.choose(s, signs, np.arange(1, 6), 0.1) for _ in range(200)]
    assert all(g is None for g in got)
    st = s.stats
    assert st["pencil_rows"] == 0 and st["pencil_at_cap"] == st["pencil_calls"]
    assert st["pencil_calls"] + st["pencil_skips"] == 200
    assert _pencil_branch.GATE_AFTER <= st["pencil_calls"] <= _pencil_branch.GATE_AFTER + 200 // _pencil_branch.RETRY + 1
    s.P.cap = np.inf  # a pencil below the cap: rows are chosen, and the gate stays open
    s.stats = {}
    got = [_pencil_branch.choose(s, signs, np.arange(1, 6), 0.1) for _ in range(40)]
    assert s.stats["pencil_calls"] == 40 and s.stats["pencil_rows"] == 40 and all(g in range(1, 6) for g in got)
    s.stats = {}  # a singular pencil (no row, not at the cap) does not close the gate
    singular = signs.copy()
    singular[:] = -1
    singular[:6] = 0
    got = [_pencil_branch.choose(s, singular, np.arange(1, 6), 0.1) for _ in range(40)]
    assert all(g is None for g in got) and s.stats["pencil_calls"] == 40 and s.stats["pencil_at_cap"] == 0
    monkey = _pencil_branch.MAX_UNDECIDED
    try:  # more undecided rows than MAX_UNDECIDED: not asked
        _pencil_branch.MAX_UNDECIDED = 5
        s.stats = {}
        assert _pencil_branch.choose(s, signs, np.arange(1, 6), 0.1) is None and "pencil_calls" not in s.stats
    finally:
        _pencil_branch.MAX_UNDECIDED = monkey
