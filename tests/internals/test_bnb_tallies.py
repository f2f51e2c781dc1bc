"""A worker's task starts from the sender's tallies of where the lifted bounds pay, and returns what it added
(relu_gating.search.bnb._tallies, issue 39): the sums equal one search's counting of the same tries (an
oracle kept by hand here); the tasks' cheap tests see the sender's tallies, not fresh ones; the answer
(value, certified) is the serial search's and the enumeration's, and the certificate verifies."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

from relu_gating import best_neuron, verify
from relu_gating.search.bnb import _parallel as par
from relu_gating.search.bnb import branch_and_bound
from relu_gating.search.bnb._node_bounds import PLAIN_BAND, NodeBounds
from relu_gating.search.bnb._search import Search
from relu_gating.search.bnb._tallies import carried_stats, learnt, merge, seed, tallies
from relu_gating.search.objectives import make_objective, with_rank
from relu_gating.search.proofs import exact_rank
from tests._small_search import instance, small_search


def _try(s: Search, band: int, won: bool, seconds: float) -> None:
    """What try_plain and try_lifted add to the tallies for one try in ``band`` (by hand)."""
    b = s.plain_bands.setdefault(band, [0, 0, 0])
    b[0] += 1
    b[1] += int(won)
    s.stats["t_lifted_plain"] += seconds
    s.stats[f"lifted_tried_{8 * band}"] = s.stats.get(f"lifted_tried_{8 * band}", 0) + 1
    s.lifted_skipped[band] = s.lifted_skipped.get(band, 0) + 1


def test_seed_learnt_merge_sum_to_one_search():
    """Two tasks seeded with the same snapshot, each adding its tries, merged into the sender: the sender's
    tallies are those of one search that made every try (kept by hand as the oracle)."""
    sender, oracle = small_search(), small_search()
    for s in (sender, oracle):
        _try(s, 1, False, 0.25)
        _try(s, 2, True, 0.5)
    snap = tallies(sender, elapsed=3.0)
    t0 = time.perf_counter()
    tasks = [small_search(), small_search()]
    for task in tasks:
        seed(task, snap, t0)
        assert task.plain_bands == sender.plain_bands and task.lifted_skipped == sender.lifted_skipped
        assert carried_stats(task.stats) == carried_stats(sender.stats)
        assert abs((t0 - task.t_start) - 3.0) < 1e-9  # the shares' clock: the seconds of search so far
    base = [dict(t.stats) for t in tasks]
    _try(tasks[0], 1, True, 0.125)
    _try(tasks[0], 3, False, 1.0)
    _try(tasks[1], 2, False, 2.0)
    for task, b in zip(tasks, base):
        got = learnt(task, snap)
        merge(sender, got)
        for k, v in task.stats.items():  # the stats come back as differences (as subtree_task sends them)
            if isinstance(v, (int, float)) and v != b.get(k, 0):
                sender.stats[k] = sender.stats.get(k, 0) + v - b.get(k, 0)
    _try(oracle, 1, True, 0.125)
    _try(oracle, 3, False, 1.0)
    _try(oracle, 2, False, 2.0)
    assert sender.plain_bands == oracle.plain_bands
    assert sender.lifted_skipped == oracle.lifted_skipped
    assert carried_stats(sender.stats) == carried_stats(oracle.stats)
    assert snap["plain"] == {1: [1, 0, 0], 2: [1, 1, 0]}  # the snapshot is a copy: the tasks did not change it


def test_nothing_sent_is_a_fresh_search():
    s, fresh = small_search(), small_search()
    seed(s, None)
    assert s.plain_bands == {} and s.lifted_skipped == {} and carried_stats(s.stats) == carried_stats(fresh.stats)
    assert learnt(s, None) == {"plain": {}, "skipped": {}}


def test_tasks_see_the_senders_tallies(monkeypatch):
    """With a band marked as never paying by the sender, no task tries the plain lifted bound there but on the
    retry: the tasks' cheap test sees the sender's tally (a fresh one would try the band's first nodes)."""
    seen: list[dict] = []
    orig = NodeBounds.plain_pays

    def spy(self, node, k):
        seen.append({b: list(v) for b, v in self.plain_bands.items()})
        return orig(self, node, k)

    monkeypatch.setattr(NodeBounds, "plain_pays", spy)
    monkeypatch.setattr(NodeBounds, "lifted_after", 0)  # no delay: the cheap tests are asked at once
    monkeypatch.setattr(par, "FRONTIER_PER_WORKER", 1)
    monkeypatch.setattr(par, "SLICE_SECONDS", 0.05)
    orig_tallies = par.tallies

    def marked(search, elapsed):
        snap = orig_tallies(search, elapsed)
        for b in range(0, 256 // PLAIN_BAND + 1):  # every band: tried 100 times, never paid (sender side)
            snap["plain"].setdefault(b, [100, 0, 0])
        return snap

    monkeypatch.setattr(par, "tallies", marked)
    Phi, U = instance(18, 3, 7)
    with ThreadPoolExecutor(2) as ex:
        res = best_neuron(Phi, U, features="bias", strategy="branch-and-bound", executor=ex)
    tasks = [t for t in seen if t and all(v[0] >= 100 for v in t.values())]  # the tasks' searches
    assert tasks  # the tasks asked the cheap test with the sender's tallies
    serial = branch_and_bound(Phi, U, features="bias", workers=1)
    en = best_neuron(Phi, U, features="bias", strategy="enumerate")
    assert res.certified and serial.certified and abs(res.value - serial.value) <= 1e-9
    assert abs(res.value - en.value) <= 1e-9
    assert verify(json.loads(json.dumps(res.to_dict())), Phi, U, "bias").valid


def test_a_task_returns_its_tallies_and_the_sender_sums_them():
    """:func:`_parallel.subtree_task` run directly: it returns ``stats["tallies"]``, what it added to the
    tallies sent; merged, the sender's plain bands are the sent ones plus those."""
    Phi, U = instance(16, 3, 3)
    obj = make_objective(Phi, U, "bias")
    obj = with_rank(obj, exact_rank(obj.Phi))
    s = Search(obj, 1.0, 1e-9, "auto")
    s.plain_bands = {0: [3, 1, 5]}
    snap = tallies(s, elapsed=1.0)
    root = par._open_data(s.root)
    out, theta, stats, notes = par.subtree_task(obj, [root], None, 1.0, 1e-9, "auto", 0, 5.0, True, 0, 0, True,
                                                None, carry=snap)
    got = stats["tallies"]
    assert set(got) == {"plain", "skipped"}
    merge(s, got)
    for b, v in got["plain"].items():
        assert s.plain_bands[b] == [x + y for x, y in zip(snap["plain"].get(b, [0, 0, 0]), v)]
    assert s.plain_bands.get(0, [0, 0, 0])[0] >= 3
