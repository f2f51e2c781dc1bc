r"""Benchmark: the CPU seconds of the same serial search, ``--expansions`` expansions, here and at another commit.

For a change that must not alter the search's path (only its speed): each run is a fresh process that
builds the case as ``bnb_fixed_cpu.py`` does and stops after ``--expansions`` expansions (not a CPU budget),
then prints its CPU seconds and the path's fingerprint (nodes, implied rows, NNLS solves and rows, kept
simplex hits, exact Farkas checks, LPs, lifted tries, the incumbent and the largest open bound, all exact
reprs). ``--against REV`` runs that commit too (a temporary git worktree), alternating run by run; the
table gives the median CPU seconds of each side, their ratio, and whether every fingerprint agrees.
The same work on both sides: the ratio is the speed-up itself, free of the noise in a CPU budget's
expansions (the case's build is not counted).

Run::

    python benchmarks/bnb_fixed_work.py --cases bc-pca5-n200,bc-pca5 --expansions 1500 --repeats 4 --against main
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(1, str(HERE.parent))

PATH_KEYS = ("nodes", "implied", "nnls", "nnls_rows", "nnls_hits", "exact_farkas", "lp", "lifted", "lifted_settled")


def child(case: str, expansions: int) -> dict:
    """One serial search of ``case`` stopped after ``expansions`` expansions: its CPU seconds and path."""
    sys.path.insert(0, str(HERE))
    from bnb_fixed_cpu import fixed_cpu_search

    from relu_gating.search.bnb._search import Search

    def run(s, deadline):
        s.reserve = lambda: 2e9 if s.expansions >= expansions else 0.0  # stops the loop at the count
        return Search.run(s, deadline)

    s, why, used, wall = fixed_cpu_search(case, 1e9, run)  # used: the search's CPU seconds (the case built before)
    path = {k: s.stats[k] for k in PATH_KEYS}
    path.update(expansions=s.expansions, best=repr(float(s.best_value)),
                upper=repr(float(max(s.global_bound(), s.best_value))))
    return {"case": case, "cpu": used, "wall": wall, "path": path, "load": os.getloadavg()[0]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="bc-pca5-n200")
    ap.add_argument("--expansions", type=int, default=1500)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--against", default=None, help="also run this commit, alternating")
    ap.add_argument("--out", default=None, help="save the runs and the table as JSON")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.expansions)))
        return
    sys.path.insert(0, str(HERE))
    from bnb_fixed_cpu import alternating

    rows, sides, commit = alternating(args.cases.split(","), args.against, args.repeats, HERE / "bnb_fixed_work.py",
                                      ["--expansions", str(args.expansions)], timeout=3600)
    table = []
    print("| case | side | CPU s (median) | ratio to this | same path as this |")
    print("| --- | --- | ---: | ---: | --- |")
    for case in args.cases.split(","):
        mine = {name: [x for x in rows if x.get("case") == case and x["side"] == name and "error" not in x]
                for name, _ in sides}
        ref = mine["this"]
        for name, _ in sides:
            if not mine[name] or not ref:
                continue
            med = statistics.median(x["cpu"] for x in mine[name])
            ratio = med / statistics.median(x["cpu"] for x in ref)
            same = all(x["path"] == ref[0]["path"] for x in mine[name] + ref)
            table.append({"case": case, "side": name, "cpu_median": med, "ratio": ratio, "same_path": same})
            print(f"| {case} | {name} | {med:.2f} | {ratio:.3f} | {same} |")
    if args.out:
        Path(args.out).write_text(json.dumps({"commit": commit, "command": " ".join(sys.argv),
                                              "load": [x.get("load") for x in rows], "runs": rows,
                                              "table": table}, indent=1))


if __name__ == "__main__":
    main()
