"""Dual-first settlement of candidate patterns against exact solves of every candidate (baseline).

The exact phase of ``best_neuron`` takes candidates (patterns whose cheap bound can still beat
the incumbent) largest bound first.  With dual-first (``m >= DUAL_FIRST_MIN_M``, 3), a candidate
is first offered one small SDP on a few of its rows (``relu_gating.search._exact.evidence.dual_prune``);
evidence at most the incumbent over alpha settles it, without the exact solve (faces or DNN,
3-5 ms at ``m = 3, 4``, 10 ms to seconds at ``m >= 5``).  The baseline is the same query with dual-first off.
Same problem, same process, interleaved, medians; the values must agree to 1e-9::

    python benchmarks/dual_first.py [--cases 1000x2,120x3,162x3,60x4,45x5,25x6,20x7,13x8] [--repeats 3]

Three modes, interleaved: ``none`` (every candidate solved exactly), ``sdp`` (dual-first by one
small SDP per candidate) and ``two-row`` (first the two-row evidence of the whole batch,
:mod:`relu_gating.search._kernels.wedge`, then the SDP for the rest).
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


MODES = ("none", "sdp", "two-row")


def one(Phi, U, mode: str) -> tuple[float, object]:
    """One query: ``none`` (every candidate solved exactly), ``sdp`` (dual-first by one small SDP
    per candidate, the previous release) or ``two-row`` (the batch's two-row evidence first,
    :mod:`relu_gating.search._kernels.wedge`, then the SDP; this release)."""
    import relu_gating as rg
    from relu_gating.search._exact import tasks

    saved, wedge = tasks.DUAL_FIRST_MIN_M, tasks.wedge_settle
    tasks.DUAL_FIRST_MIN_M = 10**9 if mode == "none" else saved
    if mode == "sdp":
        tasks.wedge_settle = lambda obj, masks, target: {}
    try:
        t = time.perf_counter()
        res = rg.best_neuron(Phi, U, options=rg.EnumerateOptions(max_patterns=None))
        return time.perf_counter() - t, res
    finally:
        tasks.DUAL_FIRST_MIN_M, tasks.wedge_settle = saved, wedge


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="1000x2,120x3,162x3,60x4,45x5,25x6,20x7,13x8")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--modes", default=",".join(MODES), help="of none, sdp, two-row")
    args = ap.parse_args()
    modes = args.modes.split(",")
    print("| n x d | patterns | " + " | ".join(f"{m}: exact solves, exact phase s, query s" for m in modes)
          + " | same value, certified |")
    print("|---|---:|" + "---:|" * len(modes) + "---|")
    for case in args.cases.split(","):
        n, d = (int(x) for x in case.split("x"))
        Phi, U = instance(n, d)
        times: dict[str, list[float]] = {m: [] for m in modes}
        phase: dict[str, list[float]] = {m: [] for m in modes}
        res = {}
        for _ in range(args.repeats):
            for mode in modes:
                sec, res[mode] = one(Phi, U, mode)
                times[mode].append(sec)
                phase[mode].append(res[mode].seconds["solve"])
        vals = [res[m].value for m in modes]
        ok = max(vals) - min(vals) <= 1e-9 and all(res[m].certified for m in modes)
        cells = [f"{res[m].n_exact:,}, {statistics.median(phase[m]):.2f}, {statistics.median(times[m]):.2f}" for m in modes]
        print(f"| {case} | {res[modes[0]].n_patterns:,} | " + " | ".join(cells) + f" | {'yes' if ok else 'NO'} |",
              flush=True)

if __name__ == "__main__":
    main()
