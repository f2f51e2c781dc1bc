"""Interior points of a node's cone (private): hit-and-run samples that show which undecided
rows are free (their hyperplane cuts the cone's interior) without an LP."""

from __future__ import annotations

import numpy as np

__all__ = ["sample_interior", "SAMPLES"]

#: Hit-and-run steps per node expansion.
SAMPLES = 8


def sample_interior(G: np.ndarray, start: np.ndarray, rng: np.random.Generator, steps: int = SAMPLES,
                    margin: float = 1e-9) -> np.ndarray:
    """Points ``v`` with ``G v > margin ||v||`` (rows of ``G`` unit), from the rows of ``start``
    (interior points) by hit-and-run; the start points come first."""
    start = np.atleast_2d(start)
    pts = list(start / np.linalg.norm(start, axis=1)[:, None])
    r = pts[0].size
    cur = pts[-1]
    D = rng.standard_normal((steps, r))
    Bs = G @ D.T
    for t in range(steps):
        d = D[t]
        a, b = G @ cur, Bs[:, t]
        with np.errstate(divide="ignore", invalid="ignore"):
            hi = np.min(np.where(b < 0, a / -b, np.inf), initial=np.inf)
            lo = np.max(np.where(b > 0, -a / b, -np.inf), initial=-np.inf)
        cap = 2.0 / np.sqrt(d @ d)
        lo, hi = max(lo, -cap), min(hi, cap)
        if not hi > lo:
            continue
        w = cur + rng.uniform(lo + 1e-3 * (hi - lo), hi - 1e-3 * (hi - lo)) * d
        nw = np.sqrt(w @ w)
        if nw == 0 or (G.shape[0] and (G @ w).min() <= margin * nw):
            continue
        cur = w / nw
        pts.append(cur)
    return np.array(pts)
