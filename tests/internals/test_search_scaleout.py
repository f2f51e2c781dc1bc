"""Chunked search: executors, Dask, checkpoints and resume (SPEC section 7)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import relu_gating.search._enum.exact as enum_exact
import relu_gating.search._exact.tasks as work
import relu_gating.search._enum.memory as search
from relu_gating import best_neuron, verify
from relu_gating.search.state import PatternOutcome, SearchState
from relu_gating.errors import CheckpointError


def _inst(seed=2, n=40):
    rng = np.random.default_rng(seed)
    Phi = np.c_[rng.normal(size=(n, 2)), np.ones(n)]
    U_K = np.linalg.qr(rng.normal(size=(n, 4)))[0]
    return Phi, U_K


def _interrupted_on_call(fn, k):
    """``fn`` that raises KeyboardInterrupt (a Ctrl-C) on its k-th call."""
    calls = {"n": 0}

    def wrapped(*args):
        calls["n"] += 1
        if calls["n"] == k:
            raise KeyboardInterrupt
        return fn(*args)

    return wrapped


def test_few_candidates_rescan_and_solve_in_the_same_order(monkeypatch):
    """The in-memory exact phase holds a bounded candidate list and re-scans the patterns when it runs
    out: with room for only a few, the search solves the same patterns in the same rounds (every
    per-pattern array identical), and still with room for fewer than a round."""
    import relu_gating.search._enum.memory as front_mod

    Phi, U_K = _inst(4, 50)
    ref = best_neuron(Phi, U_K, features="bias", batch_size=2)
    for cap in (1, 3):
        monkeypatch.setattr(front_mod, "EXACT_CANDIDATES", cap)
        res = best_neuron(Phi, U_K, features="bias", batch_size=2)
        assert (res.value, res.upper_bound, res.n_exact, res.notes) == (ref.value, ref.upper_bound, ref.n_exact,
                                                                        ref.notes)
        for name in ("bounds", "lowers", "settlement"):
            np.testing.assert_array_equal(getattr(res, name), getattr(ref, name))


@pytest.mark.slow
def test_small_chunks_and_thread_executor_agree():
    Phi, U_K = _inst()
    ref = best_neuron(Phi, U_K, features="bias")
    small = best_neuron(Phi, U_K, features="bias", chunk_size=7, batch_size=2)
    with ThreadPoolExecutor(2) as ex:
        par = best_neuron(Phi, U_K, features="bias", executor=ex, chunk_size=50, batch_size=3)
    for r in (small, par):
        assert r.value == pytest.approx(ref.value, abs=1e-12)
        assert r.upper_bound == pytest.approx(ref.upper_bound, abs=1e-9)
        assert r.certified
    assert verify(par, Phi, U_K, "bias").valid


def test_dask_local_cluster():
    distributed = pytest.importorskip("dask.distributed")
    Phi, U_K = _inst(3, 30)
    ref = best_neuron(Phi, U_K, features="bias")
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as client:
        res = best_neuron(Phi, U_K, features="bias", executor=client, chunk_size=100, batch_size=4)
    assert res.value == pytest.approx(ref.value, abs=1e-12)
    assert res.certified


@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_interrupt_then_resume_loses_nothing(tmp_path, monkeypatch):
    Phi, U_K = _inst(4, 50)
    ref = best_neuron(Phi, U_K, features="bias", batch_size=1)
    assert ref.n_exact >= 2  # the test needs several exact solves
    ck = tmp_path / "state.npz"
    real = work.solve_chunk
    monkeypatch.setattr(enum_exact, "solve_chunk", _interrupted_on_call(real, 2))
    with pytest.raises(KeyboardInterrupt):
        best_neuron(Phi, U_K, features="bias", batch_size=1, checkpoint=str(ck))
    assert ck.exists()
    saved = SearchState.load(ck, ref.fingerprint, ref.n_patterns)
    assert saved is not None and np.isfinite(saved.best_value)
    monkeypatch.setattr(enum_exact, "solve_chunk", real)
    res = best_neuron(Phi, U_K, features="bias", batch_size=1, checkpoint=str(ck))
    assert "resumed from checkpoint" in res.notes
    assert res.value == pytest.approx(ref.value, abs=1e-12)
    assert res.certified and verify(res, Phi, U_K, "bias").valid
    # a checkpoint of another query is refused and left untouched (robustness tests: more cases)
    Phi2, U2 = _inst(5, 50)
    before = ck.read_bytes()
    with pytest.raises(CheckpointError, match="another"):
        best_neuron(Phi2, U2, features="bias", checkpoint=str(ck))
    assert ck.read_bytes() == before


def test_states_merge_in_any_order():
    rng = np.random.default_rng(0)
    N, m = 20, 3
    outs = []
    for s in range(0, N, 5):
        idx = np.arange(s, s + 5)
        outs.append(PatternOutcome(index=idx, upper=rng.random(5) + 1, lower=rng.random(5),
                                   thetas=rng.normal(size=(5, m)), status=np.zeros(5, np.int8),
                                   method=("",) * 5))
    a, b = SearchState.empty(N), SearchState.empty(N)
    for o in outs:
        a.absorb(o)
    for o in reversed(outs):
        b.absorb(o)
    np.testing.assert_array_equal(a.upper, b.upper)
    np.testing.assert_array_equal(a.lower, b.lower)
    assert a.best_value == b.best_value and a.best_index == b.best_index


def test_solver_failure_falls_back_and_is_reported(monkeypatch):
    import solvers

    Phi, U_K = _inst(6, 30)
    ref = best_neuron(Phi, U_K, features="bias")
    real_solve = solvers.solve

    def broken(problem, method="auto", **kw):
        if method == "auto":
            raise solvers.BackendError("backend exploded")
        return real_solve(problem, method=method, **kw)

    monkeypatch.setattr(solvers, "solve", broken)
    res = best_neuron(Phi, U_K, features="bias")
    assert res.value == pytest.approx(ref.value, abs=1e-9)
    assert res.certified

    def programming_error(problem, method="auto", **kw):
        raise TypeError("a bug, not a backend failure")

    monkeypatch.setattr(solvers, "solve", programming_error)
    with pytest.raises(TypeError):  # a bug surfaces; it is never turned into a note
        best_neuron(Phi, U_K, features="bias")

    def all_broken(*args, **kw):
        raise solvers.BackendError("everything exploded")

    monkeypatch.setattr(solvers, "solve", all_broken)
    res = best_neuron(Phi, U_K, features="bias")  # no exact values: patterns settle by dual evidence
    rep = verify(res, Phi, U_K, "bias")
    assert rep.valid and rep.certified == res.certified
    assert res.value == pytest.approx(ref.value, abs=1e-9) or not res.certified

    monkeypatch.setattr(solvers, "cone_dual", all_broken)  # and no dual evidence either
    with pytest.warns(RuntimeWarning, match="dual evidence failed"):
        res = best_neuron(Phi, U_K, features="bias")
    assert verify(res, Phi, U_K, "bias").valid  # an honest uncertified answer still verifies
    assert "auto" in ref.methods.values()  # the instance needs exact per-pattern solves
    assert res.upper_bound >= ref.value - 1e-12  # bounds stand ...
    assert not res.certified  # ... and nothing is claimed falsely
    assert any("not solved exactly" in n for n in res.notes)


def test_interrupt_during_bounds_then_resume(tmp_path, monkeypatch):
    Phi, U_K = _inst(8, 40)
    ref = best_neuron(Phi, U_K, features="bias")
    ck = tmp_path / "bounds.npz"
    real = work.chunk_bounds
    monkeypatch.setattr(search, "chunk_bounds", _interrupted_on_call(real, 3))
    with pytest.raises(KeyboardInterrupt):
        best_neuron(Phi, U_K, features="bias", chunk_size=50, checkpoint=str(ck))
    saved = SearchState.load(ck, ref.fingerprint, ref.n_patterns)
    kept = np.flatnonzero(np.isfinite(saved.upper))
    assert kept.size == 100  # two chunks of 50 (complementary pairs: not consecutive indices)
    done = []

    def counting(*args):
        done.append(args[1])
        return real(*args)

    monkeypatch.setattr(search, "chunk_bounds", counting)
    res = best_neuron(Phi, U_K, features="bias", chunk_size=50, checkpoint=str(ck))
    redone = np.concatenate(done)
    assert np.intersect1d(redone, kept).size == 0  # the two finished chunks were not redone
    assert np.array_equal(np.sort(np.r_[redone, kept]), np.arange(ref.n_patterns))  # the others all were
    assert "resumed from checkpoint" in res.notes
    assert res.value == pytest.approx(ref.value, abs=1e-12) and res.certified


def test_process_pool_ships_chunks_by_pickling():
    from concurrent.futures import ProcessPoolExecutor

    Phi, U_K = _inst(9, 30)
    ref = best_neuron(Phi, U_K, features="bias")
    with ProcessPoolExecutor(max_workers=2) as ex:
        res = best_neuron(Phi, U_K, features="bias", executor=ex, chunk_size=200, batch_size=8)
    assert res.value == pytest.approx(ref.value, abs=1e-12) and res.certified


def test_cli_scheduler_address(tmp_path, capsys):
    distributed = pytest.importorskip("dask.distributed")
    import json

    from relu_gating.cli import main

    rng = np.random.default_rng(10)
    inp = tmp_path / "d.npz"
    np.savez(inp, X=rng.normal(size=(25, 2)))
    assert main(["best-neuron", str(inp), "--K", "3", "--features", "bias", "--json", "--quiet"]) == 0
    ref = json.loads(capsys.readouterr().out)
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        rc = main(["best-neuron", str(inp), "--K", "3", "--features", "bias", "--json", "--quiet",
                   "--scheduler", cluster.scheduler_address])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["value"] == pytest.approx(ref["value"], abs=1e-12) and out["certified"]
