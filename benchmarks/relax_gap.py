r"""Study: where a mid-size node's gap comes from (issue 39, Reach IV): the node bound, the lifted bound's
first-order multipliers, the lifted relaxation's optimum, and the node's true maximum from below.

A serial search runs ``--cpu`` CPU seconds on a greedy step of a layer file (``greedy_late.py build``) or a
case of ``benchmarks/real.py``, recording the nodes it tries the lifted bound on (signs, interior points, the
level that settles them).  For up to ``--nodes`` recorded nodes with ``--lo``..``--hi`` undecided rows (a
spread over the band), the script computes, on the CPU clock:

* ``subspace``: the node's subspace bound (:func:`relu_gating.search.bnb._rows.bound_parts`);
* ``plain``: the lifted relaxation without multipliers (``_strong.plain``);
* ``fo``: ``_strong.strong_bound`` as the search runs it (first-order multipliers, 12 decided rows);
* ``sdp12`` / ``sdpall``: Clarabel's optimum of the same relaxation with 12 / all decided rows (the best any
  multipliers of that relaxation can prove, up to the solver's tolerance: what a better solve could reach);
* ``sdp12_proven``: what Clarabel's multipliers prove (``_strong.proven``);
* ``lower``: the largest objective value found in the node (interior samples and SLSQP ascents from them,
  each value recomputed from ``relu(Phi theta)``): the true maximum is at least this.

Run::

    python benchmarks/relax_gap.py --layer /tmp/layer4.pkl --step 5 --cpu 30 --nodes 12
    python benchmarks/relax_gap.py --case bc-pca5-n200 --cpu 30 --nodes 8 --lo 60 --hi 128
    python benchmarks/relax_gap.py --layer /tmp/layer4.pkl --step 5 --cpu 12 --nodes 3 --lo 40 --hi 64 --failing

``--dump nodes.pkl`` saves the recorded nodes; ``--nodes-from nodes.pkl`` studies them again without a search
(``benchmarks/lifted_level.py`` measures solvers on the same files).
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _search(args):
    from greedy_late import _cands, _features, _search
    from real import case_problem

    if args.layer:
        layer = pickle.loads(Path(args.layer).read_bytes())
        Phi, U, _, _ = case_problem(args.case)
        prev = layer[args.step - 2]
        starts = [c for c in _cands(prev) if not np.array_equal(c, prev["theta"])][:32]
        return _search(Phi, U, _features(Phi, layer, args.step), None, np.array(starts) if starts else None)
    from relu_gating.search.bnb._api import _seed_incumbent, _starts
    from relu_gating.search.bnb._search import Search
    from relu_gating.search.objectives import make_objective, with_rank
    from relu_gating.search.proofs import exact_rank

    Phi, U, _, _ = case_problem(args.case)
    obj = make_objective(Phi, U, "bias")
    obj = with_rank(obj, exact_rank(obj.Phi))
    s = Search(obj, 1.0, 1e-9, "auto", 0, True)
    _seed_incumbent(s, obj, 0, _starts(None, obj.Phi.shape[1]))
    return s


def collect(args):
    """Run the search ``args.cpu`` CPU seconds; the lifted tries' nodes ``(k, signs, V, level)``."""
    from relu_gating.patterns import single_thread_blas
    from relu_gating.search.bnb import _strong

    s = _search(args)
    rec, orig = [], _strong.strong_bound

    def recording(Q, M, QH, signs, zero, V, k=_strong.N_DECIDED, level=-np.inf):
        got = orig(Q, M, QH, signs, zero, V, k, level)
        und = int(np.sum((signs == 0) & ~zero))
        rec.append((und, signs.copy(), V.copy(), level, got is not None and got[0] <= level))
        return got

    c0 = time.process_time()
    s.reserve = lambda: 2e9 if time.process_time() - c0 > args.cpu else 0.0
    _strong.strong_bound = recording
    try:
        with single_thread_blas():
            s.run(time.perf_counter() + 1e9)
    finally:
        _strong.strong_bound = orig
    return s, rec


def node_value(obj, v: np.ndarray) -> float:
    """The objective of the neuron ``relu(Psi v)`` (the pencil of the lifted relaxation, at rank one)."""
    h = np.maximum(obj.Psi @ v, 0.0)
    den = h @ h - (0.0 if obj.Q_H is None else float(np.sum((obj.Q_H.T @ h) ** 2)))
    return float(np.sum((obj.M.T @ h) ** 2) / den) if den > 1e-12 * max(h @ h, 1e-300) else 0.0


def lower(obj, signs, zero, V, rng, starts: int = 24) -> float:
    """The best value found in the node: its interior points, random points of the cone near them, and
    SLSQP ascents (the node's decided rows as constraints) from the best of them."""
    from scipy.optimize import minimize

    dec = np.flatnonzero((signs != 0) & ~zero)
    Gd = signs[dec, None] * obj.Psi[dec]
    pts = [np.asarray(v, float) for v in np.atleast_2d(V)]
    for _ in range(400):
        v = pts[rng.integers(len(pts))] + rng.normal(scale=rng.choice([0.01, 0.1, 0.5]), size=obj.Psi.shape[1])
        if np.all(Gd @ v >= 0):
            pts.append(v)
    vals = np.array([node_value(obj, v) for v in pts])
    best = float(vals.max())
    cons = [{"type": "ineq", "fun": lambda v: Gd @ v, "jac": lambda v: Gd},
            {"type": "ineq", "fun": lambda v: 1.0 - v @ v}]
    for i in np.argsort(-vals)[:starts]:
        v0 = pts[i] / max(np.linalg.norm(pts[i]), 1e-300)
        try:
            r = minimize(lambda v: -node_value(obj, v), v0, method="SLSQP", constraints=cons,
                         options={"maxiter": 200, "ftol": 1e-12})
        except (ValueError, np.linalg.LinAlgError):
            continue
        v = r.x
        if np.all(Gd @ v >= 0):
            best = max(best, node_value(obj, v))
    return best


def pair_classes(A, B, G, C, N, mu, nd: int, k: int) -> dict:
    """What Clarabel's multipliers prove with ``N`` kept on one class of constraint pairs only, or with one
    class dropped (classes: ``d`` the decided rows, ``y`` the rows ``y_i >= 0``, ``z`` the rows
    ``y_i - q_i^T v >= 0``), and the share of ``N``'s mass in each class."""
    from relu_gating.search.bnb import _strong

    cls = np.r_[np.zeros(nd, int), np.ones(k, int), np.full(k, 2)]
    pair = 3 * np.minimum.outer(cls, cls) + np.maximum.outer(cls, cls)
    out, tot = {}, float(N.sum()) or 1.0
    for c, code in (("dd", 0), ("dy", 1), ("dz", 2), ("yy", 4), ("yz", 5), ("zz", 8)):
        m = pair == code
        out[f"mass_{c}"] = float(N[m].sum() / tot)
        out[f"only_{c}"] = float(_strong.proven(A, B, G, C, np.where(m, N, 0.0), mu))
        out[f"drop_{c}"] = float(_strong.proven(A, B, G, C, np.where(m, 0.0, N), mu))
    out["diag_yz_only"] = float(_strong.proven(A, B, G, C, np.where(
        (pair == 5) & (np.abs(np.subtract.outer(np.arange(cls.size), np.arange(cls.size))) == k), N, 0.0), mu))
    return out


def study(s, rec, args) -> list:
    from relu_gating.search.bnb import _strong
    from relu_gating.search.proofs import bound_parts

    obj, zero = s.obj, s.P.zero_rows
    band = [r for r in rec if args.lo <= r[0] <= args.hi and not (args.failing and r[4])]
    pick = np.linspace(0, len(band) - 1, min(args.nodes, len(band))).round().astype(int) if band else []
    rng, out = np.random.default_rng(0), []
    for j in pick:
        k, signs, V, level, settled = band[j]
        row = {"undecided": k, "level": float(level), "fo_settled": bool(settled), "best": float(s.best_value)}
        t = time.process_time()
        row["subspace"] = float(bound_parts(s.P, signs)[0])
        got = _strong.plain(obj.Psi, obj.M, obj.Q_H, signs, zero, level)
        row["plain"] = float("inf") if got is None else float(got[0])
        t = time.process_time()
        got = _strong.strong_bound(obj.Psi, obj.M, obj.Q_H, signs, zero, V, level=level)
        row["fo"], row["fo_ms"] = float("inf") if got is None else float(got[0]), 1e3 * (time.process_time() - t)
        for name, kk in (("sdp12", _strong.N_DECIDED), ("sdpall", 10**6)):
            if name == "sdpall" and not args.all:
                continue
            dec = _strong.pick_decided(obj.Psi, signs, zero, V, kk)
            A, B, G, C, _ = _strong.lifted(obj.Psi, obj.M, obj.Q_H, signs, zero, dec)
            t = time.process_time()
            sol = _strong._solve(A, B, G, C)
            row[name + "_s"] = time.process_time() - t
            row[name] = float("nan") if sol is None else sol[2]
            if sol is not None and name == "sdp12":
                row["sdp12_proven"] = float(_strong.proven(A, B, G, C, sol[0], sol[1]))
                row.update(pair_classes(A, B, G, C, sol[0], sol[1], dec.size, k))
        t = time.process_time()
        row["lower"] = lower(obj, signs, zero, V, rng)
        row["lower_s"] = time.process_time() - t
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="iris")
    ap.add_argument("--layer")
    ap.add_argument("--step", type=int, default=5)
    ap.add_argument("--cpu", type=float, default=30.0)
    ap.add_argument("--nodes", type=int, default=12)
    ap.add_argument("--lo", type=int, default=30)
    ap.add_argument("--hi", type=int, default=100)
    ap.add_argument("--all", action="store_true", help="also the SDP with every decided row")
    ap.add_argument("--failing", action="store_true", help="only nodes the first-order multipliers did not settle")
    ap.add_argument("--save")
    ap.add_argument("--dump", help="pickle the recorded nodes (signs, interior points, level) here")
    ap.add_argument("--nodes-from", help="study the nodes a former --dump saved instead of searching")
    args = ap.parse_args(argv)
    from relu_gating.patterns import single_thread_blas

    if args.nodes_from:  # the nodes a former run dumped (same layer, step and case): no search
        s = _search(args)
        saved = pickle.loads(Path(args.nodes_from).read_bytes())
        rec, s.best_value = saved["rec"], saved["best"]
    else:
        s, rec = collect(args)
    if args.dump:
        Path(args.dump).write_bytes(pickle.dumps({"rec": rec, "best": float(s.best_value), "args": vars(args)}))
    print(json.dumps({"tries": len(rec), "best": float(s.best_value), "expansions": s.expansions,
                      "in_band": sum(args.lo <= r[0] <= args.hi for r in rec)}), flush=True)
    with single_thread_blas():
        rows = study(s, rec, args)
    if args.save:
        import os
        import subprocess

        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True,
                                text=True).stdout.strip()
        Path(args.save).write_text(json.dumps({"commit": commit, "command": " ".join(sys.argv),
                                               "load": os.getloadavg(), "args": vars(args), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
