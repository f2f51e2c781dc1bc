r"""Benchmark: the branch and bound with and without the lifted node bound (``"d"`` leaves).

Same instances as ``benchmarks/bnb.py`` (features bias, kNN graph, K = 4); for each case the
serial search runs with ``branch_and_bound(lifted=True)`` and without, same budget,
same seed, and prints alpha reached, nodes, leaves by kind and the time per node by bound kind.

Run::

    OMP_NUM_THREADS=1 python benchmarks/bnb_lifted_effect.py --cases 100x5,60x8 --budget 120
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def one(n: int, d: int, data: str, seed: int, budget: float, lifted: bool) -> dict:
    from bnb import instance

    from relu_gating.search.bnb import branch_and_bound

    Phi, U = instance(n, d, seed, data)
    t = time.perf_counter()
    r = branch_and_bound(Phi, U, features="bias", max_seconds=budget, lifted=lifted)
    wall = time.perf_counter() - t
    st = r.tree["stats"]
    alpha = r.value / r.upper_bound if r.upper_bound > 0 else 1.0
    nb = max(st["n_bound"], 1)
    return {"case": f"{data} {n}x{d}", "lifted": lifted, "alpha": alpha, "value": r.value, "upper": r.upper_bound,
            "wall": wall, "nodes": st["nodes"], "b": st["n_b"], "c": st["n_c"], "d": st.get("n_d", 0),
            "ms_cheap": 1e3 * st["t_bound"] / nb, "lifted_calls": st.get("lifted", 0),
            "ms_lifted": 1e3 * st.get("t_lifted", 0.0) / max(st.get("lifted", 0), 1),
            "settled_by_lifted": st.get("lifted_settled", 0), "lowered": st.get("lifted_lowered", 0),
            "ms_chamber": 1e3 * st["t_chamber"] / max(st["chambers"], 1), "stop": st["stop"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="100x5,60x8")
    ap.add_argument("--data", default="gaussian")
    ap.add_argument("--budget", type=float, default=120.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=["on", "off"], default=None)
    a = ap.parse_args()
    modes = [True, False] if a.only is None else [a.only == "on"]
    for case in a.cases.split(","):
        n, d = (int(x) for x in case.split("x"))
        for lifted in modes:
            row = one(n, d, a.data, a.seed, a.budget, lifted)
            print("  ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)


if __name__ == "__main__":
    main()
