r"""Benchmark: the bound pass against the sign-pattern floor and the pre-change bound pass.

For each case (``Phi = [X, 1]``, Gaussian ``X``, ``U_K`` = K = 4 lowest kNN-Laplacian
eigenvectors, features ``bias``: the default query) it prints per pattern, in
microseconds of CPU time of this process (``time.process_time``; BLAS is held to
one thread, so this is the compute time, robust to other processes sharing the
machine), medians of ``--repeats`` runs taken in turn:

* ``floor``: one GEMM signing all witnesses, ``packbits(W @ Phi.T > 0)`` in chunks of
  8192 (the cost of merely writing the patterns down);
* ``old``: the bound pass of commit 8e3d2c2 (copied below as :func:`old_chunk_bounds`:
  rank-one-update pencils, two ``eigh`` with vectors per pattern, N x n attained check);
* ``new``: the query's bound pass: the pilot incumbent (:mod:`relu_gating.search._exact.pilot`,
  included in the time), then :func:`relu_gating.search._exact.tasks.chunk_bounds` on packed masks
  (one GEMM, closed forms, verified Cholesky; see :mod:`relu_gating.search._kernels.bound`);
  patterns provably below the pilot's value less ``CUT_BELOW`` get that bound from one verified
  Cholesky factorization, without an estimate;
* ``no cut``: the same without that shortcut (every pattern estimated);
* ``no pairs``: ``new`` in consecutive chunks, without bounding each chamber and its
  complement together (:mod:`relu_gating.search._kernels.mirror`: one GEMM for both);

their ratios, and the largest ``no cut / old`` bound ratio (looseness; the cut's bound is the
pilot's value, not an estimate).  With ``--query``
it also times the whole certified query ``best_neuron`` (enumeration included) at
n = 200, d = 3 and prints it as a multiple of the floor; ``--query-only`` runs only that, five
times in one process, and reports the first query of the process apart from the later ones.

Usage (the OpenBLAS kernel is reported; the project's environment pins an older one)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=. python benchmarks/bound_pass.py --query
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=. python benchmarks/bound_pass.py --query-only
    PYTHONPATH=. python benchmarks/bound_pass.py --quick
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

import relu_gating as rg
from relu_gating.search.objectives import (Objective, leverage_bounds, make_objective, pattern_matrices, pencil_values,
                                           support_bounds, with_rank)
from relu_gating.search.state import EXACT, PRUNED, UNSETTLED, PatternOutcome
from relu_gating.search._kernels import bound as kernel
from relu_gating.search._exact.pilot import pilot_value
from relu_gating.search._exact import tasks
from relu_gating.search._exact.tasks import _drop_excluded, chunk_bounds
from relu_gating.search._kernels.masked import MaskStack
from relu_gating.search._kernels.mirror import chunk_rows
from solvers import top_generalized_eig

#: name -> (n, d): m = d + 1 = 3, 4, 6
CASES = {"n600d2": (600, 2), "n200d3": (200, 3), "n40d5": (40, 5)}
QUICK = {"n100d2": (100, 2), "n60d3": (60, 3), "n20d5": (20, 5)}
CHUNK = 8192


def old_chunk_bounds(obj: Objective, index: np.ndarray, masks: np.ndarray, witnesses: np.ndarray,
                     tol: float, incumbent: float = -np.inf, mirrored: bool = False) -> PatternOutcome:
    """The bound pass of commit 8e3d2c2, verbatim but for the imports and the arguments it did not
    have (masks may come packed; ``incumbent`` and ``mirrored`` are ignored): the baseline."""
    masks = kernel.rows_bool(*kernel.unpacked(masks, obj.n), obj.n)
    k = index.size
    ms = MaskStack(masks)
    A, B = pattern_matrices(obj, ms)
    eig = top_generalized_eig(A, B)
    upper = np.minimum(np.minimum(leverage_bounds(obj, ms), eig.upper), obj.cap + 1e-12)
    if obj.Q_H is not None and not np.all(eig.reliable):
        bad = np.flatnonzero(~eig.reliable)
        upper[bad] = np.minimum(upper[bad], support_bounds(obj, masks[bad]))
    lower = np.where(eig.reliable, pencil_values(A, B, witnesses @ obj.to_coords.T), np.nan)
    thetas = witnesses.copy()
    status = np.full(k, UNSETTLED, dtype=np.int8)
    methods = [""] * k
    if obj.rank and np.any(eig.reliable):
        sz = (eig.vectors @ obj.Psi.T) * np.where(masks, 1.0, -1.0)
        scale = 1e-12 * (np.abs(sz).max(axis=1) + 1e-300)
        lo, hi = sz.min(axis=1), sz.max(axis=1)
        for sign in (1.0, -1.0):
            inside = ((lo >= -scale) if sign > 0 else (hi <= scale)) & eig.reliable
            rows = np.flatnonzero(inside)
            if rows.size == 0:
                continue
            vals = eig.values[rows]
            better = np.nan_to_num(vals, nan=-np.inf) > np.nan_to_num(lower[rows], nan=-np.inf)
            lower[rows[better]] = vals[better]
            thetas[rows[better]] = sign * (eig.vectors[rows[better]] @ obj.to_theta.T)
            tight = rows[eig.upper[rows] - eig.values[rows] <= 0.5 * tol]
            status[tight] = EXACT
            for r in tight.tolist():
                methods[r] = "spectral"
    _drop_excluded(obj, lower, thetas, status, methods)
    dead = ~np.any(masks, axis=1)
    upper = np.where(dead, 0.0, upper)
    status[dead] = PRUNED
    for r in np.flatnonzero(dead).tolist():
        methods[r] = "dead"
    return PatternOutcome(index=index, upper=upper, lower=lower, thetas=thetas, status=status, method=tuple(methods))


def make_case(n: int, d: int, seed: int = 0):
    """``(Phi, U_K)``: Gaussian samples, K = 4 kNN-Laplacian basis (seeded)."""
    X = np.random.default_rng(seed).normal(size=(n, d))
    U = rg.low_frequency_basis(rg.laplacian(rg.sample_graph(X, kind="knn")), 4).U_K
    return rg.layer_input(X), U


def floor_pass(Phi: np.ndarray, W: np.ndarray) -> None:
    PT = np.ascontiguousarray(Phi.T)
    for s in range(0, W.shape[0], CHUNK):
        np.packbits(W[s:s + CHUNK] @ PT > 0, axis=1)


def bound_pass(fn, obj, masks: np.ndarray, W: np.ndarray, incumbent: float = -np.inf, mirrored: int = 0) -> list:
    """``fn`` on the query's chunks (complementary pairs where ``mirrored``, the old pass ignores it)."""
    return [fn(obj, rows, masks[rows], W[rows], 1e-9, incumbent, pair)
            for rows, pair in chunk_rows(len(masks), mirrored, CHUNK)]


def new_pass(obj, packed: np.ndarray, W: np.ndarray, mirrored: int, cut: bool = True) -> list:
    """The query's bound pass: the pilot incumbent (:mod:`relu_gating.search._exact.pilot`), then every
    chunk from its packed masks; ``cut=False``: without certifying the incumbent's cut directly
    (every pattern estimated, as before that change); ``mirrored=0``: consecutive chunks."""
    saved = tasks.CUT_BELOW
    tasks.CUT_BELOW = tasks.CUT_BELOW if cut else np.inf
    try:
        return bound_pass(chunk_bounds, obj, packed, W, pilot_value(obj), mirrored)
    finally:
        tasks.CUT_BELOW = saved


def timed(f) -> float:
    """CPU seconds of ``f()`` (single-threaded BLAS: its compute time, whatever the load)."""
    t0 = time.process_time()
    f()
    return time.process_time() - t0


def run_case(name: str, n: int, d: int, repeats: int) -> None:
    Phi, U = make_case(n, d)
    ps = rg.enumerate_patterns(Phi)
    obj = with_rank(make_objective(Phi, U, "bias"), ps.rank)
    masks, W, N = ps.masks, ps.witnesses, len(ps)
    L = ps.n_mirrored
    t = {"floor": [], "old": [], "no cut": [], "no pairs": [], "new": []}
    for _ in range(repeats):
        t["floor"].append(timed(lambda: floor_pass(Phi, W)))
        t["old"].append(timed(lambda: bound_pass(old_chunk_bounds, obj, masks, W)))
        t["no cut"].append(timed(lambda: new_pass(obj, ps.packed, W, L, cut=False)))
        t["no pairs"].append(timed(lambda: new_pass(obj, ps.packed, W, 0)))
        t["new"].append(timed(lambda: new_pass(obj, ps.packed, W, L)))
    us = {k: 1e6 * statistics.median(v) / N for k, v in t.items()}
    old = np.concatenate([o.upper for o in bound_pass(old_chunk_bounds, obj, masks, W)])
    outs = new_pass(obj, ps.packed, W, L, cut=False)
    new = np.empty(N)
    for (rows, _), o in zip(chunk_rows(N, L, CHUNK), outs):
        new[rows] = o.upper
    fin = np.isfinite(old) & (old > 1e-12)
    loose = float(np.max(new[fin] / old[fin])) if fin.any() else float("nan")
    print(f"{name:8s} {d + 1:>2d} {N:>9,d} {us['floor']:8.3f} {us['old']:8.3f} {us['no cut']:8.3f} "
          f"{us['no pairs']:8.3f} {us['new']:8.3f} {us['old'] / us['new']:8.1f}x {us['new'] / us['floor']:8.1f}x "
          f"{loose:10.4f}", flush=True)


def run_query(n: int, d: int, repeats: int) -> None:
    """The whole certified query against the floor, ``repeats`` times in this process: every run's
    CPU seconds, the first query of the process and the median of the others (on this VM the first
    queries pay for memory the process has never touched: a few hundred MB of first touches)."""
    import resource

    Phi, U = make_case(n, d)
    tq, tf, out, faults = [], [], [], []
    for _ in range(repeats):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        tq.append(timed(lambda: out.append(rg.best_neuron(Phi, U, features="bias"))))
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
        wit = rg.enumerate_patterns(Phi).witnesses
        tf.append(timed(lambda w=wit: floor_pass(Phi, w)))
    res = out[0]
    q, f = statistics.median(tq), statistics.median(tf)
    later = statistics.median(tq[1:]) if repeats > 1 else q
    print(f"certified query n = {n}, d = {d}: {res.n_patterns:,d} patterns, {q:.2f} s CPU (median of {repeats}), "
          f"floor {f:.2f} s, {q / f:.1f}x the floor; first query of the process {tq[0]:.2f} s ({tq[0] / f:.1f}x), "
          f"median of the later ones {later:.2f} s ({later / f:.1f}x); every run: {', '.join(f'{t:.2f}' for t in tq)} "
          f"s, minor page faults {', '.join(f'{x:,d}' for x in faults)} "
          f"(value {res.value:.12f}, certified {res.certified}, {res.n_exact} exact; "
          f"wall seconds of the last run: {', '.join(f'{k} {v:.2f}' for k, v in res.seconds.items())})")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    ap.add_argument("--repeats", type=int, default=None, help="timed repeats (median; default 3, quick 1)")
    ap.add_argument("--query", action="store_true", help="also the whole certified query at n = 200, d = 3")
    ap.add_argument("--query-only", action="store_true", help="only the whole certified query (5 runs unless --repeats)")
    a = ap.parse_args(argv)
    cases = QUICK if a.quick else CASES
    repeats = a.repeats or (1 if a.quick else 3)
    blas = [(i["internal_api"], i.get("architecture"), i.get("version")) for i in threadpool_info()]
    print(f"BLAS {blas}, single-threaded; median of {repeats}; CPU microseconds per pattern")
    print(f"{'case':8s} {'m':>2s} {'patterns':>9s} {'floor':>8s} {'old':>8s} {'no cut':>8s} {'no pairs':>8s} {'new':>8s} "
          f"{'old/new':>9s} "
          f"{'new/floor':>9s} {'max new/old bound':>10s}")
    with threadpool_limits(limits=1, user_api="blas"):
        if a.query_only:
            run_query(200, 3, a.repeats or 5)
            return
        for name, (n, d) in cases.items():
            run_case(name, n, d, repeats)
        if a.query:
            run_query(200, 3, repeats)


if __name__ == "__main__":
    main()
