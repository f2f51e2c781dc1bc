"""The branch and bound's incumbent: the best neuron found so far, and when it settles a bound (private).

A mixin of :class:`relu_gating.search.bnb._search.Search`: it uses ``obj``, ``alpha``, ``tol``,
``best_value`` and ``best_theta``.  Every value is recomputed from ``relu(Phi theta)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from relu_gating.search._exact.pilot import ascend
from relu_gating.search.objectives import neuron_values

__all__ = ["Incumbent"]


class Incumbent:
    """The incumbent's updates (:meth:`offer`, :meth:`ascend`) and the settling test (:meth:`settled`)."""

    obj: Any  # the search's (annotations only: a mixin defines no attribute another one provides)
    alpha: float
    tol: float
    best_value: float
    best_theta: Any

    def offer(self, theta: np.ndarray) -> None:
        """Take the best row of ``theta`` (one or several neurons) as the incumbent if its
        recomputed value is better."""
        thetas = np.atleast_2d(theta)
        vals = np.nan_to_num(neuron_values(self.obj, thetas), nan=-np.inf)
        k = int(np.argmax(vals))
        self._take(thetas[k], float(vals[k]))

    def _take(self, theta: np.ndarray, value: float) -> None:
        """``theta`` becomes the incumbent if its value (recomputed from ``relu(Phi theta)`` by the
        caller) is better."""
        if value > self.best_value:
            self.best_value, self.best_theta = float(value), np.asarray(theta, dtype=float).copy()

    def ascend(self, thetas: np.ndarray, steps: int = 3) -> None:
        """Offer the best of ``thetas`` after a few fixed-gating ascent steps from it
        (:func:`relu_gating.search._exact.pilot.ascend`, whose values are recomputed)."""
        vals = np.nan_to_num(neuron_values(self.obj, thetas), nan=-np.inf)
        k = int(np.argmax(vals))
        self._take(*ascend(self.obj, thetas[k], float(vals[k]), steps))

    def settled(self, u: float) -> bool:
        return self.best_value >= self.alpha * u - self.tol
