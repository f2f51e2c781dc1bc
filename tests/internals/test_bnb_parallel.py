"""Parallel branch and bound (relu_gating.search.bnb._parallel): subtrees on threads, processes and
Dask give the serial answer and one tree that ``verify`` accepts; tampered grafted nodes are
rejected; time budgets and Ctrl-C end with a valid certificate."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

from _clock import slowdown
from _search_reference import brute_best
from relu_gating import best_neuron, verify
from relu_gating.errors import InputError
from relu_gating.search.bnb import _parallel as par
from relu_gating.search.bnb._tree_build import Node, to_nodes


def _instance(kind: str, n: int, d: int, seed: int, K: int = 3):
    rng = np.random.default_rng(seed)
    if kind == "clustered":
        centers = rng.normal(scale=3.0, size=(3, d))
        X = centers[rng.integers(0, 3, size=n)] + 0.3 * rng.normal(size=(n, d))
    else:
        X = rng.normal(size=(n, d))
    return np.c_[X, np.ones(n)], np.linalg.qr(rng.normal(size=(n, K)))[0]


@pytest.fixture(scope="module")
def pools():
    with ThreadPoolExecutor(2) as threads, ProcessPoolExecutor(2) as procs:
        yield {"threads": threads, "processes": procs}


@pytest.fixture
def eager(monkeypatch):
    """Ship subtrees after the root's split, in short slices: small trees are mostly grafted."""
    monkeypatch.setattr(par, "FRONTIER_PER_WORKER", 1)
    monkeypatch.setattr(par, "SLICE_SECONDS", 0.1)


def _walk(nodes: list) -> list[tuple[int, int]]:
    """(preorder index, depth) of every node of a tree certificate."""
    out, stack = [], [0]
    for idx, node in enumerate(nodes):
        depth = stack.pop()
        out.append((idx, depth))
        stack += [depth + 1] * {"s": 2, "i": 1}.get(node[0], 0)
    assert not stack
    return out


def _parallel(Phi, U, features, ex, **kw):
    res = best_neuron(Phi, U, features=features, strategy="branch-and-bound", executor=ex, **kw)
    stats = res.tree["stats"]
    assert stats["parallel_workers"] == 2
    rep = verify(json.loads(json.dumps(res.to_dict())), Phi, U, features)
    assert rep.valid, rep.reasons
    assert rep.certified == res.certified
    return res, stats


# every instance on each pool, but the default tier runs the two slowest on one pool only
_SLOW_PAIRS = {("processes", 14, None), ("threads", 12, "bias")}


_SAME = [("gauss", 12, 2, 1, "bias"), ("gauss", 8, 3, 22, "bias"), ("clustered", 14, 2, 24, "bias"),
         ("gauss", 14, 2, 3, None)]


@pytest.mark.parametrize("pool,kind,n,d,seed,features", [
    pytest.param(pool, *c, marks=pytest.mark.slow if (pool, c[1], c[4]) in _SLOW_PAIRS else ())
    for pool in ("threads", "processes") for c in _SAME])
@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_same_answer_as_serial_and_enumeration(pools, eager, pool, kind, n, d, seed, features):
    Phi, U = _instance(kind, n, d, seed)
    enum = best_neuron(Phi, U, features=features)
    serial = best_neuron(Phi, U, features=features, strategy="branch-and-bound")
    res, stats = _parallel(Phi, U, features, pools[pool])
    assert enum.certified and serial.certified and res.certified, res.notes
    assert abs(res.value - serial.value) <= 1e-9 and abs(res.value - enum.value) <= 1e-9
    assert stats["parallel_tasks"] >= 2 and stats["parallel_grafted"] > 0  # the workers built most of it
    assert stats["stop"] == "settled"


@pytest.mark.slow  # the default tier keeps its siblings (under 90 s: README)
def test_brute_force_oracle(pools, eager):
    """Against the independent reference: every LP-realized pattern, every face of each."""
    Phi, U = _instance("gauss", 8, 3, 31)
    res, stats = _parallel(Phi, U, "bias", pools["processes"])
    assert res.certified and stats["parallel_tasks"] >= 1
    assert abs(res.value - brute_best(Phi, U, np.ones((8, 1)))) <= 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("kind,n,d,seed", [("gauss", 40, 2, 41), ("gauss", 16, 3, 42), ("gauss", 9, 4, 4),
                                           ("clustered", 12, 4, 43)])
@pytest.mark.parametrize("pool", ["threads", "processes"])
def test_same_answer_slow(pools, pool, kind, n, d, seed):
    Phi, U = _instance(kind, n, d, seed, K=4)
    enum = best_neuron(Phi, U)
    serial = best_neuron(Phi, U, strategy="branch-and-bound")
    res, _ = _parallel(Phi, U, "bias", pools[pool])
    assert enum.certified and serial.certified and res.certified, res.notes
    assert abs(res.value - serial.value) <= 1e-9 and abs(res.value - enum.value) <= 1e-9


def test_tampered_grafted_nodes_are_rejected(pools, eager):
    Phi, U = _instance("gauss", 12, 2, 1)
    res, stats = _parallel(Phi, U, "bias", pools["processes"])
    cert = json.loads(json.dumps(res.to_dict()))
    nodes = cert["tree"]["nodes"]
    deep = [(i, dep) for i, dep in _walk(nodes) if dep >= 3]  # below the main process's one split
    leaf = next(i for i, _ in deep if nodes[i][0] in ("b", "c") and nodes[i][1] > 0.05)
    split = next(i for i, _ in deep if nodes[i][0] == "s")
    bad = json.loads(json.dumps(cert))
    bad["tree"]["nodes"][leaf][1] = 0.0  # a leaf claiming less than its signs prove
    rep = verify(bad, Phi, U, "bias")
    assert not rep.valid and any("not proven" in r for r in rep.reasons)
    bad = json.loads(json.dumps(cert))
    bad["tree"]["nodes"][split][1] = next(nodes[j][1] for j in range(split) if nodes[j][0] == "s")
    rep = verify(bad, Phi, U, "bias")  # a split on a row its ancestors already decided
    assert not rep.valid and any("not an undecided row" in r for r in rep.reasons)
    bad = json.loads(json.dumps(cert))
    del bad["tree"]["nodes"][leaf]
    assert not verify(bad, Phi, U, "bias").valid


def test_flatten_graft_round_trip():
    """A serial tree flattened and grafted onto a fresh open node gives the same certificate."""
    from relu_gating.search.bnb._search import Search
    from relu_gating.search.objectives import make_objective

    Phi, U = _instance("gauss", 10, 2, 5)
    search = Search(make_objective(Phi, U, "bias"), 1.0, 1e-9, "auto", 0)
    search.run(None)
    entries = par.flatten(search.root)
    root = Node(None, None, 0.0, None)
    opened = par.graft(root, entries)  # the nodes still open when the search settled
    assert len(entries) > 10 and len(opened) == sum(e[0] == "open" for e in entries)
    assert to_nodes(root) == to_nodes(search.root)
    with pytest.raises(ValueError, match="truncated"):
        par.graft(Node(None, None, 0.0, None), entries[:-1])


def test_time_budget_gives_valid_certificate(pools):
    Phi, U = _instance("gauss", 40, 2, 14)
    t = time.perf_counter()
    res, stats = _parallel(Phi, U, "bias", pools["processes"], max_seconds=1.5)
    wall, slow = time.perf_counter() - t, slowdown()  # the margin scales with the machine's load (1 when quiet)
    assert wall < 1.5 + par.DRAIN_SECONDS + 3.0 * slow, (wall, slow)  # the budget, the drain, the result
    assert res.value <= res.upper_bound
    if not res.certified:
        assert stats["stop"] == "time" and any("stopped early" in n for n in res.notes)


def test_interrupt_gives_valid_certificate(pools, eager):
    """Ctrl-C (the flag the command line sets) ends the run with the incumbent and a valid tree."""
    from relu_gating._runtime.interrupt import STOP

    Phi, U = _instance("gauss", 40, 2, 14)
    timer = threading.Timer(0.8, STOP.set)
    timer.start()
    try:
        res, stats = _parallel(Phi, U, "bias", pools["threads"])
    finally:
        timer.cancel()
        STOP.clear()
    assert stats["stop"] == "interrupted" and any("interrupted" in n for n in res.notes)


def test_dask_local_cluster(eager):
    from dask.distributed import Client

    Phi, U = _instance("gauss", 8, 3, 22)
    serial = best_neuron(Phi, U, strategy="branch-and-bound")
    with Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as client:
        res, stats = _parallel(Phi, U, "bias", client)
    assert res.certified and abs(res.value - serial.value) <= 1e-9
    assert stats["parallel_tasks"] >= 2


def test_options_and_cli(tmp_path, capsys):
    from relu_gating.cli import main

    Phi, U = _instance("gauss", 10, 1, 7)
    with pytest.raises(InputError, match="enumerate"):
        best_neuron(Phi, U, strategy="branch-and-bound", checkpoint="x.npz", executor=object())
    X = np.random.default_rng(16).normal(size=(20, 2))
    np.save(tmp_path / "X.npy", X)
    out = tmp_path / "cert.json"
    assert main(["best-neuron", str(tmp_path / "X.npy"), "--K", "3", "--strategy", "branch-and-bound",
                 "--workers", "2", "--out", str(out), "--json", "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["certified"]
    assert main(["verify", str(out), str(tmp_path / "X.npy"), "--K", "3"]) == 0
    capsys.readouterr()
    for bad in (["--workers", "2", "--scheduler", "tcp://127.0.0.1:9"], ["--workers", "0"],
                ["--strategy", "branch-and-bound", "--workers", "2", "--checkpoint", str(tmp_path / "c.npz")]):
        assert main(["best-neuron", str(tmp_path / "X.npy"), "--K", "3", *bad]) == 2
