r"""Benchmark: the search's audit of one finished tree, its parts pickled to the pool against the checker's forked walk.

One query of ``benchmarks/real.py`` (``--case``, the defaults: every usable core, ``--seconds`` of wall
time) gives a tree; then, with one BLAS thread, ``--repeats`` times each way, alternating which goes first:

* ``pickled``: the audit's walk in parts as the search runs it (:func:`relu_gating.search.bnb._audit.walk_parts`
  on a started pool of the search's own, :class:`relu_gating._runtime.executors.LocalPool`, ``--workers``
  processes: subtrees pickled and sent to the pool's workers);
* ``forked``: the checker's own walk in parts (what ``verify`` runs: :func:`relu_gating.checker._tree.walk` with
  ``workers``), on processes forked afterwards that inherit the node list (nothing pickled);

and the whole walk in this process once (``serial``).  Every way must prove the same leaves (checked).
Prints medians and the ratio; ``--out`` saves them with the commit, command and load.  Measured for issue 39
(docs/branch-and-bound.md): the forked walk is no faster, so the audit keeps its pickled parts.

    python benchmarks/audit_parts.py --case bc-pca5 --seconds 150 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))


def tree_of(case: str, seconds: float) -> tuple:
    """``(Phi, U, nodes, stats)`` of one default query of ``case`` stopped at ``seconds``."""
    from real import case_problem

    from relu_gating import best_neuron

    Phi, U, _, _ = case_problem(case)
    res = best_neuron(Phi, U, features="bias", max_seconds=seconds)
    return Phi, U, res.certificate.tree["nodes"], res.certificate.tree["stats"]


def timings(Phi, U, nodes, workers: int, repeats: int) -> dict:
    """Wall seconds of the audit walk each way (alternating), and of the serial walk."""
    from relu_gating._runtime.executors import LocalPool
    from relu_gating._runtime.threads import blas_threads
    from relu_gating.checker import state_problem, walk_tree
    from relu_gating.checker._tree import walk
    from relu_gating.search._claims import _features
    from relu_gating.search.bnb import _audit
    from relu_gating.search.objectives import make_objective

    F = _features(make_objective(Phi, U, "bias"))
    P = state_problem(Phi, U, F)
    out: dict = {"forked": [], "pickled": []}
    leaves = {}
    with blas_threads(1), LocalPool(workers) as pool:
        pool.submit(int, 0).result()  # started, as after a parallel search
        for rep in range(repeats):
            for way in (("forked", "pickled") if rep % 2 == 0 else ("pickled", "forked")):
                t = time.perf_counter()
                if way == "pickled":
                    got, reasons = _audit.walk_parts(nodes, P, (Phi, U, F), pool)
                else:
                    got, reasons, _ = walk(nodes, P, workers=workers)
                out[way].append(time.perf_counter() - t)
                leaves[way] = sorted(got)
                assert not reasons, reasons
        t = time.perf_counter()
        whole = sorted(walk_tree(nodes, P)[0])
        out["serial"] = [time.perf_counter() - t]
    assert leaves["forked"] == leaves["pickled"] == whole, "the ways prove different leaves"
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", default="bc-pca5-n200", help="a case of benchmarks/real.py")
    ap.add_argument("--seconds", type=float, default=120.0, help="the query's max_seconds (its tree is audited)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=None, help="save the figures as JSON")
    args = ap.parse_args(argv)
    from relu_gating.experiments._base import provenance

    prov = provenance()  # the commit, dirty flag, command and load before the run
    Phi, U, nodes, stats = tree_of(args.case, args.seconds)
    got = timings(Phi, U, nodes, args.workers, args.repeats)
    med = {k: statistics.median(v) for k, v in got.items()}
    print(f"{args.case}: a tree of {len(nodes):,} entries ({args.seconds:g}-s query; its own audit took "
          f"{stats['t_audit']:.2f} s); audit walk on {args.workers} workers, medians of {args.repeats}:")
    print(f"  forked {med['forked']:.2f} s   pickled {med['pickled']:.2f} s   ratio {med['pickled'] / med['forked']:.2f}x"
          f"   serial {med['serial']:.2f} s")
    if args.out:
        Path(args.out).write_text(json.dumps({
            "provenance": {**prov, "load_start": prov["load_end"], "load_end": provenance()["load_end"]},
            "args": vars(args), "entries": len(nodes),
            "t_audit_in_query": stats["t_audit"], "seconds": got, "medians": med}, indent=1) + "\n")


if __name__ == "__main__":
    main()
