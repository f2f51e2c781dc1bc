r"""Benchmark: ``verify`` on the same tree certificates, this checkout against another commit, alternating in
one run (issue 39: verify at most a tenth of the search on every row of the real-data table).

Per case of ``benchmarks/real.py`` the certificate is made once, by this checkout
(``best_neuron`` with its defaults, ``--budget`` seconds), written to JSON; then ``verify`` (the API,
its defaults: every core) runs ``--repeats`` times on each checkout, alternating, each in a fresh
process that reads the JSON file (what ``real.py``'s ``t_verify`` times); the CPU seconds of the
serial walk (``workers=1``) are timed in the same children.  Printed: median wall and CPU seconds of
each, and the search's wall for the ratio.  Both must give the same report (valid, alpha proven).

A stored certificate instead (``--cert CERT.json --input IN.npz`` with ``Phi`` and ``U``, ``--search`` the
seconds of the search that made it, for the ratio): verified as the cases' are, ``--save`` writing the runs,
the medians, this checkout's commit, the command and the load as JSON.

Run::

    python benchmarks/verify_against.py --against HEAD~1 --cases bc-pca3 --repeats 3
    python benchmarks/verify_against.py --against main --cert /tmp/bcpca5.json --input /tmp/bcpca5_in.npz \
        --search 444.1 --repeats 3 --save benchmarks/results/verify_against_bcpca5.json
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


def alternate(other: Path, path: str, data: str, repeats: int) -> dict:
    """``repeats`` verifies of ``path`` by each checkout, alternating (the other first on even rounds)."""
    from real import in_child_script

    runs: dict = {"against": [], "now": []}
    for k in range(repeats):
        order = [("against", other), ("now", HERE.parent)] if k % 2 == 0 else [("now", HERE.parent), ("against", other)]
        for name, root in order:
            runs[name].append(dict(in_child_script(root, HERE / "verify_against.py", ["--child", path, data], 1800),
                                   load1=os.getloadavg()[0]))
    for name in runs:
        bad = [r for r in runs[name] if "error" in r or not r["same"]]
        assert not bad, (name, bad)
    assert len({(r["valid"], r["alpha"]) for r in runs["now"] + runs["against"]}) == 1, runs
    return runs


def stored(args, argv) -> None:
    """The stored certificate ``--cert``: both checkouts alternating, the medians printed (and saved)."""
    import subprocess

    from real import checkout

    load = os.getloadavg()
    with checkout(args.against) as other:
        runs = alternate(other, args.cert, args.input, args.repeats)
    med = {n: {k: statistics.median(r[k] for r in v) for k in ("wall", "cpu_serial")} for n, v in runs.items()}
    print(f"load {load} -> {os.getloadavg()}")
    for n, m in med.items():
        print(f"{n}: verify wall {m['wall']:.2f} s (/ search {m['wall'] / args.search:.3f}), serial CPU {m['cpu_serial']:.2f} s")
    print(f"now / against: wall {med['now']['wall'] / med['against']['wall']:.3f}, "
          f"serial CPU {med['now']['cpu_serial'] / med['against']['cpu_serial']:.3f}")
    if args.save:
        git = ["git", "-C", str(HERE.parent), "rev-parse", "--short"]
        rec = {"commit": subprocess.run(git + ["HEAD"], capture_output=True, text=True).stdout.strip(),
               "against": subprocess.run(git + [args.against], capture_output=True, text=True).stdout.strip(),
               "command": "python benchmarks/verify_against.py " + " ".join(argv if argv is not None else sys.argv[1:]),
               "load_start": load, "load_end": os.getloadavg(), "search_seconds": args.search,
               "medians": med, "runs": runs}
        Path(args.save).write_text(json.dumps(rec, indent=1))


def main(argv=None) -> None:
    from real import checkout, in_child_script

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", help="the other commit (required)")
    ap.add_argument("--cases", default="bc-pca3")
    ap.add_argument("--budget", type=float, default=120.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cert", help="a stored tree certificate (JSON) instead of --cases")
    ap.add_argument("--input", help="with --cert: an .npz holding Phi and U")
    ap.add_argument("--search", type=float, default=float("nan"), help="with --cert: the search's seconds")
    ap.add_argument("--save", help="with --cert: write the runs and medians here (JSON)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    if args.cert:
        stored(args, argv)
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
