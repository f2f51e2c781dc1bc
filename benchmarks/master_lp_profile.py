r"""Benchmark: where a kappa bracket's basis norm spends its CPU at large n -- the master LP, LP by LP.

Runs the first ``--norms`` basis norms of a ``kappa_n`` family on one carry (as ``kappa_n.py`` and
``representability_constant`` do, ``pricing="early"``, one BLAS thread) and records every master LP
solve: the atoms the master holds (``J``; each is two columns, ``d`` and ``-d``), HiGHS's simplex
iterations and the CPU seconds of the solve, beside each norm's total CPU seconds and interval.
``--option NAME=VALUE`` sets a HiGHS option on every master (e.g. ``simplex_strategy=4``, the primal
simplex), to compare settings in separate runs.

Run::

    python benchmarks/master_lp_profile.py --n 400 --norms 2 --out benchmarks/results/master_lp_profile_n400.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _instrument(options: dict) -> list:
    """Wrap ``MasterLP`` so each solve appends ``(J, simplex iterations, CPU s)`` to the list returned."""
    from relu_gating.layers import _master_lp

    log: list = []
    init0, solve0 = _master_lp.MasterLP.__init__, _master_lp.MasterLP.solve

    def init(self, v, M):  # noqa: ANN001, ANN202
        init0(self, v, M)
        for k, val in options.items():
            self.h.setOptionValue(k, val)

    def solve(self):  # noqa: ANN001, ANN202
        t = time.process_time()
        out = solve0(self)
        log.append((int(self.J), int(self.h.getInfo().simplex_iteration_count), round(time.process_time() - t, 4)))
        return out

    _master_lp.MasterLP.__init__, _master_lp.MasterLP.solve = init, solve
    return log


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--family", default="moons", choices=("moons", "clusters"))
    ap.add_argument("--d", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--norms", type=int, default=2)
    ap.add_argument("--tol", type=float, default=1e-2)
    ap.add_argument("--max-iter", type=int, default=60)
    ap.add_argument("--option", action="append", default=[], help="HiGHS option NAME=VALUE (integer value)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    options = {k: int(v) for k, v in (o.split("=", 1) for o in args.option)}
    from threadpoolctl import threadpool_limits

    import kappa_n
    from relu_gating.experiments._base import provenance
    from relu_gating.layers.variation import variation_norm
    from relu_gating.patterns import enumerate_patterns

    prov = provenance()
    log = _instrument(options)
    norms = []
    with threadpool_limits(1):
        f = kappa_n.family(args.family, args.n, args.seed, args.d)
        pats = enumerate_patterns(f["Phi"])
        U = f["bases"]["kappa(U_K)"]
        carry: dict = {}
        for j in range(args.norms):
            log.clear()
            c0 = time.process_time()
            r = variation_norm(U[:, j], f["Phi"], patterns=pats, tol=args.tol, max_iter=args.max_iter,
                               pricing="early", carry=carry)
            cpu = time.process_time() - c0
            lp = sum(s for _, _, s in log)
            norms.append({"norm": j, "lower": r.lower, "upper": r.upper, "certified": bool(r.certified),
                          "cpu_seconds": cpu, "lp_cpu_seconds": lp, "lps": len(log), "per_lp": list(log)})
            print(f"norm {j}: [{r.lower:.4f}, {r.upper:.4f}] closed={r.certified} CPU {cpu:.1f} s, "
                  f"{len(log)} master LPs {lp:.1f} s ({100 * lp / max(cpu, 1e-9):.0f}%), "
                  f"simplex iterations {sum(i for _, i, _ in log):,}", flush=True)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"provenance": {**prov, "load_end": provenance()["load_end"]}, "args": vars(args),
                       "options": options, "norms": norms}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
