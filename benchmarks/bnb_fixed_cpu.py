r"""Benchmark: the serial branch and bound for a fixed number of CPU seconds, this checkout beside another.

For the hard rows of issue 39 (``benchmarks/real.py``'s cases, e.g. ``clustered-100x5`` and
``bc-pca5-n200``), whose runs end at their budget: each run is a fresh process that builds the case as
``real.py`` does, seeds the incumbent as ``branch_and_bound`` does, and runs the search (one BLAS thread,
no workers) until it has used ``--cpu`` CPU seconds of its own (the reserve hook stops the loop; no audit,
no certificate). It prints expansions, nodes, the incumbent, the largest open bound and alpha
reached, and the lifted bound's tries. On a loaded machine the CPU budget keeps the comparison fair where
a wall budget would not. ``--against REV`` runs that commit too (a temporary git worktree), alternating
the two run by run.

Run::

    python benchmarks/bnb_fixed_cpu.py --cases clustered-100x5,bc-pca5-n200 --cpu 20 --repeats 2 --against main
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(1, str(HERE.parent))


def fixed_cpu_search(case: str, cpu: float, run=None) -> tuple:
    """One serial search of ``case`` (built as ``real.py`` does, the incumbent seeded as
    ``branch_and_bound`` does) stopped after ``cpu`` CPU seconds of this process: ``(search, stop
    reason, CPU seconds used, wall seconds)``.  ``run(search, deadline)`` runs it (default
    ``search.run(deadline)``), e.g. through the parallel driver."""
    sys.path.insert(0, str(HERE))
    from real import case_problem

    from relu_gating.patterns import single_thread_blas
    from relu_gating.search.bnb._api import _seed_incumbent, _starts
    from relu_gating.search.bnb._search import Search
    from relu_gating.search.objectives import make_objective, with_rank
    from relu_gating.search.proofs import exact_rank

    Phi, U, _, _ = case_problem(case)
    obj = make_objective(Phi, U, "bias")
    obj = with_rank(obj, exact_rank(obj.Phi))
    c0 = time.process_time()
    s = Search(obj, 1.0, 1e-9, "auto", 0, True)
    _seed_incumbent(s, obj, 0, _starts(None, obj.Phi.shape[1]))
    s.reserve = lambda: 2e9 if time.process_time() - c0 > cpu else 0.0  # stops the loop at the CPU budget
    w0 = time.perf_counter()
    with single_thread_blas():
        why = (run or Search.run)(s, time.perf_counter() + 1e9)
    return s, why, time.process_time() - c0, time.perf_counter() - w0


def child(case: str, cpu: float) -> dict:
    """One serial search of ``case`` stopped after ``cpu`` CPU seconds (this process's)."""
    s, why, used, wall = fixed_cpu_search(case, cpu)
    upper = max(s.global_bound(), s.best_value)
    return {"case": case, "stop": why, "cpu": used, "wall": wall,
            "expansions": s.expansions, "nodes": s.stats["nodes"], "value": s.best_value, "upper": upper,
            "alpha": s.best_value / upper, "lifted": s.stats["lifted"], "lifted_settled": s.stats["lifted_settled"],
            "load": os.getloadavg()[0]}


def alternating(cases: list, against: str | None, repeats: int, script, args: list, timeout: float) -> tuple:
    """Each case's ``script --child CASE ARGS`` in a fresh process, in this checkout and (``against``) in a
    worktree of that commit, the order alternating each repeat; each row printed as it comes.  Returns the
    rows, the sides ``[(name, root)]`` and this checkout's commit."""
    import subprocess

    from real import checkout, in_child_script

    rows = []
    with checkout(None) as here, checkout(against) as there:
        sides = [("this", here)] + ([(against, there)] if against else [])
        for r in range(repeats):
            for case in cases:
                for name, root in (sides if r % 2 == 0 else sides[::-1]):
                    got = in_child_script(root, script, ["--child", case, *args], timeout=timeout)
                    rows.append({"side": name, "repeat": r, **got})
                    print(json.dumps(rows[-1]), flush=True)
        commit = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    return rows, sides, commit


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="clustered-100x5,bc-pca5-n200")
    ap.add_argument("--cpu", type=float, default=20.0, help="CPU seconds of each search")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--against", default=None, help="also run this commit, alternating")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.cpu)))
        return
    rows, sides, _ = alternating(args.cases.split(","), args.against, args.repeats, "bnb_fixed_cpu.py",
                                 ["--cpu", str(args.cpu)], timeout=100 * args.cpu + 600)
    print("| case | side | expansions (median) | nodes | alpha reached | upper |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for case in args.cases.split(","):
        for name, _ in sides:
            mine = [x for x in rows if x.get("case") == case and x["side"] == name and "error" not in x]
            if mine:
                med = {k: statistics.median(x[k] for x in mine) for k in ("expansions", "nodes", "alpha", "upper")}
                print(f"| {case} | {name} | {med['expansions']:,.0f} | {med['nodes']:,.0f} | {med['alpha']:.5f} | "
                      f"{med['upper']:.5f} |")


if __name__ == "__main__":
    main()
