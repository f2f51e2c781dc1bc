"""ADMM at the level gated by its own tally (``bnb/_lifted_gate.py``): the gate's test by band (learn, cost against
a split's subtree, retries, share), and in a search: ADMM's seconds and settles stay out of the first-order
tries' tally, ADMM stops in a band where it does not pay, and the search with it certifies the value of the
search without, its certificate verified."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from relu_gating import verify
from relu_gating.patterns import single_thread_blas
from relu_gating.search.bnb import _lifted_gate, _strong, branch_and_bound
from relu_gating.search.bnb._lifted_gate import ADMM_BAND, ADMM_LEARN, ADMM_RETRY, AdmmGate
from relu_gating.search.bnb._node_bounds import LIFTED_BAND

pytestmark = pytest.mark.usefixtures("lifted_now")  # the lifted bound from the first node


def _gate(split=None, elapsed=1e9) -> AdmmGate:
    return AdmmGate(lambda lo: split, lambda: elapsed, LIFTED_BAND)


def _tries(g: AdmmGate, k: int, n: int, seconds: float, settled: bool) -> None:
    for _ in range(n):
        g.ran(k, seconds)
        g.take(settled)


def test_gate_learns_then_runs_where_a_settle_costs_less_than_a_split():
    """``ADMM_LEARN`` tries in a band whatever they cost; then ADMM runs while its seconds per node settled are
    at most the band's split seconds, else only every ``ADMM_RETRY``-th node; bands are separate."""
    g = _gate(split=0.1)
    k = 3 * ADMM_BAND + 1
    for _ in range(ADMM_LEARN):
        assert g.pays(k)
        _tries(g, k, 1, 0.09, settled=False)
    runs = sum(g.pays(k) for _ in range(5 * ADMM_RETRY))
    assert runs == 5  # no settle: turned down but for the retries
    assert g.pays(k - ADMM_BAND)  # another band learns on its own
    cheap = _gate(split=0.1)
    _tries(cheap, k, ADMM_LEARN, 0.04, settled=True)
    assert all(cheap.pays(k) for _ in range(20))  # 0.04 s a settle against 0.1 s a split
    dear = _gate(split=0.1)
    _tries(dear, k, ADMM_LEARN, 0.09, settled=False)
    _tries(dear, k, 1, 0.09, settled=True)  # 0.45 s for one settle
    assert sum(dear.pays(k) for _ in range(ADMM_RETRY)) == 1


def test_gate_without_a_measured_split_asks_half_its_tries_settled_and_keeps_its_share():
    k = 2 * ADMM_BAND
    g = _gate(split=None)
    _tries(g, k, ADMM_LEARN, 0.05, settled=True)
    assert g.pays(k)
    _tries(g, k, ADMM_LEARN + 1, 0.05, settled=False)  # 4 of 9
    assert not g.pays(k)
    share = _gate(split=10.0, elapsed=1.0)
    _tries(share, k, ADMM_LEARN, 0.1, settled=True)  # 0.4 s of 1 s: above ADMM_SHARE
    assert not share.pays(k) and not share.pays(k + ADMM_BAND)


def test_take_credits_a_settle_only_where_admm_ran():
    g = _gate()
    assert g.take(True) == 0.0 and g.bands == {}
    g.ran(20, 0.25)
    assert g.take(True) == 0.25 and g.bands[16][:3] == [1, 1, 0.25]
    assert g.take(True) == 0.0 and g.bands[16][1] == 1


def _instance(n: int, d: int, seed: int):
    """A clustered instance and the features of its greedy step 2 (as ``test_lifted_admm``)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(scale=3.0, size=(3, d))[rng.integers(0, 3, size=n)] + 0.5 * rng.normal(size=(n, d))
    U = np.linalg.qr(rng.normal(size=(n, 3)))[0]
    Phi = np.c_[X, np.ones(n)]
    with single_thread_blas():
        first = branch_and_bound(Phi, U, features="bias", workers=1)
    return Phi, U, np.c_[np.ones(n), np.maximum(Phi @ first.theta, 0.0)]


@pytest.fixture(scope="module")
def step2():
    return _instance(30, 4, 3)


def _band_sums(stats: dict, key: str) -> float:
    return sum(v for k, v in stats.items() if k.startswith(key) and k[len(key):].isdigit())


def test_a_dear_admm_that_never_settles_stops_and_stays_out_of_the_first_order_tally(step2, monkeypatch):
    """ADMM made dear and useless (a stand-in that waits 20 ms and settles nothing): the gate runs it at most
    ``ADMM_LEARN`` times per band and on every ``ADMM_RETRY``-th node it turned down after, and the first-order
    tally by band holds the tries' seconds less ADMM's.  Ungated (``_strong.LEVEL_ADMM``, the former way) it
    runs on every node the first-order steps leave, and its seconds are in that tally."""
    Phi, U, H = step2
    calls: list[int] = []
    gates: list[AdmmGate] = []

    def dear(A, B, G, C, u, aim, level):
        calls.append(u)
        time.sleep(0.02)
        return None

    made = AdmmGate.__init__

    def init(self, *a):
        made(self, *a)
        gates.append(self)

    monkeypatch.setattr(_strong, "_admm", dear)
    monkeypatch.setattr(AdmmGate, "__init__", init)
    runs = {}
    for way in ("gated", "ungated"):
        calls.clear()
        monkeypatch.setattr(_lifted_gate, "ENABLED", way == "gated")
        monkeypatch.setattr(_strong, "LEVEL_ADMM", way == "ungated")
        with single_thread_blas():
            bb = branch_and_bound(Phi, U, features=H, workers=1)
        assert bb.certified
        runs[way] = (list(calls), bb.tree["stats"])
    gated, st = runs["gated"]
    ungated, st_u = runs["ungated"]
    assert len(gates) == 1 and len(ungated) > ADMM_LEARN * 2 and len(gated) >= 1
    by_band: dict[int, int] = {}
    for u in gated:
        by_band[u // ADMM_BAND * ADMM_BAND] = by_band.get(u // ADMM_BAND * ADMM_BAND, 0) + 1
    for lo, n in by_band.items():
        tries, won, _, turned = gates[0].bands[lo]
        assert tries == n and won == 0 and n <= ADMM_LEARN + turned // ADMM_RETRY
    assert sum(b[3] for b in gates[0].bands.values()) >= 1  # some node was turned down
    assert st["admm"] == len(gated) and st["admm_settled"] == 0 and st["t_admm"] >= 0.02 * len(gated)
    assert _band_sums(st, "t_lifted_") <= st["t_lifted"] - st["t_admm"] + 1e-6  # ADMM's seconds: not the first-order tally's
    assert _band_sums(st_u, "t_lifted_") >= 0.02 * len(ungated)  # the former way: in it


@pytest.mark.slow  # two searches with ADMM (about 10 CPU s)
def test_gated_admm_settles_nodes_outside_the_first_order_tally_and_its_tree_verifies(step2, monkeypatch):
    """With the real ADMM, gated: it settles some nodes, which the first-order tally by band does not count;
    the search certifies the value of the search without ADMM, and the certificate verifies (every
    multiplier ADMM found is checked like any other)."""
    Phi, U, H = step2
    with single_thread_blas():
        plain = branch_and_bound(Phi, U, features=H, workers=1)
        monkeypatch.setattr(_lifted_gate, "ENABLED", True)
        bb = branch_and_bound(Phi, U, features=H, workers=1)
    st = bb.tree["stats"]
    assert bb.certified and abs(bb.value - plain.value) <= 1e-9 * max(1.0, plain.value)
    assert st["admm_settled"] >= 1
    assert _band_sums(st, "lifted_settled_") + st["admm_settled"] + st["lifted_plain_settled"] == st["lifted_settled"]
    d = json.loads(json.dumps(bb.to_dict()))
    assert verify(d, Phi, U, features=H).certified
