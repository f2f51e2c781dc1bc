r"""Benchmark: :func:`solvers.cone_dual` (clarabel called directly) against a cvxpy
formulation of the same SDP,

.. math::

    \min_{u, N}\ u \quad\text{s.t.}\quad u B - A - H^T N H \succeq 0,\ N = N^T \ge 0,

on the same seeded gating problems: ``A = Phi^T S P S Phi``, ``B = Phi^T S Phi``,
``G = (2S - I) Phi`` (``Phi = [X, 1]``, ``P`` a random rank-K projector, some
``B`` singular), ``H`` the facet rows of ``G``, ``m`` cycling through 3..6.

Each solver is timed per problem (best of ``--repeats`` calls; the cvxpy
problem is rebuilt every call, as it would be per pattern); printed: the
median and 90th percentile of ms per call, the bound each one certifies
(both recomputed from their ``N`` by :func:`solvers.dual.certified_upper`)
against the exact optimum (``faces``), and ``cone_dual`` with
``target=`` the exact optimum (the SDP is skipped when the cone-free bound
already meets it).

Usage::

    python benchmarks/cone_dual.py            # 50 problems, best of 3
    python benchmarks/cone_dual.py --quick    # 10 problems, 1 call each
"""

from __future__ import annotations

import argparse
import functools
import pathlib
import sys
import time
import warnings
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import solvers  # noqa: E402 - after the path setup
from solvers.dual import certified_upper  # noqa: E402

#: The cvxpy formulation's clarabel tolerances (those of cone_dual).
CVXPY_SETTINGS = {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9, "tol_feas": 1e-9}
#: A bound counts as tight when ``upper <= opt * (1 + TIGHT_RTOL) + TIGHT_ATOL``.
TIGHT_RTOL, TIGHT_ATOL = 1e-7, 1e-9


def make_problems(count: int, seed: int = 0, K: int = 3) -> list[tuple[np.ndarray, ...]]:
    """``count`` gating problems ``(A, B, G, facet_rows)`` with at least one facet."""
    out = []
    k = 0
    while len(out) < count:
        m = 3 + len(out) % 4
        rng = np.random.default_rng([seed, k])
        k += 1
        n = int(rng.integers(m + 2, 4 * m))
        Phi = np.c_[rng.standard_normal((n, m - 1)), np.ones(n)]
        S = (Phi @ rng.standard_normal(m) > 0).astype(float)
        if not S.any():
            continue
        U, _ = np.linalg.qr(rng.standard_normal((n, min(K, n))))
        SPhi = S[:, None] * Phi
        G = (2 * S - 1)[:, None] * Phi
        out.append((SPhi.T @ U @ U.T @ SPhi, SPhi.T @ SPhi, G, solvers.facet_rows(G)))
    return out


def cvxpy_dual(A: np.ndarray, B: np.ndarray, G: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The same SDP through cvxpy (a fresh problem): the multiplier ``N`` (p x p)."""
    import cvxpy as cp

    H = G[rows]
    u = cp.Variable()
    Nv = cp.Variable((len(rows), len(rows)), symmetric=True)
    S = u * B - A - H.T @ Nv @ H
    prob = cp.Problem(cp.Minimize(u), [Nv >= 0, 0.5 * (S + S.T) >> 0])
    N = np.zeros((G.shape[0], G.shape[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            prob.solve(solver="CLARABEL", **CVXPY_SETTINGS)
        except Exception:  # noqa: BLE001 - a failure certifies the cone-free bound (N = 0)
            return N
    if Nv.value is not None:
        N[np.ix_(rows, rows)] = Nv.value
    return N


def best_time(fn, repeats: int) -> tuple[float, Any]:
    """Best wall time in ms over ``repeats`` calls, and the last result."""
    best, out = np.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return 1e3 * best, out


def _summary(name: str, ms: list[float], ups: list[float], opts: list[float]) -> str:
    ups_a, opts_a = np.asarray(ups), np.asarray(opts)
    tight = ups_a <= opts_a * (1 + TIGHT_RTOL) + TIGHT_ATOL
    gap = np.where(np.isfinite(ups_a), (ups_a - opts_a) / np.abs(opts_a), np.inf)
    return (f"{name:28s} median {np.median(ms):6.2f} ms   p90 {np.percentile(ms, 90):6.2f} ms   "
            f"tight {tight.sum():3d}/{tight.size}   max rel gap {gap.max():.1e}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="10 problems, 1 call each")
    ap.add_argument("--problems", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    count, repeats = (10, 1) if args.quick else (args.problems, args.repeats)
    probs = make_problems(count, args.seed)
    cvxpy_dual(*probs[0])  # import cvxpy and warm up both paths before timing
    solvers.cone_dual(probs[0][0], probs[0][1], probs[0][2], rows=probs[0][3])
    res: dict[str, tuple[list, list]] = {k: ([], []) for k in ("cone_dual", "cvxpy", "cone_dual(target=opt)")}
    opts = []
    for A, B, G, rows in probs:
        opt = solvers.solve(solvers.ConeEigProblem(A, B, G), method="faces").upper
        opts.append(opt)
        ms, d = best_time(functools.partial(solvers.cone_dual, A, B, G, rows=rows), repeats)
        res["cone_dual"][0].append(ms)
        res["cone_dual"][1].append(d.upper)
        ms, N = best_time(functools.partial(cvxpy_dual, A, B, G, rows), repeats)
        res["cvxpy"][0].append(ms)
        res["cvxpy"][1].append(min(certified_upper(A, B, G, N), certified_upper(A, B, G, 0 * N)))
        ms, d = best_time(functools.partial(solvers.cone_dual, A, B, G, rows=rows, target=opt), repeats)
        res["cone_dual(target=opt)"][0].append(ms)
        res["cone_dual(target=opt)"][1].append(d.upper)
    sizes = [len(r) for *_, r in probs]
    singular = sum(np.linalg.eigvalsh(B)[0] <= 1e-10 * np.linalg.eigvalsh(B)[-1] for _, B, _, _ in probs)
    print(f"{len(probs)} problems, m = 3..6, facet rows {min(sizes)}..{max(sizes)} (median {np.median(sizes):.0f}), "
          f"{singular} with singular B; best of {repeats} call(s) each")
    for name, (ms, ups) in res.items():
        print(_summary(name, ms, ups, opts))
    print(f"speed-up cvxpy / cone_dual (medians): {np.median(res['cvxpy'][0]) / np.median(res['cone_dual'][0]):.1f}x")


if __name__ == "__main__":
    main()
