"""Benchmark: the branch and bound's node throughput where most rows of a node are forced (large n),
with the rows forced by a node found in one batch (:mod:`relu_gating.search.bnb._forced`) against
the per-row tests (NNLS, then an LP) of the previous release, in the same run.

For each case (Gaussian X, kNN graph, K = 4, features bias, seed 0) both ways run for the same
time budget, in turn, ``--repeats`` times; printed are medians of the splits per second (node
expansions), the implied signs fixed per second and the alpha reached, and the ratio of the
split rates.  Both ways run with single-threaded BLAS, as the search now does (the per-row way
measured 2.1x slower still with OpenBLAS's default threads beside one busy core).

Run::

    python benchmarks/bnb_forced.py            # 1000 x 3 and 300 x 4, 30 s each way, 3 repeats
    python benchmarks/bnb_forced.py --quick    # 300 x 3, 10 s, 1 repeat
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bnb import instance  # noqa: E402

from relu_gating import best_neuron  # noqa: E402
from relu_gating.search.bnb import _forced  # noqa: E402

CASES = [(1000, 3), (300, 4)]
QUICK = [(300, 3)]


def run(Phi, U, budget: float, batched: bool) -> dict:
    saved = _forced.MIN_CANDIDATES
    _forced.MIN_CANDIDATES = saved if batched else 10**9  # never batched: every row by the per-row tests
    try:
        b = best_neuron(Phi, U, strategy="branch-and-bound", max_seconds=budget)
    finally:
        _forced.MIN_CANDIDATES = saved
    st = b.tree["stats"]
    t = b.seconds["total"]
    return {"splits": st["n_s"] / t, "implied": st["n_i"] / t, "alpha": b.value / b.upper_bound}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--budget", type=float, default=30.0)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    cases, budget, repeats = (QUICK, 10.0, 1) if a.quick else (CASES, a.budget, a.repeats)
    print(f"{'case':>8s} {'way':>9s} {'splits/s':>9s} {'implied/s':>10s} {'alpha':>8s}   (budget {budget:g} s, "
          f"medians of {repeats})")
    for n, d in cases:
        Phi, U = instance(n, d, 0, "gauss")
        got: dict = {False: [], True: []}
        for _ in range(repeats):
            for batched in (False, True):
                got[batched].append(run(Phi, U, budget, batched))
        med = {k: {f: statistics.median(r[f] for r in v) for f in ("splits", "implied", "alpha")} for k, v in got.items()}
        for batched, name in ((False, "per row"), (True, "batched")):
            m = med[batched]
            print(f"{n:>4d} x {d:<1d} {name:>9s} {m['splits']:>9.1f} {m['implied']:>10.0f} {m['alpha']:>8.5f}")
        print(f"{'':>8s} {'ratio':>9s} {med[True]['splits'] / med[False]['splits']:>8.1f}x", flush=True)


if __name__ == "__main__":
    main()
