"""Benchmark: verifying a branch-and-bound tree certificate three ways in the same run: every
implied sign by exact integer determinants; with the rigorous float filter node by node; and with
the filter vectorised over batches of implied signs (the verifier's way,
:func:`relu_gating.certificate._farkas.implied_batch`).

For each case (Gaussian X, kNN graph, K = 4, features bias, seed 0) the tree is grown once
(``best_neuron(strategy="branch-and-bound", max_seconds=...)``), written to JSON and read back,
then verified ``--repeats`` times each way, in turn; medians are printed with the number of
nodes and of implied-sign ("i") nodes.  Every way must give the same report.  The n = 1000,
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
from relu_gating.certificate import _farkas

CASES = [(60, 4, 40.0), (40, 5, 40.0), (1000, 3, 20.0)]
#: Cases verified without the slow exact way.
NO_EXACT = {(1000, 3)}
MODES = ("exact", "per node", "batched")
QUICK = [(30, 4, 10.0)]


def tree_case(n: int, d: int, budget: float):
    X = np.random.default_rng(0).normal(size=(n, d))
    U = rg.low_frequency_basis(rg.laplacian(rg.sample_graph(X, kind="knn")), 4).U_K
    Phi = rg.layer_input(X)
    res = rg.best_neuron(Phi, U, strategy="branch-and-bound", max_seconds=budget)
    return Phi, U, json.loads(json.dumps(res.to_dict()))


def timed_verify(cert: dict, Phi: np.ndarray, U: np.ndarray, mode: str):
    originals = _farkas._signs_float, _farkas._signs_float_batch
    if mode != "batched":  # every claim undecided by the batch: node by node, as before
        _farkas._signs_float_batch = lambda A, b: np.zeros(b.shape[0], dtype=np.int8)
    if mode == "exact":
        _farkas._signs_float = lambda A, b: None  # every implied sign by exact integer determinants
    try:
        t = time.perf_counter()
        rep = rg.verify(cert, Phi, U, "bias")
        return time.perf_counter() - t, (rep.valid, rep.certified, rep.value)
    finally:
        _farkas._signs_float, _farkas._signs_float_batch = originals


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    cases, repeats = (QUICK, 1) if a.quick else (CASES, a.repeats)
    print(f"{'case':>8s} {'nodes':>9s} {'i nodes':>9s} " + " ".join(f"{m + ' (s)':>14s}" for m in MODES)
          + f" {'batched vs per node':>20s}")
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
        print(f"{n:>4d} x {d:<1d} {len(nodes):>9,d} {n_i:>9,d} {cols} {med['per node'] / med['batched']:>19.1f}x",
              flush=True)


if __name__ == "__main__":
    main()
