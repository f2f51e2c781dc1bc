r"""Benchmark: the easy cases and the hard ones, this checkout against another commit, alternating in one run.

Issue 39 ("no slower on easy cases"): the branch and bound (``strategy="branch-and-bound"``, the default
options, no time limit but ``--budget``) on the Gaussian cases of ``benchmarks/bnb.py`` (seed 0, K = 4:
``gauss:80x4``, ``gauss:210x3``, ``gauss:30x6``) and on the real cases of ``benchmarks/real.py``
(``bc-pca3``, ``iris``, ``iris-dup``, ``wine-pca5``).  ``--against REV`` is checked out into a temporary
git worktree; every repeat runs each case once in each checkout, in fresh processes, the order of the two
alternating between repeats, so that load on the shared machine hits both alike.  Prints per case the
median seconds of each, their ratio (this checkout over REV), the median CPU seconds of each (the child's
and its pool's: under load, the figure to compare), whether both certified and the answers agree, and the
median seconds spent in the lifted bound and the audit.  Run it with one BLAS thread::

    OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/easy_cases.py --against HEAD~1 --repeats 3
    python benchmarks/easy_cases.py --against HEAD~1 --cases wine-pca5 --repeats 1 --budget 600
    python benchmarks/easy_cases.py --against HEAD~1 --save benchmarks/results/easy_cases.json
    python benchmarks/easy_cases.py --against 5e8ab66 --this 1a2b3c4    # two commits, neither checked out
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from contextlib import contextmanager
from typing import Iterator

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from compare import _checkout  # noqa: E402  (one worktree helper for the benchmarks that compare commits)

CASES = "gauss:80x4,gauss:210x3,gauss:30x6,bc-pca3,iris,iris-dup"

_GAUSS = r"""
import json, sys, time
sys.path.insert(0, {root!r}); sys.path.insert(0, {root!r} + "/benchmarks")
from bnb import instance
from relu_gating import best_neuron
Phi, U = instance({n}, {d}, 0, "gauss")
t = time.perf_counter()
b = best_neuron(Phi, U, strategy="branch-and-bound", max_seconds={budget})
st = b.tree["stats"]
print(json.dumps({{"seconds": time.perf_counter() - t, "value": float(b.value), "certified": bool(b.certified),
                  "nodes": int(b.n_nodes), "stats": {{k: v for k, v in st.items() if isinstance(v, (int, float))}}}}))
"""


@contextmanager
def _here() -> Iterator[str]:
    yield ROOT


def run_case(root: str, case: str, budget: float) -> dict:
    """One case in a fresh process on the checkout ``root``: seconds, value, certified, the search's stats."""
    env = dict(os.environ, PYTHONPATH=root, OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    if case.startswith("gauss:"):
        n, d = (int(x) for x in case.split(":", 1)[1].split("x"))
        cmd = [sys.executable, "-c", _GAUSS.format(root=root, n=n, d=d, budget=budget)]
    else:
        cmd = [sys.executable, os.path.join(root, "benchmarks", "real.py"), "--child", case, "--budget", str(budget),
               "--random", "10", "--no-verify"]
    before = _children_cpu()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=root)
    if out.returncode != 0:
        raise SystemExit(f"{case} on {root} failed:\n{out.stderr[-2000:]}")
    row = json.loads(out.stdout.strip().splitlines()[-1])
    row["cpu"] = _children_cpu() - before  # the child's and its pool's CPU seconds (all waited for)
    return row


def _children_cpu() -> float:
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def summary(rows: list[dict]) -> dict:
    """Medians of the seconds, the lifted bound's and the audit's seconds, and the nodes."""
    st = [r.get("stats", {}) for r in rows]
    return {"seconds": statistics.median(r["seconds"] for r in rows), "all": [round(r["seconds"], 2) for r in rows],
            "cpu": statistics.median(r.get("cpu", float("nan")) for r in rows),
            "lifted": statistics.median(s.get("t_lifted", 0.0) for s in st),
            "audit": statistics.median(s.get("t_audit", 0.0) for s in st),
            "nodes": statistics.median(r.get("nodes", 0) for r in rows),
            "certified": all(r["certified"] for r in rows), "value": rows[0]["value"]}


def table(results: dict, against: str) -> str:
    """The table: per case, REV's and this checkout's medians, the ratio, the answers."""
    head = (f"| case | {against} s | this s | ratio | CPU s {against} / this (ratio) | {against} lifted / audit s "
            f"| this lifted / audit s | nodes | certified | same value |")
    lines = [head, "|" + "---|" * 10]
    for case, got in results.items():
        a, b = summary(got["old"]), summary(got["new"])
        same = abs(a["value"] - b["value"]) <= 1e-9 * max(1.0, abs(a["value"]))
        lines.append(f"| {case} | {a['seconds']:.2f} {a['all']} | {b['seconds']:.2f} {b['all']} "
                     f"| {b['seconds'] / a['seconds']:.2f} | {a['cpu']:.2f} / {b['cpu']:.2f} ({b['cpu'] / a['cpu']:.2f}) "
                     f"| {a['lifted']:.2f} / {a['audit']:.2f} "
                     f"| {b['lifted']:.2f} / {b['audit']:.2f} | {a['nodes']:.0f} / {b['nodes']:.0f} "
                     f"| {a['certified']} / {b['certified']} | {same} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", default="HEAD~1", help="the commit to compare with (default HEAD~1)")
    ap.add_argument("--this", help="run this commit (checked out too) instead of the working tree")
    ap.add_argument("--cases", default=CASES, help=f"comma-separated (default {CASES}; also wine-pca5)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--budget", type=float, default=300.0, help="max_seconds of each query (default 300)")
    ap.add_argument("--save", help="write the rows and the table as JSON to this path")
    args = ap.parse_args(argv)
    if args.repeats < 1 or not args.budget > 0:
        ap.error("--repeats must be at least 1 and --budget positive")
    cases = [c for c in args.cases.split(",") if c]
    results: dict = {c: {"old": [], "new": []} for c in cases}
    with _checkout(args.against) as other, (_checkout(args.this) if args.this else _here()) as this:
        for rep in range(args.repeats):
            for case in cases:
                order = [("old", other), ("new", this)] if rep % 2 == 0 else [("new", this), ("old", other)]
                for side, root in order:
                    row = run_case(root, case, args.budget)
                    results[case][side].append(row)
                    print(f"repeat {rep} {case} {side}: {row['seconds']:.2f} s certified={row['certified']}",
                          file=sys.stderr, flush=True)
                if args.save:
                    _save(args.save, args, results)
    text = table(results, args.against)
    print(text)
    if args.save:
        _save(args.save, args, results, text)


def _commit(rev: str) -> str:
    """``rev``'s short hash (``+dirty`` for the working tree with uncommitted edits)."""
    import subprocess

    out = subprocess.run(["git", "rev-parse", "--short", rev], capture_output=True, text=True).stdout.strip()
    dirty = rev == "HEAD" and subprocess.run(["git", "status", "--porcelain", "-uno"], capture_output=True,
                                             text=True).stdout.strip()
    return out + ("+dirty" if dirty else "")


def _save(path: str, args: argparse.Namespace, results: dict, text: str = "") -> None:
    with open(path, "w") as f:
        json.dump({"commit": _commit(args.this or "HEAD"), "against": args.against, "this": args.this or "working tree", "budget": args.budget, "repeats": args.repeats,
                   "load": os.getloadavg(), "results": results, "table": text}, f, indent=1, default=float)


if __name__ == "__main__":
    main()
