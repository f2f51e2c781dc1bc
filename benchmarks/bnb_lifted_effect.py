r"""Benchmark: the branch and bound with and without the lifted node bound (``"d"`` leaves).

Cases are ``benchmarks/bnb.py`` instances (``--cases 100x5,60x8 --data gaussian``: features bias,
kNN graph, K = 4) or the real-data cases of ``benchmarks/real.py`` (``--real iris,wine-pca5``).  Each
case runs under each variant, same budget, same seed, one process per run (alternating, so that a
shared machine's load falls on all variants alike), and prints the alpha reached, nodes, leaves by kind
and the lifted bound's calls, settlements and time.  Variants (``--variants``, comma-separated):

* ``off``: the subspace node bound alone (``lifted=False``);
* ``on``: the release's default (first-order multipliers up to 128 undecided rows, the cheap test);
* ``fo64``: the same up to 64 undecided rows (the default when the docs' table was measured, a503499);
* ``clarabel16``, ``clarabel8``: the previous opt-in bound: Clarabel alone, on every node with at most 16
  (8) undecided rows, no cheap test;
* ``fo32``: first-order multipliers up to 32 undecided rows, no cheap test.

Run::

    python benchmarks/bnb_lifted_effect.py --real clustered-100x5,wine-pca5 --budget 120 \
        --variants off,clarabel16,clarabel8,fo32,on
    python benchmarks/bnb_lifted_effect.py --cases 20x3,30x3,14x4 --budget 120
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: variant -> (lifted, LIFTED_MAX_UNDECIDED (None: the release's), first-order steps, cheap test)
VARIANTS = {"off": (False, None, True, True), "on": (True, None, True, True), "clarabel16": (True, 16, False, False),
            "clarabel8": (True, 8, False, False), "fo32": (True, 32, True, False), "fo64": (True, 64, True, True)}


def _configure(variant: str) -> bool:
    """Set the search's constants for ``variant``; returns ``lifted``."""
    from relu_gating.search.bnb import _node_bounds, _search, _strong

    lifted, most, first_order, cheap = VARIANTS[variant]
    most = _node_bounds.LIFTED_MAX_UNDECIDED if most is None else most
    _node_bounds.LIFTED_MAX_UNDECIDED = most
    if not first_order:  # Clarabel on every node tried: no first-order steps, no size limit below ``most``
        _strong.FO_STEPS = 0
        _strong.CLARABEL_MAX_UNDECIDED = most
    if not cheap:
        _search.Search.lifted_pays = lambda self, k: True
    return lifted


def _problem(case: str, data: str, seed: int):
    if "x" in case and case[0].isdigit():
        from bnb import instance

        n, d = (int(x) for x in case.split("x"))
        return instance(n, d, seed, data)
    from real import case_problem

    Phi, U, _, _ = case_problem(case)
    return Phi, U


def one(case: str, data: str, seed: int, budget: float, variant: str) -> dict:
    from relu_gating.search.bnb import branch_and_bound

    lifted = _configure(variant)
    Phi, U = _problem(case, data, seed)
    t = time.perf_counter()
    r = branch_and_bound(Phi, U, features="bias", max_seconds=budget, lifted=lifted, seed=seed)
    wall = time.perf_counter() - t
    st = r.tree["stats"]
    alpha = r.value / r.upper_bound if r.upper_bound > 0 else 1.0
    nb = max(st["n_bound"], 1)
    return {"case": case, "variant": variant, "certified": bool(r.certified), "alpha": alpha, "value": r.value,
            "upper": r.upper_bound, "wall": wall, "nodes": st["nodes"], "b": st["n_b"], "c": st["n_c"],
            "d": st.get("n_d", 0), "ms_cheap": 1e3 * st["t_bound"] / nb, "lifted_calls": st.get("lifted", 0),
            "ms_lifted": 1e3 * st.get("t_lifted", 0.0) / max(st.get("lifted", 0), 1),
            "settled_by_lifted": st.get("lifted_settled", 0), "lowered": st.get("lifted_lowered", 0),
            "ms_chamber": 1e3 * st["t_chamber"] / max(st["chambers"], 1), "stop": st["stop"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="100x5,60x8", help="benchmarks/bnb.py instances, n x d")
    ap.add_argument("--real", default=None, help="benchmarks/real.py cases instead (comma-separated)")
    ap.add_argument("--data", default="gaussian")
    ap.add_argument("--budget", type=float, default=120.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variants", default="on,off", help=f"comma-separated, of {', '.join(VARIANTS)}")
    ap.add_argument("--save", default=None, help="JSON path for the rows")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    variants = a.variants.split(",")
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        ap.error(f"--variants: unknown variant {bad[0]!r} (choose from {', '.join(VARIANTS)})")
    if a.child:
        case, variant = a.child.split("@")
        print(json.dumps(one(case, a.data, a.seed, a.budget, variant), default=float))
        return
    rows = []
    for case in (a.real or a.cases).split(","):
        for variant in variants:  # one fresh process per run: the constants set stay there
            cmd = [sys.executable, __file__, "--child", f"{case}@{variant}", "--data", a.data,
                   "--budget", str(a.budget), "--seed", str(a.seed), "--variants", variant]
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=4 * a.budget + 600)
            if out.returncode != 0:
                print(f"case={case} variant={variant} error: {(out.stderr.strip().splitlines() or ['?'])[-1]}")
                continue
            row = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(row)
            print("  ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)
    if a.save:
        Path(a.save).write_text(json.dumps({"argv": sys.argv[1:], "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
