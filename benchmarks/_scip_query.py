r"""SCIP (pyscipopt) on a global MINLP of the best-neuron query, for ``benchmarks/bnb.py``.

The query with ``features="bias"`` (``H = 1``):

.. math::

    \max_\theta G_H(h) = \frac{\|M^T h\|^2}{\|(I - \Pi_H) h\|^2},
    \quad h = \operatorname{relu}(\Phi\theta),\quad M = (I - \Pi_H) U_K .

The formulation is the box-free ("indicator") variant of ``benchmarks/best_neuron.py``, which
is exact without any knowledge of the optimum: ``theta`` free, ``s in {0,1}^n``,
``h in [0, sqrt 2]^n``, ``w = M^T h``, ``t``; maximise ``t`` subject to
``h_i >= phi_i theta``, ``h_i <= sqrt(2) s_i``, ``s_i = 1 => h_i <= phi_i theta`` (indicator),
so ``h = relu(Phi theta)``; ``||h - mean(h) 1||^2 <= 1`` (scale); ``sum s <= n - 1`` (WLOG a
row is inactive: lowering the bias shifts ``h`` by a constant, which changes neither ``M^T h``
nor ``(I - Pi_H) h``; then every ``h_i <= sqrt 2``); ``0 <= t <= ||w||^2``, ``t <= 1``.
Every feasible point is a genuine neuron and every neuron has a feasible rescaling with the same
gain, so SCIP's dual bound is an upper bound on the optimum (up to SCIP's tolerances) and its
primal value is an uncertified lower bound.  The value reported is ``G`` recomputed at SCIP's
``theta`` (``neuron_values``), never SCIP's own objective, which carries its feasibility slack.
SCIP runs single-threaded (``parallel/maxnthreads = 1``, ``lp/threads = 1``) with a fixed seed.
``python benchmarks/best_neuron.py --selfcheck`` checks this formulation against brute force.
"""

from __future__ import annotations

import time

import numpy as np


def scip_query(Phi, U_K, *, time_limit: float, seed: int = 0) -> dict:
    """Run SCIP on the query (``features="bias"``); JSON-ready dict of its outcome.

    The model is ``benchmarks/best_neuron.py``'s indicator formulation (``scip_best_neuron``).
    Keys: ``value`` (G at SCIP's theta, recomputed; NaN without a solution), ``theta`` (list or
    None), ``scip_primal`` (SCIP's own objective), ``dual_bound``, ``gap``, ``status``,
    ``seconds`` (wall, model build excluded), ``build_seconds``, ``nodes``, ``version``.
    """
    import pyscipopt

    from best_neuron import scip_best_neuron

    t0 = time.perf_counter()
    r = scip_best_neuron(np.asarray(Phi, float), U_K, "bias", time_limit=time_limit, indicator=True,
                         params={"parallel/maxnthreads": 1, "lp/threads": 1, "randomization/randomseedshift": int(seed)})
    total = time.perf_counter() - t0
    theta = r["theta"]
    return {"value": r["value"], "theta": None if theta is None else np.asarray(theta).tolist(),
            "scip_primal": r["primal"], "dual_bound": r["dual"], "gap": r["gap"], "status": r["status"],
            "seconds": r["seconds"], "build_seconds": total - r["seconds"], "nodes": r["nodes"],
            "version": str(getattr(pyscipopt, "__version__", "?"))}
