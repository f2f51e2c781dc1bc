r"""Benchmark: the early pricing's starting columns, before (the 400 witnesses most aligned with ``v``) and
after (those, then warm LPs each pricing every chamber's witness in chunks and adding the most violated:
:func:`relu_gating.layers.variation._seed_master_chunked`; "before" is the same with ``_SEED_LPS = 0``).

One variation norm, ``||U_K[:, col]||_A`` of a :mod:`benchmarks.kappa_n` family, with ``pricing="early"``,
run alternately with each start in one process (the load hits both alike).  For each run it records
every priced round's certified interval against the CPU seconds since the call began (pattern
enumeration excluded: shared, done once) and prints the CPU seconds to reach each relative width
``(upper - lower) / upper``.

Usage::

    python benchmarks/kappa_start.py --family moons --n 400 --seed 0 --budget 300 \
        --out benchmarks/results/kappa_start_n400.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

WIDTHS = (1.0, 0.5, 0.2, 0.1, 0.05, 0.01)


class _Budget(Exception):
    """The run's CPU budget is spent."""


def run_one(start: str, v: np.ndarray, Phi: np.ndarray, pats: object, args: argparse.Namespace) -> dict:
    """One norm with the start ``"before"`` or ``"after"``: its trace ``[(cpu s, lower, upper)]`` and result."""
    from relu_gating.layers import variation

    saved = variation._SEED_LPS
    if start == "before":
        variation._SEED_LPS = 0
    trace: list[tuple[float, float, float]] = []
    c0 = time.process_time()

    def on_round(it: int, lower: float, upper: float) -> None:
        trace.append((time.process_time() - c0, float(lower), float(upper)))
        print(f"  {start} round {it}: [{lower:.4g}, {upper:.4g}] {trace[-1][0]:.1f} CPU s", flush=True)
        if trace[-1][0] > args.budget:
            raise _Budget

    out: dict = {"start": start}
    try:
        r = variation.variation_norm(v, Phi, patterns=pats, pricing="early", tol=args.tol,
                                     max_iter=args.max_iter, on_round=on_round)
        out.update(lower=r.lower, upper=r.upper, closed=bool(r.certified), iterations=r.iterations)
        trace.append((time.process_time() - c0, float(r.lower), float(r.upper)))  # the last round's bound
    except _Budget:
        out.update(lower=trace[-1][1], upper=trace[-1][2], closed=False, stopped="budget")
    finally:
        variation._SEED_LPS = saved
    out["cpu_seconds"] = time.process_time() - c0
    out["trace"] = trace
    out["to_width"] = {str(w): next((t for t, lo, up in trace if up - lo <= w * up), None) for w in WIDTHS}
    return out


def main(argv: list[str] | None = None) -> int:
    from kappa_n import family
    from threadpoolctl import threadpool_limits

    from relu_gating.experiments._base import provenance
    from relu_gating.patterns import enumerate_patterns

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", default="moons", choices=["moons", "clusters"])
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--d", type=int, default=2, choices=[2, 3])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--col", type=int, default=1, help="which column of U_K")
    ap.add_argument("--tol", type=float, default=1e-2)
    ap.add_argument("--max-iter", type=int, default=60)
    ap.add_argument("--budget", type=float, default=300.0, help="CPU seconds per run")
    ap.add_argument("--order", nargs="+", default=["before", "after"], choices=["before", "after"])
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    threadpool_limits(1)
    prov = provenance()
    f = family(args.family, args.n, args.seed, args.d)
    v = f["bases"]["kappa(U_K)"][:, args.col]
    c0 = time.process_time()
    pats = enumerate_patterns(f["Phi"])
    print(f"{args.family} d={args.d} n={args.n} seed={args.seed}: {pats.masks.shape[0]} chambers "
          f"({time.process_time() - c0:.1f} CPU s)", flush=True)
    runs = [run_one(s, v, f["Phi"], pats, args) for s in args.order]
    for r in runs:
        print(f"{r['start']}: [{r['lower']:.4g}, {r['upper']:.4g}] closed={r['closed']} "
              f"{r['cpu_seconds']:.1f} CPU s; CPU s to width: {r['to_width']}")
    if args.out:
        after = provenance()
        Path(args.out).write_text(json.dumps({"provenance": {**prov, "load_start": prov["load_end"],
                                                             "load_end": after["load_end"]},
                                              "args": vars(args), "chambers": int(pats.masks.shape[0]),
                                              "runs": runs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
