"""verify's walk of a tree certificate in parts (relu_gating.checker._parallel): the same report as the serial
walk on honest and forged trees, every node walked once, the serial walk on any failure, bad ``workers``
refused.  Small trees are split here by lowering the thresholds (``PARALLEL_NODES``, ``MIN_PART``)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import numpy as np
import pytest

from relu_gating import best_neuron, verify
from relu_gating.checker import _parallel as par
from relu_gating.checker import _tree as ver
from relu_gating.checker import state_problem
from relu_gating.errors import InputError


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(0)
    n, d = 40, 2
    centers = rng.normal(scale=3.0, size=(3, d))
    X = centers[rng.integers(0, 3, size=n)] + 0.3 * rng.normal(size=(n, d))
    Phi, U = np.c_[X, np.ones(n)], np.linalg.qr(rng.normal(size=(n, 3)))[0]
    res = best_neuron(Phi, U, strategy="branch-and-bound")
    cert = json.loads(json.dumps(res.to_dict()))
    assert cert["kind"] == "tree" and res.certified
    return cert, Phi, U


@pytest.fixture
def split_small(monkeypatch):
    """Every tree walked in parts of at least 4 nodes; records what each walk in parts returned."""
    monkeypatch.setattr(ver, "PARALLEL_NODES", 1)
    monkeypatch.setattr(par, "MIN_PART", 4)
    runs: list = []
    run = par._run

    def spy(*args):
        got = run(*args)
        runs.append((len(args[-1]), got is not None))
        return got
    monkeypatch.setattr(par, "_run", spy)
    return runs


def _same(cert, Phi, U, exact=False):
    """The serial and the 2-worker reports, asserted equal; returns the parallel one."""
    a = verify(copy.deepcopy(cert), Phi, U, "bias", exact=exact, workers=1)
    b = verify(copy.deepcopy(cert), Phi, U, "bias", exact=exact, workers=2)
    for f in ("valid", "certified", "value", "upper_bound", "alpha_proven", "reasons"):
        assert getattr(a, f) == getattr(b, f), f
    assert a.checks == b.checks
    return b


def _deep(cert, Phi, kinds):
    """Indices of nodes of these kinds inside a part (not its root) of the 2-worker split."""
    nodes = cert["tree"]["nodes"]
    _, parts = par.split(nodes, Phi.shape[0], par.TASKS_PER_WORKER * 2)
    assert len(parts) >= 2
    return [k for first, end, _ in parts for k in range(first + 1, end) if nodes[k][0] in kinds]


def test_honest_tree_same_report_in_parts(case, split_small):
    cert, Phi, U = case
    rep = _same(cert, Phi, U)
    assert rep.valid and rep.certified
    assert split_small and split_small[-1][0] >= 2 and split_small[-1][1]  # ran in parts, no fallback


def test_every_node_walked_once_and_leaves_in_whole_numbering(case, split_small):
    cert, Phi, U = case
    nodes = cert["tree"]["nodes"]
    P = state_problem(Phi, U, "bias")
    from relu_gating.checker._tree import walk

    serial = walk(nodes, P)
    parts = par.walk_in_parts(nodes, P, False, 2, walk, ver.PART)
    assert split_small[-1][1]
    assert parts[0] == serial[0] and parts[2] == serial[2] and not parts[1]
    assert sorted(i for i, _, _ in parts[0]) == [k for k, v in enumerate(nodes) if v[0] in "bcdx"]


@pytest.mark.parametrize("factor", [0.0, 0.5, 1.5])
def test_changed_leaf_claim_deep_in_a_part(case, split_small, factor):
    cert, Phi, U = case
    for k in _deep(cert, Phi, ("b", "d"))[::7][:4]:
        bad = copy.deepcopy(cert)
        bad["tree"]["nodes"][k][1] *= factor
        rep = _same(bad, Phi, U)
        assert split_small[-1][1]  # no reason from the walk: the parts' leaves merged, in the whole numbering
        if factor < 1:
            assert not rep.valid and any(f"node {k}" in r for r in rep.reasons)


def test_wrong_implied_sign_deep_in_a_part(case, split_small):
    cert, Phi, U = case
    ks = _deep(cert, Phi, ("i",))
    for k in ks[:: max(1, len(ks) // 4)][:4]:
        bad = copy.deepcopy(cert)
        bad["tree"]["nodes"][k][2] = -bad["tree"]["nodes"][k][2]
        rep = _same(bad, Phi, U)
        assert not rep.valid and any(f"node {k}" in r for r in rep.reasons)
    assert split_small and not split_small[-1][1]  # refused in parts: walked again serially


@pytest.mark.parametrize("where", ["end", "middle"])
def test_truncated_tree(case, split_small, where):
    cert, Phi, U = case
    bad = copy.deepcopy(cert)
    nodes = bad["tree"]["nodes"]
    del nodes[len(nodes) - 1 if where == "end" else _deep(cert, Phi, ("b", "d"))[3]]
    rep = _same(bad, Phi, U)
    assert not rep.valid


def test_forged_subtree_deep_in_a_part(case, split_small):
    """A split deep in a part replaced by one leaf claiming 0: structure valid, its bound unproven."""
    cert, Phi, U = case
    nodes = cert["tree"]["nodes"]
    end = par.ends(nodes)
    ks = [k for k in _deep(cert, Phi, ("s",)) if end[k] - k > 3]
    assert ks
    k = ks[len(ks) // 2]
    bad = copy.deepcopy(cert)
    bad["tree"]["nodes"][k:end[k]] = [["b", 0.0]]
    rep = _same(bad, Phi, U)
    assert not rep.valid and any(f"node {k}" in r for r in rep.reasons)


def _raises_alike(bad, Phi, U):
    from relu_gating.errors import CertificateError

    with pytest.raises(CertificateError) as serial:
        verify(copy.deepcopy(bad), Phi, U, workers=1)
    with pytest.raises(CertificateError) as parts:
        verify(copy.deepcopy(bad), Phi, U, workers=2)
    assert str(serial.value) == str(parts.value)


def test_split_row_off_range_and_malformed_leaf(case, split_small):
    cert, Phi, U = case
    bad = copy.deepcopy(cert)
    s = next(k for k, v in enumerate(bad["tree"]["nodes"]) if v[0] == "s")
    bad["tree"]["nodes"][s][1] = -1  # a negative index: refused by the walk, not read as the last row
    _raises_alike(bad, Phi, U)
    bad = copy.deepcopy(cert)
    bad["tree"]["nodes"][_deep(cert, Phi, ("b", "d"))[2]][1] = "x"  # a malformed leaf deep in a part
    _raises_alike(bad, Phi, U)
    assert split_small and not split_small[-1][1]


def test_pool_failure_and_no_fork_fall_back_to_serial(case, split_small, monkeypatch):
    cert, Phi, U = case
    import concurrent.futures

    class Broken:
        def __init__(self, *a, **k):
            raise OSError("no processes")
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Broken)
    assert _same(cert, Phi, U).certified and split_small and not split_small[-1][1]
    monkeypatch.setattr(par.multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    count = len(split_small)
    assert _same(cert, Phi, U).certified and len(split_small) == count  # no pool tried


def test_exact_mode_walks_in_one_process(case, split_small, monkeypatch):
    """Exact mode meters its work over the whole tree before any, and is never split."""
    cert, Phi, U = case

    class Metered(Exception):
        pass

    def meter(nodes, P, zero):
        assert len(nodes) == len(cert["tree"]["nodes"])  # the whole tree
        raise Metered
    monkeypatch.setattr("relu_gating.checker._tree_exact.exact_work", meter)
    with pytest.raises(Metered):
        verify(copy.deepcopy(cert), Phi, U, exact=True, workers=2)
    assert not split_small


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_workers_refused(case, bad):
    cert, Phi, U = case
    with pytest.raises(InputError, match="workers"):
        verify(cert, Phi, U, workers=bad)


def test_small_tree_does_not_load_the_parallel_walk(tmp_path):
    rng = np.random.default_rng(1)
    Phi = np.c_[rng.normal(size=(16, 2)), np.ones(16)]
    U = np.linalg.qr(rng.normal(size=(16, 3)))[0]
    res = best_neuron(Phi, U, strategy="branch-and-bound")
    cert = json.loads(json.dumps(res.to_dict()))
    assert cert["kind"] == "tree" and res.certified
    (tmp_path / "c.json").write_text(json.dumps(cert))
    np.savez(tmp_path / "in.npz", Phi=Phi, U=U)
    code = ("import sys, numpy as np; from relu_gating import verify; z = np.load(sys.argv[2]); "
            "assert verify(sys.argv[1], z['Phi'], z['U']).certified; "
            "print('relu_gating.checker._parallel' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "c.json"), str(tmp_path / "in.npz")],
                         capture_output=True, text=True, check=True).stdout
    assert len(cert["tree"]["nodes"]) < ver.PARALLEL_NODES and out.strip() == "False"


def test_cli_workers(case, split_small, tmp_path, capsys):
    from relu_gating.cli import main

    cert, Phi, U = case
    (tmp_path / "c.json").write_text(json.dumps(cert))
    np.savez(tmp_path / "in.npz", Phi=Phi, U_K=U)
    args = ["verify", str(tmp_path / "c.json"), str(tmp_path / "in.npz"), "--features", "bias", "--quiet"]
    assert main(args + ["--workers", "2"]) == 0 and split_small[-1][1]
    assert main(args + ["--workers", "1"]) == 0
    capsys.readouterr()
    for bad in ("0", "-3", "two", "1.5"):
        with pytest.raises(SystemExit) as exc:
            code = main(args + ["--workers", bad])
            raise SystemExit(code)
        assert exc.value.code == 2, bad
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--workers" in err[0], err
