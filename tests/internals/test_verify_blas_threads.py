"""``relu_gating.verify`` and ``relu-gating verify`` run their float work with one BLAS thread (issue 39:
under load a verify with two BLAS threads ran 3-7x slower), or the caller's explicit choice."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import threadpoolctl  # a dependency (pyproject.toml): no skip when it is missing

import relu_gating as rg
import relu_gating.checker._verify as _verify

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))


def _blas_threads() -> list[int]:
    return [d["num_threads"] for d in threadpoolctl.threadpool_info() if d["user_api"] == "blas"]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(16, 2))
    Phi, U = np.c_[X, np.ones(16)], np.linalg.qr(rng.normal(size=(16, 2)))[0]
    res = rg.best_neuron(Phi, U, features="bias", strategy="enumerate")
    root = tmp_path_factory.mktemp("blas")
    np.savez(root / "in.npz", Phi=Phi, U_K=U)
    (root / "c.json").write_text(json.dumps(res.to_dict()))
    return Phi, U, res, root


@pytest.mark.parametrize("threads", [1, None, 2])
def test_the_library_verify_runs_with_one_blas_thread_unless_told(small, monkeypatch, threads):
    if not _blas_threads():
        pytest.skip("no BLAS library found by threadpoolctl")
    Phi, U, res, _ = small
    seen = []
    state = _verify.state_problem

    def spy(*a, **k):
        seen.append(_blas_threads())
        return state(*a, **k)

    monkeypatch.setattr(_verify, "state_problem", spy)
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):  # pools of two, as on a 2-core machine
        before = _blas_threads()
        kw = {} if threads == 1 else {"blas_threads": threads}  # 1 is the default
        rep = rg.verify(res, Phi, U, "bias", **kw)
        after = _blas_threads()
    assert rep.valid and rep.certified
    if threads == 1:
        assert max(before) == 2  # the test means something: some pool had two threads
    want = [t if threads is None else min(t, threads) for t in before]  # lowered, never raised
    assert seen == [want], (seen, before)
    assert after == before  # restored


@pytest.mark.parametrize("user", [None, "2"])
def test_the_cli_verify_presets_one_blas_thread_before_numpy_unless_the_user_set_one(small, user):
    """In a fresh process (numpy not loaded) ``relu-gating verify`` sets the thread variables to 1 before numpy
    loads, so BLAS starts with one thread; a user's own ``OPENBLAS_NUM_THREADS`` is left as set."""
    _, _, _, root = small
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    if user:
        env["OPENBLAS_NUM_THREADS"] = user
    code = ("import contextlib, io, json, os, sys\n"
            "from relu_gating.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    code = main(['verify', {str(root / 'c.json')!r}, {str(root / 'in.npz')!r}, '--quiet'])\n"
            "from threadpoolctl import threadpool_info\n"
            "print(json.dumps([code, os.environ.get('OPENBLAS_NUM_THREADS'), os.environ.get('OMP_NUM_THREADS'),\n"
            "                  [d['num_threads'] for d in threadpool_info() if d['user_api'] == 'blas']]))\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, check=True)
    code, openblas, omp, threads = json.loads(out.stdout.strip().splitlines()[-1])
    assert code == 0
    if user:
        assert openblas == user and omp is None  # the user's choice, untouched
    elif (os.cpu_count() or 1) > 1:
        assert openblas == omp == "1" and threads and all(t == 1 for t in threads)
    else:  # one core: nothing to set, BLAS has one thread anyway
        assert all(t == 1 for t in threads)
