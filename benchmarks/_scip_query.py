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

    Keys: ``value`` (G at SCIP's theta, recomputed; NaN without a solution), ``theta`` (list or
    None), ``scip_primal`` (SCIP's own objective), ``dual_bound``, ``gap``, ``status``,
    ``seconds`` (wall, model build excluded), ``build_seconds``, ``nodes``, ``version``.
    """
    import pyscipopt
    from pyscipopt import Model, quicksum

    from relu_gating.search.objectives import make_objective, neuron_values

    Phi = np.asarray(Phi, float)
    n, m = Phi.shape
    t0 = time.perf_counter()
    obj = make_objective(Phi, U_K, "bias")
    Mm = obj.M[:, np.linalg.norm(obj.M, axis=0) > 1e-12]
    hmax = float(np.sqrt(2.0))
    mod = Model("best_neuron_reach")
    mod.hideOutput()
    mod.setParam("limits/time", float(time_limit))
    mod.setParam("parallel/maxnthreads", 1)
    mod.setParam("lp/threads", 1)
    mod.setParam("randomization/randomseedshift", int(seed))
    th = [mod.addVar(f"theta{j}", lb=None, ub=None) for j in range(m)]
    h = [mod.addVar(f"h{i}", lb=0.0, ub=hmax) for i in range(n)]
    s = [mod.addVar(f"s{i}", vtype="B") for i in range(n)]
    for i in range(n):
        z = quicksum(float(Phi[i, j]) * th[j] for j in range(m) if Phi[i, j] != 0)
        mod.addCons(h[i] >= z)
        mod.addCons(h[i] <= hmax * s[i])
        mod.addConsIndicator(h[i] - z <= 0, binvar=s[i])
    wb = np.abs(Mm).sum(axis=0) * hmax
    w = [mod.addVar(f"w{k}", lb=-wb[k], ub=wb[k]) for k in range(Mm.shape[1])]
    for k in range(Mm.shape[1]):
        mod.addCons(w[k] == quicksum(float(Mm[i, k]) * h[i] for i in range(n) if Mm[i, k] != 0))
    mu = mod.addVar("mu", lb=0.0, ub=hmax)
    y = [mod.addVar(f"y{i}", lb=-hmax, ub=hmax) for i in range(n)]
    mod.addCons(n * mu == quicksum(h))
    for i in range(n):
        mod.addCons(y[i] == h[i] - mu)
    mod.addCons(quicksum(yi * yi for yi in y) <= 1)
    mod.addCons(quicksum(s) <= n - 1)
    t = mod.addVar("t", lb=0.0, ub=1.0)
    mod.addCons(t <= quicksum(wk * wk for wk in w))
    mod.setObjective(t, "maximize")
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    mod.optimize()
    sec = time.perf_counter() - t0
    theta, value = None, float("nan")
    if mod.getNSols() > 0:
        sol = mod.getBestSol()
        theta = np.array([mod.getSolVal(sol, v) for v in th])
        value = float(neuron_values(obj, theta[None])[0])
    return {"value": value, "theta": None if theta is None else theta.tolist(),
            "scip_primal": float(mod.getPrimalbound()), "dual_bound": float(mod.getDualbound()),
            "gap": float(mod.getGap()), "status": str(mod.getStatus()), "seconds": sec, "build_seconds": build,
            "nodes": int(mod.getNNodes()), "version": str(getattr(pyscipopt, "__version__", "?"))}
