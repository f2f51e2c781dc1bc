r"""Benchmark: the certified cone pricing alone on the duals a bracket really prices, this checkout against
another commit.

The certified pricing (:meth:`ConePricer.bound`) is most of a variation norm's time at large ``n`` (a
moons bracket at n = 200: 75%), and its cost depends on the duals it sees (how far each moves from the
last: the multipliers kept per chamber are warm or not).  So the duals are recorded once: this checkout
runs the first ``--norms`` basis norms of a ``benchmarks/kappa_n.py`` family (seed 0, ``--pricing
early``, at most ``--max-iter`` priced rounds a norm, one carry) and keeps every dual passed to
``bound``.  Then a fresh process per checkout (one BLAS thread, the patterns enumerated first, not
timed) replays them in order through its own pricer; the checkouts alternate, ``--repeats`` times.
Printed per ``n``: the calls, each checkout's CPU seconds (medians), the ratio, and the largest
relative difference of the certified bounds (any multipliers give a valid bound; equal multipliers,
equal bounds).

Usage::

    python benchmarks/pricing_replay.py --against f204118 --n 200 400 --family moons --out FILE.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from compare import _checkout, save_run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_RECORD = r"""
import sys
root, here, fam, n, norms, max_iter, out = sys.argv[1:8]
sys.path.insert(0, root); sys.path.insert(0, here)
from threadpoolctl import threadpool_limits
threadpool_limits(1)
import numpy as np
import kappa_n
from relu_gating.layers import _cone_pricing
from relu_gating.layers.variation import variation_norm
from relu_gating.patterns import enumerate_patterns
f = kappa_n.family(fam, int(n), 0, 2)
pats = enumerate_patterns(f["Phi"])
ys = []
bound = _cone_pricing.ConePricer.bound
def record(self, y, n_columns=16):
    ys.append(np.array(y, dtype=float))
    return bound(self, y, n_columns)
_cone_pricing.ConePricer.bound = record
U, carry = f["bases"]["kappa(U_K)"], {}
for j in range(int(norms)):
    variation_norm(U[:, j], f["Phi"], tol=1e-2, patterns=pats, max_iter=int(max_iter), pricing="early", carry=carry)
np.save(out, np.array(ys))
"""

_REPLAY = r"""
import json, sys, time
root, here, fam, n, path = sys.argv[1:6]
sys.path.insert(0, root); sys.path.insert(0, here)
from threadpoolctl import threadpool_limits
threadpool_limits(1)
import numpy as np
import kappa_n
sys.path.insert(0, root)  # (importing kappa_n put its own checkout first: this checkout's relu_gating, not it)
from relu_gating.layers._cone_pricing import ConePricer
from relu_gating.patterns import enumerate_patterns
f = kappa_n.family(fam, int(n), 0, 2)
pats = enumerate_patterns(f["Phi"])
assert sys.modules["relu_gating"].__file__.startswith(root), sys.modules["relu_gating"].__file__
c0 = time.process_time()
cp = ConePricer(f["Phi"], pats, batched=True)
build = time.process_time() - c0
bounds, cpu = [], []
for y in np.load(path):
    c0 = time.process_time()
    bounds.append(float(cp.bound(y, n_columns=256)[0]))
    cpu.append(time.process_time() - c0)
print(json.dumps({"build_cpu": build, "cpu": cpu, "bounds": bounds}))
"""


def _child(code: str, root: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": root, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    res = subprocess.run([sys.executable, "-c", code, root, HERE, *args], env=env, capture_output=True, text=True,
                         check=True)
    return res.stdout.strip().splitlines()[-1] if res.stdout.strip() else ""


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, ROOT)
    from relu_gating.experiments._base import provenance

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--against", required=True, help="the baseline commit")
    ap.add_argument("--n", type=int, nargs="+", default=[200, 400])
    ap.add_argument("--family", default="moons", choices=["moons", "clusters"])
    ap.add_argument("--norms", type=int, default=2, help="basis norms whose duals are recorded (one carry)")
    ap.add_argument("--max-iter", type=int, default=30, help="priced rounds a recorded norm at most")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    start = provenance()
    rows = []
    with _checkout(args.against) as other, tempfile.TemporaryDirectory() as tmp:
        for n in args.n:
            duals = os.path.join(tmp, f"duals_{n}.npy")
            _child(_RECORD, ROOT, args.family, str(n), str(args.norms), str(args.max_iter), duals)
            runs: dict = {"this": [], "base": []}
            for i in range(args.repeats):
                for name, root in ((("this", ROOT), ("base", other)) if i % 2 == 0 else (("base", other), ("this", ROOT))):
                    runs[name].append(json.loads(_child(_REPLAY, root, args.family, str(n), duals)))
            row = {"n": n, "family": args.family, "calls": len(runs["this"][0]["cpu"])}
            for name, rs in runs.items():
                row[name] = {"cpu": statistics.median(sum(r["cpu"]) for r in rs),
                             "build_cpu": statistics.median(r["build_cpu"] for r in rs),
                             "per_call": [statistics.median(c) for c in zip(*(r["cpu"] for r in rs))],
                             "bounds": rs[0]["bounds"]}
            b0, b1 = row["base"]["bounds"], row["this"]["bounds"]
            row["ratio"] = row["this"]["cpu"] / row["base"]["cpu"]
            row["bound_difference"] = max(abs(x - y) / abs(y) for x, y in zip(b1, b0))
            rows.append(row)
            print(f"n={n} {args.family}: {row['calls']} certified pricings, CPU s this {row['this']['cpu']:.1f} "
                  f"(build {row['this']['build_cpu']:.1f}), base {row['base']['cpu']:.1f} "
                  f"(build {row['base']['build_cpu']:.1f}), ratio {row['ratio']:.2f}, "
                  f"largest bound difference {row['bound_difference']:.1e}", flush=True)
    if args.out:
        save_run(args.out, start, args, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
