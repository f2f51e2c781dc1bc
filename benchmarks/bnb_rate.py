r"""Benchmark: one switch of the branch and bound on and off at equal CPU (issue 39, reach-rate).

Each run is a fresh process that builds the case as ``benchmarks/real.py`` does and searches until it has
used ``--cpu`` CPU seconds of its own (one BLAS thread; no audit, no certificate); the two arms run at once
(``--together``, the default: the shared machine's load hits both alike) or one after the other, the order
swapped each repeat. Switches:

* ``tallies``: the parallel driver (``bnb/_parallel.py``) with its tasks run inline in the one process
  (2 "workers": the same tasks, slices and grafts), the tasks started from the sender's tallies
  (``bnb/_tallies.py``) or fresh; ``--delay`` sets the lifted bound's delay in both arms (0: the regime
  after it);
* ``batch``: the serial search with the kept simplices tested in one product per simplex
  (``_cone_nnls.BATCH``) or per row;
* ``min-rank``: the serial search with the working-set NNLS from rank ``--rank`` or from 6 (as is).

Printed per run: CPU seconds, expansions, nodes, alpha reached, nodes a CPU second, the lifted tries.

    python benchmarks/bnb_rate.py --switch tallies --cases bc-pca5 --cpu 45 --delay 0
    python benchmarks/bnb_rate.py --switch batch --cases bc-pca5 --cpu 25 --repeats 2
    python benchmarks/bnb_rate.py --switch min-rank --rank 4 --cases clustered-1000x3-8c,iris-dup --cpu 20 --repeats 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import Future
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


class Inline:
    """An executor of ``w`` workers that runs each task when it is submitted."""

    def __init__(self, w: int) -> None:
        self._max_workers = w

    def submit(self, fn, *a, **k):
        f = Future()
        f.set_result(fn(*a, **k))
        return f


def child(case: str, cpu: float, switch: str, on: bool, rank: int, delay: int | None) -> dict:
    from bnb_fixed_cpu import fixed_cpu_search

    from relu_gating.search.bnb import _cone_nnls, _growth
    from relu_gating.search.bnb import _parallel as par
    from relu_gating.search.bnb._node_bounds import NodeBounds

    if switch == "tallies" and not on:
        par.tallies = lambda search, elapsed: None  # the tasks start fresh, as before
    if switch == "batch":
        _cone_nnls.BATCH = on
    if switch == "min-rank" and on:
        _growth.NNLS_MIN_RANK = rank
    if delay is not None:
        NodeBounds.lifted_after = delay
    run = (lambda s, deadline: par.run_parallel(s, Inline(2), deadline)) if switch == "tallies" else None
    s, why, used, _ = fixed_cpu_search(case, cpu, run)
    st = s.stats
    upper = max(s.global_bound(), s.best_value)
    return {"case": case, "switch": switch, "on": on, "stop": why, "cpu": used, "expansions": s.expansions,
            "nodes": st["nodes"], "nodes_per_cpu": st["nodes"] / used, "alpha": s.best_value / upper,
            "lifted": st["lifted"], "lifted_plain": st["lifted_plain"], "tasks": st.get("parallel_tasks", 0),
            "load": os.getloadavg()[0]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--switch", choices=["tallies", "batch", "min-rank"], required=True)
    ap.add_argument("--cases", default="bc-pca5")
    ap.add_argument("--cpu", type=float, default=25.0)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--rank", type=int, default=4, help="min-rank: the working set from this rank in the 'on' arm")
    ap.add_argument("--delay", type=int, default=None, help="the lifted bound's delay (nodes) in both arms")
    ap.add_argument("--one-by-one", action="store_true", help="the arms one after the other, not at once")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--on", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.cpu, args.switch, bool(args.on), args.rank, args.delay)))
        return
    env = dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH") or str(HERE.parent))
    for r in range(args.repeats):
        for case in args.cases.split(","):
            arms = (1, 0) if r % 2 == 0 else (0, 1)
            cmds = [[sys.executable, __file__, "--child", case, "--on", str(on), "--switch", args.switch,
                     "--cpu", str(args.cpu), "--rank", str(args.rank)] + ([] if args.delay is None else
                                                                          ["--delay", str(args.delay)]) for on in arms]
            if args.one_by_one:
                outs = [subprocess.run(c, env=env, capture_output=True, text=True).stdout for c in cmds]
            else:
                procs = [subprocess.Popen(c, env=env, stdout=subprocess.PIPE, text=True) for c in cmds]
                outs = [p.communicate()[0] for p in procs]
            for out in outs:
                print(json.dumps({"repeat": r, **json.loads(out.strip().splitlines()[-1])}), flush=True)


if __name__ == "__main__":
    main()
