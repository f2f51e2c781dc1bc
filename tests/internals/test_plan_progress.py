"""Sizes known before the work, progress in the user's units, Ctrl-C that answers."""

from __future__ import annotations

import io
import os
import signal
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from _clock import cpu_seconds

import relu_gating as rg
from relu_gating._runtime.interrupt import STOP, Interrupted, check_stop, run_interruptible
from relu_gating._runtime.progress import Progress
from relu_gating.search.plan import PATTERN_LIMIT, check_max_patterns, default_max_patterns, plan_query


@settings(max_examples=25, deadline=None, derandomize=True)
@given(n=st.integers(3, 40), d=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_plan_counts_the_patterns_of_points_in_general_position(n, d, seed):
    X = np.random.default_rng(seed).normal(size=(n, d))
    Phi = rg.layer_input(X)
    plan = plan_query(Phi)
    assert plan.patterns == len(rg.enumerate_patterns(Phi))  # Cover's count is exact in general position
    assert plan.seconds > 0 and plan.memory_bytes > 0 and (plan.n, plan.m) == (n, d + 1)


def test_plan_is_an_upper_bound_on_degenerate_points():
    g = np.arange(5.0)
    X = np.array([(a, b) for a in g for b in g])  # a grid: many collinear triples
    Phi = rg.layer_input(X)
    assert len(rg.enumerate_patterns(Phi)) < plan_query(Phi).patterns


def test_oversize_query_is_refused_instantly_with_the_estimate():
    X = np.random.default_rng(0).normal(size=(2000, 4))
    U = np.linalg.qr(np.random.default_rng(1).normal(size=(2000, 3)))[0]
    c0 = cpu_seconds()
    with pytest.raises(rg.ProblemTooLargeError, match="gating patterns.*estimated.*max_patterns.*"
                                                       "branch and bound.*--memory 2G"):
        rg.best_neuron(rg.layer_input(X), U, strategy="enumerate")  # default "auto" limit
    with pytest.raises(rg.ProblemTooLargeError, match="gating patterns.*no enumeration is predicted to finish "
                                                       "within 10.0 min.*branch and bound.*--max-seconds"):
        rg.best_neuron(rg.layer_input(X), U, options=rg.EnumerateOptions())  # auto among the enumerations
    assert cpu_seconds() - c0 < 2.0  # refused before any heavy work (CPU: the load does not change it)


def test_max_patterns_options():
    assert check_max_patterns(None, 10, 3) is None
    assert check_max_patterns(7, 10, 3) == 7
    assert check_max_patterns("auto", 10, 3) == default_max_patterns(10, 3) <= PATTERN_LIMIT
    assert default_max_patterns(10_000, 4) < default_max_patterns(100, 4)  # memory per pattern grows with n
    for bad in (0, -1, 2.5, True, "all"):
        with pytest.raises(rg.InputError, match="max_patterns"):
            check_max_patterns(bad, 10, 3)


def test_progress_line_counts_units_with_rate_and_eta():
    out = io.StringIO()
    p = Progress(1000, "bounds", enabled=True, stream=out, min_interval=0.0)
    p._t0 -= 2.0
    p.update(250)
    line = p.line()
    assert "bounds" in line and "250/1,000 patterns" in line and "/s" in line and "ETA" in line
    p.update(750)
    assert "done in" in p.line()
    p.close()
    assert out.getvalue().endswith("\n")
    quiet = io.StringIO()
    with Progress(10, "bounds", stream=quiet) as q:  # not a terminal: silent
        q.update(10)
    assert quiet.getvalue() == ""


def test_run_interruptible_returns_and_reraises():
    assert run_interruptible(lambda: 41 + 1) == 42
    with pytest.raises(ValueError, match="boom"):
        run_interruptible(lambda: (_ for _ in ()).throw(ValueError("boom")))


def test_ctrl_c_stops_a_cooperative_worker_within_the_grace_period():
    """SIGINT in the main thread sets STOP; a loop that polls check_stop ends cleanly (finished=True).
    Python's own SIGINT handler is installed for the test: a test run started as a background job
    inherits SIGINT ignored, and the loop would then never be interrupted (it ends after 10 s, failing)."""
    ended = threading.Event()

    def work():
        try:
            t = time.perf_counter()
            while time.perf_counter() - t < 10.0:
                check_stop()
                time.sleep(0.01)
        finally:
            ended.set()

    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        t0 = time.perf_counter()
        with pytest.raises(Interrupted) as info:
            run_interruptible(work, grace=5.0)  # a grace a loaded machine keeps: the worker's 10 s it does not
    finally:
        signal.signal(signal.SIGINT, old)
    assert info.value.finished and ended.is_set() and time.perf_counter() - t0 < 8.0  # not at the work's end
    STOP.clear()
