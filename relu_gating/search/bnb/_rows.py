"""Interior points of a node's cone (private): hit-and-run samples that show which undecided
rows are free (their hyperplane cuts the cone's interior) without an LP."""

from __future__ import annotations

import numpy as np

from relu_gating._inputs.scaling import pow2_norms, unit_rows

__all__ = ["sample_interior", "SAMPLES"]

#: Hit-and-run steps per node expansion.
SAMPLES = 8


def sample_interior(G: np.ndarray, start: np.ndarray, rng: np.random.Generator, steps: int = SAMPLES,
                    margin: float = 1e-9) -> np.ndarray:
    """Points ``v`` with ``G v > margin ||v||`` (rows of ``G`` unit), from the rows of ``start``
    (interior points) by hit-and-run; the start points come first.

    The slacks ``G v`` are carried along the walk (``G (v + t d) = G v + t G d``, one product for
    all directions) and every new point is checked directly at the end."""
    start = np.atleast_2d(start)
    pts = list(unit_rows(start))
    first = len(pts)
    cur = pts[-1]
    D = rng.standard_normal((steps, cur.size))
    Bs = (G @ D.T).T  # (steps, rows)
    a = G @ cur
    for t in range(steps):
        d, b = D[t], Bs[t]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = -a / b
        hi = np.min(ratio, where=b < 0, initial=np.inf)
        lo = np.max(ratio, where=b > 0, initial=-np.inf)
        cap = 2.0 / np.sqrt(d @ d)
        lo, hi = max(lo, -cap), min(hi, cap)
        if not hi > lo:
            continue
        tau = rng.uniform(lo + 1e-3 * (hi - lo), hi - 1e-3 * (hi - lo))
        w = cur + tau * d
        aw = a + tau * b
        nw = np.sqrt(w @ w)
        if nw == 0 or (aw.size and aw.min() <= margin * nw):
            continue
        cur, a = w / nw, aw / nw
        pts.append(cur)
    out = np.array(pts)
    if G.shape[0] and out.shape[0] > first:  # the carried slacks drift by rounding: check each new point
        ok = (G @ out[first:].T).min(axis=0) > margin * pow2_norms(out[first:], axis=1)
        out = np.concatenate([out[:first], out[first:][ok]])
    return out

