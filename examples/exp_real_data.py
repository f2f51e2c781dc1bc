"""Choosing the graph (Rem 6.1) on a real data set: iris, wine or breast-cancer reduced to 2-D by PCA.

Needs the ``real`` extra (``pip install ".[real]"``: scikit-learn, whose bundled data sets are used;
nothing is downloaded).  A seeded class-stratified subsample of ``--n`` samples, target ``f`` = +1 on
one class and -1 elsewhere; the graph-choice experiment's comparison
(:func:`relu_gating.experiments.graph_choice.compare_graphs`) with ``--t`` certified greedy neurons.
Run from the repository root::

    python examples/exp_real_data.py [--data iris] [--n 40] [--t 3] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from relu_gating.data.real import REAL_DATASETS, real_dataset
from relu_gating.experiments.graph_choice import compare_graphs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", choices=sorted(REAL_DATASETS), default="iris")
    p.add_argument("--n", type=int, default=40, help="stratified subsample size (default 40)")
    p.add_argument("--t", type=int, default=3, help="certified greedy neurons (default 3)")
    p.add_argument("--cls", type=int, default=1, help="the class labelled +1 (default 1)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    d = real_dataset(args.data, dims=2, n=args.n, seed=args.seed)
    f = np.where(d.y == args.cls, 1.0, -1.0)
    print(f"{d.name}: {d.source_shape[0]} x {d.source_shape[1]} -> PCA 2-D (explains {d.explained.sum():.0%} of the "
          f"standardized variance), n = {d.X.shape[0]}; f = +1 on class {args.cls}")
    graphs = [("knn k=5", {"kind": "knn", "n_neighbors": 5}), ("knn k=10", {"kind": "knn", "n_neighbors": 10}),
              ("gaussian median", {"kind": "gaussian"})]
    rows = compare_graphs(d.X, {"class": f}, graphs, [2, 4], args.t)
    print(f"{'graph / operator':26s} {'K':>2s} {'E/sqrt(l)':>9s} {'s||f||':>8s} {'Cor3.1':>8s} {'error':>8s} {'N_K':>6s}")
    for r in rows:
        print(f"{r['graph'] + ' / ' + r['operator']:26s} {r['K']:2d} {r['energy_term']:9.4f} {r['coverage_term']:8.4f} "
              f"{r['cor31_bound']:8.4f} {r['readout_error']:8.4f} {r['N_K']:6.3f}")
    best = min(rows, key=lambda r: r["cor31_bound"])
    print(f"smallest Cor 3.1 bound: {best['graph']} / {best['operator']}, K = {best['K']} "
          f"(bound {best['cor31_bound']:.4f}, readout error {best['readout_error']:.4f})")
    ok = all(r["readout_error"] <= r["cor31_bound"] + 1e-8 for r in rows)
    print("readout error <= Cor 3.1 bound for every graph:", ok)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
