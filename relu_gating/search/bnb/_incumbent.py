"""The branch and bound's incumbent: the best neuron found so far, and when it settles a bound (private).

A mixin of :class:`relu_gating.search.bnb._search.Search`: it uses ``obj``, ``alpha``, ``tol``,
``best_value`` and ``best_theta``.  Every value is recomputed from ``relu(Phi theta)``.  It also
keeps :attr:`Incumbent.pool`, the best neurons of distinct patterns it was offered (at most
:data:`POOL`): a greedy layer's next step starts from them (issue 39; they are only candidates there,
rescored under that step's features).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from relu_gating.search._exact.pilot import ascend
from relu_gating.search._exact.signs import scaled_products
from relu_gating.search.objectives import neuron_values

__all__ = ["Incumbent", "POOL"]

#: Neurons of distinct patterns kept in :attr:`Incumbent.pool`.
POOL = 16


class Incumbent:
    """The incumbent's updates (:meth:`offer`, :meth:`ascend`) and the settling test (:meth:`settled`)."""

    obj: Any  # the search's (annotations only: a mixin defines no attribute another one provides)
    alpha: float
    tol: float
    best_value: float
    best_theta: Any

    def offer(self, theta: np.ndarray, proven: float | None = None) -> None:
        """Take the best row of ``theta`` (one or several neurons) as the incumbent if its
        recomputed value is better.  ``proven``: the value of a single ``theta`` proven to 1e-10
        (:func:`relu_gating.search._value.reported_value`; a thin chamber's float products cancel)."""
        thetas = np.atleast_2d(theta)
        vals = np.nan_to_num(neuron_values(self.obj, thetas), nan=-np.inf)
        if proven is not None and len(vals) == 1 and np.isfinite(proven):
            vals[0] = proven
        k = int(np.argmax(vals))
        self._take(thetas[k], float(vals[k]))

    def _take(self, theta: np.ndarray, value: float) -> None:
        """``theta`` becomes the incumbent if its value (recomputed from ``relu(Phi theta)`` by the
        caller) is better; it enters the pool if it beats the pool's worst pattern."""
        if value > self.best_value:  # the incumbent's value proven to 1e-10 (else exact): a float value that
            from relu_gating.search._value import reported_value  # cancels (a thin chamber) settled nodes early

            proven = reported_value(self.obj, np.asarray(theta, dtype=float))[0]
            value = float(proven) if np.isfinite(proven) else -np.inf
        if value > self.best_value:
            self.best_value, self.best_theta = float(value), np.asarray(theta, dtype=float).copy()
        self._pool(theta, value)

    def _pool(self, theta: np.ndarray, value: float) -> None:
        """Keep ``theta`` among the :data:`POOL` best neurons of distinct patterns offered."""
        pool: dict = self.__dict__.setdefault("pool", {})
        if not np.isfinite(value) or (len(pool) >= POOL and value <= min(v for v, _ in pool.values())):
            return
        key = (scaled_products(self.obj.Phi, theta) > 0).tobytes()  # a multiple: no overflow
        if key in pool and pool[key][0] >= value:
            return
        pool[key] = (float(value), np.asarray(theta, dtype=float).copy())
        if len(pool) > POOL:
            del pool[min(pool, key=lambda k: pool[k][0])]

    def candidates(self) -> np.ndarray:
        """The pool's neurons, best first, shape (k, m)."""
        pool = sorted(self.__dict__.get("pool", {}).values(), key=lambda vt: -vt[0])
        return np.array([t for _, t in pool]).reshape(len(pool), self.obj.Phi.shape[1])

    def ascend(self, thetas: np.ndarray, steps: int = 3) -> None:
        """Offer the best of ``thetas`` after a few fixed-gating ascent steps from it
        (:func:`relu_gating.search._exact.pilot.ascend`, whose values are recomputed)."""
        vals = np.nan_to_num(neuron_values(self.obj, thetas), nan=-np.inf)
        k = int(np.argmax(vals))
        self._take(*ascend(self.obj, thetas[k], float(vals[k]), steps))

    def settled(self, u: float) -> bool:
        return self.best_value >= self.alpha * u - self.tol
