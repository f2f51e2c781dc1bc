"""Benchmark: verifying a branch-and-bound tree certificate two ways in the same run: every
implied sign in exact rationals; and with the rigorous float filter vectorised over batches of
implied signs first (the checker's way, ``relu_gating.checker._tree.implied``).

For each case (Gaussian X, kNN graph, K = 4, features bias, seed 0) the tree is grown once
(``best_neuron(strategy="branch-and-bound", max_seconds=...)``), written to JSON and read back,
then verified ``--repeats`` times each way, in turn; medians are printed with the number of
nodes and of implied-sign ("i") nodes.  (The third way of earlier runs, the filter node by node,
was the search-side copy of the verifier; the checker has only the batched filter.)  Every way must give the same report.  The n = 1000,
d = 3 tree (hundreds of implied signs per split) is verified without the exact way (minutes).

Run::

    python benchmarks/verify_tree.py                 # 60 x 4, 40 x 5 and 1000 x 3
    python benchmarks/verify_tree.py --quick         # 30 x 4, one repeat
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import relu_gating as rg
from relu_gating.checker import _tree as checker_tree

CASES = [(60, 4, 40.0), (40, 5, 40.0), (1000, 3, 20.0)]
#: Cases verified without the slow exact way.
NO_EXACT = {(1000, 3)}
MODES = ("exact", "batched")
QUICK = [(30, 4, 10.0)]


def tree_case(n: int, d: int, budget: float):
    X = np.random.default_rng(0).normal(size=(n, d))
    U = rg.low_frequency_basis(rg.laplacian(rg.sample_graph(X, kind="knn")), 4).U_K
    Phi = rg.layer_input(X)
    res = rg.best_neuron(Phi, U, strategy="branch-and-bound", max_seconds=budget)
    return Phi, U, json.loads(json.dumps(res.to_dict()))


def timed_verify(cert: dict, Phi: np.ndarray, U: np.ndarray, mode: str):
    original = checker_tree._implied_float
    if mode == "exact":  # the filter decides nothing: every implied sign in exact rationals
        checker_tree._implied_float = lambda A, b: np.zeros(b.shape[0], dtype=np.int8)
    try:
        t = time.perf_counter()
        rep = rg.verify(cert, Phi, U, "bias", workers=1)  # one process: benchmarks/verify_cores.py compares cores
        return time.perf_counter() - t, (rep.valid, rep.certified, rep.value)
    finally:
        checker_tree._implied_float = original


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    cases, repeats = (QUICK, 1) if a.quick else (CASES, a.repeats)
    print(f"{'case':>8s} {'nodes':>9s} {'i nodes':>9s} " + " ".join(f"{m + ' (s)':>14s}" for m in MODES)
          + f" {'exact / batched':>16s}")
    for n, d, budget in cases:
        Phi, U, cert = tree_case(n, d, budget)
        nodes = cert["tree"]["nodes"]
        modes = [m for m in MODES if not (m == "exact" and (n, d) in NO_EXACT)]
        t: dict = {m: [] for m in modes}
        reps = set()
        for _ in range(repeats):
            for mode in modes:
                sec, rep = timed_verify(cert, Phi, U, mode)
                t[mode].append(sec)
                reps.add(rep)
        assert len(reps) == 1, reps  # the same report every way
        med = {m: statistics.median(v) for m, v in t.items()}
        n_i = sum(1 for x in nodes if x[0] == "i")
        cols = " ".join(f"{med[m]:>14.2f}" if m in med else f"{'-':>14s}" for m in MODES)
        print(f"{n:>4d} x {d:<1d} {len(nodes):>9,d} {n_i:>9,d} {cols} {(med['exact'] / med['batched'] if 'exact' in med else float('nan')):>15.1f}x",
              flush=True)


if __name__ == "__main__":
    main()
