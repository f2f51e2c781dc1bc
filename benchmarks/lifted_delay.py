r"""Benchmark: the lifted bound's delay (issue 39, "no slower on easy cases") on and off, alternating in one run.

The branch and bound holds the lifted bound back for its first ``LIFTED_DELAY_NODES`` nodes
(``relu_gating/search/bnb/_node_bounds.py``).  This runs each case with the delays given (``--delays``,
node counts; ``0`` is the lifted bound from the first node, as before the delay; ``off`` is
``lifted=False``), every repeat in fresh processes, the order of the delays turning between repeats.

By default the searches are serial and run on the CPU clock: the child replaces ``time.perf_counter``
with ``time.process_time`` before importing the library, so the budget (``--budget``, CPU seconds), the
audit's reserve and the search's time shares count this process's CPU seconds only, and the figures do not
depend on the load of a shared machine.  ``--workers 2`` runs the default parallel search on the wall clock
instead (CPU seconds are then this process's and its pool's).  Prints per case and delay the median CPU
seconds, whether certified, the alpha reached, the nodes and the lifted tries, and the ratio of the CPU
seconds to the first delay's::

    nice -n 19 python benchmarks/lifted_delay.py --cases gauss:80x4,bc-pca3,iris-dup --repeats 2
    nice -n 19 python benchmarks/lifted_delay.py --cases clustered-400x3,wine-pca5 --budget 40
    nice -n 19 python benchmarks/lifted_delay.py --delays 6000,0,off --save benchmarks/results/lifted_delay.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CASES = "gauss:80x4,gauss:210x3,bc-pca3,iris-dup,clustered-400x3,wine-pca5"

_CHILD = r"""
import json, resource, sys, time
if {cpu_clock}:
    time.perf_counter = time.process_time  # the CPU clock: budget, reserve and shares count CPU seconds
sys.path.insert(0, {root!r}); sys.path.insert(0, {root!r} + "/benchmarks")
from relu_gating import best_neuron, BranchAndBoundOptions
from relu_gating.search.bnb._node_bounds import NodeBounds
case, delay = {case!r}, {delay!r}
if case.startswith("gauss:"):
    from bnb import instance
    n, d = (int(x) for x in case[6:].split("x"))
    Phi, U = instance(n, d, 0, "gauss")
else:
    from real import case_problem
    Phi, U, K, _ = case_problem(case)
if delay != "off":
    NodeBounds.lifted_after = int(delay)
opts = BranchAndBoundOptions(lifted=delay != "off", workers={workers})
t = time.perf_counter()
b = best_neuron(Phi, U, strategy="branch-and-bound", max_seconds={budget}, options=opts)
ru, rc = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
st = b.tree["stats"]
print(json.dumps({{"seconds": time.perf_counter() - t, "cpu": ru.ru_utime + ru.ru_stime + rc.ru_utime + rc.ru_stime,
                  "value": float(b.value), "certified": bool(b.certified),
                  "alpha": float(b.value / b.upper_bound) if b.upper_bound > 0 else 1.0, "nodes": int(b.n_nodes),
                  "lifted": int(st.get("lifted", 0)) + int(st.get("lifted_plain", 0)),
                  "t_lifted": float(st.get("t_lifted", 0.0)) + float(st.get("t_lifted_plain", 0.0))}}))
"""


def run_case(case: str, delay: str, budget: float, workers: int) -> dict:
    """One case in a fresh process (this checkout), with the delay ``delay``."""
    code = _CHILD.format(root=ROOT, case=case, delay=delay, budget=budget, workers=workers, cpu_clock=workers == 1)
    env = dict(os.environ, PYTHONPATH=ROOT, OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise SystemExit(f"{case} (delay {delay}) failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(results: dict, delays: list[str]) -> str:
    """Per case and delay: median CPU seconds (all), certified, alpha, nodes, lifted tries, CPU ratio."""
    lines = ["| case | delay | CPU s (median) | all | certified | alpha (min) | nodes | lifted tries | CPU / first |",
             "|" + "---|" * 9]
    for case, by in results.items():
        base = statistics.median(r["cpu"] for r in by[delays[0]]) if by[delays[0]] else float("nan")
        for delay in delays:
            rows = by[delay]
            if not rows:
                continue
            cpu = statistics.median(r["cpu"] for r in rows)
            lines.append(f"| {case} | {delay} | {cpu:.2f} | {[round(r['cpu'], 1) for r in rows]} "
                         f"| {'/'.join('yes' if r['certified'] else 'no' for r in rows)} "
                         f"| {min(r['alpha'] for r in rows):.6f} | {statistics.median(r['nodes'] for r in rows):.0f} "
                         f"| {statistics.median(r['lifted'] for r in rows):.0f} | {cpu / base:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=CASES, help=f"comma-separated (default {CASES})")
    ap.add_argument("--delays", default="6000,0", help="node counts, or off (lifted=False); default 6000,0")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--budget", type=float, default=60.0, help="max_seconds of each query (CPU seconds serially)")
    ap.add_argument("--workers", type=int, default=1, help="1 (default): serial on the CPU clock; more: wall clock")
    ap.add_argument("--save", help="write the rows and the table as JSON to this path")
    args = ap.parse_args(argv)
    delays = [d for d in args.delays.split(",") if d]
    if args.repeats < 1 or not args.budget > 0 or args.workers < 1 or not delays:
        ap.error("--repeats and --workers must be at least 1, --budget positive, --delays not empty")
    for d in delays:
        if d != "off" and not (d.isdigit()):
            ap.error(f"--delays: {d!r} is neither a node count nor off")
    cases = [c for c in args.cases.split(",") if c]
    results: dict = {c: {d: [] for d in delays} for c in cases}
    for rep in range(args.repeats):
        for case in cases:
            for delay in (delays if rep % 2 == 0 else delays[::-1]):
                row = run_case(case, delay, args.budget, args.workers)
                results[case][delay].append(row)
                print(f"repeat {rep} {case} delay {delay}: {row['cpu']:.2f} CPU s, certified={row['certified']}, "
                      f"alpha {row['alpha']:.6f}, {row['nodes']} nodes", file=sys.stderr, flush=True)
            if args.save:
                _save(args, results, table(results, delays))
    text = table(results, delays)
    print(text)
    if args.save:
        _save(args, results, text)


def _save(args: argparse.Namespace, results: dict, text: str) -> None:
    sys.path.insert(0, HERE)
    from easy_cases import _commit

    with open(args.save, "w") as f:
        json.dump({"commit": _commit("HEAD"), "command": " ".join(sys.argv), "load": os.getloadavg(),
                   "budget": args.budget, "workers": args.workers, "results": results, "table": text}, f, indent=1)


if __name__ == "__main__":
    main()
