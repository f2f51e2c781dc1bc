r"""Benchmark: one variation norm of ``benchmarks/kappa_n.py`` against n, this checkout against another commit.

The norm is ``||U_K[:, col]||_A`` of a kappa_n family (two moons K = 4, or clusters K = 3; ``--d`` 2
or 3, seed 0, patterns enumerated beforehand and not timed), closed to ``--tol`` with the cone pricing (``--pricing``; ``--this-pricing`` for this checkout alone).
Each (n, checkout) runs in its own process with one BLAS thread, the two checkouts alternating so
load hits both alike.  Prints per n the master rounds, the CPU seconds, the interval of each.

Usage::

    python benchmarks/variation_against.py --against 003479b --n 100 200 [--family moons] [--out FILE.json]
    python benchmarks/variation_against.py --against main --n 200 --norms 3 --pricing early  # a bracket's start
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from compare import _checkout, save_run  # one worktree helper for the benchmarks that compare commits

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_CHILD = r"""
import json, sys, time
from threadpoolctl import threadpool_limits
root, fam, n, col, tol, max_iter = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
d, pricing = int(sys.argv[8]), sys.argv[9]
sys.path.insert(0, root); sys.path.insert(0, sys.argv[7])
import kappa_n
sys.path.insert(0, root)  # kappa_n put this checkout first: the checkout under test again (relu_gating imports lazily)
from relu_gating.patterns import enumerate_patterns
from relu_gating.layers.variation import variation_norm
with threadpool_limits(1):
    f = kappa_n.family(fam, n, 0, d)
    pats = enumerate_patterns(f["Phi"])
    t0, c0 = time.perf_counter(), time.process_time()
    norms = int(sys.argv[10])
    if norms == 0:
        r = variation_norm(f["bases"]["kappa(U_K)"][:, col], f["Phi"], tol=tol, patterns=pats, max_iter=max_iter,
                          pricing=pricing)
        print(json.dumps({"lower": r.lower, "upper": r.upper, "rounds": r.iterations, "closed": r.certified,
                          "cpu": time.process_time() - c0, "wall": time.perf_counter() - t0, "patterns": len(pats)}))
    else:  # the first basis norms of a bracket on one carry, atoms handed on as representability_constant does
        import numpy as np
        carry, atoms, per = {}, np.zeros((0, f["Phi"].shape[1])), []
        for j in range(norms):
            c1 = time.process_time()
            r = variation_norm(f["bases"]["kappa(U_K)"][:, j], f["Phi"], tol=tol, patterns=pats, max_iter=max_iter,
                              pricing=pricing, carry=carry, initial=atoms)
            atoms = np.vstack([atoms, r.thetas])[-400:]
            per.append({"lower": r.lower, "upper": r.upper, "lps": r.iterations, "closed": r.certified,
                        "cpu": time.process_time() - c1})
        print(json.dumps({"lower": r.lower, "upper": r.upper, "rounds": sum(q["lps"] for q in per),
                          "closed": all(q["closed"] for q in per), "norms": per,
                          "cpu": time.process_time() - c0, "wall": time.perf_counter() - t0, "patterns": len(pats)}))
"""


def _run(root: str, fam: str, n: int, col: int, tol: float, max_iter: int, d: int = 2, pricing: str = "auto",
         norms: int = 0) -> dict:
    """One norm (``norms`` > 0: the first basis norms on one carry) in a fresh process importing ``root``'s
    relu_gating (kappa_n.py of this checkout)."""
    env = {**os.environ, "PYTHONPATH": root, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", _CHILD, root, fam, str(n), str(col), str(tol), str(max_iter), HERE, str(d), pricing,
                          str(norms)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, ROOT)  # this checkout's provenance (its commit), not an installed copy's
    from relu_gating.experiments._base import provenance

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--against", required=True, help="the baseline commit")
    ap.add_argument("--n", type=int, nargs="+", default=[100, 200])
    ap.add_argument("--family", default="moons", choices=["moons", "clusters"])
    ap.add_argument("--col", type=int, default=1, help="which column of U_K")
    ap.add_argument("--d", type=int, default=2, choices=[2, 3], help="the data's dimension (kappa_n's families)")
    ap.add_argument("--pricing", default="auto", choices=["auto", "cone", "batched", "early"],
                    help="variation_norm's pricing in both checkouts")
    ap.add_argument("--this-pricing", default=None, choices=["auto", "cone", "batched", "early"],
                    help="this checkout's pricing when it differs (e.g. base auto against this batched)")
    ap.add_argument("--norms", type=int, default=0,
                    help="instead of --col: the first N basis norms on one carry (kappa_n's bracket starts so)")
    ap.add_argument("--tol", type=float, default=1e-2)
    ap.add_argument("--max-iter", type=int, default=60)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--out", default=None, help="also write the rows (with provenance) to this JSON file")
    args = ap.parse_args(argv)
    rows = []
    start = provenance()  # the commit whose checkout ran as "this" (HEAD may move while it runs)
    with _checkout(args.against) as other:
        for n in args.n:
            for rep in range(args.repeats):
                for name, root in (("base", other), ("this", ROOT)) if rep % 2 == 0 else (("this", ROOT), ("base", other)):
                    pr = args.this_pricing or args.pricing if name == "this" else args.pricing
                    r = {"n": n, "checkout": name, "repeat": rep, "pricing": pr,
                         **_run(root, args.family, n, args.col, args.tol, args.max_iter, args.d, pr, args.norms)}
                    rows.append(r)
                    per = " ".join(f"{q['lps']}/{q['cpu']:.1f}" for q in r.get("norms", []))
                    print(f"n={n} {name:4s} ({pr}): rounds {r['rounds']:3d}  cpu {r['cpu']:7.1f} s  "
                          f"[{r['lower']:.4f}, {r['upper']:.4f}] closed={r['closed']}"
                          + (f"  per norm LPs/CPU s: {per}" if per else ""), flush=True)
    if args.out:
        save_run(args.out, start, args, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
