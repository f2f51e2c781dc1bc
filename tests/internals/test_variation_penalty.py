"""The residual's penalty ``M`` of the cone pricing's master LP is raised until the primal stops using it.

The master is ``min sum |a| + M ||r||_1``: with ``M`` too small its optimum writes part of ``v`` as the
residual ``r``, whose cost in the spanning atoms makes the upper end huge (moons, n = 400: 1,942 for a
norm near 11, stuck for 60 rounds).  ``M`` was raised only when an *unsmoothed* dual priced feasible,
which after the first pricing never happens (every later pricing is smoothed), so a small ``M`` stayed.
Here a tiny ``M`` is forced through the carry (the next norm's master is built with ``carry["M"]``).
Oracles: the LP over a dense sample of neurons and every witness (an upper end on the norm, so the
certified lower end lies below it), the decomposition itself (it must attain the upper end) and the certified dual checked on the dense sample.
"""

from __future__ import annotations

import numpy as np
import pytest

from relu_gating.layers import _master_lp
from relu_gating.layers.variation import normalized_neurons, variation_norm
from relu_gating.patterns import enumerate_patterns
from _variation_reference import dense_atoms, dyadic_phi, lp_upper


@pytest.mark.parametrize("M", [1e-3, 0.1])
def test_small_penalty_is_raised_until_the_interval_closes(monkeypatch, M):
    n = 20
    Phi = dyadic_phi(n, 11)
    pats = enumerate_patterns(Phi)
    v = np.sin(2 * Phi[:, 0]) + 0.5 * np.abs(Phi[:, 1])
    carry: dict = {}
    variation_norm(np.ones(n), Phi, patterns=pats, tol=1e-3, pricing="early", carry=carry)
    carry.pop("lp")  # the next master is built afresh, with the penalty below
    carry["M"] = M
    raised: list[float] = []
    set_penalty = _master_lp.MasterLP.set_penalty
    monkeypatch.setattr(_master_lp.MasterLP, "set_penalty", lambda lp, m: (raised.append(m), set_penalty(lp, m))[1])
    r = variation_norm(v, Phi, patterns=pats, tol=1e-3, pricing="early", carry=carry, max_iter=60)
    assert r.certified, (r.lower, r.upper, raised)  # main: [4.52, 4681] after 60 rounds, M raised once
    assert len(raised) >= 2 and carry["M"] == raised[-1] > 1.0
    Dd = dense_atoms(Phi, pats.witnesses)
    assert r.lower <= lp_upper(v, Dd) * (1 + 1e-9)
    D = normalized_neurons(Phi, r.thetas)[0]
    assert np.linalg.norm(D @ r.weights - v) <= 1e-6 * np.linalg.norm(v)
    assert np.abs(r.weights).sum() == pytest.approx(r.upper, rel=1e-9)
    assert np.abs(r.dual @ Dd).max() <= 1 + 1e-9 and r.dual @ v == pytest.approx(r.lower, rel=1e-9)
