"""Benchmark: verifying a branch-and-bound tree certificate, with and without the float filter of
the exact Farkas checks (:mod:`relu_gating.certificate._farkas`), in the same run.

For each case (Gaussian X, kNN graph, K = 4, features bias, seed 0) the tree is grown once
(``best_neuron(strategy="branch-and-bound", max_seconds=...)``), written to JSON and read back,
then verified ``--repeats`` times each way, in turn; medians are printed with the number of
nodes and of implied-sign ("i") nodes.  Both ways must give the same report.

Run::

    python benchmarks/verify_tree.py                 # 60 x 4 and 40 x 5
    python benchmarks/verify_tree.py --quick         # 30 x 4, one repeat
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import relu_gating as rg
from relu_gating.certificate import _farkas

CASES = [(60, 4, 40.0), (40, 5, 40.0)]
QUICK = [(30, 4, 10.0)]


def tree_case(n: int, d: int, budget: float):
    X = np.random.default_rng(0).normal(size=(n, d))
    U = rg.low_frequency_basis(rg.laplacian(rg.sample_graph(X, kind="knn")), 4).U_K
    Phi = rg.layer_input(X)
    res = rg.best_neuron(Phi, U, strategy="branch-and-bound", max_seconds=budget)
    return Phi, U, json.loads(json.dumps(res.to_dict()))


def timed_verify(cert: dict, Phi: np.ndarray, U: np.ndarray, filtered: bool):
    original = _farkas._signs_float
    if not filtered:
        _farkas._signs_float = lambda A, b: None  # every implied sign by exact integer determinants
    try:
        t = time.perf_counter()
        rep = rg.verify(cert, Phi, U, "bias")
        return time.perf_counter() - t, (rep.valid, rep.certified, rep.value)
    finally:
        _farkas._signs_float = original


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    cases, repeats = (QUICK, 1) if a.quick else (CASES, a.repeats)
    print(f"{'case':>7s} {'nodes':>8s} {'i nodes':>8s} {'exact (s)':>10s} {'filtered (s)':>12s} {'speed-up':>8s}")
    for n, d, budget in cases:
        Phi, U, cert = tree_case(n, d, budget)
        nodes = cert["tree"]["nodes"]
        t = {True: [], False: []}
        reps = set()
        for _ in range(repeats):
            for filtered in (False, True):
                sec, rep = timed_verify(cert, Phi, U, filtered)
                t[filtered].append(sec)
                reps.add(rep)
        assert len(reps) == 1, reps  # the same report both ways
        ex, fl = statistics.median(t[False]), statistics.median(t[True])
        n_i = sum(1 for x in nodes if x[0] == "i")
        print(f"{n:>3d} x {d:<1d} {len(nodes):>8,d} {n_i:>8,d} {ex:>10.2f} {fl:>12.2f} {ex / fl:>7.1f}x", flush=True)


if __name__ == "__main__":
    main()
