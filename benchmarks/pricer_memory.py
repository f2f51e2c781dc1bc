r"""Benchmark: the cone pricer's peak memory and seconds per pricing call at large n (d = 2), this checkout
against another commit.

Per (n, checkout), a fresh process (one BLAS thread) builds two moons at ``n`` (``benchmarks/kappa_n.py``'s
family, seed 0), enumerates its chambers, builds the batched :class:`ConePricer` and prices one seeded
random dual: ``columns`` (the early pricing's uncertified round), a cold ``bound`` (the first certified
round of a sign) and a warm one (the multipliers kept).  It records the peak resident memory after each
stage (``ru_maxrss``) and the CPU seconds of each call.  The checkouts alternate per n.

Usage::

    python benchmarks/pricer_memory.py --against 2996d91 --n 400 700 --out benchmarks/results/pricer_memory.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from compare import _checkout, save_run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_CHILD = r"""
import json, resource, sys, time
root, here, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, root); sys.path.insert(0, here)
import kappa_n
sys.path.insert(0, root)
from threadpoolctl import threadpool_limits
threadpool_limits(1)
import numpy as np
from relu_gating.patterns import enumerate_patterns
from relu_gating.layers._cone_pricing import ConePricer

def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0

f = kappa_n.family("moons", n, 0, 2)
out = {"n": n}
c0 = time.process_time(); pats = enumerate_patterns(f["Phi"])
out.update(chambers=len(pats), enumerate_cpu=time.process_time() - c0, peak_mb_enumerate=peak())
c0 = time.process_time(); cp = ConePricer(f["Phi"], pats, batched=True)
out.update(pricer_cpu=time.process_time() - c0, peak_mb_pricer=peak())
y = np.random.default_rng(0).standard_normal(n)
y /= 4 * np.linalg.norm(y)
c0 = time.process_time(); cp.columns(y, 1.0); out["columns_cpu"] = time.process_time() - c0
c0 = time.process_time(); cp.bound(y); out["bound_cold_cpu"] = time.process_time() - c0
c0 = time.process_time(); cp.bound(1.01 * y); out["bound_warm_cpu"] = time.process_time() - c0
out["peak_mb"] = peak()
print(json.dumps(out))
"""


def _run(root: str, n: int) -> dict:
    env = {**os.environ, "PYTHONPATH": root, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    res = subprocess.run([sys.executable, "-c", _CHILD, root, HERE, str(n)], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, ROOT)
    from relu_gating.experiments._base import provenance

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--against", required=True, help="the baseline commit")
    ap.add_argument("--n", type=int, nargs="+", default=[400, 700])
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    start = provenance()
    rows = []
    with _checkout(args.against) as other:
        for i, n in enumerate(args.n):
            pair = (("this", ROOT), ("base", other)) if i % 2 == 0 else (("base", other), ("this", ROOT))
            for name, root in pair:
                r = {"checkout": name, **_run(root, n)}
                rows.append(r)
                print(json.dumps(r), flush=True)
    if args.out:
        save_run(args.out, start, args, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
