r"""Benchmark: ``verify`` on the same tree certificates, this checkout against another commit, alternating in
one run (issue 39: verify at most a tenth of the search on every row of the real-data table).

Per case of ``benchmarks/real.py`` the certificate is made once, by this checkout
(``best_neuron`` with its defaults, ``--budget`` seconds), written to JSON; then ``verify`` (the API,
its defaults: every core) runs ``--repeats`` times on each checkout, alternating, each in a fresh
process that reads the JSON file (what ``real.py``'s ``t_verify`` times); the CPU seconds of the
serial walk (``workers=1``) are timed in the same children.  Printed: median wall and CPU seconds of
each, and the search's wall for the ratio.  Both must give the same report (valid, alpha proven).

Run::

    python benchmarks/verify_against.py --against HEAD~1 --cases bc-pca3 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def child(path: str, data: str) -> dict:
    """Verify ``path`` against the problem in ``data`` (npz): default workers (wall), then serial (CPU)."""
    import numpy as np

    from relu_gating import verify

    d = np.load(data)
    t = time.perf_counter()
    rep = verify(path, d["Phi"], d["U"], "bias")
    wall = time.perf_counter() - t
    c = time.process_time()
    rep1 = verify(path, d["Phi"], d["U"], "bias", workers=1)
    cpu = time.process_time() - c
    return {"wall": wall, "cpu_serial": cpu, "valid": bool(rep.valid), "alpha": float(rep.alpha_proven),
            "same": bool(rep1.valid == rep.valid and rep1.alpha_proven == rep.alpha_proven)}


def make(case: str, budget: float, tmp: Path) -> tuple[str, str, float, int]:
    import numpy as np

    from real import case_problem

    from relu_gating import best_neuron
    from relu_gating.certificate import result_to_dict

    Phi, U, _, _ = case_problem(case)
    t = time.perf_counter()
    res = best_neuron(Phi, U, features="bias", max_seconds=budget)
    search = time.perf_counter() - t
    path, data = tmp / f"{case}.json", tmp / f"{case}.npz"
    path.write_text(json.dumps(result_to_dict(res), allow_nan=False))
    np.savez(data, Phi=Phi, U=U)
    return str(path), str(data), search, int(res.n_nodes)


def main(argv=None) -> None:
    from real import checkout, in_child_script

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", help="the other commit (required)")
    ap.add_argument("--cases", default="bc-pca3")
    ap.add_argument("--budget", type=float, default=120.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    print(f"load {os.getloadavg()}")
    print("| case | nodes | search s | verify s (against) | verify s (now) | serial CPU s (against) | serial CPU s (now) "
          "| verify / search (now) |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp, checkout(args.against) as other:
        here = HERE.parent
        for case in args.cases.split(","):
            path, data, search, nodes = make(case, args.budget, Path(tmp))
            runs: dict = {"against": [], "now": []}
            for k in range(args.repeats):
                order = [("against", other), ("now", here)] if k % 2 == 0 else [("now", here), ("against", other)]
                for name, root in order:
                    runs[name].append(in_child_script(root, HERE / "verify_against.py", ["--child", path, data], 600))
            for name in runs:
                bad = [r for r in runs[name] if "error" in r or not r["same"]]
                assert not bad, (name, bad)
            assert {(r["valid"], r["alpha"]) for r in runs["now"] + runs["against"]}.__len__() == 1, runs
            med = {n: (statistics.median(r["wall"] for r in v), statistics.median(r["cpu_serial"] for r in v))
                   for n, v in runs.items()}
            print(f"| {case} | {nodes:,} | {search:.1f} | {med['against'][0]:.2f} | {med['now'][0]:.2f} | "
                  f"{med['against'][1]:.2f} | {med['now'][1]:.2f} | {med['now'][0] / search:.3f} |", flush=True)
    print(f"load {os.getloadavg()}")


if __name__ == "__main__":
    main()
