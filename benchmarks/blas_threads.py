"""One BLAS thread or two for the enumeration's bound pass, with the other core busy (or not).

Each run is a fresh process that answers the default best-neuron query (Gaussian X, K = 4,
features bias, in-memory enumeration) with BLAS limited to T threads for the whole process
(``relu_gating._runtime.threads.fit_blas``) and for the bound pass (``BOUND_PASS_THREADS = T``). Runs
alternate T = 1, 2, 1, 2, ... so that a change in the machine's load hits both alike; the
medians are printed (whole query and bound pass). ``--load`` starts a busy-loop process for the
duration (the other core taken, as on a shared machine).

    python benchmarks/blas_threads.py --n 210 --d 3 --repeats 5 --load

Decides ``relu_gating._runtime.threads.BOUND_PASS_THREADS``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CHILD = r"""
import json, sys, time
import numpy as np
threads, n, d = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
from relu_gating._runtime import threads as _threads
from relu_gating.data.io import InputData, resolve_problem
from relu_gating.search.front import best_neuron
from relu_gating.search.options import EnumerateOptions
_threads.fit_blas(threads)
_threads.BOUND_PASS_THREADS = threads
X = np.random.default_rng(0).normal(size=(n, d))
prob = resolve_problem(InputData(path="<bench>", X=X), K=4)
t0 = time.perf_counter()
res = best_neuron(prob.Phi, prob.U_K, features="bias", options=EnumerateOptions(max_patterns=None))
print(json.dumps({"threads": threads, "seconds": time.perf_counter() - t0, "bounds": res.seconds.get("bounds"),
                  "certified": bool(res.certified), "patterns": int(res.n_patterns)}))
"""


def run_once(threads: int, n: int, d: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                           "MKL_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", CHILD, str(threads), str(n), str(d)], env=env,
                         capture_output=True, text=True, check=True, cwd=os.path.dirname(os.path.dirname(
                             os.path.abspath(__file__))))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=210)
    ap.add_argument("--d", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--load", action="store_true", help="keep the other core busy with a busy-loop process")
    args = ap.parse_args()
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a kill still ends the busy loop (finally below)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.load else None
    try:
        time.sleep(0.5 if busy else 0)
        rows = []
        for r in range(args.repeats):
            for t in ((1, 2) if r % 2 == 0 else (2, 1)):  # alternate, and alternate who goes first
                rows.append(run_once(t, args.n, args.d))
                print(json.dumps(rows[-1]), flush=True)
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    med = {t: {k: statistics.median(r[k] for r in rows if r["threads"] == t) for k in ("seconds", "bounds")}
           for t in (1, 2)}
    print(f"n = {args.n}, d = {args.d}, other core {'busy' if args.load else 'as it is'}, "
          f"load average {os.getloadavg()[0]:.1f}, {args.repeats} runs each, medians:")
    for t in (1, 2):
        print(f"  {t} BLAS thread(s): query {med[t]['seconds']:.2f} s, bound pass {med[t]['bounds']:.2f} s")
    print(f"  ratio 2 / 1: query {med[2]['seconds'] / med[1]['seconds']:.2f}, "
          f"bound pass {med[2]['bounds'] / med[1]['bounds']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
