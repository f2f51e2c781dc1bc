r"""Benchmark: branch and bound over the arrangement against enumeration and uncertified search.

Each case: samples ``X`` (Gaussian, or ``--data clustered``: 4 Gaussian clusters), ``Phi = [X, 1]``,
``U_K`` = the K = 4 lowest eigenvectors of the kNN-graph Laplacian, the marginal gain over the
bias (``features="bias"``).  Per case, in the same run:

* the predicted chamber count (Cover's bound, ``count_patterns(method="bound")``);
* ``best_neuron(strategy="branch-and-bound", max_seconds=--budget)``: wall time, nodes created,
  splits, implied rows, leaves, chambers solved exactly, the alpha reached, and the time per
  node by kind (node bound; NNLS/LP row tests; exact chamber solves);
* ``best_neuron(strategy="enumerate")`` where the chamber count is at most ``--enum-max``
  (the answer must agree to 1e-9);
* the best of ``--random`` Gaussian neurons plus fixed-gating local search (50 starts):
  uncertified lower bounds (``relu_gating.search.baselines``).

Medians over ``--seeds`` seeds are printed per case (value ratios against the B&B answer).

Run::

    python benchmarks/bnb.py                       # the default table
    python benchmarks/bnb.py --quick               # small cases, 1 seed
    python benchmarks/bnb.py --cases 120x3,80x4 --budget 120 --seeds 1
"""

from __future__ import annotations

import argparse
import time

import numpy as np

DEFAULT_CASES = "40x2,100x2,40x3,80x3,20x4,30x4,15x5"
QUICK_CASES = "30x2,20x3,12x4"


def instance(n: int, d: int, seed: int, data: str, K: int = 4):
    from relu_gating.spectral.graphs import laplacian, sample_graph
    from relu_gating.spectral.spectra import low_frequency_basis

    rng = np.random.default_rng(seed)
    if data == "clustered":
        centers = rng.normal(scale=3.0, size=(4, d))
        X = centers[rng.integers(0, 4, size=n)] + 0.5 * rng.normal(size=(n, d))
    else:
        X = rng.normal(size=(n, d))
    U = low_frequency_basis(laplacian(sample_graph(X, kind="knn")), K).U_K
    return np.c_[X, np.ones(n)], U


def run_case(n: int, d: int, seed: int, args: argparse.Namespace) -> dict:
    from relu_gating import best_neuron
    from relu_gating.patterns import count_patterns
    from relu_gating.search.baselines import local_search, random_search

    Phi, U = instance(n, d, seed, args.data)
    chambers = count_patterns(Phi, method="bound").count
    t = time.perf_counter()
    b = best_neuron(Phi, U, strategy="branch-and-bound", max_seconds=args.budget)
    tb = time.perf_counter() - t
    st = b.tree["stats"]
    row = {"chambers": chambers, "t_bnb": tb, "nodes": b.n_nodes, "splits": st["n_s"], "implied": st["n_i"],
           "leaves": st["n_b"] + st["n_c"] + st["n_x"], "solved": st["chambers"],
           "alpha": b.value / b.upper_bound if b.upper_bound > 0 else 1.0, "certified": b.certified,
           "us_bound": 1e6 * st["t_bound"] / max(st["n_bound"], 1),
           "us_rowtest": 1e6 * (st["t_nnls"] + st["t_lp"]) / max(st["nnls"] + st["lp"], 1),
           "ms_chamber": 1e3 * st["t_chamber"] / max(st["chambers"], 1), "value": b.value}
    rs = random_search(Phi, U, features="bias", n_samples=args.random, seed=seed)
    ls = local_search(Phi, U, features="bias", n_starts=50, seed=seed)
    row["baseline"] = max(rs.value, ls.value) / b.value
    row["t_enum"], row["agree"] = float("nan"), ""
    if chambers <= args.enum_max:
        t = time.perf_counter()
        e = best_neuron(Phi, U, strategy="enumerate")
        row["t_enum"] = time.perf_counter() - t
        row["agree"] = "yes" if abs(e.value - b.value) <= 1e-9 else f"NO ({e.value - b.value:+.1e})"
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default=None, help=f"n x d list (default {DEFAULT_CASES})")
    ap.add_argument("--data", default="gauss", choices=("gauss", "clustered"))
    ap.add_argument("--budget", type=float, default=60.0, help="B&B time limit per run, seconds")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--random", type=int, default=100_000, help="random neurons of the baseline")
    ap.add_argument("--enum-max", type=int, default=200_000, help="enumerate only up to this many chambers")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    cases = args.cases or (QUICK_CASES if args.quick else DEFAULT_CASES)
    if args.quick:
        args.seeds, args.random, args.budget = 1, 20_000, min(args.budget, 20.0)
    print(f"data {args.data}, knn graph, K = 4, features bias, B&B budget {args.budget:g} s, "
          f"medians over {args.seeds} seed(s)")
    head = (f"{'n':>5} {'d':>2} {'chambers':>11} {'B&B s':>7} {'enum s':>7} {'agree':>6} {'nodes':>7} "
            f"{'splits':>6} {'implied':>7} {'solved':>6} {'alpha':>9} {'cert':>5} {'us/bound':>8} "
            f"{'us/rowtest':>10} {'ms/chamber':>10} {'rand+LS/B&B':>11}")
    print(head)
    for case in cases.split(","):
        n, d = (int(x) for x in case.lower().split("x"))
        rows = [run_case(n, d, s, args) for s in range(args.seeds)]

        def med(k: str, rows: list = rows) -> float:
            return float(np.nanmedian([r[k] for r in rows]))
        print(f"{n:>5} {d:>2} {rows[0]['chambers']:>11,} {med('t_bnb'):>7.2f} {med('t_enum'):>7.2f} "
              f"{'/'.join(sorted({r['agree'] or '-' for r in rows})):>6} {med('nodes'):>7.0f} {med('splits'):>6.0f} "
              f"{med('implied'):>7.0f} {med('solved'):>6.0f} {med('alpha'):>9.6f} "
              f"{sum(r['certified'] for r in rows)}/{len(rows):<3} {med('us_bound'):>8.0f} {med('us_rowtest'):>10.0f} "
              f"{med('ms_chamber'):>10.1f} {med('baseline'):>11.6f}", flush=True)


if __name__ == "__main__":
    main()
