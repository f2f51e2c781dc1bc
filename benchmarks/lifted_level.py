r"""Benchmark: the lifted bound's tries on recorded nodes, with and without ADMM at the level (issue 39, Reach IV).

Nodes recorded by ``relax_gap.py --dump`` (a greedy step of a layer file from ``greedy_late.py build``: the
nodes the search tried the lifted bound on, with their signs, interior points and the level that settles
them).  For up to ``--nodes`` of them with ``--lo``..``--hi`` undecided rows (only those the search's
first-order multipliers did not settle, with ``--failing``), ``_strong.strong_bound`` runs as the search
runs it, alternately with ``_strong.LEVEL_ADMM`` off (the code of main: first-order steps, then
``level_order``) and on (then ADMM, :mod:`relu_gating.search.bnb._lifted_admm`), each try on the CPU clock,
single-threaded BLAS.  A node counts as settled when the bound found is at most the level and the checker
(:func:`relu_gating.search.proofs.lifted_leaf_bound`) accepts the evidence at the level.  Per node: the
bounds, ms per try, the multipliers' nonzeros.

Run::

    python benchmarks/relax_gap.py --layer /tmp/layer7.pkl --step 5 --cpu 40 --nodes 0 --dump /tmp/nodes5.pkl
    python benchmarks/lifted_level.py --layer /tmp/layer7.pkl --step 5 --nodes-from /tmp/nodes5.pkl --failing
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def one_try(s, node, admm: bool) -> dict:
    """``strong_bound`` on ``node`` as the search calls it, ``LEVEL_ADMM`` set to ``admm``: bound, ms, settled."""
    from relu_gating.search.bnb import _strong
    from relu_gating.search.proofs import lifted_leaf_bound

    k, signs, V, level = node[:4]
    obj, zero = s.obj, s.P.zero_rows
    _strong.LEVEL_ADMM = admm
    t = time.process_time()
    got = _strong.strong_bound(obj.Psi, obj.M, obj.Q_H, signs, zero, V, level=level)
    ms = 1e3 * (time.process_time() - t)
    u = float("inf") if got is None else float(got[0])
    ok = u <= level and np.isfinite(lifted_leaf_bound(obj.Psi, obj.M, obj.Q_H, signs, zero, level, *got[1]))
    nnz = 0 if got is None else int(np.asarray(got[1][1]["entries"]).shape[0])
    return {"bound": u, "ms": ms, "settled": bool(ok), "nnz": nnz}


def run(args) -> dict:
    from relax_gap import _search
    from relu_gating.patterns import single_thread_blas

    s = _search(args)
    saved = pickle.loads(Path(args.nodes_from).read_bytes())
    rec = saved["rec"]
    band = [r for r in rec if args.lo <= r[0] <= args.hi and not (args.failing and r[4])]
    pick = np.linspace(0, len(band) - 1, min(args.nodes, len(band))).round().astype(int) if band else []
    rows = []
    with single_thread_blas():
        for i, j in enumerate(pick):
            node = band[j]
            row = {"undecided": int(node[0]), "level": float(node[3]), "fo_settled_in_search": bool(node[4])}
            for admm in ((False, True) if i % 2 == 0 else (True, False)):
                row["admm" if admm else "main"] = one_try(s, node, admm)
            rows.append(row)
            print(json.dumps(row), flush=True)
    summary = {}
    for key in ("main", "admm"):
        ms = [r[key]["ms"] for r in rows]
        summary[key] = {"settled": sum(r[key]["settled"] for r in rows), "of": len(rows),
                        "ms_median": float(np.median(ms)) if ms else None, "ms_total": float(np.sum(ms))}
    print(json.dumps(summary), flush=True)
    return {"rows": rows, "summary": summary, "in_band": len(band)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="iris")
    ap.add_argument("--layer", required=True)
    ap.add_argument("--step", type=int, default=5)
    ap.add_argument("--nodes-from", required=True, help="nodes saved by relax_gap.py --dump")
    ap.add_argument("--nodes", type=int, default=40)
    ap.add_argument("--lo", type=int, default=40)
    ap.add_argument("--hi", type=int, default=80)
    ap.add_argument("--failing", action="store_true", help="only nodes the search's first-order multipliers did not settle")
    ap.add_argument("--save")
    args = ap.parse_args(argv)
    out = run(args)
    if args.save:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True,
                                text=True).stdout.strip()
        Path(args.save).write_text(json.dumps({"commit": commit, "command": " ".join(sys.argv), "load": os.getloadavg(),
                                               "args": vars(args), **out}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
