r"""Rounds and seconds for the variation norm to close, against n: the cone pricing beside the search pricing.

Two moons (noise 0.1, kNN 8, combinatorial Laplacian, data on the 2^-16 grid), ``K = 4``, the norm
of ``u_2`` under ``Phi = [X, 1]`` with ``tol = 1e-3``, patterns enumerated once (not timed).  For each
``n``: ``pricing="cone"`` (exact chamber-by-chamber pricing, :mod:`relu_gating.layers._cone_pricing`)
run to the end, and the baseline ``pricing="search"`` (cheap candidates, then the certified best-neuron
search) for at most ``--baseline-rounds`` master rounds.  Same inputs, one process, one after another.

Usage::

    python benchmarks/variation_speed.py --n 40 70 100 --out benchmarks/results/variation_speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's relu_gating


def problem(n: int, K: int, seed: int):
    """Dyadic two moons: ``Phi = [X, 1]`` and ``U_K`` of the kNN-8 combinatorial Laplacian."""
    from relu_gating.data.datasets import two_moons
    from relu_gating.experiments._theory import dyadic
    from relu_gating.layers.networks import layer_input
    from relu_gating.spectral.graphs import laplacian, sample_graph
    from relu_gating.spectral.spectra import low_frequency_basis

    X = dyadic(two_moons(n, noise=0.1, seed=seed))
    U = low_frequency_basis(laplacian(sample_graph(X, kind="knn", n_neighbors=8)), K).U_K
    return layer_input(X), U


def one(n: int, pricing: str, max_iter: int, seed: int) -> dict:
    from relu_gating.layers.variation import variation_norm
    from relu_gating.patterns import enumerate_patterns

    Phi, U = problem(n, 4, seed)
    pats = enumerate_patterns(Phi)
    t0, c0 = time.perf_counter(), time.process_time()
    r = variation_norm(U[:, 1], Phi, patterns=pats, tol=1e-3, max_iter=max_iter, pricing=pricing)
    return {"n": n, "seed": seed, "pricing": pricing, "max_iter": max_iter, "patterns": int(pats.masks.shape[0]),
            "rounds": r.iterations, "lower": r.lower, "upper": r.upper, "closed": bool(r.certified),
            "rel_width": (r.upper - r.lower) / r.upper, "seconds": time.perf_counter() - t0,
            "cpu_seconds": time.process_time() - c0, "load": list(os.getloadavg())}


def main(argv: list[str] | None = None) -> int:
    from relu_gating.experiments._base import provenance

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[40, 70, 100])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--baseline-rounds", type=int, default=8)
    ap.add_argument("--max-iter", type=int, default=200)
    ap.add_argument("--out", default=None, help="JSON file (rewritten after every row)")
    args = ap.parse_args(argv)
    rows = []
    print("| n | patterns | pricing | rounds | interval | closed to 1e-3 | seconds (CPU) |\n| --- | --- | --- | --- | --- | --- | --- |")
    for n in args.n:
        for pricing, it in (("cone", args.max_iter), ("search", args.baseline_rounds)):
            r = one(n, pricing, it, args.seed)
            rows.append(r)
            print(f"| {n} | {r['patterns']:,} | {pricing} | {r['rounds']} | [{r['lower']:.4g}, {r['upper']:.4g}] | "
                  f"{'yes' if r['closed'] else 'no'} | {r['seconds']:.1f} ({r['cpu_seconds']:.1f}) |", flush=True)
            if args.out:
                Path(args.out).write_text(json.dumps({"provenance": provenance(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
