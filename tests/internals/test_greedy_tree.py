"""Greedy layers as one workload (issue 39): the previous step's tree geometry replayed, and the
layer's budget handed on from step to step.

The replay (``relu_gating/search/bnb/_replay.py``) reuses only what depends on ``Phi`` alone (splits,
and rows implied by exact Farkas rows); every node bound is computed for the step's own features and
every certificate is checked as any other.  The oracles: the exact optimum of the step (the largest
exact chamber maximum in rationals, ``tests/_exact_reference.py``), the independent query, and the
checker (float and exact).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from _exact_reference import chamber_max, exact_features, exact_objective

from relu_gating import InputError, best_neuron, enumerate_patterns, verify
from relu_gating.data.datasets import two_moons
from relu_gating.data.io import InputData, resolve_problem
from relu_gating.layers import greedy as greedy_mod
from relu_gating.layers.greedy import MIN_STEP_SECONDS, greedy_layer, greedy_steps, step_budget
from relu_gating.search.bnb import TreeGuide, merge_guides, tree_guide
from relu_gating.search.options import BranchAndBoundOptions

BNB = {"strategy": "branch-and-bound", "options": BranchAndBoundOptions(workers=1)}


def _problem(n: int, seed: int, K: int = 3):
    X = two_moons(n, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a spectral tie at K: still a valid problem (span(U_K) as computed)
        P = resolve_problem(InputData(path="<t>", X=X), K=K)
    return P.Phi, P.U_K


@pytest.fixture(scope="module")
def step2():
    """Two moons, 14 points: step 1's result and step 2's features."""
    Phi, U = _problem(14, 3)
    first = best_neuron(Phi, U, **BNB)
    assert first.certified
    H = np.c_[np.ones(Phi.shape[0]), np.maximum(Phi @ first.theta, 0)]
    return Phi, U, first, H


def _exact_optimum(Phi, U, H) -> float:
    basis = exact_features(H, Phi.shape[0])
    return max(chamber_max(Phi, U, basis, mk) for mk in enumerate_patterns(Phi).masks if mk.any())


def _checked(res, Phi, U, H) -> None:
    cert = json.loads(json.dumps(res.to_dict()))
    for exact in (False, True):
        rep = verify(cert, Phi, U, H, exact=exact)
        assert rep.valid and rep.certified == res.certified, (exact, rep.reasons)
        assert abs(rep.value - res.value) <= 1e-12


def test_tree_guide_reads_splits_and_implied_rows_in_preorder():
    nodes = [["s", 3], ["i", 1, 1, [0, 2]], ["s", 4], ["b", 0.5], ["i", 0, -1, [3]], ["x"], ["b", 0.1]]
    g = tree_guide(nodes, np.eye(5))
    assert isinstance(g, TreeGuide) and g.entries == 3
    chain, row, plus, minus = g.root
    assert chain == () and row == 3 and minus is None  # a lone "b" leaf: nothing to replay
    assert plus == (((1, 1, (0, 2)),), 4, None, (((0, -1, (3,)),), -1, None, None))  # implied rows, then a chamber
    assert tree_guide([["i", 2, 1, [0]], ["b", 0.3]], np.eye(3)).root is None  # implied rows, then a bound leaf
    assert tree_guide([], np.eye(2)).root is None


def test_replayed_step_is_the_exact_optimum_and_verifies(step2):
    """Step 2 with step 1's tree replayed: certified at the exact optimum (rationals), the same as the
    independent query, fewer expansions of its own, its certificate verified (float and exact)."""
    Phi, U, first, H = step2
    guide = tree_guide(first.tree["nodes"], Phi)
    assert guide.entries > 0
    fresh = best_neuron(Phi, U, features=H, **BNB)
    guided = best_neuron(Phi, U, features=H, strategy="branch-and-bound",
                         options=BranchAndBoundOptions(workers=1, guide=guide))
    assert guided.tree["stats"]["replayed"] > 0 and fresh.tree["stats"].get("replayed", 0) == 0
    best = _exact_optimum(Phi, U, H)
    for res in (fresh, guided):
        assert res.certified
        assert abs(res.value - best) <= 1e-9 and res.upper_bound >= best - 1e-12
        assert abs(float(exact_objective(Phi, U, exact_features(H, Phi.shape[0]), res.theta)) - res.value) <= 1e-10
    _checked(guided, Phi, U, H)


def test_a_guide_from_another_phi_is_not_used(step2):
    Phi, U, first, H = step2
    other = tree_guide(first.tree["nodes"], Phi + 1e-3)
    res = best_neuron(Phi, U, features=H, strategy="branch-and-bound",
                      options=BranchAndBoundOptions(workers=1, guide=other))
    assert res.certified and res.tree["stats"].get("replayed", 0) == 0
    with pytest.raises(InputError, match="guide"):
        best_neuron(Phi, U, features=H, strategy="branch-and-bound",
                    options=BranchAndBoundOptions(workers=1, guide={"nodes": []}))


def _flip_first_implied(g):
    """The guide with the sign of its first implied row flipped (a wrong Farkas claim), or None."""
    chain, row, plus, minus = g
    if chain:
        i, s, rows = chain[0]
        return (((i, -s, rows),) + chain[1:], row, plus, minus)
    for k, sub in ((2, plus), (3, minus)):
        if sub is not None:
            got = _flip_first_implied(sub)
            if got is not None:
                return (chain, row, got, minus) if k == 2 else (chain, row, plus, got)
    return None


def test_a_wrong_guide_cannot_certify_a_wrong_tree(step2):
    """A guide whose implied row has the wrong sign makes a tree the audit and the checker refuse (its
    Farkas rows do not prove that sign): never certified on a wrong claim."""
    Phi, U, first, H = step2
    guide = tree_guide(first.tree["nodes"], Phi)
    bad = _flip_first_implied(guide.root)
    assert bad is not None
    res = best_neuron(Phi, U, features=H, strategy="branch-and-bound",
                      options=BranchAndBoundOptions(workers=1, guide=TreeGuide(bad, guide.digest, guide.entries)))
    rep = verify(json.loads(json.dumps(res.to_dict())), Phi, U, H, exact=True)
    assert not res.certified and not rep.certified


def test_guided_subtrees_travel_to_workers(step2, monkeypatch):
    """With two worker processes (the subtrees shipped at once) the guide goes with each node: the same
    certified value, the certificate verified."""
    import relu_gating.search.bnb._parallel as par

    monkeypatch.setattr(par, "SERIAL_SECONDS", 0.0)
    monkeypatch.setattr(par, "FRONTIER_PER_WORKER", 1)
    Phi, U, first, H = step2
    guide = tree_guide(first.tree["nodes"], Phi)
    res = best_neuron(Phi, U, features=H, strategy="branch-and-bound",
                      options=BranchAndBoundOptions(workers=2, guide=guide))
    alone = best_neuron(Phi, U, features=H, **BNB)
    assert res.certified and abs(res.value - alone.value) <= 1e-9
    assert res.tree["stats"]["replayed"] > 0
    _checked(res, Phi, U, H)


def test_reused_layer_is_the_independent_layer_at_every_step():
    """``reuse=True`` (incumbents and the tree carried): every step certified with the independent
    query's value and the exact value of its neuron; each certificate verifies on its own features."""
    Phi, U = _problem(16, 5)
    steps = list(greedy_steps(Phi, U, 3, reuse=True, **BNB))
    assert len(steps) == 3
    assert sum(s.result.tree["stats"].get("replayed", 0) for s in steps[1:]) > 0
    for s in steps:
        alone = best_neuron(Phi, U, features=s.features, **BNB)
        assert s.result.certified and alone.certified
        assert abs(s.result.value - alone.value) <= 1e-9
        assert abs(float(exact_objective(Phi, U, exact_features(s.features, Phi.shape[0]), s.result.theta))
                   - s.result.value) <= 1e-10
        _checked(s.result, Phi, U, s.features)


def test_merge_guides_grafts_the_older_guide_where_the_newer_ends():
    leaf = (((0, -1, (3,)),), -1, None, None)
    old = TreeGuide(((), 3, (((1, 1, (0, 2)),), 4, None, leaf), (((2, 1, (3,)),), 0, None, None)), "d", 4)
    new = TreeGuide(((), 3, (((1, 1, (0, 2)),), 4, (((), 0, None, None)), None), None), "d", 3)
    got = merge_guides(new, old)
    # the + subtree: both expand it alike (merged: new's + child, old's - child); the - subtree: old's
    assert got.root == ((), 3, (((1, 1, (0, 2)),), 4, (((), 0, None, None)), leaf), (((2, 1, (3,)),), 0, None, None))
    assert got.entries == 5 and got.digest == "d"
    other = TreeGuide(((), 2, None, None), "d", 1)  # a different split at the root: the new guide's
    assert merge_guides(other, old).root == other.root and merge_guides(other, old).entries == 1
    assert merge_guides(new, TreeGuide(old.root, "e", 4)) is new  # another Phi: not merged
    assert merge_guides(None, old) is old and merge_guides(new, None) is new


def _truncated(g, keep: int):
    """The guide with every subtree below depth ``keep`` cut (a tree that ran out of time there)."""
    if g is None or keep == 0:
        return None
    chain, row, plus, minus = g
    return (chain, row, _truncated(plus, keep - 1), _truncated(minus, keep - 1))


def test_a_merged_guide_replays_to_the_exact_optimum_and_verifies(step2):
    """Step 1's tree cut below depth 2 (as a step that ran out of time leaves it) merged with the whole
    tree gives the whole tree back; replayed on step 2 it certifies the exact optimum, verified."""
    Phi, U, first, H = step2
    whole = tree_guide(first.tree["nodes"], Phi)
    cut = TreeGuide(_truncated(whole.root, 2), whole.digest, 3)
    merged = merge_guides(cut, whole)
    assert merged.root == whole.root and merged.entries == whole.entries
    res = best_neuron(Phi, U, features=H, strategy="branch-and-bound",
                      options=BranchAndBoundOptions(workers=1, guide=merged))
    assert res.certified and res.tree["stats"]["replayed"] > 3
    assert abs(res.value - _exact_optimum(Phi, U, H)) <= 1e-9
    _checked(res, Phi, U, H)


# ------------------------------------------------------------------ the layer's budget
def test_step_budget_is_the_time_left_over_the_steps_left():
    assert step_budget(600.0, 8) == 75.0
    assert step_budget(595.0, 7) == 85.0
    assert step_budget(-3.0, 2) == MIN_STEP_SECONDS
    assert step_budget(10.0, 0) == 10.0


def test_layer_seconds_hands_unused_time_to_later_steps(monkeypatch):
    """Each step is given the layer's time left over the steps left (a spy on the queries), and the
    answers are those of the per-step budget."""
    Phi, U = _problem(16, 5)
    seen: list[float] = []
    real = greedy_mod.best_neuron

    def spy(*args, **kw):
        seen.append(kw["max_seconds"])
        return real(*args, **kw)

    monkeypatch.setattr(greedy_mod, "best_neuron", spy)
    lay = greedy_layer(Phi, U, 3, layer_seconds=90.0, **BNB)
    assert len(seen) == 3 and seen[0] == pytest.approx(30.0, abs=0.5)
    spent = np.cumsum(lay.seconds)
    for k in (1, 2):  # step k + 1's share: what the steps before it left, over the steps left
        assert seen[k] >= (90.0 - spent[k - 1]) / (3 - k) - 0.5
        assert seen[k] <= (90.0 - spent[k - 1] + 0.5) / (3 - k)
    assert seen[1] > 30.0 and seen[2] > seen[1] * 0.99  # the early steps settled before their share
    monkeypatch.setattr(greedy_mod, "best_neuron", real)
    per_step = greedy_layer(Phi, U, 3, max_seconds=30.0, **BNB)
    assert lay.certified and per_step.certified
    np.testing.assert_allclose(lay.gains, per_step.gains, atol=1e-9)


def test_layer_seconds_errors():
    Phi, U = _problem(12, 1)
    with pytest.raises(InputError, match="not both"):
        greedy_layer(Phi, U, 1, layer_seconds=10, max_seconds=5)
    for bad in (0, -1, float("nan"), "10", True):
        with pytest.raises(InputError, match="layer_seconds"):
            greedy_layer(Phi, U, 1, layer_seconds=bad)
