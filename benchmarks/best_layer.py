r"""Greedy against the best layer (issue 40): the best pair and triple of neurons found, against the
certified greedy layer and alpha < 1 greedy layers, with Thm 5.13's upper bound.

From the bias ``H_0 = [1]``, ``N_K([H_0, t neurons])`` for t = 1, 2, 3:

* greedy: ``greedy_layer`` at alpha = 1 (certified), 0.9 and 0.5 (each step certified at its alpha);
* best found: every pair of a candidate pool, scored exactly by the two-neuron update formula
  (Gram matrix of the pool's residuals against ``H_0``), then a beam of the best pairs times the
  pool for triples, and the best few of each polished jointly (Nelder-Mead on all weights).  The pool:
  ``--pool`` Gaussian random neurons (seed 0) plus the greedy layers' own neurons, and on the
  ``line`` instance every neuron ``relu(+-(x - a))`` with ``a`` at the data points and midpoints (in
  d = 1 every neuron is one of these up to scale, so the pair search there is exhaustive up to the
  position of ``a`` inside a gap between data points, which the polish then moves);
  a lower bound on the best layer of t neurons, not a certified optimum;
* upper bound: Thm 5.13, ``N_K(H_0) + sum_(i <= t) eta_i^2`` (no ReLU constraint).

Usage::

    python benchmarks/best_layer.py --instance moons --out benchmarks/results/experiments_best_layer/moons.json
    python benchmarks/best_layer.py --instance line --out benchmarks/results/experiments_best_layer/line.json
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


def instance(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """``X``, ``Phi``, ``U_K`` and a description.  ``moons``: the certification experiment's full run
    (two moons n = 40, K = 6, kNN 8, seed 0); ``line``: 30 points uniform on [0, 1] (seed 0), kNN 8, K = 3."""
    if name == "moons":
        from relu_gating.experiments.certification import moons_problem

        p = moons_problem(40, 6, seed=0)
        return p["X"], p["Phi"], p["U_K"], {"data": "two moons (certification experiment, full run)", "n": 40,
                                             "K": 6, "seed": 0}
    from relu_gating.data.io import InputData, resolve_problem
    from relu_gating.experiments._theory import dyadic

    x = dyadic(np.sort(np.random.default_rng(0).uniform(0, 1, 30)))[:, None]
    prob = resolve_problem(InputData(path="<line>", X=x), K=3)
    return x, prob.Phi, prob.U_K, {"data": "30 points uniform on [0, 1]", "n": 30, "K": 3, "seed": 0}


def captured(H: np.ndarray, U: np.ndarray) -> float:
    """``N_K(H) = ||Q^T U||_F^2`` with ``Q`` an orthonormal basis of ``col(H)`` (an SVD of the nonzero
    columns scaled to unit norm; an unpivoted QR dropped, after a zero column such as a dead neuron's, a
    direction the later columns need)."""
    nrm = np.linalg.norm(H, axis=0)
    ok = nrm > 0
    if not ok.any():
        return 0.0
    Q, s, _ = np.linalg.svd(H[:, ok] / nrm[ok], full_matrices=False)
    return float(np.sum((Q[:, s > 1e-10 * s.max()].T @ U) ** 2))


def layer_value(Phi: np.ndarray, U: np.ndarray, H0: np.ndarray, thetas: np.ndarray) -> float:
    return captured(np.c_[H0, np.maximum(Phi @ thetas.reshape(-1, Phi.shape[1]).T, 0.0)], U)


def pool_scores(Phi: np.ndarray, U: np.ndarray, H0: np.ndarray, thetas: np.ndarray) -> tuple:
    """Residuals of the pool against ``col(H_0)``: unit residuals ``R``, ``B = U^T R``, single gains."""
    Q = np.linalg.qr(H0)[0]
    C = np.maximum(Phi @ thetas.T, 0.0)
    Rr = C - Q @ (Q.T @ C)
    nr = np.linalg.norm(Rr, axis=0)
    ok = nr > 1e-8 * np.maximum(np.linalg.norm(C, axis=0), 1e-300)
    R = Rr[:, ok] / nr[ok]
    B = U.T @ R
    return R, B, np.sum(B**2, axis=0), thetas[ok]


def best_pairs(R: np.ndarray, B: np.ndarray, g: np.ndarray, top: int) -> list[tuple[float, int, int]]:
    """The ``top`` pairs by the exact two-neuron gain ``g_i + ||B(r_j - c r_i)||^2 / (1 - c^2)``."""
    C = R.T @ R
    Bd = B.T @ B
    den = 1.0 - C**2
    with np.errstate(divide="ignore", invalid="ignore"):
        second = (g[None, :] - 2 * C * Bd + C**2 * g[:, None]) / den
    total = np.where(den > 1e-10, g[:, None] + second, g[:, None])
    np.fill_diagonal(total, -np.inf)
    idx = np.argsort(total, axis=None)[::-1][: 2 * top]
    out, seen = [], set()
    for k in idx:
        i, j = divmod(int(k), total.shape[1])
        if i != j and np.isfinite(total[i, j]) and (min(i, j), max(i, j)) not in seen:
            seen.add((min(i, j), max(i, j)))
            out.append((float(total[i, j]), i, j))
    return out[:top]


def polish(Phi: np.ndarray, U: np.ndarray, H0: np.ndarray, start: np.ndarray, iters: int = 1500) -> np.ndarray:
    """Nelder-Mead on all weights of the layer, from ``start`` (rows: neurons)."""
    from scipy.optimize import minimize

    r = minimize(lambda v: -layer_value(Phi, U, H0, v), start.ravel(), method="Nelder-Mead",
                 options={"maxiter": iters, "xatol": 1e-10, "fatol": 1e-13})
    best = r.x if -r.fun >= layer_value(Phi, U, H0, start) else start.ravel()
    return best.reshape(start.shape)


def main(argv: list[str] | None = None) -> int:
    from relu_gating.coverage.bounds import ky_fan_limits
    from relu_gating.experiments._base import provenance
    from relu_gating.layers.greedy import greedy_layer

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instance", choices=("moons", "line"), required=True)
    ap.add_argument("--pool", type=int, default=2000)
    ap.add_argument("--beam", type=int, default=200)
    ap.add_argument("--polish", type=int, default=8)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    prov = provenance(sys.argv if argv is None else ["benchmarks/best_layer.py", *argv])
    X, Phi, U, desc = instance(a.instance)
    n, m = Phi.shape
    H0 = np.ones((n, 1))
    c0 = time.process_time()
    greedy = {}
    for alpha in (1.0, 0.9, 0.5):
        gl = greedy_layer(Phi, U, 3, initial=H0, alpha=alpha)
        greedy[str(alpha)] = {"N_K": [float(v) for v in gl.captured], "certified": bool(gl.certified),
                              "thetas": gl.thetas.tolist(),
                              "gain_over_bound": [float(v) for v in gl.gains / gl.upper_bounds]}
    rng = np.random.default_rng(0)
    thetas = [rng.standard_normal((a.pool, m))] + [np.asarray(v["thetas"]) for v in greedy.values()]
    if a.instance == "line":
        xs = np.sort(X[:, 0])
        knots = np.r_[xs, (xs[1:] + xs[:-1]) / 2]
        thetas.append(np.r_[np.c_[np.ones_like(knots), -knots], np.c_[-np.ones_like(knots), knots]])
    R, B, g, pool = pool_scores(Phi, U, H0, np.vstack(thetas))
    N0 = captured(H0, U)
    best = {1: (N0 + float(g.max()), pool[[int(np.argmax(g))]])}
    pairs = best_pairs(R, B, g, a.beam)
    best[2] = (N0 + pairs[0][0], pool[[pairs[0][1], pairs[0][2]]])
    triples = []
    for _, i, j in pairs:
        base = np.c_[H0, np.maximum(Phi @ pool[[i, j]].T, 0.0)]
        R3, B3, g3, _ = pool_scores(Phi, U, base, pool)
        k = int(np.argmax(g3))
        triples.append((captured(base, U) + float(g3[k]), np.vstack([pool[[i, j]], pool[[k]]])))
    triples.sort(key=lambda z: -z[0])
    best[3] = triples[0]
    found = {}
    for t in (1, 2, 3):
        starts = [best[t][1]] + ([pool[[p[1], p[2]]] for p in pairs[: a.polish]] if t == 2 else
                                 [z[1] for z in triples[: a.polish]] if t == 3 else [])
        starts += [np.asarray(v["thetas"])[:t] for v in greedy.values()]
        vals = [(layer_value(Phi, U, H0, s), s) for s in (polish(Phi, U, H0, s) for s in starts)]
        v, s = max(vals, key=lambda z: z[0])
        found[t] = {"pool_best": float(best[t][0]), "polished_best": float(v), "thetas": s.tolist()}
    eta = ky_fan_limits(H0, U)
    e2 = np.r_[np.asarray(eta.etas) ** 2, np.zeros(3)]
    rows = []
    for t in (1, 2, 3):
        rows.append({"t": t, "kyfan_upper": float(N0 + e2[:t].sum()), "best_found": found[t]["polished_best"],
                     "pool_best": found[t]["pool_best"],
                     **{f"greedy_alpha_{k}": v["N_K"][t] if t < len(v["N_K"]) else None for k, v in greedy.items()}})
        print(rows[-1], flush=True)
    out = {"provenance": {**prov, "load_start": prov["load_end"], "load_end": provenance()["load_end"]},
           "instance": a.instance, **desc, "pool": int(pool.shape[0]), "beam": a.beam, "polish": a.polish,
           "N_K_H0": N0, "rows": rows, "greedy": greedy, "found": found, "cpu_seconds": time.process_time() - c0}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
