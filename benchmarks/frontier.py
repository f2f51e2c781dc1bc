r"""Benchmark: the frontier of the certified search, the largest n certified within a time budget.

For each input dimension ``d`` (``Phi = [X, 1]``, Gaussian ``X``, K = 4 lowest eigenvectors of
the kNN-graph Laplacian, marginal gain over the bias), ``n`` grows by the factor ``--growth``
from ``d + 3`` until ``best_neuron(strategy="branch-and-bound", max_seconds=--budget)`` fails
to certify alpha = 1 ``--misses`` times in a row (small instances can be harder than larger
ones); the largest certified ``n`` is the frontier, the first failure is shown beside it.  Beside it, in the same
run: the predicted chamber count there (Cover's bound), the B&B time and nodes, and the time
enumeration takes on the same case (``strategy="enumerate"``; only where Cover's bound is at
most ``--enum-max``), so the ratio of the two methods shows in each row.  One seed per size
(``--seed``): the frontier is a single measured point, not a median.

Run::

    python benchmarks/frontier.py                  # budget 60 s, d = 2..10 (long)
    python benchmarks/frontier.py --quick          # budget 10 s, d = 2..6
    python benchmarks/frontier.py --dims 3,5,8 --budget 600
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def instance(n: int, d: int, seed: int, K: int = 4):
    from relu_gating.spectral.graphs import laplacian, sample_graph
    from relu_gating.spectral.spectra import low_frequency_basis

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # spectral ties at tiny n
        U = low_frequency_basis(laplacian(sample_graph(X, kind="knn")), K).U_K
    return np.c_[X, np.ones(n)], U


def attempt(n: int, d: int, args: argparse.Namespace) -> tuple[bool, float, int, float]:
    from relu_gating import best_neuron

    Phi, U = instance(n, d, args.seed)
    t = time.perf_counter()
    res = best_neuron(Phi, U, strategy="branch-and-bound", max_seconds=args.budget)
    alpha = res.value / res.upper_bound if res.upper_bound > 0 else 1.0
    return bool(res.certified), time.perf_counter() - t, res.n_nodes, alpha


def frontier(d: int, args: argparse.Namespace) -> dict:
    from relu_gating.patterns import count_patterns

    n, best, fail, misses = d + 3, None, None, 0
    while n <= args.n_max and misses < args.misses:
        ok, sec, nodes, alpha = attempt(n, d, args)
        print(f"   d={d} n={n}: {'certified' if ok else f'alpha {alpha:.4f}'} in {sec:.1f} s, {nodes} nodes",
              flush=True)
        if ok:
            best, misses = (n, sec, nodes), 0
        else:
            fail, misses = fail or (n, alpha), misses + 1
        n = max(n + 1, int(round(n * args.growth)))
    out = {"d": d, "n": None, "sec": float("nan"), "nodes": 0, "chambers": 0, "t_enum": float("nan"),
           "fail": fail}
    if best is None:
        return out
    n, sec, nodes = best
    Phi, U = instance(n, d, args.seed)
    out.update(n=n, sec=sec, nodes=nodes, chambers=count_patterns(Phi, method="bound").count)
    if out["chambers"] <= args.enum_max:
        from relu_gating import best_neuron

        t = time.perf_counter()
        best_neuron(Phi, U, strategy="enumerate")
        out["t_enum"] = time.perf_counter() - t
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dims", default="2,3,4,5,6,7,8,9,10")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds per B&B run")
    ap.add_argument("--growth", type=float, default=1.5, help="factor between successive n")
    ap.add_argument("--n-max", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--misses", type=int, default=2, help="stop a dimension after this many failures in a row")
    ap.add_argument("--enum-max", type=int, default=300_000, help="enumerate only up to this many chambers")
    ap.add_argument("--quick", action="store_true", help="budget 10 s, d = 2..6")
    args = ap.parse_args()
    if args.quick:
        args.budget, args.dims = min(args.budget, 10.0), "2,3,4,5,6"
    print(f"frontier: largest n certified (alpha = 1) by branch and bound in {args.budget:g} s; Gaussian X, "
          f"knn graph, K = 4, features bias, seed {args.seed}, n grows x{args.growth:g}")
    rows = [frontier(int(d), args) for d in args.dims.split(",")]
    print(f"{'d':>3} {'largest n':>9} {'chambers':>13} {'B&B s':>7} {'nodes':>7} {'enum s':>8} "
          f"{'first failure (n, alpha)':>26}")
    for r in rows:
        fail = "-" if r["fail"] is None else f"n={r['fail'][0]}, {r['fail'][1]:.4f}"
        n = "-" if r["n"] is None else str(r["n"])
        print(f"{r['d']:>3} {n:>9} {r['chambers']:>13,} {r['sec']:>7.1f} {r['nodes']:>7} {r['t_enum']:>8.2f} "
              f"{fail:>26}")


if __name__ == "__main__":
    main()
