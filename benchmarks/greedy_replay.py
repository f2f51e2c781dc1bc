r"""Benchmark (issue 39): a greedy step with the previous step's tree replayed, against the same step fresh.

Step ``k`` of a case is searched for ``--first`` s (one worker); its tree's geometry
(:func:`relu_gating.search.bnb.tree_guide`: splits and exact implied rows, which depend on ``Phi`` only)
is then replayed by step ``k + 1`` (``BranchAndBoundOptions(guide=)``), beside step ``k + 1`` searched
fresh, each ``--budget`` s, alternating (fresh, guided, guided, fresh).  Reported per run: the value,
alpha, certified, nodes, nodes replayed, CPU seconds (this process and its ended workers) and where the
time went.  The features of iris steps 1-4 are the certified layer's (seeded local search finds its
neurons, ``greedy_steps.step_features``); other cases take the branch and bound's neurons of the steps
before (``--first`` s each).

Run::

    python benchmarks/greedy_replay.py --case gauss-40x3 --step 2 --first 60 --budget 60
    python benchmarks/greedy_replay.py --case iris --step 3 --first 120 --budget 90
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from greedy_steps import step_features  # noqa: E402
from real import case_problem  # noqa: E402


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _features(case: str, step: int, first: float) -> tuple:
    from relu_gating import best_neuron
    from relu_gating.search.options import BranchAndBoundOptions

    Phi, U, _, _ = case_problem(case)
    if case == "iris":
        return Phi, U, step_features(Phi, U, step)
    H = np.ones((Phi.shape[0], 1))
    for _ in range(step - 1):
        r = best_neuron(Phi, U, features=H, strategy="branch-and-bound", max_seconds=first,
                        options=BranchAndBoundOptions(workers=1))
        H = np.c_[H, np.maximum(Phi @ r.theta, 0)]
    return Phi, U, H


def _line(name: str, r, cpu: float, wall: float) -> str:
    st = r.tree["stats"]
    return (f"| {name} | {r.value:.6f} | {r.value / r.upper_bound:.5f} | {r.certified} | {r.n_nodes:,} | "
            f"{st.get('replayed', 0):,} | {cpu:.1f} | {wall:.1f} | {st['t_forced']:.1f} | {st['t_lp']:.1f} | "
            f"{st['t_bound']:.1f} | {st['lifted']} |")


def main(argv=None) -> None:
    from relu_gating import best_neuron
    from relu_gating.search.bnb import tree_guide
    from relu_gating.search.options import BranchAndBoundOptions

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", default="gauss-40x3")
    ap.add_argument("--step", type=int, default=2, help="the step whose tree is replayed by the next")
    ap.add_argument("--first", type=float, default=60.0, help="seconds of the step whose tree is replayed")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds of each run of the next step")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--runs", default="fresh,guided,guided,fresh", help="the order of the next step's runs")
    ap.add_argument("--verify", action="store_true", help="verify each run's certificate (float checker)")
    a = ap.parse_args(argv)
    Phi, U, H = _features(a.case, a.step, a.first)
    c0, t0 = _cpu(), time.perf_counter()
    r = best_neuron(Phi, U, features=H, strategy="branch-and-bound", max_seconds=a.first,
                    options=BranchAndBoundOptions(workers=1))
    g = tree_guide(r.tree["nodes"], Phi)
    print(f"{a.case} step {a.step}: value {r.value:.6f}, alpha {r.value / r.upper_bound:.5f}, certified {r.certified}, "
          f"{r.n_nodes:,} nodes, {_cpu() - c0:.1f} CPU s; its guide: {g.entries:,} expansions")
    H2 = np.c_[H, np.maximum(Phi @ r.theta, 0)]
    print(f"\nstep {a.step + 1} ({a.budget:.0f} s each, {a.workers} worker(s)):\n\n| run | value | alpha | certified | "
          "nodes | replayed | CPU s | wall s | forced s | LP s | bound s | lifted |\n" + "| --- " * 12 + "|")
    for name in a.runs.split(","):
        c0, t0 = _cpu(), time.perf_counter()
        res = best_neuron(Phi, U, features=H2, strategy="branch-and-bound", max_seconds=a.budget,
                          options=BranchAndBoundOptions(workers=a.workers, guide=g if name == "guided" else None))
        print(_line(name, res, _cpu() - c0, time.perf_counter() - t0), flush=True)
        if a.verify:
            from relu_gating import verify

            t1 = time.perf_counter()
            rep = verify(res, Phi, U, features=H2)
            print(f"  verified: valid {rep.valid}, certified {rep.certified}, value {rep.value:.12f} "
                  f"({time.perf_counter() - t1:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
