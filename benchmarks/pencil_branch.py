r"""Benchmark: the split chosen by the children's pencil bounds where the node bound is at the cap
(``relu_gating/search/bnb/_pencil_branch.py``, issue 39) against the rank-one scores alone
(``_pencil_branch.USE = False``), at equal CPU seconds, alternating in fresh processes.

Each run is a serial search (one BLAS thread, no workers, no audit) stopped after ``--cpu`` CPU seconds of
its own: a greedy step of a layer file (``greedy_late.py build``; as ``greedy_late.py fixed`` runs it: the
step's features, the previous step's candidates as starts, no guide) or a case of ``benchmarks/real.py``
(as ``bnb_fixed_cpu.py`` runs it).  Printed per run: alpha reached, the largest open bound, expansions,
nodes, lifted tries and settled, and the CPU seconds of the pencil scores.

Run::

    python benchmarks/pencil_branch.py --layer /tmp/layer4.pkl --steps 5,6 --cpu 40 --repeats 2
    python benchmarks/pencil_branch.py --cases bc-pca5 --cpu 60 --repeats 2
    python benchmarks/pencil_branch.py --layer /tmp/layer4.pkl --steps 5 --cpu 20 --repeats 2 --together  # under load
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

KEEP = ("nodes", "lifted", "lifted_settled", "lifted_plain", "lifted_plain_settled", "t_pencil_branch", "pencil_calls",
        "pencil_rows", "pencil_at_cap", "pencil_skips", "t_score")


def child(args) -> dict:
    from relu_gating.patterns import single_thread_blas
    from relu_gating.search.bnb import _pencil_branch

    _pencil_branch.USE = args.use == "on"
    if args.layer:
        from greedy_late import _cands, _features, _search, heap_snapshot
        from real import case_problem

        layer = pickle.loads(Path(args.layer).read_bytes())
        Phi, U, _, _ = case_problem(args.case)
        prev = layer[args.step - 2]
        starts = [c for c in _cands(prev) if not np.array_equal(c, prev["theta"])][:32]
        s = _search(Phi, U, _features(Phi, layer, args.step), None, np.array(starts) if starts else None)
    else:
        from bnb_fixed_cpu import fixed_cpu_search  # noqa: F401  (the same setup as its child)
        from greedy_late import heap_snapshot
        from relu_gating.search.bnb._api import _seed_incumbent, _starts
        from relu_gating.search.bnb._search import Search
        from relu_gating.search.objectives import make_objective, with_rank
        from relu_gating.search.proofs import exact_rank
        from real import case_problem

        Phi, U, _, _ = case_problem(args.case)
        obj = make_objective(Phi, U, "bias")
        obj = with_rank(obj, exact_rank(obj.Phi))
        s = Search(obj, 1.0, 1e-9, "auto", 0, True)
        _seed_incumbent(s, obj, 0, _starts(None, obj.Phi.shape[1]))
    c0 = time.process_time()
    s.reserve = lambda: 2e9 if time.process_time() - c0 > args.cpu else 0.0
    with single_thread_blas():
        s.run(time.perf_counter() + 1e9)
    snap = heap_snapshot(s, time.process_time() - c0)
    return {"alpha": snap["alpha"], "u": snap["u"], "best": snap["best"], "expansions": s.expansions,
            "open": snap["open"], "cpu": snap["cpu"], **{k: s.stats.get(k, 0) for k in KEEP}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="iris")
    ap.add_argument("--cases", default=None, help="real.py cases (no layer), comma-separated")
    ap.add_argument("--layer")
    ap.add_argument("--steps", default="5")
    ap.add_argument("--step", type=int, default=5, help=argparse.SUPPRESS)
    ap.add_argument("--cpu", type=float, default=40.0)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--use", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--together", action="store_true", help="run each pair at once (each to its own CPU seconds)")
    ap.add_argument("--save")
    args = ap.parse_args(argv)
    if args.use is not None:
        print(json.dumps(child(args)), flush=True)
        return 0
    jobs = ([("--layer", args.layer, "--case", args.case, "--step", st) for st in args.steps.split(",")]
            if args.layer else [("--case", c) for c in (args.cases or args.case).split(",")])
    rows = []
    for job in jobs:
        for r in range(args.repeats):
            order = ("on", "off") if r % 2 == 0 else ("off", "on")
            runs = []
            for use in order if args.together else ():
                runs.append((use, os.getloadavg()[0], subprocess.Popen(
                    [sys.executable, __file__, *job, "--cpu", str(args.cpu), "--use", use], stdout=subprocess.PIPE,
                    text=True)))
            for use in () if args.together else order:
                runs.append((use, os.getloadavg()[0], subprocess.run(
                    [sys.executable, __file__, *job, "--cpu", str(args.cpu), "--use", use], capture_output=True,
                    text=True, check=True).stdout))
            for use, load, got in runs:
                out = got if isinstance(got, str) else got.communicate()[0]
                row = {"job": " ".join(job[1::2][-2:]), "use": use, "load": round(load, 1), "together": args.together,
                       **json.loads(out.strip().splitlines()[-1])}
                rows.append(row)
                print(json.dumps(row), flush=True)
                if args.save:
                    Path(args.save).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
