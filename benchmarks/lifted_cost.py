r"""Benchmark: the lifted bound's cost test (``bnb/_subtree.py``, issue 39) on and off, alternating in one run.

Each case runs serially (``workers=1``, one BLAS thread) in a fresh process with the cost test on
(``Search.lifted_costs = True``, the default) and off (the rate test alone), the order alternating
between repeats.  Printed per run: the child's CPU seconds (the figure to compare on a loaded machine),
whether certified, the value, nodes, the lifted bound's seconds, the nodes the cost test turned down, and
per band the split subtrees measured (trackers, finished, mean seconds)::

    python benchmarks/lifted_cost.py --cases gauss:80x4,gauss:210x3,gauss:30x6,iris,bc-pca3 --repeats 2
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r} + "/benchmarks")
from relu_gating.search.bnb._search import Search
from relu_gating.search.bnb import branch_and_bound
Search.lifted_costs = {on}
seen = {{}}
run = Search.run
def keep(self, *a, **k):
    seen["s"] = self
    return run(self, *a, **k)
Search.run = keep
case = {case!r}
if case.startswith("gauss:"):
    from bnb import instance
    Phi, U = instance(*(int(x) for x in case.split(":")[1].split("x")), 0, "gauss")
else:
    from real import case_problem
    Phi, U, _, _ = case_problem(case)
b = branch_and_bound(Phi, U, features="bias", workers=1)
st = b.tree["stats"]
print(json.dumps({{"certified": bool(b.certified), "value": float(b.value), "nodes": int(st["nodes"]),
                  "lifted": st["t_lifted"], "skips": st.get("lifted_cost_skips", 0),
                  "splits": seen["s"].split_summary()}}))
"""


def one(case: str, on: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-c", _CHILD.format(root=ROOT, on=on, case=case)], env=env,
                         capture_output=True, text=True, cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"{case} failed:\n{out.stderr[-2000:]}")
    row = json.loads(out.stdout.strip().splitlines()[-1])
    row["cpu"] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return row


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="gauss:80x4,gauss:210x3,gauss:30x6,iris,bc-pca3")
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args(argv)
    cpu: dict = {}
    for rep in range(a.repeats):
        for case in a.cases.split(","):
            for on in ((True, False) if rep % 2 == 0 else (False, True)):
                r = one(case, on)
                cpu.setdefault((case, on), []).append(r["cpu"])
                print(f"repeat {rep} {case} cost test {'on' if on else 'off'}: {r['cpu']:.2f} s CPU, certified "
                      f"{r['certified']}, value {r['value']:.9f}, nodes {r['nodes']}, lifted {r['lifted']:.2f} s, "
                      f"turned down {r['skips']}, load {os.getloadavg()[0]:.1f}", flush=True)
    for case in a.cases.split(","):
        on, off = statistics.median(cpu[(case, True)]), statistics.median(cpu[(case, False)])
        print(f"{case}: median CPU on {on:.2f} s, off {off:.2f} s, on / off {on / off:.2f}")


if __name__ == "__main__":
    main()
