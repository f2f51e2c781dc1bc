r"""Benchmark: the frontier of the certified search, the largest n certified within a time budget.

For each input dimension ``d`` (``Phi = [X, 1]``, Gaussian ``X``, K = 4 lowest eigenvectors of
the kNN-graph Laplacian, marginal gain over the bias), ``n`` grows by the factor ``--growth``
from ``d + 3`` until the query fails to certify alpha = 1 within ``--budget`` seconds
``--misses`` times in a row (small instances can be harder than larger ones); then the gap
between the last success and the first failure is bisected ``--refine`` times (geometric
midpoints).  The largest certified ``n`` is the frontier.

Strategies (``--strategy``):

* ``best`` (default, the frontier the project can claim): enumeration (``memory="2G"``) where
  ``plan_query`` predicts it fits the budget, else the branch and bound
  (``max_seconds=budget``); if the predicted one fails, the other is tried too;
* ``enumerate`` or ``branch-and-bound``: that strategy only.

``--workers N`` runs the branch and bound's subtrees on ``N`` worker processes (``executor=``, the
CLI's ``--workers``); enumeration probes stay in-process either way (their GEMMs use the BLAS
threads).  Every probe runs in a fresh process (its own memory, a hard wall-clock limit of budget + 20 s;
the time reported is measured inside it, excluding interpreter start-up and the graph).  One
seed per size (``--seed``): the frontier is a single measured point, not a median.  Rows are
printed as they finish and saved with ``--save PATH.json``.

Run::

    python benchmarks/frontier.py                      # budget 60 s, d = 2..10 (about an hour)
    python benchmarks/frontier.py --quick              # budget 10 s, d = 2..5
    python benchmarks/frontier.py --dims 3,5,8 --strategy branch-and-bound --budget 600
    python benchmarks/frontier.py --dims 2,3,4 --workers 2    # both cores of this machine
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time

_CHILD = r"""
import json, sys, time, warnings
import numpy as np
import relu_gating as rg
n, d, seed, strategy, budget, workers = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4],
                                         float(sys.argv[5]), int(sys.argv[6]))
X = np.random.default_rng(seed).normal(size=(n, d))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # spectral ties at tiny n
    U = rg.low_frequency_basis(rg.laplacian(rg.sample_graph(X, kind="knn")), 4).U_K
Phi = rg.layer_input(X)
t = time.perf_counter()
if strategy == "enumerate":
    res = rg.best_neuron(Phi, U, options=rg.EnumerateOptions(memory="2G", max_patterns=None))
elif workers > 1:  # subtrees on worker processes (forked here, so no __main__ guard is needed)
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(max_workers=workers) as ex:
        res = rg.best_neuron(Phi, U, strategy="branch-and-bound", max_seconds=budget, executor=ex)
else:
    res = rg.best_neuron(Phi, U, strategy="branch-and-bound", max_seconds=budget)
sec = time.perf_counter() - t
alpha = res.value / res.upper_bound if res.upper_bound > 0 else 1.0
print(json.dumps({"certified": bool(res.certified), "seconds": sec, "alpha": alpha,
                  "nodes": int(getattr(res, "n_nodes", 0) or 0), "patterns": int(res.n_patterns),
                  "value": float(res.value)}))
"""


def probe(n: int, d: int, strategy: str, args: argparse.Namespace) -> dict:
    """One run in a fresh process: certified within the budget or not, with its figures."""
    try:
        out = subprocess.run([sys.executable, "-c", _CHILD, str(n), str(d), str(args.seed), strategy,
                              str(args.budget), str(args.workers)], capture_output=True, text=True, timeout=args.budget + 20,
                             check=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        return {"certified": False, "seconds": math.inf, "alpha": float("nan"), "strategy": strategy, "n": n}
    except subprocess.CalledProcessError as exc:
        last = (exc.stderr or "").strip().splitlines()[-1:] or ["?"]
        return {"certified": False, "seconds": math.inf, "alpha": float("nan"), "strategy": strategy, "n": n,
                "error": last[0][:120]}
    r.update(strategy=strategy, n=n, certified=r["certified"] and r["seconds"] <= args.budget)
    return r


def attempt(n: int, d: int, args: argparse.Namespace) -> dict:
    """The probe(s) of one size; the first that certifies, else the last tried."""
    if args.strategy != "best":
        return probe(n, d, args.strategy, args)
    import numpy as np

    from relu_gating.search.plan import plan_query

    X = np.random.default_rng(args.seed).normal(size=(n, d))
    est = plan_query(np.c_[X, np.ones(n)]).seconds  # from Cover's count, instant
    order = ("enumerate", "branch-and-bound") if est <= args.budget else ("branch-and-bound", "enumerate")
    r = probe(n, d, order[0], args)
    if not r["certified"] and est <= 4 * args.budget:  # the estimate can be off either way
        r2 = probe(n, d, order[1], args)
        r = r2 if r2["certified"] else r
    return r


def _show(d: int, r: dict) -> None:
    state = "certified" if r["certified"] else (f"alpha {r['alpha']:.4f}" if r["alpha"] == r["alpha"] else "timeout")
    print(f"   d={d} n={r['n']} {r['strategy']}: {state} in {r['seconds']:.1f} s", flush=True)


def frontier(d: int, args: argparse.Namespace) -> dict:
    n, best, fail, misses, tried = d + 3, None, None, 0, []
    while n <= args.n_max and misses < args.misses:
        r = attempt(n, d, args)
        tried.append(r)
        _show(d, r)
        if r["certified"]:
            best, misses = r, 0
        else:
            if fail is None or (best is not None and fail["n"] < best["n"]):
                fail = r  # the first failure above the last success
            misses += 1
        n = max(n + 1, int(round(n * args.growth)))
    if best is not None and fail is not None and fail["n"] > best["n"]:
        lo, hi = best["n"], fail["n"]
        for _ in range(args.refine):
            mid = int(round(math.sqrt(lo * hi)))
            if mid in (lo, hi):
                break
            r = attempt(mid, d, args)
            tried.append(r)
            _show(d, r)
            if r["certified"]:
                lo, best = mid, r
            else:
                hi, fail = mid, r
    return {"d": d, "best": best, "fail": fail, "tried": tried}


def print_table(rows: list[dict], seed: int) -> None:
    """The README table: per d, the largest n certified, its chamber count, strategy and seconds."""
    import numpy as np

    from relu_gating.patterns import count_patterns

    print("\n| d | largest n certified | chambers (Cover) | strategy | seconds | first failure (n, alpha) |")
    print("| ---: | ---: | ---: | --- | ---: | --- |")
    for row in rows:
        b, f = row["best"], row["fail"]
        fail = "-" if f is None else f"n = {f['n']}, " + ("timeout" if f["alpha"] != f["alpha"] else f"{f['alpha']:.4f}")
        if b is None:
            print(f"| {row['d']} | - | | | | {fail} |")
            continue
        X = np.random.default_rng(seed).normal(size=(b["n"], row["d"]))
        ch = count_patterns(np.c_[X, np.ones(b["n"])], method="bound").count
        print(f"| {row['d']} | {b['n']} | {ch:,} | {b['strategy']} | {b['seconds']:.1f} | {fail} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dims", default="2,3,4,5,6,7,8,9,10")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds per run")
    ap.add_argument("--strategy", default="best", choices=("best", "enumerate", "branch-and-bound"))
    ap.add_argument("--growth", type=float, default=1.5, help="factor between successive n")
    ap.add_argument("--refine", type=int, default=2, help="bisection steps between success and failure")
    ap.add_argument("--n-max", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--misses", type=int, default=2, help="stop a dimension after this many failures in a row")
    ap.add_argument("--workers", type=int, default=1,
                    help="worker processes of the branch and bound (enumeration stays in-process, BLAS threads)")
    ap.add_argument("--save", default=None, metavar="PATH.json", help="save every probe as data")
    ap.add_argument("--quick", action="store_true", help="budget 10 s, d = 2..5")
    ap.add_argument("--load", default=None, metavar="PATH.json", help="print the table of a saved run, run nothing")
    args = ap.parse_args()
    if args.load:
        saved = json.loads(open(args.load).read())
        print_table(saved["rows"], int(saved["args"]["seed"]))
        return
    if args.quick:
        args.budget, args.dims = min(args.budget, 10.0), "2,3,4,5"
    print(f"frontier: largest n certified (alpha = 1) in {args.budget:g} s, strategy {args.strategy}; Gaussian X, "
          f"knn graph, K = 4, features bias, seed {args.seed}, n grows x{args.growth:g}, "
          f"branch and bound on {args.workers} worker(s)", flush=True)
    t0 = time.perf_counter()
    rows = []
    for d in (int(x) for x in args.dims.split(",")):
        rows.append(frontier(d, args))
        if args.save:
            with open(args.save, "w") as fh:
                json.dump({"args": vars(args), "rows": rows}, fh, indent=1, default=str)
    print_table(rows, args.seed)
    print(f"(total {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
