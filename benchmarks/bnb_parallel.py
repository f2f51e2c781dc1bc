"""Parallel branch and bound: serial against 2 (and more) process workers, same case, one run.

Each case (``benchmarks/bnb.py``'s instances: Gaussian or clustered ``X``, features bias, kNN
graph, K = 4) is solved to the end by ``branch_and_bound`` serially and with a
``ProcessPoolExecutor`` of each ``--workers`` count (subtrees as tasks, shared incumbent),
``--repeats`` times each, interleaved; it prints the median wall time, nodes created, the
speed-up over serial, and checks that every run is certified with the same value (1e-9)::

    python benchmarks/bnb_parallel.py                          # 100x4, 45x5; 1 vs 2 workers
    python benchmarks/bnb_parallel.py --cases 80x4 --workers 2,4 --repeats 3 --save out.json

A speed-up needs the cores: on a 2-core machine 2 workers is the most that can pay off, and the
main process (which grafts subtrees and keeps the heap) shares them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def one(Phi, U, workers: int) -> dict:
    from relu_gating.search.bnb import branch_and_bound

    t = time.perf_counter()
    if workers <= 1:
        r = branch_and_bound(Phi, U, features="bias")
    else:
        with ProcessPoolExecutor(max_workers=workers) as ex:
            r = branch_and_bound(Phi, U, features="bias", executor=ex)
    return {"seconds": time.perf_counter() - t, "nodes": int(r.n_nodes), "value": float(r.value),
            "certified": bool(r.certified)}


def main() -> None:
    from bnb import instance

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="100x4,45x5")
    ap.add_argument("--data", default="gauss", choices=("gauss", "clustered"))
    ap.add_argument("--workers", default="2", help="comma-separated worker counts (serial always runs)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", default=None)
    args = ap.parse_args()
    counts = [1] + [int(w) for w in args.workers.split(",")]
    print(f"cores {os.cpu_count()}, load {os.getloadavg()[0]:.2f}; medians of {args.repeats}", flush=True)
    print("| case | workers | seconds (median) | nodes | speed-up | certified, same value |")
    print("|---|---:|---:|---:|---:|---|")
    out = []
    for case in args.cases.split(","):
        n, d = (int(x) for x in case.split("x"))
        Phi, U = instance(n, d, args.seed, args.data)
        runs: dict[int, list[dict]] = {w: [] for w in counts}
        for _ in range(args.repeats):
            for w in counts:  # interleaved: load drifts hit every count alike
                runs[w].append(one(Phi, U, w))
        ref = runs[1][0]["value"]
        base = statistics.median(r["seconds"] for r in runs[1])
        for w in counts:
            sec = statistics.median(r["seconds"] for r in runs[w])
            ok = all(r["certified"] and abs(r["value"] - ref) <= 1e-9 for r in runs[w])
            nodes = statistics.median(r["nodes"] for r in runs[w])
            print(f"| {args.data} {case} | {w} | {sec:.1f} | {nodes:,.0f} | {base / sec:.2f}x | "
                  f"{'yes' if ok else 'NO'} |", flush=True)
            out.append({"case": case, "data": args.data, "workers": w, "seconds": sec, "nodes": nodes,
                        "speedup": base / sec, "ok": ok, "runs": runs[w]})
    if args.save:
        Path(args.save).write_text(json.dumps({"load_end": os.getloadavg(), "rows": out}, indent=1))


if __name__ == "__main__":
    main()
