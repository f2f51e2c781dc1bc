r"""Benchmark: the checker's serial walk of a tree certificate, this checkout's against another commit's, in one
process, alternating (issue 39: verify at most a tenth of the search).

The other commit's ``relu_gating/checker/_tree.py`` is loaded beside this one (``git show``; the walk's
other modules are this checkout's, so this compares ``_tree.py`` alone).  Per case of ``benchmarks/real.py``
a tree is grown once (``best_neuron`` with its defaults, ``--budget`` seconds), read back from JSON,
then walked ``--repeats`` times by each, alternating; printed: the medians of CPU seconds, and a check
that both give the same leaves, proven bounds, reasons and counts.

Run::

    python benchmarks/verify_walk_against.py --against bf5346b --cases bc-pca3,iris-dup --budget 60
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def old_walk(rev: str, tmp: Path):
    src = subprocess.run(["git", "-C", str(HERE.parent), "show", f"{rev}:relu_gating/checker/_tree.py"],
                         check=True, capture_output=True, text=True).stdout
    path = tmp / "old_tree.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("relu_gating.checker._tree_against", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.walk


def main(argv=None) -> None:
    from real import case_problem

    from relu_gating import best_neuron
    from relu_gating._runtime.blas_limit import limited_blas
    from relu_gating._runtime.collector import paused_gc
    from relu_gating.certificate import result_to_dict
    from relu_gating.checker import state_problem
    from relu_gating.checker._read import load_json
    from relu_gating.checker._tree import walk

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", required=True)
    ap.add_argument("--cases", default="bc-pca3,iris-dup")
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    print("| tree | nodes | kinds | old CPU s | new CPU s | new / old |\n| --- | ---: | --- | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        walks = {"old": old_walk(args.against, Path(tmp)), "new": walk}
        for case in args.cases.split(","):
            Phi, U, _, _ = case_problem(case)
            res = best_neuron(Phi, U, features="bias", max_seconds=args.budget)
            path = Path(tmp) / f"{case}.json"
            path.write_text(json.dumps(result_to_dict(res), allow_nan=False))
            with paused_gc(), limited_blas(1):
                nodes = load_json(str(path))["tree"]["nodes"]
                P = state_problem(Phi, U, "bias")
                times: dict = {"old": [], "new": []}
                got: dict = {}
                for k in range(args.repeats):
                    for name in (("old", "new") if k % 2 == 0 else ("new", "old")):
                        c = time.process_time()
                        got[name] = walks[name](nodes, P, False)
                        times[name].append(time.process_time() - c)
            assert got["old"] == got["new"], "the two walks disagree"
            kinds: dict = {}
            for nd in nodes:
                kinds[nd[0]] = kinds.get(nd[0], 0) + 1
            old, new = statistics.median(times["old"]), statistics.median(times["new"])
            print(f"| {case} | {len(nodes):,} | {kinds} | {old:.3f} | {new:.3f} | {new / old:.2f} |", flush=True)


if __name__ == "__main__":
    main()
