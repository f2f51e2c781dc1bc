r"""Study: does the lifted (DNN) node bound of ``relu_gating.search.bnb._strong`` close the gap?

For small instances (features bias, kNN-graph Laplacian, K = 4, as ``benchmarks/bnb.py`` builds
them) the serial branch and bound is expanded a fixed number of times (deterministic), then for
every open node the script compares

* the cheap bound (``node_bound``, the node's claim),
* the strong bound (``strong_bound``: Clarabel on the lifted relaxation, then the bound its
  multipliers prove) and the SDP's own objective,
* the true maximum over the node: the largest exact chamber value (``solve_one``) over the
  chambers of ``enumerate_patterns`` whose signs agree with the node's fixed signs,

and prints, by number of undecided rows, the median fraction of the gap ``cheap - true`` the
strong bound closes, how often it is finite, and its median time.

Run::

    OMP_NUM_THREADS=1 python benchmarks/bnb_bound_study.py
    OMP_NUM_THREADS=1 python benchmarks/bnb_bound_study.py --cases 20x3,16x4 --expand 40 --data both
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def chamber_values(obj, Phi):
    """Masks (N, n) and exact chamber values (N,) by enumeration (NaN: excluded chamber)."""
    from relu_gating.patterns import enumerate_patterns
    from relu_gating.search.state import PRUNED
    from relu_gating.search._exact.tasks import solve_one

    ps = enumerate_patterns(Phi)
    masks = np.unpackbits(ps.packed, axis=1, count=Phi.shape[0]).astype(bool)
    vals = np.empty(masks.shape[0])
    for k, mask in enumerate(masks):
        out = solve_one(obj, mask, "auto", ps.witnesses[k])
        vals[k] = np.nan if out.status == PRUNED else out.upper
    return masks, vals


def open_nodes(obj, expand: int, seed: int):
    from relu_gating.search.bnb._api import _seed_incumbent
    from relu_gating.search.bnb._search import Search

    s = Search(obj, 1.0, 1e-9, "auto", seed)
    _seed_incumbent(s, obj)
    s.push(s.root)
    for _ in range(expand):
        if not s.heap:
            break
        import heapq

        s.expand(heapq.heappop(s.heap)[-1])
    return s, [t[-1] for t in s.heap]


def study_case(n: int, d: int, seed: int, data: str, expand: int) -> list[dict]:
    from bnb import instance

    from relu_gating.search.proofs._problem import exact_rank
    from relu_gating.search.bnb import _strong
    from relu_gating.search.objectives import make_objective, with_rank

    Phi, U = instance(n, d, seed, data)
    obj = with_rank(make_objective(Phi, U, "bias"), exact_rank(Phi))
    masks, vals = chamber_values(obj, Phi)
    s, nodes = open_nodes(obj, expand, seed)
    rows = []
    for nd in nodes:
        sg = nd.signs
        fixed = sg != 0
        inside = np.all(masks[:, fixed] == (sg[fixed] > 0), axis=1)
        true = float(np.nanmax(vals[inside], initial=-np.inf))
        t0 = time.perf_counter()
        got = _strong.strong_bound(obj.Psi, obj.M, obj.Q_H, sg, s.P.zero_rows, nd.v)
        dt = time.perf_counter() - t0
        strong = np.inf if got is None else got[0]
        rows.append({"case": f"{data} {n}x{d} s{seed}", "U": int(np.sum((sg == 0) & ~s.P.zero_rows)),
                     "depth": nd.depth, "cheap": nd.claim, "strong": strong, "true": true, "ms": 1e3 * dt,
                     "best": s.best_value})
    return rows


def summarize(rows: list[dict]) -> None:
    bad = [r for r in rows if r["strong"] < r["true"] - 1e-9]
    print(f"\n{len(rows)} open nodes; strong bound below the true max (invalid): {len(bad)}")
    print(f"{'|U|':>9} {'nodes':>6} {'finite':>7} {'closed med':>11} {'closed p90':>11} {'settles':>8} "
          f"{'ms med':>8} {'ms p90':>8}")
    edges = [0, 8, 12, 16, 20, 24, 32, 1000]
    for lo, hi in zip(edges[:-1], edges[1:]):
        sel = [r for r in rows if lo <= r["U"] < hi]
        if not sel:
            continue
        fin = [r for r in sel if np.isfinite(r["strong"])]
        closed = [min(1.0, max(0.0, (r["cheap"] - min(r["strong"], r["cheap"])) / max(r["cheap"] - r["true"], 1e-12)))
                  for r in fin]
        settles = sum(1 for r in fin if r["best"] >= r["strong"] - 1e-9 and r["best"] < r["cheap"] - 1e-9)
        ms = [r["ms"] for r in sel]
        print(f"{lo:>4}-{hi - 1:<4} {len(sel):>6} {len(fin):>7} "
              f"{np.median(closed) if closed else float('nan'):>11.3f} "
              f"{np.percentile(closed, 90) if closed else float('nan'):>11.3f} {settles:>8} "
              f"{np.median(ms):>8.1f} {np.percentile(ms, 90):>8.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="20x3,24x3,14x4")
    ap.add_argument("--data", default="both", choices=["gaussian", "clustered", "both"])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--expand", type=int, default=30, help="expansions before the open nodes are studied")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    datas = ["gaussian", "clustered"] if a.data == "both" else [a.data]
    rows = []
    for case in a.cases.split(","):
        n, d = (int(x) for x in case.split("x"))
        for data in datas:
            for seed in range(a.seeds):
                got = study_case(n, d, seed, data, a.expand)
                rows += got
                if a.verbose:
                    for r in got:
                        print(r)
    summarize(rows)


if __name__ == "__main__":
    main()
