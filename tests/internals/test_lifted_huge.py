"""The lifted bound on nodes of more than ``LIFTED_HUGE`` (128) undecided rows has a time share of its own
(issue 39: breast cancer PCA 5 on 569 rows splits only such nodes in its first 100 CPU s; trying them, with
``LIFTED_MAX_UNDECIDED`` raised to 256, was measured and is not the default): the cheap test tries them while
their own seconds stay within ``LIFTED_HUGE_SHARE``, whatever the nodes of 65-128 rows spent, and turns them
down above it without touching the nodes of 65-128 rows; the tallies a worker's task is sent carry the new
share; and a search that tries such nodes still certifies the enumeration's answer with a tree that verifies."""

from __future__ import annotations

import json
import time

import numpy as np

from relu_gating import best_neuron, verify
from relu_gating.search.bnb import _node_bounds, _search, _strong, branch_and_bound
from relu_gating.search.bnb._tallies import carried_stats


def _bare_search(elapsed: float = 100.0):
    """A search with only the counters the cheap test reads (no problem), ``elapsed`` seconds old, with bands
    up to 256 undecided rows (as a search with ``LIFTED_MAX_UNDECIDED`` raised to 256 has)."""
    s = _search.Search.__new__(_search.Search)
    s.stats = {f"{k}_{lo}": 0 for lo in range(0, 256 + 1, _node_bounds.LIFTED_BAND)
               for k in ("lifted_tried", "lifted_settled")}
    s.stats.update({"t_lifted_large": 0.0, "t_lifted_huge": 0.0})
    s.lifted_skipped = {}
    s.lifted_costs = False  # the rate and share tests alone
    s.t_start = time.perf_counter() - elapsed
    return s


def test_the_default_tries_nodes_of_at_most_128_undecided_rows():
    """The measured default (the module's comment): the search's limit is 128 rows, the new share's start."""
    assert min(_node_bounds.LIFTED_MAX_UNDECIDED, _strong.MAX_UNDECIDED) == _node_bounds.LIFTED_HUGE == 128
    s = _bare_search()
    assert s.lifted_pays(200) and s.lifted_pays(256)  # the cheap test itself has no size limit


def test_the_share_of_nodes_above_128_rows_is_their_own():
    """The nodes of 65-128 rows used up their share: a node of 200 rows is still tried (main turned it
    down: one share for every node above 64 rows); the nodes of 129-256 rows used up theirs: a node of 200
    rows is turned down, one of 100 rows is not."""
    s = _bare_search(elapsed=100.0)
    s.stats["t_lifted_large"] = 0.5 + _node_bounds.LIFTED_LARGE_SHARE * 100.0
    assert not s.lifted_pays(100)
    assert s.lifted_pays(200)
    s = _bare_search(elapsed=100.0)
    s.stats["t_lifted_huge"] = 0.5 + _node_bounds.LIFTED_HUGE_SHARE * 100.0
    assert s.lifted_pays(100)
    turned = [s.lifted_pays(200) for _ in range(_node_bounds.LIFTED_RETRY)]
    assert not any(turned)  # the share is a hard stop (no retries), as the share of 65-128 rows


def test_a_task_is_sent_the_new_share():
    assert "t_lifted_huge" in carried_stats({"t_lifted_huge": 1.5, "t_lifted_large": 0.5, "nodes": 3})


def test_a_search_trying_large_nodes_certifies_and_verifies(monkeypatch):
    """Every node of at most 256 undecided rows may be tried at once (no delay, no cost test): the answer is
    the enumeration's and the tree, with lifted leaves of more than 128 undecided rows when the search made
    any, verifies."""
    rng = np.random.default_rng(3)
    n = 60
    X = rng.normal(scale=3.0, size=(3, 2))[rng.integers(0, 3, size=n)] + 0.5 * rng.normal(size=(n, 2))
    Phi, U = np.c_[X, np.ones(n)], np.linalg.qr(rng.normal(size=(n, 3)))[0]
    monkeypatch.setattr(_node_bounds.NodeBounds, "lifted_after", 0)
    monkeypatch.setattr(_node_bounds.NodeBounds, "lifted_costs", False)
    monkeypatch.setattr(_node_bounds, "LIFTED_LARGE", 8)  # on this small instance: nodes of 9-16 rows count
    monkeypatch.setattr(_node_bounds, "LIFTED_HUGE", 16)  # as those of 65-128 rows, above 16 as those above 128
    bb = branch_and_bound(Phi, U, features="bias", lifted=True, workers=1)
    en = best_neuron(Phi, U, features="bias", strategy="enumerate")
    assert bb.certified and abs(bb.value - en.value) <= 1e-9
    assert bb.tree["stats"]["t_lifted_huge"] > 0 and bb.tree["stats"]["lifted"] > 0
    assert verify(json.loads(json.dumps(bb.to_dict())), Phi, U, features="bias").certified
