r"""Benchmark: the forced-rows NNLS on a working set of the decided rows against the full NNLS (issue 39).

Each run is a fresh process that builds a case as ``benchmarks/real.py`` does and runs the serial branch
and bound (one BLAS thread, no workers, no audit) until it has used ``--cpu`` CPU seconds, as
``benchmarks/bnb_fixed_cpu.py`` does, with ``relu_gating.search.bnb._cone_nnls.WORKING_SET`` set to the
side's value: ``new`` (True, the default: the working set and the centered push) or ``old`` (False: the
NNLS on all decided rows and the fixed push from the first interior point, as before).  The sides
alternate run by run.  The growth's timers (``t_nnls``, ``t_lp``) are switched to CPU time in the
child, so the per-call figures hold on a loaded machine.

Printed per case and side (medians over the repeats): expansions per CPU second, NNLS solves and rows
asked, CPU microseconds per solve and per row, NNLS CPU milliseconds per expansion, LPs and CPU ms per
LP, the share of the CPU in NNLS and LP, and the alpha reached; then new against old.

Run::

    python benchmarks/bnb_nnls.py --cases bc-pca5,bc-pca5-n200,iris-dup,clustered-1000x3-8c --cpu 60 --repeats 2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(1, str(HERE.parent))

SIDES = (("new", True), ("old", False))


def child(case: str, cpu: float, working_set: bool) -> dict:
    """One serial search of ``case`` for ``cpu`` CPU seconds with the NNLS of ``working_set``."""
    sys.path.insert(0, str(HERE))
    from bnb_fixed_cpu import fixed_cpu_search

    from relu_gating.search.bnb import _cone_nnls, _growth

    _cone_nnls.WORKING_SET = working_set
    _growth.time = types.SimpleNamespace(perf_counter=time.process_time)  # t_nnls, t_lp in CPU seconds
    s, why, used, _ = fixed_cpu_search(case, cpu)
    upper = max(s.global_bound(), s.best_value)
    st = s.stats
    return {"case": case, "stop": why, "cpu": used, "expansions": s.expansions, "nodes": st["nodes"],
            "nnls": st["nnls"], "nnls_rows": st["nnls_rows"], "t_nnls": st["t_nnls"], "lp": st["lp"],
            "t_lp": st["t_lp"], "implied": st["implied"], "nnls_hits": st["nnls_hits"], "value": s.best_value, "upper": upper,
            "alpha": s.best_value / upper, "load": os.getloadavg()[0]}


def summary(rows: list[dict], cases: list[str]) -> str:
    """The markdown table: per case and side, medians of the per-run figures; then new / old."""
    cols = ["case", "side", "CPU s", "exp / CPU s", "NNLS solves", "rows asked", "us / solve", "us / row",
            "NNLS ms / exp", "LPs", "ms / LP", "NNLS share", "LP share", "alpha"]
    out = ["| " + " | ".join(cols) + " |", "| " + " | ".join(["---"] * 2 + ["---:"] * (len(cols) - 2)) + " |"]
    for case in cases:
        med = {}
        for name, _ in SIDES:
            mine = [x for x in rows if x.get("case") == case and x["side"] == name and "error" not in x]
            if not mine:
                continue
            f = {"cpu": [x["cpu"] for x in mine],
                 "rate": [x["expansions"] / x["cpu"] for x in mine],
                 "nnls": [x["nnls"] for x in mine], "rows": [x["nnls_rows"] for x in mine],
                 "us_solve": [1e6 * x["t_nnls"] / max(x["nnls"], 1) for x in mine],
                 "us_row": [1e6 * x["t_nnls"] / max(x["nnls_rows"], 1) for x in mine],
                 "ms_exp": [1e3 * x["t_nnls"] / max(x["expansions"], 1) for x in mine],
                 "lp": [x["lp"] for x in mine], "ms_lp": [1e3 * x["t_lp"] / max(x["lp"], 1) for x in mine],
                 "sh_nnls": [x["t_nnls"] / x["cpu"] for x in mine], "sh_lp": [x["t_lp"] / x["cpu"] for x in mine],
                 "alpha": [x["alpha"] for x in mine]}
            med[name] = m = {k: statistics.median(v) for k, v in f.items()}
            out.append(f"| {case} | {name} | {m['cpu']:.0f} | {m['rate']:.1f} | {m['nnls']:,.0f} | {m['rows']:,.0f} | "
                       f"{m['us_solve']:.1f} | {m['us_row']:.1f} | {m['ms_exp']:.2f} | {m['lp']:,.0f} | {m['ms_lp']:.2f} | "
                       f"{m['sh_nnls']:.1%} | {m['sh_lp']:.1%} | {m['alpha']:.5f} |")
        if len(med) == 2:
            n, o = med["new"], med["old"]
            out.append(f"| {case} | new / old | | {n['rate'] / o['rate']:.2f}x | | | | {n['us_row'] / o['us_row']:.2f} | "
                       f"{n['ms_exp'] / max(o['ms_exp'], 1e-12):.2f} | {n['lp'] / max(o['lp'], 1):.2f} | | | | |")
    return "\n".join(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="bc-pca5-n200,bc-pca5")
    ap.add_argument("--cpu", type=float, default=30.0, help="CPU seconds of each search")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--save", default=None, help="write the runs and the table (JSON) here")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--side", default="new", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.cpu, dict(SIDES)[args.side])))
        return
    from real import ROOT, in_child_script

    cases = args.cases.split(",")
    rows, started = [], time.strftime("%Y-%m-%dT%H:%M:%S%z")
    for r in range(args.repeats):
        for case in cases:
            for name, _ in (SIDES if r % 2 == 0 else SIDES[::-1]):
                got = in_child_script(ROOT, "bnb_nnls.py", ["--child", case, "--cpu", str(args.cpu), "--side", name],
                                      timeout=100 * args.cpu + 600)
                rows.append({"side": name, "repeat": r, "case": case, **got})
                print(json.dumps(rows[-1]), flush=True)
    text = summary(rows, cases)
    print(text)
    if args.save:
        Path(args.save).write_text(json.dumps({"meta": {"started": started, "argv": sys.argv[1:]}, "runs": rows,
                                               "table": text}, indent=1) + "\n")


if __name__ == "__main__":
    main()
