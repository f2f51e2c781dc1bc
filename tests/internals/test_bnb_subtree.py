"""The lifted bound's cost test from the splits actually made (relu_gating.search.bnb._subtree, issue 39):
the trackers' accounting, the test's decisions, and the answers it leaves unchanged (the brute-force
oracle; certificates verified in floats and in exact arithmetic)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _search_reference import brute_best
from relu_gating import verify
from relu_gating.search.bnb import _node_bounds, _search, _subtree
from relu_gating.search.bnb import branch_and_bound

pytestmark = pytest.mark.usefixtures("lifted_now")  # the lifted bound from the first node (no delay)


def _instance(n, d, seed, clustered=False):
    rng = np.random.default_rng(seed)
    if clustered:
        X = rng.normal(scale=3.0, size=(3, d))[rng.integers(0, 3, size=n)] + 0.5 * rng.normal(size=(n, d))
    else:
        X = rng.normal(size=(n, d))
    U = np.linalg.qr(rng.normal(size=(n, 3)))[0]
    return np.c_[X, np.ones(n)], U


def _bare_search():
    """A search with only the counters the cost test reads (no problem)."""
    s = _search.Search.__new__(_search.Search)
    s.stats = {f"{k}_{lo}": 0 for lo in range(0, _node_bounds.LIFTED_MAX_UNDECIDED + 1, _node_bounds.LIFTED_BAND)
               for k in ("lifted_tried", "lifted_settled")}
    s.stats.update({f"t_lifted_{lo}": 0.0 for lo in range(0, _node_bounds.LIFTED_MAX_UNDECIDED + 1, _node_bounds.LIFTED_BAND)})
    s.lifted_skipped = {}
    return s


def _trackers(s, band, seconds):
    """Trackers of ``band`` with these seconds, finished (as :meth:`track` starts them)."""
    for sec in seconds:
        s.cur_trk = ()
        s.track(band + 1, band)
        s.cur_trk[-1].seconds = sec
    s.cur_trk = ()


def test_the_cost_test_tries_where_a_settled_node_costs_less_than_a_split():
    """After ``LIFTED_COST_AFTER`` tries: a band whose lifted seconds per node settled (0.1 s) exceed the
    mean split subtree (0.02 s) is skipped but for every ``LIFTED_RETRY``-th node; one whose splits cost
    more (0.5 s) is tried; the rate test still comes first."""
    s = _bare_search()
    s.stats.update({"lifted_tried_48": 8, "lifted_settled_48": 8, "t_lifted_48": 0.8})
    _trackers(s, 48, [0.01, 0.02, 0.03])
    assert s.split_seconds(48) == pytest.approx(0.02)
    tries = [s.lifted_pays(50) for _ in range(2 * _node_bounds.LIFTED_RETRY)]
    assert sum(tries) == 2 and tries[_node_bounds.LIFTED_RETRY - 1] and s.stats["lifted_cost_skips"] == 40  # turned down (the retries too)
    s.stats.update({"lifted_tried_16": 8, "lifted_settled_16": 8, "t_lifted_16": 0.8})
    _trackers(s, 16, [0.4, 0.5, 0.6])
    assert all(s.lifted_pays(20) for _ in range(30))
    s.stats.update({"lifted_tried_32": 8, "lifted_settled_32": 8, "t_lifted_32": 0.8})
    _trackers(s, 32, [0.01] * 3)
    s.lifted_costs = False  # the switch: the rate test alone
    assert all(s.lifted_pays(33) for _ in range(30))


def test_a_band_without_measured_splits_splits_a_few_nodes_then_tries():
    """No split measured in a band whose tries all settle: the next ``EXPLORE_PER_BAND`` nodes are split
    (their subtrees measured), then the lifted bound is tried again; before ``LIFTED_COST_AFTER`` tries, always."""
    s = _bare_search()
    s.stats.update({"lifted_tried_8": _node_bounds.LIFTED_COST_AFTER - 1, "lifted_settled_8": 3})
    assert s.lifted_pays(9)
    s.stats.update({"lifted_tried_8": 10, "lifted_settled_8": 10, "t_lifted_8": 0.1})
    got = [s.lifted_pays(9) for _ in range(_subtree.EXPLORE_PER_BAND + 3)]
    assert got == [False] * _subtree.EXPLORE_PER_BAND + [True] * 3


def test_track_nests_at_most_track_depth_trackers_and_samples_a_band():
    s = _bare_search()
    s.cur_trk = ()
    for band in (40, 32, 24, 16, 8):
        s.track(band + 1, band)
    assert len(s.cur_trk) == _subtree.TRACK_DEPTH and [t.band for t in s.cur_trk] == [40, 32, 24, 16]
    s.cur_trk = ()
    for _ in range(200):
        s.cur_trk = ()
        s.track(60, 56)
    started = s._bands()[56][0]
    assert _subtree.TRACK_MIN <= started <= _subtree.TRACK_PER_BAND and s._bands()[56][1] == 200


def test_every_tracker_counts_its_open_nodes_and_at_most_the_runs_seconds():
    """When the search settles, each tracker's open count is the number of nodes left on the heap in its
    subtree (those the final bound settles), and its seconds are positive and at most the run's."""
    from relu_gating.search.proofs._problem import exact_rank
    from relu_gating.search.bnb._api import _seed_incumbent
    from relu_gating.search.objectives import make_objective, with_rank

    Phi, U = _instance(40, 3, 5, clustered=True)
    obj = with_rank(make_objective(Phi, U, "bias"), exact_rank(Phi))
    s = _search.Search(obj, 1.0, 1e-9, "auto", 0, True)
    _seed_incumbent(s, obj, 0)
    import time

    t0 = time.perf_counter()
    assert s.run(None) == "settled"
    total = time.perf_counter() - t0
    bands = s._bands()
    assert bands and sum(b[0] for b in bands.values()) > 0
    for started, split, trackers in bands.values():
        assert len(trackers) == started <= split
        for t in trackers:
            assert t.open == sum(any(x is t for x in entry[-1].trk) for entry in s.heap)
            assert 0.0 < t.seconds <= total
    assert any(t.open == 0 for b in bands.values() for t in b[2])  # some subtrees finished during the run


@pytest.fixture(params=[0.0, 1.0, np.inf], ids=["never-pays", "measured", "always-pays"])
def cost_factor(request, monkeypatch):
    """The cost test from the first try and the first tracker, with the factor given: 0 skips every
    band once measured (the splits decide), inf tries as the rate test alone would."""
    monkeypatch.setattr(_node_bounds, "LIFTED_COST_AFTER", 0)
    monkeypatch.setattr(_node_bounds, "LIFTED_COST_FACTOR", request.param)
    monkeypatch.setattr(_subtree, "TRACK_MIN", 1)
    return request.param


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])  # patched once per param
@given(n=st.integers(6, 9), d=st.integers(2, 3), seed=st.integers(0, 10_000), clustered=st.booleans())
def test_the_cost_test_keeps_the_brute_force_value_and_a_verified_tree(cost_factor, n, d, seed, clustered):
    Phi, U = _instance(n, d, seed, clustered)
    res = branch_and_bound(Phi, U, features="bias", lifted=True, workers=1)
    assert res.certified
    assert abs(res.value - brute_best(Phi, U, np.ones((n, 1)))) <= 1e-9 * max(1.0, abs(res.value))
    rep = verify(json.loads(json.dumps(res.to_dict())), Phi, U, features="bias")
    assert rep.valid and rep.certified


@pytest.mark.parametrize("n,d,seed", [(9, 2, 0), pytest.param(9, 3, 2, marks=pytest.mark.slow)])
def test_the_cost_test_trees_verify_exactly(cost_factor, n, d, seed):
    Phi, U = _instance(n, d, seed, clustered=True)
    res = branch_and_bound(Phi, U, features="bias", lifted=True, workers=1)
    assert res.certified
    assert abs(res.value - brute_best(Phi, U, np.ones((n, 1)))) <= 1e-9 * max(1.0, abs(res.value))
    rep = verify(json.loads(json.dumps(res.to_dict())), Phi, U, features="bias", exact=True)
    assert rep.valid and rep.certified
