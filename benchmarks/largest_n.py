"""Largest n certified in 60 s by enumeration (streamed), against the first release's frontier.

For each d, runs the certified query (Gaussian X, kNN graph, K = 4, features bias,
``memory="2G"``) in a fresh process with a wall-clock limit, at ``f x`` the first
release's largest n (measured in issue 11: d = 2: 1100, d = 3: 210, d = 4: 85,
d = 6: 30), for f = 2, 1.5, 1.25, 1 in turn; the first f that certifies in time is
reported with its time and patterns, so the table shows the factor reached at every d.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/largest_n.py [--limit 60] [--dims 2,3,4,6]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

BASELINE = {2: 1100, 3: 210, 4: 85, 6: 30}
FACTORS = (2.0, 1.5, 1.25, 1.0)

_CHILD = r"""
import json, sys, time
import numpy as np
import relu_gating as rg
n, d = int(sys.argv[1]), int(sys.argv[2])
X = np.random.default_rng(n * 10 + d).normal(size=(n, d))
t0 = time.perf_counter()
res = rg.best_neuron_from_samples(X, K=4, features="bias",
                                 options=rg.EnumerateOptions(memory="2G", max_patterns=None))
print(json.dumps({"certified": bool(res.certified), "seconds": time.perf_counter() - t0,
                  "patterns": int(res.n_patterns)}))
"""


def probe(n: int, d: int, limit: float) -> dict | None:
    """The run's summary, or None when it did not finish within ``limit`` seconds."""
    t0 = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, "-c", _CHILD, str(n), str(d)], capture_output=True, text=True,
                             timeout=limit + 15, check=True).stdout  # + interpreter start-up and graph
    except subprocess.TimeoutExpired:
        return None
    r = json.loads(out.strip().splitlines()[-1])
    r["wall"] = time.perf_counter() - t0
    return r if r["seconds"] <= limit and r["certified"] else None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--limit", type=float, default=60.0)
    p.add_argument("--dims", default="2,3,4,6")
    args = p.parse_args()
    print("| d | first release: largest n in 60 s | now: largest n tried that certifies in time | factor | "
          "patterns | seconds |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for d in (int(x) for x in args.dims.split(",")):
        base = BASELINE[d]
        for f in FACTORS:
            n = int(round(f * base))
            r = probe(n, d, args.limit)
            if r is not None:
                print(f"| {d} | {base} | {n} | {f:g}x | {r['patterns']:,} | {r['seconds']:.1f} |", flush=True)
                break
        else:
            print(f"| {d} | {base} | below {base} | <1x | | |", flush=True)


if __name__ == "__main__":
    main()
