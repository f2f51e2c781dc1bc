r"""Benchmark: what the branch and bound's self-audit costs (the checker's walk of the finished tree,
:mod:`relu_gating.search.bnb._audit`), side by side with the search it audits, in one run.

For each instance (Gaussian samples, a kNN graph, K = 4, bias features; seeded): the search's
total seconds (audit included), the audit's own seconds (timed around ``audit_tree`` by wrapping
it), their ratio, the tree's nodes and how many leaf claims the audit raised.  Medians over
``--repeat`` runs.

Usage::

    python benchmarks/bnb_audit.py [--repeat 3] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np


def _instance(n: int, d: int, seed: int):
    import relu_gating as rg

    X = np.random.default_rng(seed).standard_normal((n, d))
    U = rg.low_frequency_basis(rg.laplacian(rg.sample_graph(X, kind="knn", n_neighbors=8)), 4).U_K
    return np.c_[X, np.ones(n)], U


def _run(Phi, U) -> tuple[float, float, int, int]:
    import relu_gating as rg
    from relu_gating.search.bnb import _api

    spent, raised = [0.0], [0]
    inner = _api.audit_tree

    def timed(obj, nodes):
        t = time.perf_counter()
        out = inner(obj, nodes)
        spent[0] += time.perf_counter() - t
        raised[0] += out[0]
        return out

    _api.audit_tree = timed
    try:
        t = time.perf_counter()
        r = rg.best_neuron(Phi, U, features="bias", strategy="branch-and-bound")
        total = time.perf_counter() - t
    finally:
        _api.audit_tree = inner
    return total, spent[0], len(r.tree["nodes"]), raised[0]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="small instances only")
    a = p.parse_args(argv)
    sizes = [(60, 3), (40, 4)] if a.quick else [(120, 3), (210, 3), (60, 4), (30, 6)]
    print(f"{'n x d':>8} {'nodes':>8} {'search s':>9} {'audit s':>8} {'audit/search':>12} {'raised':>6}")
    warnings.simplefilter("ignore")
    for n, d in sizes:
        Phi, U = _instance(n, d, seed=n * 10 + d)
        runs = [_run(Phi, U) for _ in range(a.repeat)]
        tot = statistics.median(r[0] for r in runs)
        aud = statistics.median(r[1] for r in runs)
        print(f"{n:>4} x {d:<2} {runs[0][2]:>8,} {tot:>9.2f} {aud:>8.2f} {aud / tot:>12.3f} {runs[0][3]:>6}")


if __name__ == "__main__":
    main()
