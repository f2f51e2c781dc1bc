"""Benchmark: exact chamber enumeration vs the output-size floor and random sampling.

For Phi = [X, 1] with Gaussian X (n x (m-1)), seeded, it prints per size:

* ``N`` (checked against Cover's formula) and the median enumeration time
  (``enumerate_patterns``, witness certification included) and chambers/s;
* the *floor*: median time to merely compute the sign patterns of all N witnesses
  (``packbits(W @ Phi.T > 0)`` in chunks, single-threaded BLAS when available,
  the fastest way we know) and the ratio enumeration / floor;
* ``count s``: ``count_patterns`` (exact general-position check + Cover);
* random Gaussian sampling of theta for the same wall time as the enumeration:
  the fraction of the N chambers it finds;
* peak traced memory of one enumeration (tracemalloc, separate untimed run).

Usage::

    PYTHONPATH=. python benchmarks/enumerate.py            # full (a few minutes)
    PYTHONPATH=. python benchmarks/enumerate.py --quick    # smoke run (seconds)
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import tracemalloc
from math import comb

import numpy as np

from relu_gating.patterns import count_patterns, enumerate_patterns
from threadpoolctl import threadpool_limits

FULL = [(200, 3), (100, 4), (200, 4), (40, 5), (30, 6)]
QUICK = [(60, 3), (40, 4), (20, 5), (15, 6)]


def cover(n: int, r: int) -> int:
    return 2 * sum(comb(n - 1, k) for k in range(r))


def make_phi(n: int, m: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.c_[rng.normal(size=(n, m - 1)), np.ones(n)]


def floor_time(Phi: np.ndarray, W: np.ndarray) -> float:
    PT = np.ascontiguousarray(Phi.T)
    t0 = time.perf_counter()
    with threadpool_limits(limits=1, user_api="blas"):
        for s in range(0, W.shape[0], 8192):
            np.packbits(W[s:s + 8192] @ PT > 0, axis=1)
    return time.perf_counter() - t0


def sampling_coverage(Phi: np.ndarray, budget: float, N: int, seed: int) -> tuple[float, int]:
    """Distinct patterns found by Gaussian theta in ``budget`` seconds, as a fraction of N."""
    rng = np.random.default_rng(seed)
    PT = np.ascontiguousarray(Phi.T)
    seen: set = set()
    samples = 0
    t0 = time.perf_counter()
    with threadpool_limits(limits=1, user_api="blas"):
        while time.perf_counter() - t0 < budget:
            T = rng.normal(size=(8192, Phi.shape[1]))
            pk = np.packbits(T @ PT > 0, axis=1)
            seen.update(pk.view(np.dtype((np.void, pk.shape[1]))).ravel().tolist())
            samples += T.shape[0]
    return len(seen) / N, samples


def run(sizes, repeats: int, seed: int) -> list[dict]:
    rows = []
    for n, m in sizes:
        Phi = make_phi(n, m, seed + 1000 * m + n)
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            ps = enumerate_patterns(Phi)
            times.append(time.perf_counter() - t0)
        N = len(ps)
        assert N == cover(n, m), (n, m, N)
        t_enum = statistics.median(times)
        t_floor = statistics.median(floor_time(Phi, ps.witnesses) for _ in range(repeats))
        t0 = time.perf_counter()
        cnt = count_patterns(Phi)
        t_count = time.perf_counter() - t0
        cov, samples = sampling_coverage(Phi, t_enum, N, seed)
        W = None
        del ps
        tracemalloc.start()
        ps = enumerate_patterns(Phi)
        peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
        tracemalloc.stop()
        del ps, W
        rows.append(dict(n=n, m=m, chambers=N, enum_s=t_enum, chambers_per_s=N / t_enum, floor_s=t_floor,
                         ratio=t_enum / t_floor, count_s=t_count, count_method=cnt.method,
                         sampling_coverage=cov, sampling_samples=samples, peak_mib=peak))
        r = rows[-1]
        print(f"{n:>4} {m:>2} {N:>9} {t_enum:8.3f} {N / t_enum:>12,.0f} {t_floor:8.3f} {r['ratio']:6.1f} "
              f"{t_count:8.3f} {cov:9.1%} {samples:>10,} {peak:8.1f}", flush=True)
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    ap.add_argument("--repeats", type=int, default=None, help="timed repeats (median; default 3, quick 1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", metavar="FILE", default=None, help="also write the rows as JSON")
    a = ap.parse_args(argv)
    sizes = QUICK if a.quick else FULL
    repeats = a.repeats or (1 if a.quick else 3)
    print(f"median of {repeats}; floor = sign patterns of all witnesses; sampling = Gaussian theta, same time")
    print(f"{'n':>4} {'m':>2} {'chambers':>9} {'enum s':>8} {'chambers/s':>12} {'floor s':>8} {'ratio':>6} "
          f"{'count s':>8} {'sampling':>9} {'samples':>10} {'peak MiB':>8}")
    rows = run(sizes, repeats, a.seed)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()
