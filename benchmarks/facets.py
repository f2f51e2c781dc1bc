"""Facet detection of a polyhedral cone: qhull on all rows (baseline) against the prefilter
(qhull on a subset that provably has the same facets, ``solvers._reduction._prefiltered``).

Two families: chamber cones of the search (``sign(Phi theta) * Phi`` for Gaussian ``X`` with
features bias and a random ``theta``; what the exact solves meet) and random cones with an
interior point (a harder case for the prefilter: far more facets).  Prints median times and
the ratio (the facets are checked equal first)::

    python benchmarks/facets.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from solvers import _reduction as red


def _cone(rng: np.random.Generator, k: int, q: int) -> tuple[np.ndarray, np.ndarray]:
    z0 = rng.normal(size=k)
    z0 /= np.linalg.norm(z0)
    g = rng.normal(size=(q, k))
    g -= np.outer(g @ z0, z0)
    return g + np.outer(np.abs(rng.normal(size=q)) + 0.05, z0), z0


def _chamber(rng: np.random.Generator, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    Phi = np.c_[rng.normal(size=(n, d)), np.ones(n)]
    theta = rng.normal(size=d + 1)
    return np.sign(Phi @ theta)[:, None] * Phi, theta


def _median(fn, reps: int) -> float:
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    cases = [("chamber", n, d + 1) for n, d in ((1000, 2), (1000, 3), (300, 4), (100, 5), (400, 5), (60, 8))]
    cases += [("random", q, k) for k in (3, 4, 6, 8) for q in (100, 400, 1600)]
    print("| cone | rows | k | facets | all rows (ms) | prefiltered (ms) | speed-up |")
    print("|---|---|---|---|---|---|---|")
    for kind, q, k in cases:
        H, z0 = _chamber(rng, q, k - 1) if kind == "chamber" else _cone(rng, k, q)
        fac = red._facets_qhull(H, z0)[0]
        assert np.array_equal(np.sort(fac), np.sort(red._hull_facets(H, z0)[0]))
        base = _median(lambda H=H, z0=z0: red._hull_facets(H, z0), args.repeats)
        new = _median(lambda H=H, z0=z0: red._facets_qhull(H, z0), args.repeats)
        print(f"| {kind} | {q} | {k} | {fac.size} | {1e3 * base:.2f} | {1e3 * new:.2f} | {base / new:.1f}x |",
              flush=True)


if __name__ == "__main__":
    main()
