"""The exit-code table of ``relu-gating best-neuron`` (docs/cli.md), row by row, for every strategy.

| code | meaning |
| 0    | certified at the requested alpha |
| 2    | unusable input (one line naming the file or flag), before any work |
| 3    | a valid answer, not certified at the requested alpha (a --max-seconds stop included) |
| 130  | interrupted (Ctrl-C / SIGINT); a branch and bound still prints and writes its valid answer |

Strategies: in-memory enumeration, streamed enumeration (``--memory``), branch and bound (and
``auto``, which resolves to one of them).
"""

from __future__ import annotations

import dataclasses
import json
import signal
import time

import numpy as np
import pytest

from relu_gating.cli import main
from relu_gating.cli.best_neuron import EXIT_INTERRUPTED, EXIT_OK, EXIT_UNCERTIFIED, exit_code

STRATEGIES = {
    "enumeration": ["--strategy", "enumerate"],
    "streamed": ["--strategy", "enumerate", "--memory", "512M"],
    "branch-and-bound": ["--strategy", "branch-and-bound"],
}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("exit")
    np.save(d / "small.npy", np.random.default_rng(7).normal(size=(14, 2)))   # certified in well under a second
    np.save(d / "mid.npy", np.random.default_rng(0).normal(size=(60, 3)))     # not settled at the root
    np.save(d / "big.npy", np.random.default_rng(0).normal(size=(300, 3)))    # minutes for every strategy
    return d


def test_the_codes():
    assert (EXIT_OK, EXIT_UNCERTIFIED, EXIT_INTERRUPTED) == (0, 3, 130)


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_0_certified(strategy, data, capsys):
    argv = ["best-neuron", str(data / "small.npy"), "--K", "3", "--json", "--quiet", *STRATEGIES[strategy]]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["certified"] is True and summary["value"] >= summary["upper_bound"] - 1e-9


@pytest.mark.parametrize("strategy", list(STRATEGIES))
@pytest.mark.parametrize("bad,word", [(["--alpha", "0"], "alpha"), (["--K", "0"], "K"),
                                      (["--out", "/nonexistent-dir/c.json"], "--out")])
def test_2_unusable_input(strategy, bad, word, data, capsys):
    assert main(["best-neuron", str(data / "small.npy"), "--K", "3", *STRATEGIES[strategy], *bad]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and word in err[0]


def test_auto_answers_a_time_limit_nothing_meets(data, capsys):
    """auto with a limit no strategy can meet (0.01 s) does not refuse: the branch and bound is anytime and
    reports the alpha reached, not certified: exit 3 (issue 39)."""
    argv = ["best-neuron", str(data / "mid.npy"), "--K", "3", "--max-seconds", "0.01", "--json"]
    assert main(argv) == EXIT_UNCERTIFIED
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert summary["strategy"] == "branch-and-bound" and summary["certified"] is False
    assert "exit 3" in err.strip().splitlines()[-1]


@pytest.mark.parametrize("strategy", ["branch-and-bound"])
def test_3_stopped_branch_and_bound(strategy, data, tmp_path, capsys):
    """--max-seconds stops the tree before it settles: a valid answer (its certificate verifies, weaker
    than alpha 1, which verify reports with the same code 3), not certified: exit 3."""
    cert = tmp_path / "tree.json"
    argv = ["best-neuron", str(data / "mid.npy"), "--K", "3", "--strategy", strategy, "--max-seconds", "0.01",
            "--out", str(cert)]
    assert main(argv) == EXIT_UNCERTIFIED
    out, err = capsys.readouterr()
    assert "certified        NO" in out and "stopped by --max-seconds" in out
    assert "exit 3" in err.strip().splitlines()[-1]
    tree = json.loads(cert.read_text())
    assert tree["certified"] is False and tree["tree"]["stats"]["stop"] == "time"
    assert tree["value"] < tree["upper_bound"]  # the stop left a real gap (else the run would be certified)
    assert main(["verify", str(cert), str(data / "mid.npy"), "--K", "3", "--quiet"]) == 3
    reached = tree["value"] / tree["upper_bound"]
    assert main(["verify", str(cert), str(data / "mid.npy"), "--K", "3", "--quiet",
                 "--require-alpha", f"{reached * 0.999:.6f}"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("strategy", ["enumeration", "streamed"])
def test_3_uncertified_enumeration(strategy, data, monkeypatch, capsys):
    """An enumeration that ends uncertified (its search is replaced by one returning a real answer with a
    larger bound: enumeration certifies whenever its solves succeed) exits 3, JSON and text alike."""
    import relu_gating.search.strategy as strategies

    real = strategies.run

    def weaker(*args, **kwargs):
        res = real(*args, **kwargs)
        return dataclasses.replace(res, upper_bound=res.value * 1.25, certified=False)

    monkeypatch.setattr(strategies, "run", weaker)
    argv = ["best-neuron", str(data / "small.npy"), "--K", "3", "--quiet", *STRATEGIES[strategy]]
    assert main([*argv, "--json"]) == EXIT_UNCERTIFIED
    assert json.loads(capsys.readouterr().out)["certified"] is False
    assert main(argv) == EXIT_UNCERTIFIED
    out, err = capsys.readouterr()
    assert "certified        NO" in out and "alpha reached 0.800000" in err


def test_exit_code_of_results():
    """The mapping itself: certified, not certified, and a tree that stopped on Ctrl-C (even if certified)."""
    from relu_gating.search.result import SearchStats

    @dataclasses.dataclass
    class R:
        certified: bool
        stop: str = "settled"

        @property
        def stats(self):
            return SearchStats("branch-and-bound", 0, 0, 0, 0, stop=self.stop)

    assert exit_code(R(True)) == 0 and exit_code(R(False)) == 3
    assert exit_code(R(False, "time")) == 3
    assert exit_code(R(True, "settled")) == 0
    assert exit_code(R(True, "interrupted")) == 130
    assert exit_code(R(False, "interrupted")) == 130


@pytest.mark.parametrize("strategy,marker", [
    ("enumeration", "gating patterns"),  # the plan line, just before the work
    ("streamed", "gating patterns"),
    ("branch-and-bound", "chambers visited"),  # the tree's progress bar: nodes are being expanded
])
@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_130_interrupted(strategy, marker, data, tmp_path):
    """SIGINT (Ctrl-C at a terminal) during the work exits 130 in every strategy; the branch and bound still
    prints its valid answer and writes its tree, and says how far it got."""
    from _terminal import TerminalRun

    cert = tmp_path / "c.json"
    extra = ["--out", str(cert)] if strategy == "branch-and-bound" else []
    run = TerminalRun(["best-neuron", str(data / "big.npy"), "--K", "4", *STRATEGIES[strategy], *extra])
    try:
        run.wait_for(marker)
        time.sleep(1.0)
        assert run.proc.poll() is None, run.err
        run.proc.send_signal(signal.SIGINT)
        run.proc.wait(timeout=30)
    finally:
        code, out, err = run.finish()
    assert code == EXIT_INTERRUPTED, (code, err)
    assert "interrupted" in err.strip().splitlines()[-1] and "Traceback" not in err
    if strategy == "branch-and-bound":
        assert "(interrupted)" in out and "alpha reached" in out
        tree = json.loads(cert.read_text())
        assert tree["tree"]["stats"]["stop"] == "interrupted"
