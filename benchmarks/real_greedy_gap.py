r"""What certification changes on real data at d >= 3 (issue 40): sampling against the certified optimum,
per greedy step.

A scikit-learn data set (standardized, ``--dims`` principal components, a class-stratified subsample
of ``--n`` rows, ``relu_gating.data.real``), put on the 2^-16 grid; kNN graph (10 neighbours, the default),
combinatorial Laplacian, ``K`` the nearest to ``--K`` with a 5% relative spectral gap; a certified
greedy layer from the bias (``greedy_layer``, default strategy, ``--budget`` seconds a step).  At each
step ``t``, on the same features ``H_(t-1)``: the certified gain and its certified bound on ``G*``,
and the best of ``N`` Gaussian random neurons for each ``N`` in ``--random`` (seed 0;
``relu_gating.search.baselines.random_search``), uncertified; and each sampling method's own layer
(the best of ``N`` appended at every step), its final deficit against the certified layer's.

Usage::

    python benchmarks/real_greedy_gap.py --name wine --dims 3 --n 60 --K 4 --T 4 \
        --out benchmarks/results/experiments_real/wine_pca3_n60.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def problem(name: str, dims: int, n: int, K: int) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """``Phi``, ``U_K``, the ``K`` used and the Laplacian's eigenvalues."""
    from relu_gating.data.io import InputData, resolve_problem
    from relu_gating.data.real import real_dataset
    from relu_gating.experiments._theory import dyadic
    from relu_gating.experiments.greedy_rate import gap_K
    from relu_gating.spectral import laplacian, sample_graph

    X = dyadic(real_dataset(name, dims=dims, n=n, seed=0).X)
    X = X[np.sort(np.unique(X, axis=0, return_index=True)[1])]
    L = laplacian(sample_graph(X, kind="knn"), kind="combinatorial")
    ev = np.linalg.eigvalsh(L.toarray() if hasattr(L, "toarray") else np.asarray(L))
    K = gap_K([ev], K)
    prob = resolve_problem(InputData(path=f"<{name}>", X=X), K=K)
    return prob.Phi, prob.U_K, K, ev


def sampled_layer(Phi: np.ndarray, U: np.ndarray, T: int, N: int) -> list[float]:
    """Deficits of the layer that appends the best of ``N`` random neurons at each step (from the bias)."""
    from relu_gating.coverage.metrics import captured_features
    from relu_gating.search.baselines import random_search

    H = np.ones((Phi.shape[0], 1))
    out = [U.shape[1] - captured_features(H, U)]
    for t in range(T):
        r = random_search(Phi, U, features=H, n_samples=N, seed=t)
        H = np.c_[H, np.maximum(Phi @ r.theta, 0.0)]
        out.append(U.shape[1] - captured_features(H, U))
    return [float(v) for v in out]


def main(argv: list[str] | None = None) -> int:
    from relu_gating.experiments._base import provenance
    from relu_gating.layers.greedy import greedy_layer
    from relu_gating.search.baselines import random_search

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", choices=("iris", "wine", "breast-cancer"), required=True)
    ap.add_argument("--dims", type=int, default=3)
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--K", type=int, default=4)
    ap.add_argument("--T", type=int, default=4)
    ap.add_argument("--budget", type=float, default=600.0)
    ap.add_argument("--random", type=int, nargs="+", default=[200, 2000, 20000])
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    prov = provenance(sys.argv if argv is None else ["benchmarks/real_greedy_gap.py", *argv])
    Phi, U, K, ev = problem(a.name, a.dims, a.n, a.K)
    t0, c0 = time.perf_counter(), time.process_time()
    g = greedy_layer(Phi, U, a.T, initial=np.ones((Phi.shape[0], 1)), max_seconds=a.budget)
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    steps = []
    for t in range(1, g.deficit.size):
        H = g.features[:, :t]  # [1, the first t - 1 certified neurons]
        row = {"t": t, "gain": float(g.gains[t - 1]), "bound_G": float(g.upper_bounds[t - 1]),
               "certified": bool(g.gains[t - 1] >= g.upper_bounds[t - 1] - 1e-7)}
        for N in a.random:
            v = float(random_search(Phi, U, features=H, n_samples=N, seed=0).value)
            row[f"random_{N}"] = v
            row[f"random_{N}_shortfall"] = (float(g.gains[t - 1]) - v) / float(g.gains[t - 1])
        steps.append(row)
        print(row, flush=True)
    layers = {str(N): sampled_layer(Phi, U, a.T, N) for N in a.random}
    out = {"provenance": {**prov, "load_start": prov["load_end"], "load_end": provenance()["load_end"]},
           "name": a.name, "dims": a.dims, "n": int(Phi.shape[0]), "K": K, "K_requested": a.K,
           "lambda_K": float(ev[K - 1]), "lambda_K1": float(ev[K]), "T": a.T, "budget": a.budget,
           "greedy_seconds": secs, "greedy_cpu_seconds": cpu, "certified": bool(g.certified),
           "deficit": [float(v) for v in g.deficit], "steps": steps, "sampled_layers": layers}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
    print(json.dumps({k: out[k] for k in ("n", "K", "certified", "deficit", "sampled_layers")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
