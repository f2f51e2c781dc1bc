r"""Benchmark: what a greedy step could carry to the next as bounds, and how far its incumbent is (issue 39).

A greedy step ``t`` certifies ``max_h G_H(h)``; step ``t + 1`` maximizes ``G_{H'}`` with ``H' = [H, g]``,
``g = relu(Phi theta_t)``.  Can a node's bound of step ``t`` (``u >= G_H(h)`` on the node) plus a correction
that depends on the node only through ``u`` bound ``G_{H'}`` on it?  From the identity

.. math::

    G_{H'}(h) = G_H(h) + G_{[H, h]}(g) - G_H(g), \qquad G_{[H, h]}(g) \le s_K(H)^2,

``G_{H'}(h) <= u + s_K(H)^2 - G_H(g)`` (the *slack*).  No correction of ``u`` alone does better than

.. math::

    B(0) = \sup\{G_{H'}(h) : G_H(h) = 0\} = \frac{1 - p}{p}\, G_H(g), \qquad
    p = \frac{\|\Pi_M q\|^2}{\|q\|^2},\ q = (I - \Pi_H) g,\ M = (I - \Pi_H) U_K,

attained by ``h = (I - \Pi_{[H, M]}) q`` (``M^T h = 0`` and ``h \perp H``, so ``G_H(h) = 0``; of the unit
vectors with ``G_H = 0`` it has the largest cosine with ``q``, and ``G_{H'}(h) = c^2 G_H(g) / (1 - c^2)``
with ``c^2 = 1 - p``).  A node settles at step ``t + 1`` only when its claim is below the step's gain, so
when ``B(0)`` is at least the next gain no bound of that form settles any node whose vectors include such
an ``h`` (the bound must hold for all vectors with ``G_H <= u``; a neuron's cone may hold fewer).

Per step of a given layer (``--thetas``, an ``.npy`` of the layer's neurons, or a fresh layer): the gain,
``s_K(H)^2``, the slack, ``B(0)``, the next step's gain; then the incumbent's side: dense random neurons
(``--random``) and fixed-gating local search (``--starts``) on the step's features against the layer's gain.

Run::

    python benchmarks/greedy_carry.py --thetas layer_thetas.npy --random 200000 --starts 400
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _complement(Q: np.ndarray, Y: np.ndarray) -> np.ndarray:
    return Y - Q @ (Q.T @ Y)


def carry_floor(H: np.ndarray, g: np.ndarray, U: np.ndarray) -> dict:
    """``G_H(g)``, ``s_K(H)^2``, the slack ``s_K(H)^2 - G_H(g)`` and ``B(0)`` (module docstring), in floats."""
    Q = np.linalg.qr(H)[0]
    M = _complement(Q, U)
    q = _complement(Q, g[:, None])[:, 0]
    q /= np.linalg.norm(q)
    gain = float(np.linalg.norm(M.T @ q) ** 2)
    s2 = float(np.linalg.norm(M, 2) ** 2)
    QM = np.linalg.qr(M)[0]
    p = float(np.linalg.norm(QM.T @ q) ** 2)
    return {"gain": gain, "s2": s2, "slack": s2 - gain, "B0": (1 - p) / p * gain if p > 0 else float("inf"), "p": p}


def extremal(H: np.ndarray, g: np.ndarray, U: np.ndarray) -> np.ndarray:
    """The vector attaining ``B(0)``: ``(I - Pi_[H, M]) (I - Pi_H) g``."""
    Q = np.linalg.qr(H)[0]
    M = _complement(Q, U)
    q = _complement(Q, g[:, None])
    QHM = np.linalg.qr(np.c_[Q, np.linalg.qr(M)[0]])[0]
    return _complement(QHM, q)[:, 0]


def layer_thetas(Phi: np.ndarray, U: np.ndarray, steps: int, budget: float) -> np.ndarray:
    from relu_gating.layers.greedy import greedy_layer

    return greedy_layer(Phi, U, steps, max_seconds=budget).thetas


def incumbent_side(Phi: np.ndarray, U: np.ndarray, H: np.ndarray, n_random: int, starts: int) -> dict:
    from relu_gating.search.baselines import local_search, random_search

    t = time.process_time()
    r = random_search(Phi, U, features=H, n_samples=n_random, seed=0) if n_random else None
    t_r = time.process_time() - t
    t = time.process_time()
    ls = local_search(Phi, U, features=H, n_starts=starts, max_iter=50, seed=0) if starts else None
    return {"random": None if r is None else float(r.value), "cpu_random": t_r,
            "local": None if ls is None else float(ls.value), "cpu_local": time.process_time() - t}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="iris")
    ap.add_argument("--thetas", help=".npy of the layer's neurons (rows); default: a fresh layer")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--budget", type=float, default=600.0, help="each step's budget for a fresh layer")
    ap.add_argument("--random", type=int, default=0, help="random neurons per step (the incumbent's side)")
    ap.add_argument("--starts", type=int, default=0, help="local-search starts per step")
    ap.add_argument("--save")
    args = ap.parse_args(argv)
    from real import case_problem

    Phi, U, K, _ = case_problem(args.case)
    thetas = np.load(args.thetas) if args.thetas else layer_thetas(Phi, U, args.steps, args.budget)
    H = np.ones((Phi.shape[0], 1))
    rows = []
    for k, th in enumerate(thetas):
        g = np.maximum(Phi @ th, 0)
        row = {"step": k + 1, **carry_floor(H, g, U)}
        if args.random or args.starts:
            row.update(incumbent_side(Phi, U, H, args.random, args.starts))
        rows.append(row)
        H = np.c_[H, g]
    for k, row in enumerate(rows):
        row["next_gain"] = rows[k + 1]["gain"] if k + 1 < len(rows) else None
        print(json.dumps(row), flush=True)
    if args.save:
        Path(args.save).write_text(json.dumps({"argv": sys.argv[1:], "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
