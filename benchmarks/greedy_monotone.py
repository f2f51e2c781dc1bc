r"""Finding (issue 39): the marginal gain of a fixed neuron is not monotone in the features.

If ``G_[H, g](h) <= G_H(h)`` held for every neuron ``h``, a greedy step's proven node bounds would be
valid caps at the next step, and the next step could start from the previous tree.  It does not hold:
on iris (``benchmarks/real.py``'s case, bias features) with ``g`` the first step's neuron from seeded
local search, this counts the Gaussian neurons ``h`` whose gain rises when ``g`` joins the features,
and the largest rise (float64; ``tests/internals/test_greedy_reuse.py`` shows a rise in exact rationals).

Run::

    python benchmarks/greedy_monotone.py --samples 20000
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real import case_problem  # noqa: E402


def gain(U: np.ndarray, H: np.ndarray, h: np.ndarray) -> float:
    """``G_H(h) = ||M^T h||^2 / ||(I - Pi_H) h||^2`` with ``M = (I - Pi_H) U`` (Prop 4.5)."""
    Q, _ = np.linalg.qr(H)
    r = h - Q @ (Q.T @ h)
    return float(np.sum((U.T @ r) ** 2) / (r @ r))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", default="iris")
    ap.add_argument("--samples", type=int, default=20_000)
    args = ap.parse_args(argv)
    from relu_gating.search.baselines import local_search

    Phi, U, K, _ = case_problem(args.case)
    H = np.ones((Phi.shape[0], 1))
    g = local_search(Phi, U, features=H, n_starts=20, max_iter=30, seed=0)
    H2 = np.c_[H, np.maximum(Phi @ g.theta, 0)]
    rises = []
    for theta in np.random.default_rng(0).standard_normal((args.samples, Phi.shape[1])):
        h = np.maximum(Phi @ theta, 0)
        if np.ptp(h) > 1e-9:
            a, b = gain(U, H, h), gain(U, H2, h)
            rises.append((b - a, a, b))
    r = np.array(rises)
    k = int(np.argmax(r[:, 0]))
    print(f"{args.case}: step-1 gain {g.value:.5f}; {np.mean(r[:, 0] > 1e-12):.2%} of {len(r):,} neurons gain more "
          f"after it; largest rise {r[k, 0]:.2e} ({r[k, 1]:.5f} -> {r[k, 2]:.5f})")


if __name__ == "__main__":
    main()
