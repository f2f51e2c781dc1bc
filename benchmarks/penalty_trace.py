r"""Diagnostic: per round of the early cone pricing, the master's penalty M, its residual, and the interval.

Runs the first ``--norms`` basis norms of a kappa_n family on one carry (as ``representability_constant``
does) and, for the last of them, logs each master solve (``||r||_1``, the penalty ``M``), each certified
pricing (its bound, smoothed or not, new columns) and each priced round's ``[lower, upper]``.

Usage::

    python benchmarks/penalty_trace.py --n 200 --family moons --norms 2 [--M 1.0] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--family", default="moons")
    ap.add_argument("--d", type=int, default=2)
    ap.add_argument("--norms", type=int, default=2)
    ap.add_argument("--tol", type=float, default=1e-2)
    ap.add_argument("--max-iter", type=int, default=60)
    ap.add_argument("--M", type=float, default=None,
                    help="force the last norm's residual penalty: its master is built afresh with this M")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    import numpy as np
    from threadpoolctl import threadpool_limits

    import kappa_n
    from relu_gating.layers import _cone_pricing, _master_lp
    from relu_gating.layers.variation import variation_norm
    from relu_gating.patterns import enumerate_patterns

    log: list[dict] = []
    state = {"M": None, "on": False}
    solve0, pen0, bound0 = _master_lp.MasterLP.solve, _master_lp.MasterLP.set_penalty, _cone_pricing.ConePricer.bound

    def solve(self):  # noqa: ANN001, ANN202
        a, r, y = solve0(self)
        if state["on"]:
            log.append({"ev": "lp", "r1": float(np.abs(r).sum()), "a1": float(np.abs(a).sum()), "J": int(self.J),
                        "M": float(self.h.getLp().col_cost_[0])})
        return a, r, y

    def set_penalty(self, M):  # noqa: ANN001, ANN202
        if state["on"]:
            log.append({"ev": "M", "M": float(M)})
        return pen0(self, M)

    def bound(self, y, n_columns=16):  # noqa: ANN001, ANN202
        out = bound0(self, y, n_columns)
        if state["on"]:
            log.append({"ev": "bound", "bound": float(out[0]), "new": int(out[2].shape[0])})
        return out

    _master_lp.MasterLP.solve, _master_lp.MasterLP.set_penalty = solve, set_penalty
    _cone_pricing.ConePricer.bound = bound
    with threadpool_limits(1):
        f = kappa_n.family(args.family, args.n, 0, args.d)
        pats = enumerate_patterns(f["Phi"])
        U = f["bases"]["kappa(U_K)"]
        carry: dict = {}
        atoms = np.zeros((0, f["Phi"].shape[1]))
        for j in range(args.norms):
            state["on"] = j == args.norms - 1
            if state["on"] and args.M is not None:
                carry.pop("lp", None)
                carry["M"] = args.M
            c0 = time.process_time()

            def rnd(it, lo, up, c0=c0):  # noqa: ANN001, ANN202
                if state["on"]:
                    log.append({"ev": "round", "it": it, "lower": lo, "upper": up, "cpu": time.process_time() - c0})
                    print(f"round {it}: [{lo:.4g}, {up:.4g}] M={carry.get('M')} "
                          f"{[e for e in log if e['ev'] == 'lp'][-1]}", flush=True)

            r = variation_norm(U[:, j], f["Phi"], tol=args.tol, patterns=pats, max_iter=args.max_iter,
                               pricing="early", carry=carry, initial=atoms, on_round=rnd)
            atoms = np.vstack([atoms, r.thetas])[-400:]
            print(f"norm {j}: [{r.lower:.5g}, {r.upper:.5g}] closed={r.certified} LPs={r.iterations} "
                  f"CPU {time.process_time() - c0:.1f} s M_after={carry.get('M')}", flush=True)
    if args.out:
        sys.path.insert(0, os.path.dirname(HERE))
        from relu_gating.experiments._base import provenance

        with open(args.out, "w") as fh:
            json.dump({"provenance": provenance(), "args": vars(args), "log": log}, fh, indent=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
