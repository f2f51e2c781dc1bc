"""Branch and bound (relu_gating.search.bnb): same answers as the enumeration path, a sound node
bound, time budgets, strategy dispatch and its errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from relu_gating import best_neuron, verify
from relu_gating.search.proofs._node import node_bound, node_problem
from relu_gating.errors import InputError
from relu_gating.search.bnb import branch_and_bound
from relu_gating.search.plan import choose, plan_query
from relu_gating.search.objectives import make_objective, neuron_values


def _instance(kind: str, n: int, d: int, seed: int, K: int = 3):
    rng = np.random.default_rng(seed)
    if kind == "gauss":
        X = rng.normal(size=(n, d))
    elif kind == "clustered":
        centers = rng.normal(scale=3.0, size=(3, d))
        X = centers[rng.integers(0, 3, size=n)] + 0.3 * rng.normal(size=(n, d))
    elif kind == "duplicates":
        X = rng.normal(size=(n // 2, d))
        X = np.vstack([X, X[: n - n // 2]])
    elif kind == "collinear":  # integers: 2 t + 1 is exact, so rank(Phi) drops exactly
        t = rng.integers(-6, 7, size=(n, 1)).astype(float)
        X = np.hstack([t, 2 * t + 1, rng.integers(-3, 4, size=(n, max(0, d - 2))).astype(float)])[:, :d]
    else:
        raise ValueError(kind)
    Phi = np.c_[X, np.ones(n)]
    U = np.linalg.qr(rng.normal(size=(n, K)))[0]
    return Phi, U


def _check_same(Phi, U, features, **kw):
    e = best_neuron(Phi, U, features=features)
    b = best_neuron(Phi, U, features=features, strategy="branch-and-bound", **kw)
    assert b.strategy == "branch-and-bound" and b.tree is not None
    assert b.value >= e.value - 1e-9  # never worse than the enumeration's incumbent
    if e.certified:
        assert abs(b.value - e.value) <= 1e-9
        assert b.certified, b.notes
    rep = verify(json.loads(json.dumps(b.to_dict())), Phi, U, features)
    assert rep.valid, rep.reasons
    assert rep.certified == b.certified
    assert abs(rep.value - b.value) <= 1e-12
    return e, b


@pytest.mark.parametrize("kind,n,d,features,seed", [
    ("gauss", 14, 1, "bias", 0), ("gauss", 12, 2, "bias", 1), ("gauss", 12, 2, None, 2),
    ("clustered", 12, 2, "bias", 3), ("gauss", 9, 3, "bias", 4),
    ("duplicates", 12, 2, "bias", 5), ("collinear", 12, 2, None, 6), ("collinear", 10, 3, "bias", 7),
])
def test_matches_enumeration(kind, n, d, features, seed):
    Phi, U = _instance(kind, n, d, seed)
    e, b = _check_same(Phi, U, features)
    if kind in ("gauss", "clustered"):
        assert e.certified and b.certified


def test_array_features_match():
    Phi, U = _instance("gauss", 10, 2, 8)
    H = np.c_[np.ones(10), np.random.default_rng(8).normal(size=10)]
    _check_same(Phi, U, H)


def test_node_bound_holds_on_sampled_neurons():
    """Soundness against an independent oracle: the bound of a node exceeds the value of every
    random neuron whose signs agree with the node."""
    rng = np.random.default_rng(11)
    for features in ("bias", None):
        Phi, U = _instance("gauss", 16, 2, 12)
        obj = make_objective(Phi, U, features)
        P = node_problem(obj.Phi, obj.Psi, obj.M, obj.Q_H, obj.feature_matrix)
        thetas = rng.normal(size=(20000, 3))
        vals = neuron_values(obj, thetas)
        Z = np.sign(thetas @ Phi.T)
        for _ in range(40):
            signs = rng.choice([-1, 0, 1], size=16, p=[0.2, 0.6, 0.2]).astype(np.int8)
            inside = np.all((signs == 0) | (Z == signs), axis=1) & np.isfinite(vals)
            u = node_bound(P, signs)
            assert np.all(vals[inside] <= u + 1e-12)


def test_node_bound_full_tree_against_exact_chambers():
    """Every leaf's bound is at least the exact value of every chamber inside it (enumerated)."""
    from relu_gating.patterns import enumerate_patterns
    from relu_gating.search._exact.tasks import solve_one

    Phi, U = _instance("gauss", 10, 2, 13)
    obj = make_objective(Phi, U, "bias")
    res = branch_and_bound(Phi, U, features="bias")
    pats = enumerate_patterns(Phi)
    exact = np.array([solve_one(obj, m, "auto", w).lower for m, w in zip(pats.masks, pats.witnesses)])
    signs = np.zeros(10, dtype=np.int8)
    stack, nodes, checked = [("visit",)], res.tree["nodes"], 0
    pos = 0
    while stack:
        task = stack.pop()
        if task[0] == "set":
            signs[task[1]] = task[2]
            continue
        node = nodes[pos]
        pos += 1
        if node[0] == "s":
            stack += [("set", node[1], 0), ("visit",), ("set", node[1], -1), ("visit",), ("set", node[1], 1)]
        elif node[0] == "i":
            stack += [("set", node[1], 0), ("visit",), ("set", node[1], node[2])]
        else:
            inside = np.all((signs == 0) | (np.where(pats.masks, 1, -1) == signs), axis=1)
            vals = exact[inside]
            if node[0] in ("b", "c"):
                assert np.all(np.nan_to_num(vals, nan=-1.0) <= node[1] + 1e-9)
            checked += int(inside.sum())
    assert checked >= pats.masks.shape[0]  # every chamber lies in some leaf


def test_time_budget_gives_valid_certificate():
    Phi, U = _instance("gauss", 40, 2, 14)
    res = branch_and_bound(Phi, U, features="bias", max_seconds=0.05)
    rep = verify(res.to_dict(), Phi, U, "bias")
    assert rep.valid, rep.reasons
    assert rep.upper_bound <= res.upper_bound + 1e-9 and res.value <= res.upper_bound
    if not res.certified:
        assert any("stopped early" in n for n in res.notes)


def test_time_budget_keeps_time_for_writing_the_tree(monkeypatch):
    """The search stops ``FINISH_PER_NODE`` seconds a node before the deadline (here forced to a
    second a node: it stops after a handful of nodes, well inside the budget), with a valid
    certificate; the collector is unfrozen afterwards."""
    import gc
    import time

    from relu_gating.search.bnb import _budget, _node_bounds, _search  # noqa: F401

    Phi, U = _instance("gauss", 60, 3, 5)
    monkeypatch.setattr(_budget, "FINISH_PER_NODE", 1.0)
    t = time.perf_counter()
    res = branch_and_bound(Phi, U, features="bias", max_seconds=30.0)
    assert time.perf_counter() - t < 25.0 and res.n_nodes <= 40 and not res.certified
    assert any("stopped early (time budget)" in n for n in res.notes)
    assert verify(res.to_dict(), Phi, U, "bias").valid
    assert gc.get_freeze_count() == 0
    keep = [[object()] for _ in range(10)]  # a caller that froze its own objects: left frozen
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        branch_and_bound(Phi, U, features="bias", max_seconds=2.0)
        assert 0.9 * frozen <= gc.get_freeze_count() <= frozen and keep  # not unfrozen (some freed)
    finally:
        gc.unfreeze()


def test_time_budget_keeps_time_for_the_audit(monkeypatch):
    """The reserve before the deadline grows with the node-bound time (the checker's audit bounds
    every node again): forced to 1e4 s per second of node bounds, the search stops after its first
    bounds, well inside the budget, and the tree is still audited and valid."""
    import time

    from relu_gating.search.bnb import _budget, _node_bounds, _search  # noqa: F401

    Phi, U = _instance("gauss", 60, 3, 5)
    monkeypatch.setattr(_budget, "AUDIT_PER_BOUND_SECOND", 1e4)
    t = time.perf_counter()
    res = branch_and_bound(Phi, U, features="bias", max_seconds=30.0)
    assert time.perf_counter() - t < 25.0 and res.n_nodes <= 60 and not res.certified
    assert any("stopped early (time budget)" in n for n in res.notes)
    assert verify(res.to_dict(), Phi, U, "bias").valid
    stats = {"nodes": 10, "implied": 0, "t_bound": 2.0, "lifted_settled": 0, "t_lifted_check": 0.0}  # the reserve itself, without the audit's share:
    fake = type("S", (), {"stats": stats, "writes": None})()  # the failing input (time for the tree's JSON form only)

    def estimate() -> float:  # the reserve before its safety factor and fixed seconds
        return (_search.Search.reserve(fake) - _budget.RESERVE_SECONDS) / _budget.RESERVE_SAFETY

    monkeypatch.setattr(_budget, "AUDIT_PER_BOUND_SECOND", 0.0)
    assert estimate() == pytest.approx(10 * _budget.FINISH_PER_NODE)
    fake.writes = "json"  # the caller writes the certificate: its writing is kept too
    assert estimate() == pytest.approx(10 * (_budget.FINISH_PER_NODE + _budget.WRITE_PER_NODE["json"]))
    fake.writes = None
    monkeypatch.setattr(_budget, "AUDIT_PER_BOUND_SECOND", 1.5)
    assert estimate() == pytest.approx(10 * _budget.FINISH_PER_NODE + 3.0)
    # lifted leaves: per leaf, or per second of the checker's test of them (large leaves), whichever is more
    stats.update({"lifted_settled": 200, "t_lifted_check": 0.01})
    base = 10 * _budget.FINISH_PER_NODE + 3.0
    assert estimate() == pytest.approx(base + 200 * _budget.AUDIT_PER_LIFTED_LEAF)
    stats["t_lifted_check"] = 4.0
    assert estimate() == pytest.approx(base + 4.0 * _budget.AUDIT_PER_CHECK_SECOND)
    stats.update({"lifted_checked": 10, "lifted_unchecked": 30})  # 4 s on 10 tested, 30 kept untested: the
    assert estimate() == pytest.approx(base + 16.0 * _budget.AUDIT_PER_CHECK_SECOND)  # audit tests all 40


@pytest.mark.parametrize("n,d", [(16, 2), pytest.param(30, 3, marks=pytest.mark.slow)])
def test_preorder_written_inline_equals_the_node_by_node_form(monkeypatch, n, d):
    """``to_nodes`` (split and implied nodes inline, the collector paused) against the plain
    recursion over ``_json`` on a tree of every kind, and the tree of a real search."""
    from relu_gating.search.bnb import _budget, _node_bounds, _search  # noqa: F401
    from relu_gating.search.bnb._tree_build import Node, _json, to_nodes

    def plain(node):
        out = [_json(node)]
        if node.kind in ("s", "i"):
            for kid in node.children:
                out += plain(kid)
        return out

    def leaf(kind, claim, evidence=None):
        nd = Node(None, None, claim, None)
        nd.evidence = evidence
        nd.settle(kind)
        return nd

    root = Node(None, None, 1.0, None)
    imp = Node(None, None, 0.9, None)
    imp.row, imp.sign, imp.rows, imp.children = 4, -1, (np.int64(1), 2), [leaf("c", 0.5, (np.array([1]), np.eye(1)))]
    imp.settle("i")
    root.row, root.children = 3, [imp, leaf("b", 0.7)]
    root.settle("s")
    assert to_nodes(root) == plain(root) and to_nodes(leaf("x", 0.0)) == [["x"]]
    seen = []
    real = _search.Search.run

    def run(self, deadline, bar=None):
        why = real(self, deadline, bar)
        seen.append(to_nodes(self.root) == plain(self.root))
        return why

    monkeypatch.setattr(_search.Search, "run", run)
    Phi, U = _instance("gauss", n, d, 2)
    res = branch_and_bound(Phi, U, features="bias", workers=1)  # (serial: Search.run)
    assert seen == [True] and res.n_nodes > 10  # a real tree of several kinds of nodes


def test_strategy_options():
    Phi, U = _instance("gauss", 12, 1, 15)
    with pytest.raises(InputError, match="strategy"):
        best_neuron(Phi, U, strategy="bfs")
    with pytest.raises(InputError, match="max_seconds"):
        best_neuron(Phi, U, strategy="branch-and-bound", max_seconds=-1)
    with pytest.raises(InputError, match="enumerate"):
        best_neuron(Phi, U, strategy="branch-and-bound", checkpoint="x.npz")
    assert best_neuron(Phi, U, max_seconds=5, strategy="enumerate").certified  # a budget for every strategy
    assert choose(plan_query(Phi)).strategy == "enumerate"
    assert best_neuron(Phi, U, strategy="auto").strategy == "enumerate"
    big = np.c_[np.random.default_rng(0).normal(size=(400, 4)), np.ones(400)]
    assert choose(plan_query(big)).strategy == "branch-and-bound"


def test_cli_strategy(tmp_path, capsys):
    from relu_gating.cli import main

    X = np.random.default_rng(16).normal(size=(20, 2))
    np.save(tmp_path / "X.npy", X)
    out = tmp_path / "cert.json"
    assert main(["best-neuron", str(tmp_path / "X.npy"), "--K", "3", "--strategy", "branch-and-bound",
                 "--out", str(out), "--json", "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["certified"]
    assert main(["verify", str(out), str(tmp_path / "X.npy"), "--K", "3"]) == 0
    assert main(["best-neuron", str(tmp_path / "X.npy"), "--max-seconds", "20", "--strategy", "enumerate",
                 "--quiet"]) == 0  # a budget for every strategy
    assert main(["best-neuron", str(tmp_path / "X.npy"), "--max-seconds", "0", "--strategy", "enumerate"]) == 2


@pytest.mark.slow
@pytest.mark.parametrize("kind,d,features", [
    ("gauss", 2, "bias"), ("gauss", 2, None), ("clustered", 2, "bias"), ("gauss", 3, "bias"),
    ("clustered", 3, None), ("gauss", 4, "bias"),
])
def test_matches_enumeration_slow(kind, d, features):
    n = {2: 30, 3: 16, 4: 10}[d]
    Phi, U = _instance(kind, n, d, 100 + 10 * d, K=4)
    _check_same(Phi, U, features)


@pytest.mark.slow
@pytest.mark.parametrize("kind,d", [("duplicates", 3), ("collinear", 3)])
def test_degenerate_slow(kind, d):
    Phi, U = _instance(kind, 14, d, 200 + d)
    _check_same(Phi, U, "bias")
