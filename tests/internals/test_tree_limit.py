"""The checker's tree-node limit ``2 (n + 1)`` times Cover's count (``checker/_limits.py``) is a policy,
not a theorem (``FORMAT.md``, "Limits"): these tests measure that the search's own trees stay far
within it, on the fuzz instances (duplicates, thin lines, translated and rescaled data) with the
exact chamber list and, in the slow tier, without it (blind splits of nodes without known interior,
``relu_gating.search.bnb._blind``)."""

from __future__ import annotations

import pytest
from _fuzz_instances import instance

from relu_gating import BranchAndBoundOptions, best_neuron
from relu_gating.checker._limits import limits
from relu_gating.checker._problem import state_problem


def _ratio(I, **kw):
    b = best_neuron(I.Phi, I.U, features=I.features, strategy="branch-and-bound", **kw)
    nodes = b.to_dict()["tree"]["nodes"]
    lim = limits(state_problem(I.Phi, I.U, I.features)).nodes
    assert len(nodes) <= lim, (len(nodes), lim)
    return len(nodes) / lim, b.tree["stats"]


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 8])
def test_search_trees_stay_within_the_node_limit(seed):
    ratio, _ = _ratio(instance(seed))
    assert ratio <= 0.25, ratio  # measured: far below (the search splits only rows seen on both sides)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [4, 8, 32, 50, 55, 59])
def test_blind_search_trees_stay_within_the_node_limit(seed, monkeypatch):
    """Without the exact chamber list the thin instances split nodes blindly: still within the limit."""
    from relu_gating.search.bnb import _thin

    monkeypatch.setattr(_thin, "MAX_CHAMBERS", 0)
    ratio, st = _ratio(instance(seed), options=BranchAndBoundOptions(lifted=False))
    assert st["blind"] > 0 and ratio <= 0.5, (ratio, st["blind"])
