"""Practical sizes: patterns, time, peak memory and certificate size of certified queries, measured here.

Each case runs in a fresh process (so peak memory is that query's alone): Gaussian
samples, kNN graph, K = 4, features bias, the CLI's defaults otherwise; the
certificate is written as JSON (and as the binary ``.npz`` format when the
installed version has it).  Next to every measurement is what
:func:`relu_gating.plan_query` predicted before the run (the line the CLI prints
first), so the table also checks the estimate.  Prints a Markdown table for the
README.

    python benchmarks/sizes.py            # the README table (about 10 minutes)
    python benchmarks/sizes.py --quick    # three small cases
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CASES = [(200, 2), (1000, 2), (60, 3), (120, 3), (200, 3), (40, 4), (70, 4), (25, 6)]
QUICK = [(100, 2), (40, 3), (20, 4)]

_CHILD = r"""
import json, os, resource, sys, time
import numpy as np
import relu_gating as rg
from relu_gating.search.plan import plan_query
n, d, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
X = np.random.default_rng(n * 100 + d).normal(size=(n, d))
plan = plan_query(rg.layer_input(X))
t0 = time.perf_counter()
res = rg.best_neuron_from_samples(X, K=4, features="bias", options=rg.EnumerateOptions(max_patterns=None))
sec = time.perf_counter() - t0
with open(out + ".json", "w") as fh:
    json.dump(res.to_dict(), fh)
sizes = {"json": os.path.getsize(out + ".json")}
try:
    from relu_gating.certificate import save_binary
    save_binary(res, out + ".npz", {})
    sizes["npz"] = os.path.getsize(out + ".npz")
except ImportError:
    pass
print(json.dumps({"n": n, "d": d, "patterns": res.n_patterns, "certified": bool(res.certified),
                  "seconds": sec, "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "plan_patterns": plan.patterns, "plan_seconds": plan.seconds,
                  "plan_memory": plan.memory_bytes, "cert_bytes": sizes}))
"""


def _run(n: int, d: int, tmp: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(n), str(d), os.path.join(tmp, f"c{n}_{d}")],
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _mb(b: float) -> str:
    return f"{b / 1e6:,.0f} MB" if b >= 1e7 else f"{b / 1e6:.1f} MB"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    print("| n | d | patterns | certified | time (predicted) | peak memory (predicted) | certificate JSON | binary |")
    print("| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for n, d in QUICK if args.quick else CASES:
            r = _run(n, d, tmp)
            npz = r["cert_bytes"].get("npz")
            print(f"| {n} | {d} | {r['patterns']:,} | {'yes' if r['certified'] else 'no'} | "
                  f"{r['seconds']:.1f} s ({r['plan_seconds']:.0f} s) | {_mb(r['peak_rss'])} "
                  f"({_mb(r['plan_memory'])}) | {_mb(r['cert_bytes']['json'])} | "
                  f"{_mb(npz) if npz else '-'} |", flush=True)


if __name__ == "__main__":
    main()
