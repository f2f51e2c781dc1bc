r"""Benchmark: the checker's walk of one large tree certificate, this commit beside another in one run.

The walk (``relu_gating.checker.walk_tree``, float mode) is what ``verify`` and the branch and bound's
audit spend their time in on a large tree: at n = 1000 most nodes are implied signs.  A tree is grown
once here (``--case``, ``--grow`` seconds of branch and bound, single-threaded BLAS) and pickled; then
each commit walks it in a fresh process, alternating, ``--repeats`` times.  Printed: nodes, implied
nodes, the median seconds of each commit and their ratio, and whether both found the same leaves.

Run::

    python benchmarks/walk_speed.py --case clustered-1000x3 --grow 200 --against HEAD~1
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from real import case_problem, checkout, in_child_script  # noqa: E402


def grow(case: str, seconds: float, path: str) -> tuple[int, int]:
    """A tree of ``case`` after ``seconds`` of search, pickled to ``path``: (nodes, implied nodes)."""
    from relu_gating.search.proofs._problem import exact_rank
    from relu_gating.patterns._exact import single_thread_blas
    from relu_gating.search.bnb._api import _seed_incumbent
    from relu_gating.search.bnb._search import Search
    from relu_gating.search.bnb._tree_build import to_nodes
    from relu_gating.search.objectives import make_objective, with_rank

    Phi, U, _, _ = case_problem(case)
    obj = make_objective(Phi, U, "bias")
    obj = with_rank(obj, exact_rank(obj.Phi))
    search = Search(obj, 1.0, 1e-9, "auto", 0, True)
    _seed_incumbent(search, obj, 0)
    with single_thread_blas():
        search.run(time.perf_counter() + seconds)
    nodes = to_nodes(search.root)
    with open(path, "wb") as f:
        pickle.dump(nodes, f)
    return len(nodes), sum(1 for nd in nodes if nd[0] == "i")


def child(case: str, path: str) -> dict:
    """One timed walk of the pickled tree with the ``relu_gating`` on ``PYTHONPATH``."""
    from relu_gating.checker import state_problem, walk_tree
    from relu_gating.patterns._exact import single_thread_blas

    Phi, U, _, _ = case_problem(case)
    with open(path, "rb") as f:
        nodes = pickle.load(f)
    P = state_problem(Phi, U, "bias")
    with single_thread_blas():
        t = time.perf_counter()
        leaves, reasons, _ = walk_tree(nodes, P)
        sec = time.perf_counter() - t
    digest = hashlib.sha256(repr(sorted(leaves)).encode()).hexdigest()[:16]
    return {"seconds": sec, "leaves": digest, "reasons": reasons[:1]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", default="clustered-1000x3")
    ap.add_argument("--grow", type=float, default=200.0, help="seconds of branch and bound that grow the tree")
    ap.add_argument("--against", default="HEAD~1", help="the git revision walked beside this checkout")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.case, a.child)))
        return
    path = str(Path(tempfile.mkdtemp(prefix="walk-speed-")) / "tree.pkl")
    n_nodes, n_implied = grow(a.case, a.grow, path)
    secs: dict = {"this": [], a.against: []}
    digests = set()
    with checkout(None) as here, checkout(a.against) as other:
        for _ in range(a.repeats):
            for name, root in (("this", here), (a.against, other)):
                out = in_child_script(root, "walk_speed.py", ["--case", a.case, "--child", path], 3600)
                if "error" in out:
                    raise SystemExit(f"{name}: {out['error']}")
                secs[name].append(out["seconds"])
                digests.add((out["leaves"], tuple(out["reasons"])))
    med = {k: statistics.median(v) for k, v in secs.items()}
    print(f"{a.case}: {n_nodes:,d} nodes ({n_implied:,d} implied) after {a.grow:.0f} s of search")
    print(f"walk: this checkout {med['this']:.2f} s, {a.against} {med[a.against]:.2f} s "
          f"(ratio {med['this'] / med[a.against]:.2f}; medians of {a.repeats}); same leaves: {len(digests) == 1}")


if __name__ == "__main__":
    main()
