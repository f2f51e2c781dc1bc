r"""Benchmark: settling a node of few undecided rows directly (its chambers bounded) against the lifted bound.

Issue 39 ("cheaper small nodes"): a node with ``k`` undecided rows has at most ``2^k`` sign completions
below it, and fewer chambers.  Settling it directly would write its subtree of splits down to those
completions, each a leaf whose node bound (recomputed by the checker from its signs) is below the
settling level.  This measures what that costs beside the lifted bound, on the nodes the branch and
bound meets: a search runs ``--collect`` seconds on the case and records a random fifth of the nodes
of 1-``--max-k`` undecided rows it tries the lifted bound on (signs, interior points, the level that
settles them).  Then, per node:

- lifted: ``strong_bound`` and the checker's test of its claim (what ``try_lifted`` spends), settled
  when the claim is at most the level;
- direct, every completion: the node bound (``bound_parts``, with its rounding allowance) of each of
  the ``2^k`` completions; settled when every one is at most the level;
- direct, chambers only: the same on the completions that are chambers (nonempty cones, listed here by
  one LP each, not timed: a lower bound on what a direct settling costs, the listing free).

Printed per undecided count: nodes, settled and milliseconds per node of each.  One BLAS thread::

    python benchmarks/small_nodes.py --case clustered-1000x3 --collect 120
    python benchmarks/small_nodes.py --case gauss:30x6 --collect 3000 --fraction 1
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real import case_problem  # noqa: E402


def collect(case: str, seconds: float, max_k: int, fraction: float = 0.2, limit: int = 400) -> tuple:
    """Nodes of 1-``max_k`` undecided rows the search tries the lifted bound on."""
    from relu_gating.search.proofs._problem import exact_rank
    from relu_gating.search.bnb._api import _seed_incumbent
    from relu_gating.search.bnb._search import Search
    from relu_gating.search.objectives import make_objective, with_rank

    if case.startswith("gauss:"):  # benchmarks/bnb.py's Gaussian clouds (seed 0, K = 4)
        from bnb import instance

        Phi, U = instance(*(int(x) for x in case.split(":", 1)[1].split("x")), 0, "gauss")
    else:
        Phi, U, _, _ = case_problem(case)
    obj = make_objective(Phi, U, "bias")
    obj = with_rank(obj, exact_rank(obj.Phi))
    search = Search(obj, 1.0, 1e-9, "auto", 0, True)
    _seed_incumbent(search, obj, 0)
    rng, rec, orig = np.random.default_rng(1), [], Search.try_lifted

    def recording(self, node):
        k = int(np.sum((node.signs == 0) & ~self.P.zero_rows)) if node.signs is not None else 0
        if node.evidence is None and 1 <= k <= max_k and len(rec) < limit and rng.random() < fraction:
            rec.append((node.signs.copy(), node.v.copy(), (self.best_value + self.tol) / self.alpha,
                        self.best_value / self.alpha))
        return orig(self, node)

    Search.try_lifted = recording
    try:
        search.run(time.perf_counter() + seconds)
    finally:
        Search.try_lifted = orig
    return obj, search, rec


def nonempty(Gn: np.ndarray, signs: np.ndarray, zero: np.ndarray) -> bool:
    """The open cone ``{x: s_i g_i x > 0}`` of the decided rows is nonempty (an LP: margin > 0)."""
    from scipy.optimize import linprog

    dec = np.flatnonzero((signs != 0) & ~zero)
    G = signs[dec, None] * Gn[dec]
    r = G.shape[1]
    # max t: G x >= t, -1 <= x <= 1
    A = np.hstack([-G, np.ones((G.shape[0], 1))])
    res = linprog(np.r_[np.zeros(r), -1.0], A_ub=A, b_ub=np.zeros(G.shape[0]),
                  bounds=[(-1, 1)] * r + [(None, 1)], method="highs")
    return res.status == 0 and -res.fun > 1e-9


def measure(obj, search, rec) -> list[dict]:
    from relu_gating.search.bnb import _strong
    from relu_gating.search.bnb._node_bounds import lifted_claim
    from relu_gating.search.proofs import bound_parts, lifted_leaf_bound

    P, zero = search.P, search.P.zero_rows
    rows = []
    for signs, V, level, target in rec:
        und = np.flatnonzero((signs == 0) & ~zero)
        t0 = time.perf_counter()
        got = _strong.strong_bound(obj.Psi, obj.M, obj.Q_H, signs, zero, V, level=level)
        ok_l = False
        if got is not None:
            claim = lifted_claim(got[0], target, search.lifted_room(got))
            ok_l = claim <= level and bool(np.isfinite(lifted_leaf_bound(obj.Psi, obj.M, obj.Q_H, signs, zero,
                                                                          claim, *got[1])))
        t_l = time.perf_counter() - t0
        comps = []
        for s in itertools.product((1, -1), repeat=und.size):
            c = signs.copy()
            c[und] = s
            comps.append(c)
        t0 = time.perf_counter()
        ub = [bound_parts(P, c)[0] for c in comps]
        t_all = time.perf_counter() - t0
        feas = [nonempty(search.Gn, c, zero) for c in comps]
        ubf = [u for u, f in zip(ub, feas) if f]
        rows.append({"k": int(und.size), "lifted_ok": ok_l, "t_lifted": t_l, "all_ok": max(ub) <= level,
                     "t_all": t_all, "chambers": len(ubf), "cham_ok": max(ubf, default=-np.inf) <= level,
                     "t_cham": t_all * len(ubf) / len(comps)})
    return rows


def main(argv=None) -> None:
    from relu_gating.patterns._exact import single_thread_blas

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", default="clustered-1000x3")
    ap.add_argument("--collect", type=float, default=120.0, help="seconds of search that collect the nodes")
    ap.add_argument("--max-k", type=int, default=7)
    ap.add_argument("--fraction", type=float, default=0.2, help="of the nodes met, recorded (default 0.2)")
    ap.add_argument("--save", default=None)
    a = ap.parse_args(argv)
    with single_thread_blas():
        obj, search, rec = collect(a.case, a.collect, a.max_k, a.fraction)
        rows = measure(obj, search, rec)
    print(f"{a.case}: {len(rows)} nodes of 1-{a.max_k} undecided rows")
    print("| undecided | nodes | lifted: settled, ms a node | every completion: settled, ms a node "
          "| chambers (mean) | chambers only: settled, ms a node |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for k in sorted({r["k"] for r in rows}) + ["all"]:
        g = [r for r in rows if k == "all" or r["k"] == k]
        ms = lambda key, g=g: 1000 * float(np.mean([r[key] for r in g]))  # noqa: E731
        cnt = lambda key, g=g: sum(r[key] for r in g)  # noqa: E731
        print(f"| {k} | {len(g)} | {cnt('lifted_ok')}, {ms('t_lifted'):.2f} | {cnt('all_ok')}, {ms('t_all'):.2f} | "
              f"{np.mean([r['chambers'] for r in g]):.1f} | {cnt('cham_ok')}, {ms('t_cham'):.2f} |")
    if a.save:
        from relu_gating.experiments._base import provenance  # commit, command, load

        Path(a.save).write_text(json.dumps({"case": a.case, "collect": a.collect, "rows": rows, **provenance()}, indent=1, default=lambda o: o.item() if hasattr(o, "item") else str(o)))


if __name__ == "__main__":
    main()
