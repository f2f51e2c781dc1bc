"""What a new user meets first: a warning for a transposed input, progress that suits a pipe or a terminal."""

from __future__ import annotations

import io
import time

import numpy as np
import pytest

from relu_gating._runtime.progress import Progress, on_terminal
from relu_gating._inputs.validate import shape_warning
from relu_gating.cli import main


@pytest.mark.parametrize("n,d,warned", [(3, 300, True), (5, 3, True), (4, 4, True), (6, 3, False),
                                        (100, 2, False), (2, 1, False)])
def test_shape_warning_cases(n, d, warned):
    assert (shape_warning(n, d, "X") is not None) == warned


def test_transposed_input_is_one_line_on_stderr(tmp_path, capsys):
    np.save(tmp_path / "t.npy", np.random.default_rng(0).normal(size=(3, 30)))  # 3 samples in 30 dimensions
    assert main(["best-neuron", str(tmp_path / "t.npy"), "--K", "1", "--json"]) == 0
    err = [ln for ln in capsys.readouterr().err.splitlines() if "transposed" in ln]
    assert len(err) == 1 and err[0].startswith("relu-gating best-neuron: warning: ") and "n = 3" in err[0]
    np.save(tmp_path / "ok.npy", np.random.default_rng(0).normal(size=(30, 3)))
    assert main(["best-neuron", str(tmp_path / "ok.npy"), "--K", "3", "--json"]) == 0
    assert "transposed" not in capsys.readouterr().err
    assert main(["best-neuron", str(tmp_path / "t.npy"), "--K", "1", "--json", "--quiet"]) == 0
    assert "transposed" not in capsys.readouterr().err  # --quiet silences warnings


def test_progress_on_a_pipe_is_a_plain_periodic_line():
    """Not a terminal: no bar (no carriage return); work longer than the period prints whole lines."""
    buf = io.StringIO()
    assert not on_terminal(buf)
    with Progress(100, "bounds", stream=buf, plain_every=0.05) as bar:
        for _ in range(10):
            time.sleep(0.02)
            bar.update(10, note="best 0.5")
    text = buf.getvalue()
    assert "\r" not in text and text.count("\n") >= 2
    assert all(ln.startswith("relu-gating: bounds ") for ln in text.splitlines())
    assert text.splitlines()[-1].startswith("relu-gating: bounds 100% 100/100 patterns")
    quick = io.StringIO()
    with Progress(100, "bounds", stream=quick) as bar:  # shorter than the period: silent
        bar.update(100)
    assert quick.getvalue() == ""
    off = io.StringIO()
    with Progress(100, "bounds", stream=off, enabled=False, plain_every=0.0) as bar:  # --quiet
        time.sleep(0.01)
        bar.update(100)
    assert off.getvalue() == ""


@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_plan_line_only_on_a_terminal(tmp_path):
    """The plan line goes to a person at a terminal; a pipe (and --quiet) silences it."""
    import subprocess
    import sys

    from _terminal import TerminalRun

    np.save(tmp_path / "x.npy", np.random.default_rng(1).normal(size=(20, 2)))
    args = ["best-neuron", str(tmp_path / "x.npy"), "--K", "3"]
    piped = subprocess.run([sys.executable, "-m", "relu_gating", *args], capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0 and "gating patterns" not in piped.stderr
    run = TerminalRun(args)
    code, _, err = run.finish(timeout=120)
    assert code == 0 and "gating patterns (Cover's bound)" in err
    code, _, err = TerminalRun([*args, "--quiet"]).finish(timeout=120)
    assert code == 0 and "gating patterns" not in err


# -- BLAS threads that fit the machine --------------------------------------------------------------

def test_thread_budget_is_the_usable_cores_capped_by_the_users_setting():
    import os

    from relu_gating._runtime.threads import thread_budget, user_thread_setting

    cores = len(os.sched_getaffinity(0))
    assert thread_budget({}) == cores
    assert thread_budget({"OMP_NUM_THREADS": "1"}) == 1
    assert thread_budget({"OPENBLAS_NUM_THREADS": "64"}) == cores  # never more than the cores we may use
    assert user_thread_setting({"OMP_NUM_THREADS": "4,2", "MKL_NUM_THREADS": "3"}) == 3  # the smallest wins
    assert user_thread_setting({"OMP_NUM_THREADS": "", "OPENBLAS_NUM_THREADS": "zero"}) is None


def test_blas_threads_limits_the_block_and_restores():
    import scipy.linalg  # noqa: F401 - its BLAS too (a second OpenBLAS): every one loaded is limited
    from threadpoolctl import threadpool_info

    from relu_gating._runtime.threads import blas_threads

    def blas():
        return [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]

    before = blas()
    if not before:
        pytest.skip("no BLAS library found by threadpoolctl")
    with blas_threads(1):
        assert set(blas()) == {1}
    assert blas() == before


def test_command_line_respects_the_users_thread_setting(tmp_path):
    """A child started with OPENBLAS_NUM_THREADS=1 keeps one BLAS thread through the command line's fit."""
    import json
    import os
    import subprocess
    import sys

    code = ("import json, sys; from relu_gating._runtime.threads import fit_blas, thread_budget; "
            "from threadpoolctl import threadpool_info; fit_blas(); "
            "print(json.dumps([thread_budget(), [d['num_threads'] for d in threadpool_info() if d['user_api'] == 'blas']]))")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=True)
    budget, threads = json.loads(out.stdout)
    assert budget == 1 and set(threads) <= {1}


def _child(code: str, env: dict) -> str:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60,
                          check=True).stdout.strip()


def test_blas_env_sizes_the_pools_to_the_usable_cores_unless_the_user_did():
    from relu_gating._runtime.threads import blas_env

    assert blas_env({}, 1, 4) == {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    assert blas_env({"OMP_NUM_THREADS": "3"}, 1, 4) == {}  # the user's own setting is left alone
    assert blas_env({}, 4, 4) == {}  # every core usable: nothing to set


def test_the_command_line_presets_the_environment_only_before_numpy_loads():
    """In a fresh child (numpy not loaded) the preset applies what blas_env says for its cores; once
    numpy is loaded it does nothing."""
    import os

    base = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                             "MKL_NUM_THREADS")}
    code = ("import os; from relu_gating._runtime.threads import blas_env, preset_blas_env, thread_budget; "
            "want = blas_env(dict(os.environ), thread_budget(), os.cpu_count()); got = preset_blas_env(); "
            "import numpy; print(got == (thread_budget() if want else None), "
            "all(os.environ.get(k) == v for k, v in want.items()), preset_blas_env())")
    assert _child(code, base) == "True True None"


def test_fit_blas_leaves_pools_alone_when_nothing_is_lowered():
    """A limit equal to the pools' size is not applied (applied, then a block limit in the command's
    worker thread made the bound pass 4x slower)."""
    import os

    from relu_gating._runtime import threads as _threads

    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                            "MKL_NUM_THREADS")}
    env["OPENBLAS_NUM_THREADS"] = "1"
    code = ("from relu_gating._runtime import threads as _threads; print(_threads.fit_blas(), len(_threads._LIMITERS))")
    assert _child(code, env) == "1 0"
    assert _threads.fit_blas(10**6) >= 1  # a budget above the cores is capped, never raised
