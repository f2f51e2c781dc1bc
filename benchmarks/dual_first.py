"""Dual-first settlement of candidate patterns against exact solves of every candidate (baseline).

The exact phase of ``best_neuron`` takes candidates (patterns whose cheap bound can still beat
the incumbent) largest bound first.  With dual-first (``m >= DUAL_FIRST_MIN_M``, 3), a candidate
is first offered one small SDP on a few of its rows (``relu_gating.search._evidence.dual_prune``);
evidence at most the incumbent over alpha settles it, without the exact solve (faces or DNN,
3-5 ms at ``m = 3, 4``, 10 ms to seconds at ``m >= 5``).  The baseline is the same query with dual-first off.
Same problem, same process, interleaved, medians; the values must agree to 1e-9::

    python benchmarks/dual_first.py [--cases 1000x2,120x3,60x4,45x5,25x6,20x7,13x8] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np


def instance(n: int, d: int, seed: int = 0):
    import relu_gating as rg

    X = np.random.default_rng(seed).normal(size=(n, d))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # spectral ties at tiny n
        U = rg.low_frequency_basis(rg.laplacian(rg.sample_graph(X, kind="knn")), 4).U_K
    return rg.layer_input(X), U


def one(Phi, U, dual_first: bool) -> tuple[float, object]:
    import relu_gating as rg
    from relu_gating.search import tasks

    saved = tasks.DUAL_FIRST_MIN_M
    tasks.DUAL_FIRST_MIN_M = saved if dual_first else 10**9
    try:
        t = time.perf_counter()
        res = rg.best_neuron(Phi, U, max_patterns=None)
        return time.perf_counter() - t, res
    finally:
        tasks.DUAL_FIRST_MIN_M = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="1000x2,120x3,60x4,45x5,25x6,20x7,13x8")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print("| n x d | patterns | exact solves, baseline | exact solves, dual-first | baseline s | dual-first s | "
          "speed-up | same value, certified |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for case in args.cases.split(","):
        n, d = (int(x) for x in case.split("x"))
        Phi, U = instance(n, d)
        times: dict[bool, list[float]] = {False: [], True: []}
        res = {}
        for _ in range(args.repeats):
            for flag in (False, True):
                sec, res[flag] = one(Phi, U, flag)
                times[flag].append(sec)
        b, f = statistics.median(times[False]), statistics.median(times[True])
        ok = abs(res[True].value - res[False].value) <= 1e-9 and res[True].certified and res[False].certified
        print(f"| {case} | {res[True].n_patterns:,} | {res[False].n_exact:,} | {res[True].n_exact:,} | {b:.2f} | "
              f"{f:.2f} | {b / f:.1f}x | {'yes' if ok else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
