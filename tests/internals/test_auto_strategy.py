"""``strategy="auto"``, the default: what the plan chooses, why, and what it refuses.

The choice is tested on the plan alone at stated sizes (instant), then once end to end per
choice on tiny inputs, each against the strategy run explicitly (an independent search).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import relu_gating as rg
from relu_gating.search import plan as planmod
from relu_gating.search.options import EnumerateOptions, Resolved, resolve_options
from relu_gating.search.plan import DEFAULT_MAX_SECONDS, QueryPlan, choose, estimate


def _cover(n: int, d: int) -> int:
    """Cover's count of the chambers of n points in general position in d dimensions (with a bias)."""
    from math import comb

    return 2 * sum(comb(n - 1, k) for k in range(d + 1))


def _plan(n: int, d: int) -> QueryPlan:
    N = _cover(n, d)
    est = estimate("enumerate", n, d + 1, N)
    return QueryPlan(n=n, m=d + 1, rank=d + 1, n_hyperplanes=n, patterns=N, seconds=est.seconds,
                     memory_bytes=est.memory_bytes)


@pytest.fixture()
def memory_16g(monkeypatch):
    """A machine with 16 GB (the choice depends on the memory; the tests must not)."""
    monkeypatch.setattr(planmod, "_physical_memory", lambda: 16e9)


# Measured (docs/plan.md; Gaussian, K = 4, bias): the faster strategy, or the one that certifies at
# all (n = 1000, d = 3).  At n = 2000, d = 2 the enumeration (1.4 GB) took 27 s CPU idle but 90 s at
# load 3, the tree 21-54 s: a large enumeration must be estimated 2x faster (LARGE_TREE_PREFERENCE).
MEASURED_WINNER = [((210, 3), "enumerate"), ((80, 4), "enumerate"), ((30, 6), "branch-and-bound"),
                   ((2000, 2), "branch-and-bound"), ((1000, 3), "branch-and-bound")]


@pytest.mark.parametrize("size,winner", MEASURED_WINNER)
def test_auto_chooses_the_measured_winner(size, winner, memory_16g):
    choice = choose(_plan(*size))
    assert choice.strategy == winner
    assert choice.describe().startswith({"enumerate": "in-memory enumeration: estimated",
                                         "branch-and-bound": "branch and bound: estimated"}[winner])


def test_small_queries_enumerate_in_memory(memory_16g):
    for n, d in ((12, 1), (20, 2), (40, 3), (15, 4)):
        c = choose(_plan(n, d))
        assert (c.strategy, c.memory) == ("enumerate", None), (n, d)
        assert "the fastest within 10.0 min" in c.reason and "branch and bound" in c.reason


def test_streamed_when_memory_is_short_and_time_allows(monkeypatch):
    p = _plan(300, 3)
    enum, stream = p.estimate("enumerate"), p.estimate("stream")
    monkeypatch.setattr(planmod, "_physical_memory", lambda: 1.5 * enum.memory_bytes)  # half of it is too little
    monkeypatch.setattr(planmod, "BNB_SECONDS", (1e3, 0, 0, 0, 0))  # branch and bound: 1000 s, too slow
    c = choose(p)
    assert (c.strategy, c.memory) == ("enumerate", planmod._stream_budget()) and c.estimate.strategy == "stream"
    assert c.describe().startswith("streamed enumeration") and c.estimate.seconds == stream.seconds


def test_the_tree_is_preferred_unless_enumeration_is_clearly_faster(memory_16g, monkeypatch):
    p = _plan(210, 3)
    enum, bnb = p.estimate("enumerate").seconds, p.estimate("branch-and-bound").seconds
    assert enum < bnb
    assert choose(p).strategy == "enumerate"
    monkeypatch.setattr(planmod, "TREE_PREFERENCE", 1.2 * bnb / enum)  # demand more of the enumeration
    assert choose(p).strategy == "branch-and-bound"


def _enumeration_only() -> Resolved:
    """``strategy="auto"`` with ``EnumerateOptions()``: the enumerations alone to choose from."""
    return resolve_options("auto", EnumerateOptions(), {})


def test_no_tree_leaves_branch_and_bound_out(memory_16g):
    assert choose(_plan(30, 6)).strategy == "branch-and-bound"
    c = choose(_plan(30, 6), _enumeration_only())
    assert c.strategy == "enumerate"


@pytest.mark.parametrize("size", [(2000, 2), (300, 3)])
def test_a_certificate_tips_level_cases_to_the_tree(size, memory_16g):
    """The must-show sizes: every option within a minute; with a certificate to write, the tree
    (verifying pattern lists costs about 5x their search, a tree about its search)."""
    p = _plan(*size)
    assert p.estimate("enumerate").seconds < 60 and p.estimate("branch-and-bound").seconds < 60
    assert choose(p).estimate.seconds < 60
    c = choose(p, certificate=True)
    assert c.strategy == "branch-and-bound" and "with its certificate's verification" in c.reason


def test_time_limit_is_the_default_and_can_be_changed(memory_16g):
    p = _plan(300, 3)
    assert choose(p).max_seconds == DEFAULT_MAX_SECONDS == 600.0
    best = choose(p).estimate.seconds
    tight = choose(p, max_seconds=best / 2)  # nothing within: the branch and bound runs to the limit
    assert tight.strategy == "branch-and-bound" and "beyond the" in tight.reason and tight.max_seconds == best / 2


@pytest.mark.parametrize("limit", [None, 120.0, 1.0])
def test_auto_never_refuses_for_time_the_anytime_strategy_answers(memory_16g, limit):
    """Far beyond every estimate (9e9 chambers), auto runs the branch and bound to the limit (issue 39:
    wine PCA 5 was refused at 120 s, estimated 43 min, certified in 2 min)."""
    c = choose(_plan(3000, 3), max_seconds=limit)
    assert c.strategy == "branch-and-bound" and "beyond the" in c.reason and "alpha reached" in c.reason
    assert c.max_seconds == (DEFAULT_MAX_SECONDS if limit is None else limit)


def test_refusal_only_when_nothing_can_work(memory_16g, monkeypatch):
    """The branch and bound left out (EnumerateOptions) or beyond the memory budget: refused, naming
    every option with its estimate."""
    p = _plan(3000, 3)  # 9e9 chambers
    with pytest.raises(rg.ProblemTooLargeError) as info:
        choose(p, _enumeration_only())
    msg = str(info.value)
    assert "\n" not in msg and "no enumeration is predicted to finish within 10.0 min" in msg
    assert "left out by EnumerateOptions" in msg
    for option in ("--strategy enumerate --max-patterns none", "--memory 2G", "--strategy branch-and-bound",
                   "--max-seconds"):
        assert option in msg
    for strategy in ("enumerate", "stream", "branch-and-bound"):
        assert p.estimate(strategy).describe() in msg
    monkeypatch.setattr(planmod, "BNB_BYTES", (1e15, 0.0))  # the branch and bound's memory: beyond the budget
    with pytest.raises(rg.ProblemTooLargeError, match="beyond the memory budget"):
        choose(p)
    assert "if this machine can afford it" not in msg


def test_enumeration_refusal_names_the_feasible_options(memory_16g):
    p = _plan(2000, 2)
    with pytest.raises(rg.ProblemTooLargeError) as info:
        planmod.check_plan(p, 1000)
    msg = str(info.value)
    assert "more than max_patterns = 1,000; options: " in msg
    assert f"branch and bound (--strategy branch-and-bound): {p.estimate('branch-and-bound').describe()}" in msg
    assert f"streamed enumeration (--memory 2G): {p.estimate('stream').describe()}" in msg


def _tiny(n=14, d=2, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    U = np.linalg.qr(rng.normal(size=(n, 3)))[0]
    return rg.layer_input(X), U


def test_end_to_end_auto_enumerates_a_tiny_query():
    Phi, U = _tiny()
    res = rg.best_neuron(Phi, U)  # the default
    ref = rg.best_neuron(Phi, U, strategy="branch-and-bound")  # an independent search
    assert res.strategy == "enumerate" and res.n_patterns == _cover(14, 2) and res.certified
    assert abs(res.value - ref.value) <= 1e-9 and ref.certified


def test_end_to_end_auto_branches_when_enumeration_is_predicted_slow(monkeypatch):
    Phi, U = _tiny()
    monkeypatch.setattr(planmod, "seconds_per_pattern", lambda n, m: 10.0)  # enumeration: 10 s a pattern
    res = rg.best_neuron(Phi, U)
    ref = rg.best_neuron(Phi, U, strategy="enumerate")
    assert res.strategy == "branch-and-bound" and res.tree is not None and res.certified
    assert abs(res.value - ref.value) <= 1e-9


def test_end_to_end_auto_streams_when_memory_is_short(monkeypatch):
    Phi, U = _tiny()
    seen = {}
    from relu_gating.search._stream import run as _stream_run

    real = _stream_run.stream_best_neuron

    def spy(obj, **kw):
        seen["memory"] = kw["memory"]
        return real(obj, **kw)

    monkeypatch.setattr(_stream_run, "stream_best_neuron", spy)
    monkeypatch.setattr(planmod, "BYTES_PER_PATTERN", (1e9, 0, 0))  # in memory: 1 GB a pattern
    monkeypatch.setattr(planmod, "BNB_SECONDS", (1e3, 0, 0, 0, 0))
    res = rg.best_neuron(Phi, U)
    ref = rg.best_neuron(Phi, U, strategy="enumerate")
    assert seen["memory"] == planmod._stream_budget() and res.certified
    assert abs(res.value - ref.value) <= 1e-9 and res.n_patterns == ref.n_patterns


def test_cli_default_certifies_and_says_why(tmp_path, capsys, monkeypatch):
    from relu_gating.cli import main

    monkeypatch.setattr("relu_gating._runtime.progress.on_terminal", lambda stream=None: True)  # the plan line: a terminal's

    X = np.random.default_rng(16).normal(size=(20, 2))
    np.save(tmp_path / "X.npy", X)
    assert main(["best-neuron", str(tmp_path / "X.npy"), "--K", "3", "--json"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["certified"]
    plan_line = [ln for ln in cap.err.splitlines() if "Cover's bound" in ln]
    assert len(plan_line) == 1 and "in-memory enumeration: estimated" in plan_line[0]
    assert "the fastest within 10.0 min" in plan_line[0]


@pytest.mark.parametrize("winner", ["branch-and-bound", "enumerate"])
def test_the_output_format_never_changes_the_strategy(tmp_path, capsys, monkeypatch, winner):
    """``--out c.npz`` and ``--out c.json`` run the same strategy, which ``--json`` names, and both
    certificates verify, by the command line and by ``verify`` (a tree in the binary form too: issue 38)."""
    from relu_gating.cli import main

    per_pattern = 1.0 if winner == "branch-and-bound" else 1e-9
    monkeypatch.setattr(planmod, "seconds_per_pattern", lambda n, m: per_pattern)
    rng = np.random.default_rng(16)
    X = rng.normal(size=(20, 2))
    U = np.linalg.qr(rng.normal(size=(20, 3)))[0]
    np.savez(tmp_path / "in.npz", X=X, U_K=U)
    ran = []
    for name in ("c.json", "c.npz"):
        out = tmp_path / name
        assert main(["best-neuron", str(tmp_path / "in.npz"), "--quiet", "--json", "--out", str(out)]) == 0
        summary = json.loads(capsys.readouterr().out)
        ran.append(summary["strategy"])
        assert summary["certified"] and out.exists()
        assert main(["verify", str(out), str(tmp_path / "in.npz"), "--quiet"]) == 0
        capsys.readouterr()
        report = rg.verify(str(out), rg.layer_input(X), U)
        assert report.certified and report.value == pytest.approx(summary["value"], abs=1e-9)
    assert ran == [winner, winner]


def test_auto_answers_what_the_enumeration_refuses(tmp_path, capsys, monkeypatch):
    """A pattern cap the enumeration cannot meet: auto branches instead of refusing (exit 0, certified);
    the enumeration alone refuses it (exit 2)."""
    from relu_gating.cli import main

    monkeypatch.setattr("relu_gating._runtime.progress.on_terminal", lambda stream=None: True)  # the plan line: a terminal's

    np.save(tmp_path / "X.npy", np.random.default_rng(5).normal(size=(20, 2)))
    assert main(["best-neuron", str(tmp_path / "X.npy"), "--K", "3", "--max-patterns", "10", "--json"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["certified"] and "branch and bound: estimated" in cap.err
    argv = ["best-neuron", str(tmp_path / "X.npy"), "--K", "3", "--max-patterns", "10", "--strategy", "enumerate"]
    assert main(argv) == 2
    assert "more than max_patterns = 10; options: " in capsys.readouterr().err


@pytest.mark.parametrize("name", ["calibrate_plan_bnb_K4_20261203.json", "calibrate_plan_bnb_K8_20261203.json"])
def test_the_branch_and_bounds_range_holds_its_calibration_runs(name):
    """Each calibration run's CPU time lies within the range the plan shows (``BNB_SPREAD``), and the
    memory within 2x (benchmarks/calibrate_plan.py --fit; docs/plan.md)."""
    from pathlib import Path

    runs = json.loads((Path(__file__).parents[2] / "benchmarks" / "results" / name).read_text())["runs"]
    assert len(runs) >= 7
    for r in runs:
        est = estimate("branch-and-bound", r["n"], r["m"], r["plan_patterns"], r["K"])
        assert est.seconds / est.spread <= r["cpu_seconds"] <= est.seconds * est.spread, r
        assert 0.5 <= r["peak_bytes"] / est.memory_bytes <= 2.0, r


def test_the_branch_and_bounds_range_holds_the_real_data_runs():
    """Each certified real-data run (docs/real-data.md's 600-s table, saved by ``benchmarks/plan_real.py
    --save``) lies within the range the plan shows: the refit of issue 39 (docs/plan.md), where the
    estimate before over-predicted them 1.6-39x (wine PCA 5: 43.4 min estimated, 144 s measured)."""
    from pathlib import Path

    path = Path(__file__).parents[2] / "benchmarks" / "results" / "plan_real_runs_20261205.json"
    runs = json.loads(path.read_text())["runs"]
    assert len(runs) >= 8
    for r in runs:
        est = estimate("branch-and-bound", r["n"], r["m"], r["plan_patterns"], r["K"])
        assert est.seconds / est.spread <= r["cpu_seconds"] <= est.seconds * est.spread, r
        assert est.seconds <= 4.0 * r["cpu_seconds"] and r["cpu_seconds"] <= 4.0 * est.seconds, r
