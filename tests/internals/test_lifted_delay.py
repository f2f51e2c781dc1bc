"""The lifted bound's delay (relu_gating.search.bnb._node_bounds.LIFTED_DELAY_NODES, issue 39): no lifted
bound is tried before the search has bounded that many nodes, unless the delay's probes
(relu_gating.search.bnb._subtree.SubtreeCost.probe_due) end it sooner; a worker's task gets what is left
of the delay (not a fresh one); the answer (value, certified) is the one of the search without the delay
and of the enumeration."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from relu_gating import best_neuron, verify
from relu_gating.search.bnb import _parallel as par
from relu_gating.search.bnb import branch_and_bound
from relu_gating.search.bnb._node_bounds import LIFTED_DELAY_NODES, NodeBounds
from relu_gating.search.bnb._subtree import PROBE_FACTOR, PROBE_MIN, SubtreeCost, Tracker


def _instance(n, d, seed):
    rng = np.random.default_rng(seed)
    return np.c_[rng.normal(size=(n, d)), np.ones(n)], np.linalg.qr(rng.normal(size=(n, 3)))[0]


@pytest.fixture
def gate_log(monkeypatch):
    """Every node the lifted bound is considered on (its cheap tests asked): (nodes bounded, the delay's end)."""
    seen: list[tuple[int, int]] = []
    for name in ("lifted_pays", "plain_pays"):
        orig = getattr(NodeBounds, name)

        def wrapped(self, *a, _orig=orig):
            seen.append((self.stats["nodes"], self.lifted_after))
            return _orig(self, *a)

        monkeypatch.setattr(NodeBounds, name, wrapped)
    return seen


def _kinds(res) -> set:
    return {nd[0] for nd in res.tree["nodes"]}


@pytest.mark.parametrize("delay", [0, 40, 10**9])
def test_delay_holds_the_lifted_bound_back(monkeypatch, gate_log, delay):
    """With the delay at ``delay`` nodes (no probes) no lifted bound (with or without multipliers) is considered
    before the search has bounded that many; after it, it is (the "d" leaves); the answer is the enumeration's."""
    Phi, U = _instance(12, 3, 1)  # test_bnb_strong: "d" leaves without a delay
    monkeypatch.setattr(NodeBounds, "lifted_after", delay)
    monkeypatch.setattr(SubtreeCost, "probe_max", 0)
    res = branch_and_bound(Phi, U, features="bias", workers=1)  # serial: every node seen here
    assert all(nodes >= after == delay for nodes, after in gate_log)
    st = res.tree["stats"]
    if delay >= st["nodes"]:
        assert not gate_log and st["lifted"] == st["lifted_plain"] == 0 and "d" not in _kinds(res)
    if delay == 0:
        assert gate_log and "d" in _kinds(res)
    en = best_neuron(Phi, U, features="bias", strategy="enumerate")
    assert res.certified and en.certified and abs(res.value - en.value) <= 1e-9
    rep = verify(json.loads(json.dumps(res.to_dict())), Phi, U, features="bias")
    assert rep.valid and rep.certified


def test_the_delay_without_probes_settles_small_queries_without_the_lifted_bound(monkeypatch):
    """The easy-query regime: a small query settles on the subspace bound alone, as with ``lifted=False``
    (the very same tree, serially)."""
    assert LIFTED_DELAY_NODES > 0 and NodeBounds.lifted_after == LIFTED_DELAY_NODES
    monkeypatch.setattr(SubtreeCost, "probe_max", 0)
    Phi, U = _instance(14, 2, 0)
    on = branch_and_bound(Phi, U, features="bias", workers=1)
    off = branch_and_bound(Phi, U, features="bias", workers=1, lifted=False)
    assert on.tree["stats"]["nodes"] < LIFTED_DELAY_NODES
    assert on.tree["nodes"] == off.tree["nodes"] and on.value == off.value and on.certified and off.certified


def test_a_task_gets_what_is_left_of_the_delay(monkeypatch, gate_log):
    """The parallel search sends each task ``lifted_delay_left()`` at the time (not a fresh delay): the tasks'
    searches consider no lifted bound before their share of the delay is bounded."""
    sent: list[int] = []
    orig = par._Pool.submit

    def submit(self, *args, **kw):
        sent.append(args[-4])  # the delay argument of subtree_task (then its probes, whether they ended it, the time left)
        return orig(self, *args, **kw)

    monkeypatch.setattr(par._Pool, "submit", submit)
    monkeypatch.setattr(par, "FRONTIER_PER_WORKER", 1)  # ship subtrees after the root's split
    monkeypatch.setattr(par, "SLICE_SECONDS", 0.05)
    monkeypatch.setattr(NodeBounds, "lifted_after", 60)
    Phi, U = _instance(16, 3, 42)
    with ThreadPoolExecutor(2) as ex:
        res = best_neuron(Phi, U, features="bias", strategy="branch-and-bound", executor=ex)
    assert len(sent) >= 2 and all(0 <= s <= 60 for s in sent) and sent[0] < 60  # the main search's nodes count
    assert sent == sorted(sent, reverse=True) and sent[-1] < sent[0]  # it shrinks as tasks come back
    assert gate_log and all(nodes >= after for nodes, after in gate_log)  # the tasks' searches too (threads)
    serial = branch_and_bound(Phi, U, features="bias", workers=1)
    assert res.certified == serial.certified and abs(res.value - serial.value) <= 1e-9


@pytest.mark.parametrize("n,d,seed", [(14, 2, 0), (12, 3, 1), (16, 3, 42)])
def test_probes_end_the_delay_only_as_measured(monkeypatch, gate_log, n, d, seed):
    """With the probes (the default), the lifted bound is considered from the node the probes ended the delay
    at (``stats["lifted_delay_ended"]``), never before; the answer is the enumeration's and verifies."""
    ended: list[tuple[int, float, float]] = []
    orig = SubtreeCost.probe_pays

    def pays(self):
        got = orig(self)
        if got:  # what it decided from: the probed subtrees' seconds against the probes' seconds
            ended.append((self.stats["nodes"], sum(max(t.seconds, 0.0) for t in self._probes), self.stats["t_probe"]))
        return got

    monkeypatch.setattr(SubtreeCost, "probe_pays", pays)
    Phi, U = _instance(n, d, seed)
    res = branch_and_bound(Phi, U, features="bias", workers=1)
    st = res.tree["stats"]
    assert st.get("probe", 0) >= 1
    if "lifted_delay_ended" in st:
        at = st["lifted_delay_ended"]
        assert ended and ended[0][0] == at and ended[0][1] >= PROBE_FACTOR * ended[0][2]
        assert all(nodes >= at for nodes, _ in gate_log) and gate_log
        assert st["nodes"] >= LIFTED_DELAY_NODES or st["lifted_plain"] == 0  # (no plain try before the delay's end)
    else:
        assert not ended and not gate_log and st["lifted"] == 0
    en = best_neuron(Phi, U, features="bias", strategy="enumerate")
    assert res.certified and abs(res.value - en.value) <= 1e-9
    assert verify(json.loads(json.dumps(res.to_dict())), Phi, U, features="bias").certified


def test_probe_pays_compares_the_spared_subtrees_with_the_probes():
    """``probe_pays``: at least ``PROBE_MIN`` probed subtrees, whose seconds (open ones so far, a negative
    start clipped at 0) sum to at least ``PROBE_FACTOR`` times the probes' seconds."""
    s = SubtreeCost()
    s.stats = {"t_probe": 0.3, "nodes": 0}
    for sec in [0.2] * (PROBE_MIN - 1):
        t = Tracker(-1)
        t.seconds = sec
        s._probe_trackers().append(t)
    assert not s.probe_pays()  # too few, however dear
    t = Tracker(-1)
    t.seconds = -0.05
    s._probe_trackers().append(t)
    assert s.probe_pays() == (0.2 * (PROBE_MIN - 1) >= PROBE_FACTOR * 0.3)
    s.stats["t_probe"] = 10.0
    assert not s.probe_pays()


def test_lifted_delay_left_counts_the_nodes_bounded():
    """``lifted_delay_left`` is the delay's end less the nodes bounded (grafted tasks' included), never below 0;
    0 once the probes reported by tasks (``probe_would``, ``probe_spared``) find that the lifted bound pays."""

    class Both(NodeBounds, SubtreeCost):
        pass

    s = Both()
    s.stats = {"nodes": 30, "t_probe": 0.5}
    s.lifted_after = 100
    assert s.lifted_delay_left() == 70
    s.stats["nodes"] += 50  # a task's nodes, summed in by _parallel._absorb
    assert s.lifted_delay_left() == 20
    s.stats["nodes"] = 250
    assert s.lifted_delay_left() == 0
    s.lifted_after, s.stats["nodes"] = 100, 30
    s.stats.update(probe_would=PROBE_MIN, probe_spared=0.49)  # (a task's) spared subtrees: less than the probes
    assert s.lifted_delay_left() == 70 and "lifted_delay_ended" not in s.stats
    s.stats["probe_spared"] = 0.5 * PROBE_FACTOR + 0.01
    assert s.lifted_delay_left() == 70 and s.stats["lifted_delay_ended"] == 30 and s.lifted_small  # small nodes


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_fuzz_instances_with_the_lifted_bound_from_the_first_node(monkeypatch, seed):
    """The fuzz instances of tests/test_bnb_fuzz.py, their trees too small for the delay to end: the lifted
    bound's path from the first node (as before the delay), checked as there."""
    from test_bnb_fuzz import _check

    monkeypatch.setattr(NodeBounds, "lifted_after", 0)
    _check(seed)
