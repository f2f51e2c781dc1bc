"""The search's own test of the lifted evidence it keeps is a filter, sampled once it has passed
(``_node_bounds.CHECK_FIRST``, ``CHECK_EVERY``); the audit decides (issue 39).

Which evidence is tested is checked against a schedule kept by hand; the counts travel with a worker's task;
and evidence kept untested that the checker does not confirm is raised by the audit: the result claims no
more than the enumeration's value allows and ``verify`` agrees with it, while the same forgeries tested
are refused by the search's own test (the control, which certifies)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from relu_gating import best_neuron, verify
from relu_gating.search import proofs
from relu_gating.search.bnb import _node_bounds, _strong, branch_and_bound
from relu_gating.search.bnb._tallies import carried_stats, seed, tallies
from relu_gating.search.bnb._tree_build import Node
from tests._small_search import instance, small_search

pytestmark = pytest.mark.usefixtures("lifted_now")  # the lifted bound from the first node (no delay)


def test_the_evidence_is_tested_until_it_has_passed_then_sampled_and_every_one_after_a_failure(monkeypatch):
    monkeypatch.setattr(_node_bounds, "CHECK_FIRST", 4)
    monkeypatch.setattr(_node_bounds, "CHECK_EVERY", 3)
    fail_at = {9, 14}  # the 9th offer is tested (9 % 3 == 0) and fails; from then on every one is tested
    tested = []

    def fake(*args):
        tested.append(len(tested) + 1)
        return np.inf if offers[0] in fail_at else args[5]

    monkeypatch.setattr(proofs, "lifted_leaf_bound", fake)
    s = small_search()
    node = Node(np.zeros(12, dtype=np.int8), np.zeros((1, 3)), 1.0, None, 0)
    offers, got, expect_tested, failed = [0], [], [], False
    for k in range(1, 21):
        offers[0] = k
        got.append(s.lifted_checks(node, 0.5, ()))
        due = failed or k <= 4 or k % 3 == 0  # the schedule, by hand
        expect_tested.append(due)
        failed = failed or (due and k in fail_at)
    assert len(tested) == sum(expect_tested)
    assert got == [not (t and k in fail_at) for k, t in zip(range(1, 21), expect_tested)]
    st = s.stats
    assert st["lifted_offered"] == 20 and st["lifted_check_failed"] == 2
    assert st["lifted_checked"] == sum(expect_tested) - 2 and st["lifted_unchecked"] == 20 - sum(expect_tested)
    assert st["lifted_unchecked"] == 3  # offers 5, 7, 8 passed untested (not vacuous)


def test_the_counts_that_decide_the_tests_go_with_a_workers_task():
    sender, task = small_search(), small_search()
    sender.stats.update(lifted_offered=300, lifted_check_failed=1, lifted_checked=250)
    seed(task, tallies(sender, elapsed=1.0))
    assert task.stats["lifted_offered"] == 300 and task.stats["lifted_check_failed"] == 1
    assert "lifted_checked" not in carried_stats(sender.stats)  # (the reserve's counts come back as differences)


def _forged(real):
    """``strong_bound`` returning its own bound lowered to half: evidence that proves less than it claims."""
    def forged(*args, **kw):
        got = real(*args, **kw)
        return None if got is None else (0.5 * got[0], got[1])
    return forged


@pytest.mark.parametrize("n,d,seed_", [(14, 2, 0), (12, 3, 2)])
def test_evidence_kept_untested_is_decided_by_the_audit(monkeypatch, n, d, seed_):
    Phi, U = instance(n, d, seed_)
    en = best_neuron(Phi, U, features="bias", strategy="enumerate")
    monkeypatch.setattr(_strong, "strong_bound", _forged(_strong.strong_bound))
    monkeypatch.setattr(_node_bounds, "CHECK_FIRST", 10**9)  # the control: every evidence tested
    tested = branch_and_bound(Phi, U, features="bias", lifted=True)
    assert tested.certified and abs(tested.value - en.value) <= 1e-9
    assert tested.tree["stats"]["lifted_check_failed"] > 0  # the forgeries were offered, and refused
    monkeypatch.setattr(_node_bounds, "CHECK_FIRST", 0)
    monkeypatch.setattr(_node_bounds, "CHECK_EVERY", 10**9)  # none tested
    res = branch_and_bound(Phi, U, features="bias", lifted=True)
    assert res.tree["stats"]["lifted_unchecked"] > 0 and res.tree["stats"]["lifted_checked"] == 0
    assert res.value <= en.value + 1e-9 and res.upper_bound >= en.value - 1e-9  # never more than is proven
    assert any("raised to what the checker proves" in note for note in res.notes)
    rep = verify(json.loads(json.dumps(res.to_dict())), Phi, U, features="bias")
    assert rep.valid and rep.certified == res.certified
