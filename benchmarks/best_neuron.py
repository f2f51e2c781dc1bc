r"""Benchmark: time to a certified best neuron, against exhaustive solves and SCIP.

For each case (samples ``X``, ``Phi = [X, 1]``, ``U_K`` = the K = 4 lowest
eigenvectors of the kNN-graph Laplacian, or a random orthonormal basis with
``--basis random``) the query is the marginal gain over the bias feature
(``features="bias"``, Prop 4.5 with ``H = 1``):

.. math::

    \max_\theta G_H(h) = \frac{\|M^T h\|^2}{\|(I - \Pi_H) h\|^2},
    \quad h = \operatorname{relu}(\Phi\theta),\quad M = (I - \Pi_H) U_K .

Three ways to answer it, timed in the same run:

1. ``best_neuron`` (certified, alpha = 1): median wall time over ``--repeats``
   runs, enumeration included.
2. Exhaustive, no pruning: enumerate the patterns, then solve EVERY pattern's
   cone-constrained generalized eigenproblem exactly (``solvers.solve`` on
   ``single_pattern_matrices``, method ``auto``), keep the best.  Reported twice:
   "naive" (every pattern through ``solvers.solve``) and "no-prune" (the
   search's own vectorised bound pass, which settles patterns whose top
   eigenvector is realizable, then an exact solve of every other pattern;
   bounds are never used to skip anything).  When a case has more than
   ``--exhaustive-max`` patterns, the per-pattern time is measured on a seeded
   uniform sample of that many patterns and the total is EXTRAPOLATED
   (marked ``~`` in the table; the value is then the best in the sample).
3. SCIP (pyscipopt) on a global MINLP formulation of the same query, with a
   time limit (``--scip-time``); its value is recomputed from its ``theta``
   (``neuron_values``), since its own objective carries its feasibility slack.
   On a time-out, its dual bound and gap are reported.

SCIP formulation
----------------
Variables ``theta in R^m`` (box ``[-R, R]^m``), ``s in {0,1}^n``,
``h in [0, h_max]^n``, ``w in R^K``, ``t``; maximise ``t`` subject to

* gating (big-M, ``M_i = R ||phi_i||_1 >= |phi_i theta|``):
  ``h_i >= phi_i theta``, ``h_i <= h_max s_i``, ``h_i <= phi_i theta + M_i (1 - s_i)``,
  so that ``h = relu(Phi theta)`` exactly;
* scale (the ratio is invariant under ``theta -> c theta``, ``c > 0``):
  ``||(I - Pi_H) h||^2 <= 1`` (convex, through ``y = h - mean(h) 1``);
* objective: ``t <= ||w||^2`` with ``w = M^T h`` (nonconvex; SCIP branches
  spatially), ``0 <= t <= 1``;
* ``sum_i s_i <= n - 1``: WLOG some row is inactive.  If every row is active,
  lowering the bias until one row reaches 0 shifts ``h`` by a constant, which
  changes neither ``M^T h`` nor ``(I - Pi_H) h`` (``1 in col(H)``).  With one
  ``h_i = 0`` and ``||h - mean(h)|| <= 1``, every ``h_j <= sqrt(2) = h_max``.

At the optimum ``||(I - Pi_H) h|| = 1`` and ``t = G_H(h)``; neurons with
``h = 0`` or ``h`` constant give ``t <= 0`` and are thereby excluded (no 0/0).
Without features (``N_K``) the scale is ``||h||^2 <= 1``, ``h_max = 1``, and the
WLOG row constraint is dropped.  Every feasible point is a genuine neuron, so
SCIP's values are lower bounds and its dual bound is a valid upper bound
provided the box contains a maximiser.  The box ``R`` defaults to
``max(1, 1.5 ||theta*||_inf)`` where ``theta*`` is the certified optimum
rescaled to the normalisation above (shifted so that a row is at 0): SCIP's
model then provably contains the optimum (the setting most favourable to SCIP;
``--scip-box R`` fixes it instead; the table says whether the box contains it).
A free-``theta`` variant with indicator constraints instead of big-M is exact
without any box, but SCIP solved it more slowly in our trials.

Validation (``--selfcheck``): on n = 8 random instances (d = 2, 3; with and
without features) SCIP's recomputed value matches a brute-force enumeration of
every stationary point (every sign set ``S`` and zero set ``J``: top
generalized eigenvectors of the pencil compressed to ``null(Phi_J)``, kept when
they realize ``S``) to within 1e-6 and its dual bound is never below it.

Usage::

    PYTHONPATH=. python benchmarks/best_neuron.py [--quick] [--no-scip]
        [--cases n100d2,n200d2,n60d3,n30d4] [--repeats 5] [--scip-time 300]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time

import numpy as np

import solvers
from relu_gating.data.datasets import two_moons
from relu_gating.data.io import InputData, resolve_problem
from relu_gating.search.objectives import make_objective, neuron_values, single_pattern_matrices

#: name -> (n, d, data set)
CASES = {"n100d2": (100, 2, "moons"), "n200d2": (200, 2, "moons"), "n60d3": (60, 3, "gauss"),
         "n30d4": (30, 4, "gauss")}
QUICK_CASES = {"n40d2": (40, 2, "moons"), "n16d3": (16, 3, "gauss")}
EQUAL_TOL = 1e-5  # values recomputed from SCIP's theta carry its 1e-6 feasibility slack


def make_case(n: int, d: int, data: str, *, basis: str = "graph", K: int = 4, seed: int = 0):
    """``(Phi, U_K)`` of a benchmark case (seeded)."""
    rng = np.random.default_rng(seed)
    if data == "moons":
        X = two_moons(n, noise=0.1, seed=seed) if d == 2 else np.c_[two_moons(n, seed=seed), rng.normal(size=(n, d - 2))]
    else:
        X = rng.normal(size=(n, d))
    prob = resolve_problem(InputData(path="<bench>", X=X), K=K)
    U_K = prob.U_K if basis == "graph" else np.linalg.qr(rng.normal(size=(n, K)))[0]
    return prob.Phi, U_K


# ----------------------------------------------------------------------------- SCIP
def scip_best_neuron(Phi, U_K, features="bias", *, time_limit=300.0, box=1.0, indicator=False, verbose=False,
                     params=None):
    """Solve the query globally with SCIP (formulation in the module docstring).

    ``params``: further SCIP parameters (name -> value), set before the solve.
    Returns a dict: theta (or None), value (recomputed), primal, dual, gap, status, seconds, nodes.
    """
    from pyscipopt import Model, quicksum

    Phi = np.asarray(Phi, float)
    n, m = Phi.shape
    obj = make_objective(Phi, U_K, features)
    if features is None:
        hmax = 1.0
    elif isinstance(features, str) and features == "bias":
        hmax = np.sqrt(2.0)
    else:
        raise ValueError("the SCIP formulation supports features=None or 'bias' only")
    Mm = obj.M[:, np.linalg.norm(obj.M, axis=0) > 1e-12]
    mod = Model("best_neuron")
    if not verbose:
        mod.hideOutput()
    mod.setParam("limits/time", float(time_limit))
    for name, val in (params or {}).items():
        mod.setParam(name, val)
    lb, ub = (None, None) if indicator else (-box, box)
    th = [mod.addVar(f"theta{j}", lb=lb, ub=ub) for j in range(m)]
    h = [mod.addVar(f"h{i}", lb=0.0, ub=hmax) for i in range(n)]
    s = [mod.addVar(f"s{i}", vtype="B") for i in range(n)]
    for i in range(n):
        z = quicksum(float(Phi[i, j]) * th[j] for j in range(m) if Phi[i, j] != 0)
        mod.addCons(h[i] >= z)
        mod.addCons(h[i] <= hmax * s[i])
        if indicator:
            mod.addConsIndicator(h[i] - z <= 0, binvar=s[i])
        else:
            mod.addCons(h[i] <= z + box * float(np.abs(Phi[i]).sum()) * (1 - s[i]))
    wb = np.abs(Mm).sum(axis=0) * hmax
    w = [mod.addVar(f"w{k}", lb=-wb[k], ub=wb[k]) for k in range(Mm.shape[1])]
    for k in range(Mm.shape[1]):
        mod.addCons(w[k] == quicksum(float(Mm[i, k]) * h[i] for i in range(n) if Mm[i, k] != 0))
    if features is None:
        mod.addCons(quicksum(hi * hi for hi in h) <= 1)
    else:
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
    t0 = time.perf_counter()
    mod.optimize()
    sec = time.perf_counter() - t0
    theta, value = None, float("nan")
    if mod.getNSols() > 0:
        sol = mod.getBestSol()
        theta = np.array([mod.getSolVal(sol, v) for v in th])
        value = float(neuron_values(obj, theta[None])[0])
    return {"theta": theta, "value": value, "primal": float(mod.getPrimalbound()), "dual": float(mod.getDualbound()),
            "gap": float(mod.getGap()), "status": str(mod.getStatus()), "seconds": sec, "nodes": int(mod.getNNodes())}


def normalized_theta(Phi, U_K, theta, features="bias"):
    """``theta`` rescaled to SCIP's normalisation (a row at 0 when all are active, unit denominator)."""
    obj = make_objective(Phi, U_K, features)
    th = np.array(theta, float)
    z = obj.Phi @ th
    if features is not None and np.all(z > 0):
        th[-1] -= z.min()  # the bias column is last in Phi = [X, 1]
    hv = np.maximum(obj.Phi @ th, 0.0)
    den = hv @ hv if obj.Q_H is None else np.sum((hv - obj.Q_H @ (obj.Q_H.T @ hv)) ** 2)
    return th / np.sqrt(den)


def brute_force_value(Phi, U_K, features):
    """Max over every stationary point (sign set S, zero set J); tiny n only (2^n * C(n, <m))."""
    obj = make_objective(Phi, U_K, features)
    n, m = obj.Phi.shape
    best, best_th = -np.inf, None
    for r in range(m):
        for J in itertools.combinations(range(n), r):
            P = np.linalg.svd(obj.Phi[list(J)])[2][r:].T if J else np.eye(m)
            rest = [i for i in range(n) if i not in J]
            for bits in itertools.product((False, True), repeat=len(rest)):
                S = np.zeros(n, bool)
                S[rest] = bits
                SP = (obj.Phi * S[:, None]) @ P
                R = SP if obj.Q_H is None else SP - obj.Q_H @ (obj.Q_H.T @ SP)
                C = obj.M.T @ SP
                wB, VB = np.linalg.eigh(R.T @ R)
                keep = wB > 1e-10 * max(wB.max(), 1e-300)
                if not keep.any():
                    continue
                W = VB[:, keep] / np.sqrt(wB[keep])
                cand = (P @ W @ np.linalg.eigh(W.T @ C.T @ C @ W)[1]).T
                for th in np.vstack([cand, -cand]):
                    z = obj.Phi @ th
                    sc = np.abs(z).max()
                    if np.all(np.where(S, z > -1e-9 * sc, z < 1e-9 * sc)):
                        v = neuron_values(obj, th[None])[0]
                        if not np.isnan(v) and v > best:
                            best, best_th = float(v), th
    return best, best_th


def selfcheck(time_limit: float) -> bool:
    """SCIP formulations (free theta with indicators; big-M with the auto box) against brute force, n = 8."""
    ok = True
    print("SCIP formulation self-check (n = 8, brute force over every stationary point)")
    for seed, d, feat in itertools.product((0, 1), (2, 3), (None, "bias")):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(8, d))
        Phi, U = np.c_[X, np.ones(8)], np.linalg.qr(rng.normal(size=(8, 3)))[0]
        bf, th = brute_force_value(Phi, U, feat)
        box = max(1.0, 1.5 * float(np.abs(normalized_theta(Phi, U, th, feat)).max()))
        for form, sc in (("indicator", scip_best_neuron(Phi, U, feat, time_limit=time_limit, indicator=True)),
                         (f"big-M R={box:.3g}", scip_best_neuron(Phi, U, feat, time_limit=time_limit, box=box))):
            good = abs(sc["value"] - bf) <= 1e-6 and sc["dual"] >= bf - 1e-9 and sc["status"] == "optimal"
            ok &= good
            print(f"  seed {seed} d {d} features {str(feat):4s} {form:14s}: brute {bf:.9f}  SCIP {sc['value']:.9f}  "
                  f"dual {sc['dual']:.9f}  {sc['seconds']:.1f}s  {'ok' if good else 'MISMATCH'}")
    return ok


# ----------------------------------------------------------------------------- exhaustive
def _solve_all(obj, masks, idx):
    """Exact solve of masks[idx] one by one through solvers.solve: (best value, seconds, failures)."""
    best, fails = -np.inf, 0
    t0 = time.perf_counter()
    for i in idx:
        if not masks[i].any():
            continue
        A, B, G = single_pattern_matrices(obj, masks[i])
        try:
            res = solvers.solve(solvers.ConeEigProblem(A, B, G), method="auto")
        except Exception:  # noqa: BLE001 - a benchmark counts failures, it does not stop
            fails += 1
            continue
        if res.x is not None and str(getattr(res.status, "value", res.status)).lower() in ("exact", "bounded"):
            v = neuron_values(obj, (obj.to_theta @ np.asarray(res.x, float))[None])[0]
            best = max(best, v) if not np.isnan(v) else best
    return best, time.perf_counter() - t0, fails


def exhaustive(Phi, U_K, features, *, max_solves: int, seed: int = 0) -> dict:
    """Solve every pattern exactly, without pruning (sampled and extrapolated above ``max_solves``)."""
    from relu_gating.search._exact.tasks import chunk_bounds, solve_chunk
    from relu_gating.search.state import EXACT
    from relu_gating.patterns import enumerate_patterns

    t0 = time.perf_counter()
    obj0 = make_objective(Phi, U_K, features)
    pats = enumerate_patterns(obj0.Phi)
    obj = make_objective(obj0.Phi, obj0.U_K, features, rank=pats.rank)
    t_enum = time.perf_counter() - t0
    N = pats.masks.shape[0]
    rng = np.random.default_rng(seed)
    sampled = N > max_solves
    idx = np.sort(rng.choice(N, max_solves, replace=False)) if sampled else np.arange(N)
    best, sec, fails = _solve_all(obj, pats.masks, idx)
    naive = {"value": best, "seconds": t_enum + sec * N / idx.size, "extrapolated": sampled, "failures": fails}
    # no-prune: vectorised bound pass (settles realizable top eigenvectors), then solve all the rest
    t1 = time.perf_counter()
    out = chunk_bounds(obj, np.arange(N), pats.masks, pats.witnesses, 1e-9)
    t_bounds = time.perf_counter() - t1
    rest = np.flatnonzero(out.status != EXACT)
    take = np.sort(rng.choice(rest, min(max_solves, rest.size), replace=False)) if rest.size else rest
    t2 = time.perf_counter()
    sol = solve_chunk(obj, take, pats.masks[take], "auto") if take.size else None
    t_solve = time.perf_counter() - t2
    vals = np.r_[np.nan_to_num(out.lower, nan=-np.inf), np.nan_to_num(sol.lower, nan=-np.inf) if sol else []]
    noprune = {"value": float(vals.max()), "seconds": t_enum + t_bounds + (t_solve * rest.size / max(take.size, 1)),
               "extrapolated": rest.size > take.size, "n_left": int(rest.size)}
    return {"n_patterns": N, "enumerate": t_enum, "naive": naive, "noprune": noprune, "sample": int(idx.size)}


# ----------------------------------------------------------------------------- driver
def time_certified(Phi, U_K, features, repeats: int):
    from relu_gating.search.front import best_neuron

    times, res = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = best_neuron(Phi, U_K, features=features)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), res


def _fmt_t(sec: float, approx: bool = False) -> str:
    return ("~" if approx else "") + (f"{sec:.3g}s" if sec < 1000 else f"{sec:.0f}s")


def run_case(name, spec, args) -> dict:
    n, d, data = spec
    Phi, U_K = make_case(n, d, data, basis=args.basis, seed=args.seed)
    row = {"case": name, "n": n, "d": d, "data": data}
    t_cert, res = time_certified(Phi, U_K, "bias", args.repeats)
    row["certified"] = {"value": res.value, "upper_bound": res.upper_bound, "certified": bool(res.certified),
                        "median_seconds": t_cert, "n_patterns": res.n_patterns, "n_exact": res.n_exact,
                        "n_bound": res.n_bound, "seconds": res.seconds}
    print(f"[{name}] certified {res.value:.10f} (bound {res.upper_bound:.10f}) in {t_cert:.3f}s median; "
          f"{res.n_patterns} patterns, {res.n_exact} exact", file=sys.stderr, flush=True)
    if not args.no_exhaustive:
        row["exhaustive"] = exhaustive(Phi, U_K, "bias", max_solves=args.exhaustive_max, seed=args.seed)
        print(f"[{name}] exhaustive done", file=sys.stderr, flush=True)
    if not args.no_scip:
        th = normalized_theta(Phi, U_K, res.theta)
        box = args.scip_box if args.scip_box else max(1.0, 1.5 * float(np.abs(th).max()))
        sc = scip_best_neuron(Phi, U_K, "bias", time_limit=args.scip_time, box=box, indicator=args.scip_indicator)
        sc.pop("theta")
        sc.update(box=None if args.scip_indicator else box,
                  box_contains_optimum=bool(args.scip_indicator or np.abs(th).max() <= box))
        row["scip"] = sc
        print(f"[{name}] SCIP {sc['status']} value {sc['value']:.10f} dual {sc['dual']:.6g} in {sc['seconds']:.1f}s",
              file=sys.stderr, flush=True)
    return row


def print_table(rows) -> None:
    hdr = (f"{'case':8s} {'patterns':>8s} | {'certified value':>16s} {'time':>8s} | {'naive all':>10s} {'ratio':>7s}"
           f" {'no-prune':>9s} {'ratio':>7s} | {'SCIP value':>12s} {'status':>9s} {'dual':>8s} {'gap':>8s}"
           f" {'time':>7s} {'ratio':>7s} {'equal':>5s}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        c = r["certified"]
        t = c["median_seconds"]
        line = f"{r['case']:8s} {c['n_patterns']:8d} | {c['value']:16.12f} {_fmt_t(t):>8s} |"
        ex = r.get("exhaustive")
        if ex:
            a, b = ex["naive"], ex["noprune"]
            line += (f" {_fmt_t(a['seconds'], a['extrapolated']):>10s} {a['seconds'] / t:6.0f}x"
                     f" {_fmt_t(b['seconds'], b['extrapolated']):>9s} {b['seconds'] / t:6.0f}x |")
        else:
            line += f" {'-':>10s} {'':7s} {'-':>9s} {'':7s} |"
        s = r.get("scip")
        if s:
            eq = abs(s["value"] - c["value"]) <= EQUAL_TOL
            gt = ">" if s["status"] != "optimal" else " "  # not solved: its time to an answer exceeds the limit
            val = f"{s['value']:12.9f}" if np.isfinite(s["value"]) else f"{'h=0 (excl.)':>12s}"
            line += (f" {val} {s['status'][:9]:>9s} {s['dual']:8.5f} {min(s['gap'], 99):8.2e}"
                     f" {gt}{_fmt_t(s['seconds']):>6s} {gt}{s['seconds'] / t:5.0f}x {'yes' if eq else 'NO':>5s}")
        print(line)
    print("\ntime = median wall time of best_neuron (alpha = 1, enumeration included); '~' = extrapolated from a "
          "timed sample of patterns;\nratio = other time / certified time; equal = |SCIP value - certified value| "
          f"<= {EQUAL_TOL:g} (SCIP's value recomputed from its theta);\n'>' = SCIP stopped at its time limit "
          "without proving optimality (status timelimit), so its time to a certified answer is longer;\n"
          "h=0 (excl.) = SCIP's best point is the excluded zero neuron (it found no admissible neuron).")
    for r in rows:
        ex, s = r.get("exhaustive"), r.get("scip")
        if ex:
            a, b = ex["naive"], ex["noprune"]
            tag = f"best in a sample of {ex['sample']}" if a["extrapolated"] else "optimum"
            print(f"{r['case']}: naive {tag} {a['value']:.12f} ({a['failures']} solver failures); no-prune left "
                  f"{b['n_left']} patterns for exact solves, best {'sampled ' if b['extrapolated'] else ''}"
                  f"{b['value']:.12f}")
        if s:
            box = "free theta (indicators)" if s["box"] is None else f"box R = {s['box']:.3g}"
            print(f"{r['case']}: SCIP {box} ({'contains' if s['box_contains_optimum'] else 'EXCLUDES'}"
                  f" the certified optimum), {s['nodes']} nodes, own objective {s['primal']:.9f}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small cases, 20 s SCIP limit")
    p.add_argument("--cases", default=None, help=f"comma-separated subset of {','.join(CASES)}")
    p.add_argument("--repeats", type=int, default=5, help="runs of best_neuron per case (median)")
    p.add_argument("--no-scip", action="store_true")
    p.add_argument("--no-exhaustive", action="store_true")
    p.add_argument("--scip-time", type=float, default=None, help="SCIP time limit per case (default 300, quick 20)")
    p.add_argument("--scip-box", type=float, default=None, help="fixed theta box R for SCIP (default: see docstring)")
    p.add_argument("--scip-indicator", action="store_true", help="free theta with indicator constraints (no box)")
    p.add_argument("--exhaustive-max", type=int, default=2000, help="exact solves before extrapolating")
    p.add_argument("--basis", choices=("graph", "random"), default="graph")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--selfcheck", action="store_true", help="validate the SCIP formulation by brute force, then exit")
    p.add_argument("--json", default=None, metavar="FILE", help="also write the results as JSON")
    args = p.parse_args(argv)
    if args.scip_time is None:
        args.scip_time = 20.0 if args.quick else 300.0
    if args.selfcheck:
        return 0 if selfcheck(args.scip_time) else 1
    table = QUICK_CASES if args.quick else CASES
    names = args.cases.split(",") if args.cases else list(table)
    unknown = [c for c in names if c not in CASES and c not in QUICK_CASES]
    if unknown:
        p.error(f"unknown case(s) {unknown}; choose from {list(CASES) + list(QUICK_CASES)}")
    rows = [run_case(c, {**CASES, **QUICK_CASES}[c], args) for c in names]
    print()
    print_table(rows)
    goal = next((r for r in rows if r["case"] == "n200d2"), None)
    if goal:
        c, s = goal["certified"], goal.get("scip")
        print(f"\ngoal n=200, d=2: certified exact in {c['median_seconds']:.3f}s (target < 2 s: "
              f"{'met' if c['median_seconds'] < 2 and c['certified'] else 'NOT met'})"
              + (f"; SCIP {s['seconds'] / c['median_seconds']:.0f}x slower, status {s['status']}, "
                 f"{'same answer' if abs(s['value'] - c['value']) <= EQUAL_TOL else 'different answer'}, "
                 f"dual bound {s['dual']:.6g}" if s else ""))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
