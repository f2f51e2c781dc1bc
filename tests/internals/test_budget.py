"""``max_seconds`` for every strategy, and the budget kept: the wall time of the whole call
(issue 38: the enumeration refused a budget; issue 39: 600-s runs ended at 638-660 s).

The stopped answers are checked by the checker (an independent proof): valid, not certified,
their bound over every chamber still open.  The wall-time margins scale with the machine's load
(``tests/_clock.py``): these are behaviour tests, not speed tests.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from _clock import slowdown

import relu_gating as rg
from relu_gating.search._enum import memory
from relu_gating.search.options import EnumerateOptions


def _instance(n: int, d: int, seed: int = 0, K: int = 4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return rg.layer_input(X), np.linalg.qr(rng.normal(size=(n, K)))[0]


def test_enumeration_stopped_in_the_bound_phase_is_valid_and_not_certified():
    """A budget gone after the first bound chunk: the chunks left claim the trivial bound 1, the
    certificate stays complete and the checker proves it (valid, not certified)."""
    Phi, U = _instance(40, 2, seed=1)
    full = rg.best_neuron(Phi, U, strategy="enumerate")
    res = rg.best_neuron(Phi, U, strategy="enumerate", max_seconds=1e-9, options=EnumerateOptions(chunk_size=16))
    assert res.strategy == "enumerate" and not res.certified and res.n_patterns == full.n_patterns
    assert res.upper_bound == memory.TRIVIAL_BOUND and 0 < res.value <= full.value + 1e-12
    assert any(n.startswith("enumeration stopped by max_seconds in the bound phase") for n in res.notes)
    assert res.stats.stop == "time" and full.stats.stop == "settled"  # the reason is a field; notes are remarks
    rep = rg.verify(res.to_dict(), Phi, U)
    assert rep.valid and not rep.certified and rep.upper_bound <= res.upper_bound + 1e-7


class _AfterCalls:
    """A deadline that passes at its ``k``-th question (deterministic, whatever the machine's load)."""

    def __init__(self, k: int) -> None:
        self.k, self.asked = k, 0

    def passed(self, N: int = 0) -> bool:
        self.asked += 1
        return self.asked >= self.k


def test_enumeration_stopped_in_the_exact_phase_keeps_the_open_bounds():
    """Bounded, then one round of exact solves: the open chambers keep their bounds; the checker
    proves the result's bound, which is above the optimum (the full enumeration's value)."""
    from relu_gating.search.objectives import make_objective

    Phi, U = _instance(60, 2, seed=3)
    full = rg.best_neuron(Phi, U, strategy="enumerate", options=EnumerateOptions(batch_size=1))
    from relu_gating.search._kernels.mirror import chunk_rows

    obj = make_objective(Phi, U, "bias")
    ps = rg.enumerate_patterns(Phi)
    chunks = len(chunk_rows(len(ps), int(ps.n_mirrored), 8192))  # one question after each bound chunk
    opts = EnumerateOptions(batch_size=1, patterns=ps)
    res = memory.enumerate_in_memory(obj, opts, alpha=1.0, tol=1e-9, method="auto", executor=None, progress=False,
                                     deadline=_AfterCalls(chunks + 2))  # then one exact round
    stopped = any(n.startswith("enumeration stopped by max_seconds in the exact phase") for n in res.notes)
    assert stopped or res.certified  # (the pilot and one solve may already settle it)
    assert full.value - 1e-9 <= res.upper_bound and res.value <= full.value + 1e-9
    assert res.upper_bound < memory.TRIVIAL_BOUND  # every chamber bounded: no trivial claim
    rep = rg.verify(res.to_dict(), Phi, U)
    assert rep.valid and rep.certified == res.certified
    assert stopped and not res.certified, "this instance needs more than one exact round (pick another seed)"
    assert res.stats.stop == "time"


def test_a_named_enumeration_takes_a_budget_on_the_command_line(tmp_path, capsys):
    """``--strategy enumerate --max-seconds``: accepted (issue 38); stopped at once, exit 3 with the
    alpha reached, and its certificate verifies as valid, not certified."""
    from relu_gating.cli import main

    Phi, U = _instance(40, 2, seed=1)
    np.savez(tmp_path / "in.npz", Phi=Phi, U_K=U)
    out = tmp_path / "c.json"
    argv = ["best-neuron", str(tmp_path / "in.npz"), "--strategy", "enumerate", "--max-seconds", "1e-9", "--quiet",
            "--json", "--out", str(out)]
    # one chunk of 8192 patterns holds them all here: the bound phase completes, the exact phase stops
    assert main(argv) == 3
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert doc["strategy"] == "enumerate" and doc["certified"] is False
    assert "stopped by --max-seconds" in cap.err
    assert main(["verify", str(out), str(tmp_path / "in.npz"), "--quiet"]) == 3  # valid, weaker than alpha 1


@pytest.mark.parametrize("budget", [4.0])
def test_the_budget_is_the_wall_time_of_the_whole_call(budget):
    """An instance far from settling within the budget (n = 400, d = 3): ``best_neuron`` returns
    within the budget plus a margin, the tree audited, valid and not certified."""
    Phi, U = _instance(400, 3, seed=7)
    t0 = time.perf_counter()
    res = rg.best_neuron(Phi, U, max_seconds=budget)
    wall = time.perf_counter() - t0
    slow = slowdown()  # the margin scales with the machine's load (about 1 when quiet)
    assert res.strategy == "branch-and-bound" and not res.certified
    assert wall <= budget + 2.0 * slow, (wall, slow)
    assert rg.verify(res, Phi, U).valid


def test_the_command_line_budget_includes_writing_the_certificate(tmp_path, capsys):
    """``--max-seconds`` is the wall time of the command: the search, the audit and writing ``--out``."""
    from relu_gating.cli import main

    Phi, U = _instance(400, 3, seed=7)
    np.savez(tmp_path / "in.npz", Phi=Phi, U_K=U)
    for name in ("c.json", "c.npz"):
        t0 = time.perf_counter()
        code = main(["best-neuron", str(tmp_path / "in.npz"), "--max-seconds", "4", "--quiet", "--json",
                     "--out", str(tmp_path / name)])
        wall = time.perf_counter() - t0
        assert code == 3 and json.loads(capsys.readouterr().out)["strategy"] == "branch-and-bound"
        slow = slowdown()
        assert wall <= 4 + 2.0 * slow, (name, wall, slow)
        assert (tmp_path / name).stat().st_size > 0


def test_the_streamed_enumeration_stopped_in_its_exact_phase_says_so_in_stats():
    """The streamed search's stop reason is the same field: ``stats.stop == "time"`` with its note; the
    certificate stays valid and not certified."""
    from relu_gating.search._stream.run import stream_best_neuron
    from relu_gating.search.objectives import make_objective

    Phi, U = _instance(60, 2, seed=3)
    obj = make_objective(Phi, U, "bias")
    res = stream_best_neuron(obj, alpha=1.0, method="auto", chunk_size=8192, batch_size=1, tol=1e-9, executor=None,
                             progress=False, memory=2**30, deadline=_AfterCalls(2))  # one exact round
    stopped = any(n.startswith("enumeration stopped by max_seconds in the exact phase") for n in res.notes)
    assert stopped and not res.certified, "this instance needs more than one exact round (pick another seed)"
    assert res.stats.stop == "time" and res.stats.strategy == "enumerate"
    rep = rg.verify(res.to_dict(), Phi, U)
    assert rep.valid and not rep.certified
