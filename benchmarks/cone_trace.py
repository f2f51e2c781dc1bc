r"""Trace one variation norm's column generation round by round (the d = 3 diagnosis of issue 40).

Per priced round: the certified interval, the priced bound ``B >= max_d |<y, d>|``, the chamber
attaining it (its active rows; singular = fewer than ``m`` independent rows), the largest
``|<y, d>|`` among the columns the pricing proposes (if below 1 no proposed column can move the
master), and how many of them violate.  ``--legacy`` prices as before 8258c55 (singular chambers of
``m = 4`` at ``||(y_S)_+||``, multipliers capped at ``2^30``), to show why d = 3 did not close.

Usage::

    python benchmarks/cone_trace.py --family clusters --n 50 --d 3 --col 1 [--legacy] [--max-iter 40]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", default="clusters", choices=["clusters", "moons"])
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--d", type=int, default=3, choices=[2, 3])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--col", type=int, default=1, help="which column of U_K")
    ap.add_argument("--tol", type=float, default=1e-2)
    ap.add_argument("--max-iter", type=int, default=40)
    ap.add_argument("--legacy", action="store_true", help="the pricing before 8258c55")
    args = ap.parse_args(argv)
    from threadpoolctl import threadpool_limits

    import kappa_n
    from relu_gating.layers import _cone_pricing
    from relu_gating.layers._cone_pricing import ConePricer
    from relu_gating.layers.variation import normalized_neurons, variation_norm
    from relu_gating.patterns import enumerate_patterns

    threadpool_limits(1)
    f = kappa_n.family(args.family, args.n, args.seed, args.d)
    P, U = f["Phi"], f["bases"]["kappa(U_K)"]
    pats = enumerate_patterns(P)
    S = pats.masks
    if args.legacy:
        ConePricer._singular = lambda self, *a: None
        _cone_pricing._MU_CAP = 2.0**30
    orig = ConePricer.bound
    log: list[str] = []

    def bound(self, y, n_columns=16):  # the real bound, then a look at where it is attained
        B, yq, th, best = orig(self, y, n_columns)
        D = normalized_neurons(P, th)[0] if th.size else np.zeros((P.shape[0], 0))
        sc = np.abs(yq @ D) if D.size else np.zeros(1)
        Y, k = self._quantize(yq)
        top = []
        for sign in (1, -1):
            c, pos = self._products(sign * Y)
            mi, mv = self.mu[sign]
            est = self._estimate(c, k, mi, mv, pos) / 4.0**k
            for i, ch in (self.sing or {}).items():  # the singular chambers' exact bounds (not stored in mu)
                t, _ = ch.bound(self.P, self.Pf, [int(x) for x in c[i]])
                if t is not None:
                    est[i] = min(est[i], float(t) / 4.0**k)
            i = int(np.argmax(est))
            top.append((float(np.sqrt(est[i])), int(S[i].sum()), bool(self.full[i])))
        v, rows, full = max(top)
        log.append(f"   priced B = {B:.4f}; largest chamber bound {v:.4f} ({rows} active rows, "
                   f"{'nonsingular' if full else 'singular'}); proposed {th.shape[0]} columns, best |<y,d>| = "
                   f"{float(sc.max()):.4f}, violating {int(np.sum(sc > 1 + args.tol / 4))}")
        return B, yq, th, best

    ConePricer.bound = bound
    print(f"{args.family} d = {args.d} n = {args.n} seed {args.seed}: {S.shape[0]:,} chambers; "
          f"{'legacy' if args.legacy else 'current'} pricing", flush=True)
    c0 = time.process_time()

    def on_round(it: int, lo: float, up: float) -> None:
        for line in log:
            print(line)
        log.clear()
        print(f"round {it}: [{lo:.4f}, {up:.4f}]  ({time.process_time() - c0:.1f} CPU s)", flush=True)

    r = variation_norm(U[:, args.col], P, patterns=pats, tol=args.tol, max_iter=args.max_iter, on_round=on_round)
    print(f"result [{r.lower:.4f}, {r.upper:.4f}], closed {r.certified}, {r.iterations} master LPs, "
          f"{time.process_time() - c0:.1f} CPU s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
