"""An incumbent before the bound pass: random neurons and a few fixed-gating ascents (private).

The bound pass tightens the bounds of the patterns that could still beat the best
value known (:func:`relu_gating.search._exact.tasks.chunk_bounds`).  With only the best
witness of its own chunk to go by, a chunk tightens 20-40% of its patterns; a
value near the optimum known from the start cuts that to a few percent.  This
module finds one cheaply and independently of the enumeration (so the streamed
and the parallel searches use the same one, whatever the number of workers):
the best of ``samples`` seeded Gaussian neurons, then from the best few the
ascent of Rem 5.11 (move to the top generalized eigenvector of the pattern's
pencil, cone dropped; keep it if the neuron is better).

The value is recomputed from ``relu(Phi theta)`` (:func:`neuron_values`, which
returns ``nan`` for an excluded neuron), so it is attained: using it as a
threshold never prunes a pattern the search would otherwise open.
"""

from __future__ import annotations

import numpy as np

from relu_gating.search.objectives import Objective, neuron_values, pattern_matrices
from solvers import top_generalized_eig

__all__ = ["pilot_value", "ascend", "PILOT_SAMPLES", "PILOT_STARTS", "PILOT_STEPS"]

#: Random neurons, ascent starts (the best of them) and ascent steps per start.
PILOT_SAMPLES = 4096
PILOT_STARTS = 8
PILOT_STEPS = 6


def _values(obj: Objective, thetas: np.ndarray) -> np.ndarray:
    return np.nan_to_num(neuron_values(obj, thetas), nan=-np.inf)


def ascend(obj: Objective, theta: np.ndarray, value: float, steps: int = PILOT_STEPS) -> tuple[np.ndarray, float]:
    """Fixed-gating ascent (Rem 5.11) from ``theta`` of value ``value``: move to the top generalized
    eigenvector of its pattern's pencil (either sign) while that improves, at most ``steps`` times;
    the best ``(theta, value)`` met (values recomputed from ``relu(Phi theta)``)."""
    for _ in range(steps):
        A, B = pattern_matrices(obj, (obj.Phi @ theta > 0)[None])
        eig = top_generalized_eig(A, B)
        if not eig.reliable[0]:
            break
        t = obj.to_theta @ eig.vectors[0]
        cands = np.array([t, -t])
        vals = _values(obj, cands)
        j = int(np.argmax(vals))
        if not vals[j] > value + 1e-15:
            break
        theta, value = cands[j], float(vals[j])
    return theta, value


def pilot_value(obj: Objective, seed: int = 0, samples: int = PILOT_SAMPLES) -> float:
    """An attained value of ``obj`` (``-inf`` if none was found): see the module docstring."""
    rng = np.random.default_rng(seed)
    T = rng.standard_normal((samples, obj.Phi.shape[1]))
    vals = _values(obj, T)
    best = float(vals.max()) if vals.size else -np.inf
    for j in np.argsort(-vals)[:PILOT_STARTS].tolist():
        if np.isfinite(vals[j]):
            best = max(best, ascend(obj, T[j], float(vals[j]))[1])
    return best
