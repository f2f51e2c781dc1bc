r"""Benchmark: the branch and bound on one worker against the default (every usable core), one run.

Each case is ``benchmarks/bnb.py``'s instance (clustered or Gaussian ``X``, features bias, kNN graph,
K = 4) and runs, interleaved, with the same ``max_seconds``:

* ``1``: ``best_neuron(strategy="branch-and-bound", options=BranchAndBoundOptions(workers=1))``, serial;
* ``all``: the default, no executor named: a pool of every usable core, started when 2 s of serial
  search have not settled the query, the tree audited on it;
* ``all, old audit`` (``--old``): the default with the audit as it was before issue 39 (in the main
  process alone, BLAS threads as the process has them, its reserve counted as if serial and without
  the slowdown).

Printed per run: the wall time of the whole call (``max_seconds`` is that), why it stopped, whether
certified, the alpha reached, nodes created, the audit's seconds and the reserve kept for it at the
end, the search's wall over CPU seconds (``slowdown``: the machine's load as the search saw it), and whether the answers agree (certified runs: the same value to 1e-9; otherwise each value at
most the other run's upper bound).  ``--verify`` also re-checks each certificate with
``relu_gating.verify``.  ``--audit`` first times the audit of one saved tree with one BLAS thread
against the process's default.

    python benchmarks/bnb_cores.py --cases clustered-400x3,gauss-100x4 --budget 60 --old \
        --save benchmarks/results/bnb_cores.json
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def one(Phi, U, budget: float, mode: str, verify: bool) -> dict:
    from relu_gating import best_neuron
    from relu_gating import verify as check
    from relu_gating._runtime.threads import thread_budget, usable_cores
    from relu_gating.search.bnb import _audit, _budget as _search
    from relu_gating.search.options import BranchAndBoundOptions

    saved = (_audit.PARALLEL_MIN_NODES, _audit.AUDIT_BLAS_THREADS, _search.AUDIT_PARALLEL_EFFICIENCY,
             _search.SLOWDOWN_MAX)
    if mode == "all, old audit":  # the audit in the main process, BLAS as the process has it, reserve as before
        _audit.PARALLEL_MIN_NODES, _audit.AUDIT_BLAS_THREADS = 10**18, thread_budget()
        _search.AUDIT_PARALLEL_EFFICIENCY, _search.SLOWDOWN_MAX = 1.0 / usable_cores(), 1.0
    try:
        t = time.perf_counter()
        res = best_neuron(Phi, U, strategy="branch-and-bound", max_seconds=budget,
                          options=BranchAndBoundOptions(workers=1 if mode == "1" else None))
        wall = time.perf_counter() - t
    finally:
        (_audit.PARALLEL_MIN_NODES, _audit.AUDIT_BLAS_THREADS, _search.AUDIT_PARALLEL_EFFICIENCY,
         _search.SLOWDOWN_MAX) = saved
    st = res.tree["stats"]
    row = {"mode": mode, "wall": wall, "stop": st["stop"], "certified": bool(res.certified),
           "alpha": res.value / res.upper_bound if res.upper_bound > 0 else 1.0, "value": float(res.value),
           "upper": float(res.upper_bound), "nodes": int(res.n_nodes), "tree_nodes": len(res.tree["nodes"]),
           "t_audit": float(st["t_audit"]), "slowdown": float(st.get("slowdown", 1.0)),
           "workers": int(st.get("parallel_workers", 1)),
           "tasks": int(st.get("parallel_tasks", 0)), "reserve_end": _reserve(st, mode)}
    if verify:
        t = time.perf_counter()
        rep = check(json.loads(json.dumps(res.to_dict())), Phi, U, "bias")
        row.update(verified=bool(rep.valid and rep.certified == res.certified), t_verify=time.perf_counter() - t)
    return row


def _reserve(st: dict, mode: str) -> float:
    """The reserve :meth:`Search.reserve` kept at the end, from the run's stats."""
    from relu_gating.search.bnb._search import Search

    fake = type("S", (), {"stats": st, "audit_workers": 1 if mode != "all" else int(st.get("parallel_workers", 1)),
                          "slowdown_fixed": st.get("slowdown", 1.0)})()
    return float(Search.reserve(fake))


def agree(rows: list[dict]) -> bool:
    ok = True
    for a in rows:
        for b in rows:
            if a["certified"] and b["certified"]:
                ok &= abs(a["value"] - b["value"]) <= 1e-9
            ok &= a["value"] <= b["upper"] + 1e-9
    return ok


def audit_threads(Phi, U, budget: float) -> dict:
    """The audit of one tree (a serial search of ``budget`` s) with one BLAS thread and with the default."""
    from relu_gating._runtime.threads import thread_budget
    from relu_gating.search.bnb import _api, _audit

    got = {}
    inner = _api.audit_tree

    def keep(obj, nodes, executor=None):
        got["obj"], got["nodes"] = obj, copy.deepcopy(nodes)
        return inner(obj, nodes, executor)

    _api.audit_tree = keep
    try:
        _api.branch_and_bound(Phi, U, max_seconds=budget, workers=1)
    finally:
        _api.audit_tree = inner
    out = {"tree_nodes": len(got["nodes"]), "lifted_leaves": sum(nd[0] == "d" for nd in got["nodes"])}
    saved = _audit.AUDIT_BLAS_THREADS
    try:
        for threads in (1, thread_budget(), 1, thread_budget()):
            _audit.AUDIT_BLAS_THREADS = threads
            t = time.perf_counter()
            _audit.audit_tree(got["obj"], copy.deepcopy(got["nodes"]))
            out.setdefault(f"blas_{threads}", []).append(time.perf_counter() - t)
    finally:
        _audit.AUDIT_BLAS_THREADS = saved
    return out


def main() -> None:
    from bnb import instance

    from relu_gating._runtime.threads import usable_cores

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="clustered-400x3,gauss-100x4")
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--old", action="store_true", help="also the default with the audit as before issue 39")
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--audit", action="store_true", help="first: the audit of one tree, 1 BLAS thread vs default")
    ap.add_argument("--save", default=None)
    args = ap.parse_args()
    import subprocess

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    record: dict = {"commit": commit, "cores": usable_cores(), "load_start": os.getloadavg(), "budget": args.budget, "cases": []}
    print(f"usable cores {usable_cores()}, load {os.getloadavg()[0]:.2f}; budget {args.budget:g} s", flush=True)
    if args.audit:
        Phi, U = instance(400, 3, args.seed, "clustered")
        record["audit_threads"] = audit_threads(Phi, U, args.budget)
        print("audit of one tree (clustered 400x3):", json.dumps(record["audit_threads"]), flush=True)
    modes = ["1", "all"] + (["all, old audit"] if args.old else [])
    print("| case | workers | wall s | stop | certified | alpha reached | nodes | audit s | reserve at end s | "
          "slowdown | answers agree |")
    print("|---|---|---:|---|---|---:|---:|---:|---:|---:|---|", flush=True)
    for case in args.cases.split(","):
        data, size = case.split("-")
        n, d = (int(x) for x in size.split("x"))
        Phi, U = instance(n, d, args.seed, data)
        rows = [one(Phi, U, args.budget, mode, args.verify) for mode in modes]
        ok = agree(rows) and all(r.get("verified", True) for r in rows)
        for r in rows:
            print(f"| {case} | {r['mode']} ({r['workers']}) | {r['wall']:.1f} | {r['stop']} | "
                  f"{'yes' if r['certified'] else 'no'} | {r['alpha']:.6f} | {r['nodes']:,} | {r['t_audit']:.1f} | "
                  f"{r['reserve_end']:.1f} | {r['slowdown']:.1f} | {'yes' if ok else 'NO'} |", flush=True)
        record["cases"].append({"case": case, "rows": rows, "agree": ok, "load": os.getloadavg()})
        if args.save:
            Path(args.save).write_text(json.dumps(record, indent=1))
    record["load_end"] = os.getloadavg()
    if args.save:
        Path(args.save).write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
