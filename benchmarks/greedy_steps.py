r"""Benchmark: single greedy steps on iris, this commit beside another in the same run (issue 25).

The features of step ``k`` are ``[1, relu(Phi theta_1), ..., relu(Phi theta_{k-1})]`` with each
``theta_j`` from seeded fixed-gating local search on the features before it
(``relu_gating.search.baselines.local_search``, 50 starts): deterministic, so both commits answer
exactly the same queries.  On iris local search finds the certified layer's neurons of steps 1-3
(gains 0.99079, 0.93959, 0.84195), so steps 1-4 are the layer's own queries; from step 4 on it finds
less (0.0575 against the certified 0.07373), and steps 5 and later differ from the layer's.  Per step and
commit, in a fresh process each, alternating commit by commit so that the machine's load hits both
alike: ``best_neuron(strategy="branch-and-bound", max_seconds=--budget)``, certified or the alpha
reached, seconds, nodes, and where the search's time went (from the tree's stats).

Run::

    python benchmarks/greedy_steps.py --steps 3,4 --budget 150 --against 9c4be46
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from real import case_problem, checkout, in_child_script  # noqa: E402

#: Stats of the tree copied into each record.
STATS = ("nodes", "implied", "exhaustive", "lp", "exact_farkas", "lifted", "lifted_settled",
         "t_bound", "t_lp", "t_forced", "t_lifted", "t_score")


def step_features(Phi: np.ndarray, U: np.ndarray, step: int) -> np.ndarray:
    """The features of greedy step ``step`` (1-based) from seeded local search."""
    from relu_gating.search.baselines import local_search

    H = np.ones((Phi.shape[0], 1))
    for _ in range(step - 1):
        r = local_search(Phi, U, features=H, n_starts=50, max_iter=50, seed=0)
        H = np.c_[H, np.maximum(Phi @ r.theta, 0)]
    return H


def run_step(step: int, budget: float) -> dict:
    from relu_gating import best_neuron

    Phi, U, K, _ = case_problem("iris")
    H = step_features(Phi, U, step)
    t = time.perf_counter()
    r = best_neuron(Phi, U, features=H, strategy="branch-and-bound", max_seconds=budget)
    st = r.tree["stats"]
    return {"step": step, "seconds": time.perf_counter() - t, "certified": bool(r.certified), "value": float(r.value),
            "alpha": float(r.value / r.upper_bound) if r.upper_bound > 0 else 1.0,
            **{k: st.get(k) for k in STATS}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", default="3,4", help="greedy steps, comma separated (1-based)")
    ap.add_argument("--budget", type=float, default=150.0, help="seconds per query")
    ap.add_argument("--against", default=None, help="a git revision run beside HEAD, alternating")
    ap.add_argument("--save", default=None, help="JSON file for the records")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        print(json.dumps(run_step(args.child, args.budget), default=float))
        return
    steps = [int(s) for s in args.steps.split(",")]
    if not steps or min(steps) < 1 or args.budget <= 0:
        ap.error("--steps must name steps >= 1 and --budget must be positive")
    records = []
    save = Path(args.save or HERE / "results" / "greedy_steps.json")
    with checkout("HEAD") as this, checkout(args.against) as other:
        roots = [(this, "HEAD")] + ([(other, args.against)] if args.against else [])
        for step in steps:
            for root, name in roots:
                row = in_child_script(root, Path(__file__).name, ["--child", str(step), "--budget", str(args.budget)],
                                      2 * args.budget + 900)
                row.update(commit=name)
                records.append(row)
                print(json.dumps(row, default=float), flush=True)
                save.parent.mkdir(parents=True, exist_ok=True)
                save.write_text(json.dumps({"argv": sys.argv[1:], "records": records}, indent=1, default=float))
    print("\n| step | commit | certified | alpha | s | nodes | implied rows | exhaustive searches |")
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for r in records:
        if "error" in r:
            print(f"| {r.get('step', '?')} | {r['commit']} | error: {r['error']} | | | | | |")
            continue
        print(f"| {r['step']} | {r['commit']} | {'yes' if r['certified'] else 'no'} | {r['alpha']:.4f} | "
              f"{r['seconds']:.1f} | {r['nodes']:,} | {r['implied']:,} | {r['exhaustive']:,} |")


if __name__ == "__main__":
    main()
