r"""Benchmark: one kappa bracket of :mod:`benchmarks.kappa_n` with the state handed from norm to norm (``carry``)
and without (every norm from scratch: the cone pricer rebuilt, the master started from the seed witnesses).

``representability_constant(U, Phi, carry=...)`` shares one cone pricer (integer Grams, multipliers) over
the bracket and, with ``pricing="early"``, one master LP whose right-hand side each norm replaces.  "fresh"
empties the carry before every norm (the behaviour before it); "carry" keeps every atom in the master
(``_PRUNE_AGE = None``: the behaviour before pruning), "prune" drops the atoms long out of its basis
(the default, :func:`relu_gating.layers.variation._prune`).  Both run alternately in one process (the
load hits both alike), one BLAS thread, pattern enumeration shared and not timed.  Per norm: master LPs
(seed LPs included), CPU seconds, interval; per bracket: the kappa interval and total CPU seconds.

Usage::

    python benchmarks/kappa_carry.py --family moons --n 100 200 --out benchmarks/results/kappa_carry.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def bracket(mode: str, f: dict, what: str, pats: object, args: argparse.Namespace) -> dict:
    """One bracket with ``mode`` ``"carry"`` or ``"fresh"``: per-norm rounds and CPU seconds, the interval."""
    from relu_gating.layers import variation

    norms: list[dict] = []
    orig_vn, orig_cp = variation.variation_norm, variation._carried_pricer

    def timed(*a, **k):
        c0 = time.process_time()
        r = orig_vn(*a, **k)
        carry = k.get("carry") or {}
        norms.append({"cpu": time.process_time() - c0, "lps": int(r.iterations), "lower": r.lower, "upper": r.upper,
                      "closed": bool(r.certified), "master_atoms": int(carry["lp"].J) if "lp" in carry else None})
        print(f"  {mode} norm {len(norms)}: [{r.lower:.4g}, {r.upper:.4g}] {r.iterations} LPs "
              f"{norms[-1]['cpu']:.1f} CPU s, master atoms {norms[-1]['master_atoms']}", flush=True)
        return r

    def fresh(P, patterns, pricing, carry):
        if carry is not None:
            carry.clear()
        return orig_cp(P, patterns, pricing, carry)

    variation.variation_norm = timed
    if mode == "fresh":
        variation._carried_pricer = fresh
    prune_age = variation._PRUNE_AGE
    if mode != "prune":
        variation._PRUNE_AGE = None
    c0 = time.process_time()
    if args.norms:  # only the first basis norms, one carry (what the bracket starts with), no bracket
        carry: dict = {}
        try:
            for j in range(args.norms):
                variation.variation_norm(f["bases"][what][:, j], f["Phi"], tol=args.tol, patterns=pats,
                                         max_iter=args.max_iter, pricing=args.pricing, carry=carry)
        finally:
            variation.variation_norm, variation._carried_pricer = orig_vn, orig_cp
            variation._PRUNE_AGE = prune_age
        return {"mode": mode, "lower": None, "upper": None, "closed": all(x["closed"] for x in norms),
                "cpu_seconds": time.process_time() - c0, "norms": norms}
    try:
        kap = variation.representability_constant(f["bases"][what], f["Phi"], n_directions=1, refine=args.refine,
                                                  adaptive=args.adaptive, gap=args.gap, tol=args.tol,
                                                  patterns=pats, max_iter=args.max_iter, pricing=args.pricing)
    finally:
        variation.variation_norm, variation._carried_pricer = orig_vn, orig_cp
        variation._PRUNE_AGE = prune_age
    return {"mode": mode, "lower": kap.lower, "upper": kap.upper, "closed": bool(kap.certified),
            "cpu_seconds": time.process_time() - c0, "norms": norms}


def main(argv: list[str] | None = None) -> int:
    from kappa_n import family
    from threadpoolctl import threadpool_limits

    from relu_gating.experiments._base import provenance
    from relu_gating.patterns import enumerate_patterns

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", default="moons", choices=["moons", "clusters"])
    ap.add_argument("--what", default="kappa(U_K)", choices=["kappa(U_K)", "kappa(chi)"])
    ap.add_argument("--n", type=int, nargs="+", default=[100])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--refine", type=int, default=1)
    ap.add_argument("--adaptive", type=int, default=2)
    ap.add_argument("--gap", type=float, default=0.05)
    ap.add_argument("--tol", type=float, default=1e-2)
    ap.add_argument("--max-iter", type=int, default=60)
    ap.add_argument("--pricing", default="early", choices=["early", "cone", "batched"])
    ap.add_argument("--norms", type=int, default=0, help="only this many basis norms (no bracket; 0: the bracket)")
    ap.add_argument("--order", nargs="+", default=["carry", "prune"], choices=["fresh", "carry", "prune"])
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    threadpool_limits(1)
    prov = provenance()
    rows = []
    for n in args.n:
        f = family(args.family, n, args.seed, 2)
        pats = enumerate_patterns(f["Phi"])
        for mode in args.order:
            r = {"n": n, "chambers": int(pats.masks.shape[0]), **bracket(mode, f, args.what, pats, args)}
            rows.append(r)
            print(f"n={n} {mode}: kappa in [{r['lower'] or 0:.4g}, {r['upper'] or 0:.4g}] {len(r['norms'])} norms, "
                  f"{r['cpu_seconds']:.1f} CPU s, LPs {[x['lps'] for x in r['norms']]}", flush=True)
            if args.out:
                after = provenance()
                Path(args.out).write_text(json.dumps({"provenance": {**prov, "load_start": prov["load_end"],
                                                                     "load_end": after["load_end"]},
                                                      "args": vars(args), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
