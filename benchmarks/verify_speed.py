r"""Benchmark: verify against the search it checks, and the reserve against the ending it kept for, this
checkout beside another commit in one run (issue 39: "verify takes at most a tenth of the search";
"the budget is kept, and used").

Per case of ``benchmarks/real.py`` and per checkout (the two alternating, case by case), in fresh processes:
``best_neuron`` with its defaults (every core) and ``--budget`` seconds makes the certificate (its wall
seconds; its CPU seconds, the worker pool's included; its tree's ``t_reserve``, the seconds kept before the
deadline, beside ``t_audit + t_finish``, what the ending took; ``-`` where the search settled before the
deadline kept anything); then ``verify`` of that checkout's own certificate, ``--repeats`` times,
alternating the checkouts (the API's defaults, wall; and ``workers=1``, serial CPU seconds, as
``verify_against.py``).  Printed per case and checkout: nodes, search wall and CPU, verify wall and serial
CPU (medians), verify / search in wall and in CPU, kept / (audit + finish).

Run::

    python benchmarks/verify_speed.py --against d81e597 --now HEAD --cases iris,bc-pca3,bc-pca5-n200 --budget 120
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def search_child(case: str, budget: float, out: str) -> dict:
    """The certificate of ``case`` (defaults, ``budget`` s) written to ``out`` (JSON) and ``out``.npz."""
    import numpy as np

    from real import case_problem

    from relu_gating import best_neuron
    from relu_gating.certificate import result_to_dict

    Phi, U, _, _ = case_problem(case)
    t = time.perf_counter()
    res = best_neuron(Phi, U, features="bias", max_seconds=budget)
    wall = time.perf_counter() - t
    cpu = sum(resource.getrusage(w).ru_utime + resource.getrusage(w).ru_stime
              for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))  # the pool's workers have ended
    Path(out).write_text(json.dumps(result_to_dict(res), allow_nan=False))
    np.savez(out + ".npz", Phi=Phi, U=U)
    st = (res.tree or {}).get("stats", {})
    return {"wall": wall, "cpu": cpu, "nodes": int(res.n_nodes), "certified": bool(res.certified),
            "mb": os.path.getsize(out) / 1e6,
            **{k: st.get(k) for k in ("t_reserve", "t_audit", "t_finish", "implied", "stop", "slowdown")}}


def main(argv=None) -> None:
    from real import checkout, in_child_script

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", help="the other commit (required)")
    ap.add_argument("--now", help="this side's commit (default: this working tree, edits included)")
    ap.add_argument("--cases", default="iris,bc-pca3")
    ap.add_argument("--budget", type=float, default=120.0)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--save", default=None, help="JSON path for the records")
    ap.add_argument("--search-child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.search_child:
        case, budget, out = args.search_child
        print(json.dumps(search_child(case, float(budget), out)))
        return
    if not args.against:
        ap.error("--against is required")
    print(f"load {os.getloadavg()}")
    print("| case | checkout | nodes | search s | search CPU s | verify s | verify serial CPU s | verify / search "
          "| CPU ratio | kept s | audit + finish s | kept / ending | certificate MB |\n" + "| --- | --- |" + " ---: |" * 11)
    records = []
    with tempfile.TemporaryDirectory() as tmp, checkout(args.against) as other, checkout(args.now) as now:
        sides = {"against": other, "now": now}
        for c, case in enumerate(args.cases.split(",")):
            order = list(sides) if c % 2 == 0 else list(sides)[::-1]
            rows = {}
            for name in order:
                out = str(Path(tmp) / f"{name}-{case}.json")
                rows[name] = in_child_script(sides[name], HERE / "verify_speed.py",
                                             ["--search-child", case, str(args.budget), out], 4 * args.budget + 600)
                rows[name].update(cert=out, verify=[])
            for k in range(args.repeats):
                for name in (order if k % 2 == 0 else order[::-1]):
                    r = rows[name]
                    r["verify"].append(in_child_script(sides[name], HERE / "verify_against.py",
                                                       ["--child", r["cert"], r["cert"] + ".npz"], 1200))
            for name in sides:
                r = rows[name]
                if "error" in r or any("error" in v for v in r["verify"]):
                    print(f"| {case} | {name} | failed: {r.get('error') or r['verify']} |", flush=True)
                    continue
                wall = statistics.median(v["wall"] for v in r["verify"])
                cpu = statistics.median(v["cpu_serial"] for v in r["verify"])
                ending = (r["t_audit"] or 0.0) + (r["t_finish"] or 0.0)
                kept = f"{r['t_reserve']:.1f} | {ending:.1f} | {r['t_reserve'] / ending:.2f}" if r.get("t_reserve") else \
                    f"- | {ending:.1f} | -"
                print(f"| {case} | {name} | {r['nodes']:,} | {r['wall']:.1f} | {r['cpu']:.1f} | {wall:.2f} | {cpu:.2f} | "
                      f"{wall / r['wall']:.3f} | {cpu / r['cpu']:.3f} | {kept} | {r.get('mb', float('nan')):.1f} |", flush=True)
                records.append(dict(case=case, checkout=name, verify_wall=wall, verify_cpu=cpu,
                                    valid=all(v.get("valid") for v in r["verify"]),
                                    **{k: v for k, v in r.items() if k not in ("verify", "cert")}))
    print(f"load {os.getloadavg()}")
    if args.save:
        Path(args.save).write_text(json.dumps({"against": args.against, "cases": args.cases, "budget": args.budget,
                                               "records": records}, indent=1))


if __name__ == "__main__":
    main()
