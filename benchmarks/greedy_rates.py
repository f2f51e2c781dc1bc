r"""Greedy rates with error bars (issue 40): log-log exponents of the deficit against t over seeds.

For each family and seed, a certified greedy layer from the bias (``alpha = 1`` requested; the
ratio actually proven, ``alpha_eff = min gain / certified bound``, is what Thm 5.10 may use).
Recorded per step: ``delta_t``, ``s_t^2``, the unconstrained Thm 5.13 benchmark (``sum_{i>t} eta_i^2``
and ``eta_(t+1)^2`` of ``H_0``) and, for the one-dimensional families, Thm 5.10's bounds with a
certified ``(kappa, eps)`` pair from an explicit decomposition (:func:`explicit_pair`).

The exponent of a seed is the least-squares slope of ``log delta_t`` against ``log t`` over
``t = 1..T`` (steps with ``delta_t > 1e-12``); the interval is the two-sided 95% Student t-interval
of the per-seed slopes (``mean +- t_(0.975, S-1) sd / sqrt(S)``, S seeds).

Families (data on the 2^-16 grid, kNN graph of 10 neighbours (the default), combinatorial Laplacian, ``K`` the
nearest to the requested one where every seed's spectrum has a 5% relative gap):

* ``moons``: two moons (noise 0.1), d = 2;
* ``line``: ``n`` points uniform on [0, 1], d = 1 (smooth low eigenvectors: small kappa up to eps);
* ``two-clusters``: two clusters of width 0.1 at 0 and 1 on a line, d = 1, K = 2 (kappa near sqrt 2).

Usage::

    python benchmarks/greedy_rates.py --family line --n 200 --K 3 --T 10 --seeds 0 1 2 3 4 \
        --out benchmarks/results/experiments_rates/rates.json --append
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

#: Relative margin added to the float (kappa, eps) of :func:`explicit_pair`: far above the rounding
#: error of its sums (n * 2^-53 relative for n <= 10^4), so the pair stays valid.
MARGIN = 1e-6


def data(family: str, n: int, seed: int) -> np.ndarray:
    """The samples ``X`` (n, d) of a family, on the 2^-16 grid."""
    from relu_gating.data.datasets import two_moons
    from relu_gating.experiments._theory import dyadic

    rng = np.random.default_rng(seed)
    if family == "moons":
        return dyadic(two_moons(n, noise=0.1, seed=seed))
    if family == "line":
        return dyadic(np.sort(rng.uniform(0.0, 1.0, n)))[:, None]
    if family == "two-clusters":
        c = rng.integers(0, 2, n)
        return dyadic(np.sort(c + rng.uniform(-0.05, 0.05, n)))[:, None]
    raise ValueError(f"unknown family {family!r}")


def problem(family: str, n: int, K: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``X``, ``Phi = [X, 1]``, ``U_K`` and the Laplacian's eigenvalues (ascending)."""
    from relu_gating.data.io import InputData, resolve_problem
    from relu_gating.spectral import laplacian, sample_graph

    X = data(family, n, seed)
    L = laplacian(sample_graph(X, kind="knn"), kind="combinatorial")
    ev = np.linalg.eigvalsh(L.toarray() if hasattr(L, "toarray") else np.asarray(L))
    prob = resolve_problem(InputData(path=f"<{family}>", X=X), K=K)
    return X, prob.Phi, prob.U_K, ev


def explicit_pair(x: np.ndarray, U: np.ndarray, knots: np.ndarray) -> tuple[float, float]:
    r"""A valid ``(kappa, eps)`` for ``span(U)`` on a line from atoms at ``knots`` (Definition 5.8).

    Atoms ``D``: the constant and ``relu(x - a)``, ``relu(a - x)`` for each knot, normalized (each a
    normalized neuron of ``Phi = [x, 1]``).  ``P = Pi_D U`` is written ``P = D W`` with each column of
    ``W`` of least l1 norm (a linear program), and ``R = U - P``.  Every unit ``u = U c`` splits as
    ``D W c + R c`` with ``||D W c||_A <= ||W c||_1``, at most ``sum_j ||W_j||`` (rows of ``W``) and
    at most ``sum_k |c_k| ||w_k||_1 <= sqrt(sum_k ||w_k||_1^2)`` (columns), and ``||R c|| <= ||R||_2``:
    so ``kappa`` = the smaller of the two and ``eps = ||R||_2`` are valid.  Float, each
    raised by :data:`MARGIN` (relative) plus the LP's equality residual (absolute, into ``eps``).
    """
    from scipy.optimize import linprog

    cols = [np.ones_like(x)] + [np.maximum(s * (x - a), 0.0) for a in knots for s in (1.0, -1.0)]
    D = np.column_stack([c for c in cols if np.linalg.norm(c) > 0])
    D = D / np.linalg.norm(D, axis=0)
    Q, r, piv = __import__("scipy.linalg", fromlist=["qr"]).qr(D, mode="economic", pivoting=True)
    rank = int(np.sum(np.abs(np.diag(r)) > 1e-10 * abs(r[0, 0])))
    P = Q[:, :rank] @ (Q[:, :rank].T @ U)
    m = D.shape[1]
    W = np.zeros((m, U.shape[1]))
    for k in range(U.shape[1]):
        res = linprog(np.ones(2 * m), A_eq=np.c_[D, -D], b_eq=P[:, k], bounds=(0, None), method="highs")
        W[:, k] = res.x[:m] - res.x[m:] if res.status == 0 else np.linalg.lstsq(D, P[:, k], rcond=None)[0]
    R = U - D @ W  # the LP's residual against P is inside R: eps stays valid
    kappa = float(min(np.linalg.norm(W, axis=1).sum(), np.linalg.norm(np.abs(W).sum(axis=0))))
    eps = float(np.linalg.norm(R, 2))
    return kappa * (1 + MARGIN), eps * (1 + MARGIN) + 1e-12


def best_pair(x: np.ndarray, U: np.ndarray, K: int, knot_counts: tuple = (2, 4, 8, 16, 32, 64)) -> dict:
    """Knots at ``m`` quantiles of ``x`` for each ``m``: the pair with the smallest Thm 5.10 constant
    among those with ``2 eps < 0.1`` (all pairs are recorded; Thm 5.10 holds for each)."""
    rows = []
    xs = np.sort(x)
    for m in knot_counts:
        knots = np.unique(xs[np.linspace(0, xs.size - 1, m + 2).round().astype(int)[1:-1]])
        kap, eps = explicit_pair(x, U, knots)
        rows.append({"knots": m, "kappa": kap, "eps": eps, "C": 4 * K**2 * kap**2})
    ok = [r for r in rows if 2 * r["eps"] < 0.1] or rows
    return {"pairs": rows, "chosen": min(ok, key=lambda r: r["C"])}


def slope(t: np.ndarray, y: np.ndarray) -> float | None:
    """Least-squares slope of ``log y`` against ``log t`` over the entries with ``y > 1e-12`` (None if < 2)."""
    keep = y > 1e-12
    if keep.sum() < 2:
        return None
    return float(np.polyfit(np.log(t[keep]), np.log(y[keep]), 1)[0])


def t_interval(values: list[float], level: float = 0.95) -> tuple[float, float, float]:
    """Mean and the two-sided Student t-interval of ``values`` (nan half-width for one value)."""
    from scipy import stats

    v = np.asarray(values, dtype=float)
    m = float(v.mean())
    if v.size < 2:
        return m, math.nan, math.nan
    h = float(stats.t.ppf(0.5 + level / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return m, m - h, m + h


def one_run(family: str, n: int, K: int, T: int, seed: int) -> dict:
    """One certified greedy layer from the bias with its Thm 5.13 benchmark and Thm 5.10 bounds."""
    from relu_gating.coverage.bounds import ky_fan_limits
    from relu_gating.experiments._theory import gap_bound, rate_bound
    from relu_gating.layers.greedy import greedy_layer

    X, Phi, U, ev = problem(family, n, K, seed)
    t0, c0 = time.perf_counter(), time.process_time()
    H0 = np.ones((n, 1))
    g = greedy_layer(Phi, U, T, initial=H0)
    eta = ky_fan_limits(H0, U)
    sv2 = np.r_[np.asarray(eta.etas, dtype=float) ** 2, np.zeros(T + 1)]
    alpha = float(np.min(g.gains / g.upper_bounds)) if g.gains.size else 1.0
    pair = best_pair(X[:, 0], U, K) if X.shape[1] == 1 else None
    steps = []
    for t in range(g.deficit.size):
        row = {"t": t, "delta": float(g.deficit[t]), "s2": float(g.gap[t] ** 2),
               "kyfan_delta": float(sv2[t:].sum()), "eta_next2": float(eta.gap_bound(t) ** 2),
               "gain": float(g.gains[t - 1]) if t else None, "bound_G": float(g.upper_bounds[t - 1]) if t else None}
        if pair is not None:
            kap, eps = pair["chosen"]["kappa"], pair["chosen"]["eps"]
            row["rate_bound"] = rate_bound(float(g.deficit[0]), t, K, kap, alpha)
            row["s2_bound"] = gap_bound(t, K, kap, alpha, eps) if t else None
            row["applies"] = bool(all(g.gap[: t + 1] >= 2 * eps))
        steps.append(row)
    for t in range(1, g.deficit.size):  # Rem 5.14: a single neuron lowers s_K only if eta_1 of M_(H_(t-1)) is simple
        sv = top_singular_values(g.features[:, :t], U)
        steps[t]["eta1_multiplicity_prev"] = int(np.sum(sv >= sv[0] - 1e-9))
        steps[t]["s_fell"] = bool(g.gap[t] < g.gap[t - 1] - 1e-9)
    ts = np.arange(1, g.deficit.size, dtype=float)
    return {"family": family, "n": n, "K": K, "T": T, "seed": seed, "lambda_K": float(ev[K - 1]),
            "lambda_K1": float(ev[K]), "alpha_eff": alpha, "certified": bool(g.certified),
            "steps_certified": int(np.sum(g.gains >= g.upper_bounds - 1e-7)), "steps": steps, "pair": pair,
            "slope_delta": slope(ts, g.deficit[1:]), "slope_s2": slope(ts, g.gap[1:] ** 2),
            "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}


def top_singular_values(H: np.ndarray, U: np.ndarray) -> np.ndarray:
    """Singular values (descending) of ``M_H = (I - Pi_H) U``."""
    Q, r = np.linalg.qr(H)
    Q = Q[:, np.abs(np.diag(r)) > 1e-10 * max(1.0, float(np.abs(r).max()))]
    return np.linalg.svd(U - Q @ (Q.T @ U), compute_uv=False)


def rem514_violations(run: dict) -> list[str]:
    """Steps where ``s_t`` fell although ``eta_1`` of ``M_(H_(t-1))`` was not simple (Rem 5.14 forbids it)."""
    return [f"t = {r['t']}: s fell with eta_1 of multiplicity {r['eta1_multiplicity_prev']}"
            for r in run["steps"] if r.get("s_fell") and r.get("eta1_multiplicity_prev", 1) > 1]


def bound_violations(run: dict) -> list[str]:
    """Steps where a Thm 5.10 bound that applies is exceeded (empty: the bound holds on this run)."""
    bad = []
    for r in run["steps"]:
        if "rate_bound" not in r or not r["applies"]:
            continue
        if r["delta"] > r["rate_bound"] + 1e-9:
            bad.append(f"t = {r['t']}: delta {r['delta']:.4g} > {r['rate_bound']:.4g}")
        if r["t"] and r["s2"] > r["s2_bound"] + 1e-9:
            bad.append(f"t = {r['t']}: s^2 {r['s2']:.4g} > {r['s2_bound']:.4g}")
    return bad


def main(argv: list[str] | None = None) -> int:
    from relu_gating.experiments._base import provenance
    from relu_gating.experiments.greedy_rate import gap_K

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", choices=("moons", "line", "two-clusters"), required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--K", type=int, required=True)
    ap.add_argument("--T", type=int, default=8)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--append", action="store_true", help="add to the runs already in --out")
    a = ap.parse_args(argv)
    K = gap_K([problem(a.family, a.n, 1, s)[3] for s in a.seeds], a.K)
    saved = json.loads(a.out.read_text()) if a.append and a.out.exists() else {"runs": [], "commands": []}
    saved["commands"].append(provenance(sys.argv if argv is None else ["benchmarks/greedy_rates.py", *argv]))
    a.out.parent.mkdir(parents=True, exist_ok=True)
    for s in a.seeds:
        r = one_run(a.family, a.n, K, a.T, s)
        r["provenance_end"] = provenance()
        saved["runs"].append(r)
        a.out.write_text(json.dumps(saved, indent=1))  # partial results saved as they come
        print(f"{a.family} n={a.n} K={K} seed={s}: slope {r['slope_delta']}, certified {r['steps_certified']}/"
              f"{len(r['steps']) - 1}, {r['cpu_seconds']:.1f} s CPU; violations {bound_violations(r)}"
              f" {rem514_violations(r)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
