r"""Benchmark: this checkout against another commit, same cases, same run.

Checks out ``--against REV`` (default ``HEAD~1``) into a temporary git
worktree, then times ``best_neuron`` (features ``bias``, K = 4 kNN basis) on
the cases of ``benchmarks/best_neuron.py`` and ``enumerate_patterns`` on
``benchmarks/enumerate.py``-like inputs, alternating the two checkouts in
separate processes so that load on the shared machine hits both alike.
Prints per case the median seconds of each, their ratio, and whether the
answers (value, certified, pattern count) agree.

``--bnb`` times the branch and bound instead, run to the end on one core (Gaussian ``X``, seed 0,
as ``benchmarks/frontier.py``), and compares seconds, nodes and answers.

Usage::

    python benchmarks/compare.py --against e4a5a1e [--repeats 3] [--quick]
    python benchmarks/compare.py --against 50d4197 --bnb
    python benchmarks/compare.py --against 50d4197 --large    # adds n = 200, d = 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from typing import Iterator

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CASES = {"n100d2": (100, 2), "n200d2": (200, 2), "n60d3": (60, 3), "n30d4": (30, 4)}
QUICK = {"n40d2": (40, 2), "n16d3": (16, 3)}
BNB = {"n120d4": (120, 4), "n45d5": (45, 5)}
LARGE = {"n200d3": (200, 3)}  # 2.6M patterns: each run a fresh process, so its first query

_CHILD = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, {root!r})
import relu_gating as rg
try:
    from relu_gating.data.datasets import two_moons
except ImportError:
    from relu_gating.datasets import two_moons
n, d = {n}, {d}
rng = np.random.default_rng(0)
X = two_moons(n, noise=0.1, seed=0) if d == 2 else np.c_[two_moons(n, seed=0), rng.normal(size=(n, d - 2))]
W = rg.sample_graph(X, kind="knn")
U = rg.low_frequency_basis(rg.laplacian(W), 4).U_K
Phi = rg.layer_input(X)
t0 = time.perf_counter(); P = rg.enumerate_patterns(Phi); t_enum = time.perf_counter() - t0
t0 = time.perf_counter(); r = rg.best_neuron(Phi, U, features="bias"); t_query = time.perf_counter() - t0
print(json.dumps({{"value": r.value, "certified": bool(r.certified), "patterns": int(r.n_patterns),
                  "enumerate_s": t_enum, "query_s": t_query}}))
"""


_BNB_CHILD = r"""
import json, sys, time, warnings
import numpy as np
sys.path.insert(0, {root!r})
import relu_gating as rg
X = np.random.default_rng(0).normal(size=({n}, {d}))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    U = rg.low_frequency_basis(rg.laplacian(rg.sample_graph(X, kind="knn")), 4).U_K
Phi = rg.layer_input(X)
t0 = time.perf_counter(); r = rg.best_neuron(Phi, U, strategy="branch-and-bound"); t = time.perf_counter() - t0
print(json.dumps({{"value": r.value, "certified": bool(r.certified), "nodes": int(r.n_nodes), "seconds": t}}))
"""


def _run(root: str, n: int, d: int, child: str = _CHILD) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", child.format(root=root, n=n, d=d)], capture_output=True,
                         text=True, env=env, check=True, cwd=root)
    return json.loads(out.stdout.strip().splitlines()[-1])


@contextmanager
def _checkout(rev: str) -> Iterator[str]:
    """A temporary git worktree of ``rev`` (removed after)."""
    with tempfile.TemporaryDirectory() as tmp:
        other = os.path.join(tmp, "other")
        subprocess.run(["git", "worktree", "add", "--detach", "-q", other, rev], cwd=ROOT, check=True)
        try:
            yield other
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", other], cwd=ROOT, check=False)


def save_run(path: str, start: dict, args: argparse.Namespace, rows: list) -> None:
    """Write a comparison's rows to ``path`` (JSON) with ``start`` (its :func:`provenance` when it started: the
    commit that ran as "this") and the load and date at its end."""
    from relu_gating.experiments._base import provenance

    end = provenance()
    prov = {**start, "load_start": start["load_end"], "load_end": end["load_end"], "date_end": end["date"]}
    with open(path, "w") as fh:
        json.dump({"provenance": prov, "args": vars(args), "rows": rows}, fh, indent=1)


def _alternate(other: str, n: int, d: int, repeats: int, child: str = _CHILD) -> tuple[list, list]:
    """``repeats`` runs of ``child`` in this checkout and in ``other``, in turn (the same load hits both)."""
    now, then = [], []
    for _ in range(repeats):
        now.append(_run(ROOT, n, d, child))
        then.append(_run(other, n, d, child))
    return now, then


def _median(runs: list, key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--against", default="HEAD~1", help="git revision to compare with (default HEAD~1)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--bnb", action="store_true", help="the branch and bound to the end instead (one core)")
    p.add_argument("--large", action="store_true", help="also n = 200, d = 3 (2.6M patterns)")
    args = p.parse_args(argv)
    with _checkout(args.against) as other:
        ok = _compare_bnb(args, other) if args.bnb else _compare_query(args, other)
    print("medians over", args.repeats, "alternating runs each")
    return 0 if ok else 1


def _compare_query(args: argparse.Namespace, other: str) -> bool:
    """Enumeration and query seconds, this checkout against ``other``; whether the answers agree."""
    cases = dict(QUICK if args.quick else CASES, **(LARGE if args.large else {}))
    print(f"{'case':8s} {'patterns':>9s} {'query now':>10s} {'query ' + args.against:>14s} {'ratio':>6s} "
          f"{'enum now':>9s} {'enum then':>9s} {'ratio':>6s}  same answer")
    ok = True
    for name, (n, d) in cases.items():
        now, then = _alternate(other, n, d, args.repeats)
        q1, q0 = _median(now, "query_s"), _median(then, "query_s")
        e1, e0 = _median(now, "enumerate_s"), _median(then, "enumerate_s")
        same = (abs(now[0]["value"] - then[0]["value"]) <= 1e-9 and now[0]["patterns"] == then[0]["patterns"]
                and now[0]["certified"] == then[0]["certified"])
        ok &= same
        print(f"{name:8s} {now[0]['patterns']:9d} {q1:9.3f}s {q0:13.3f}s {q1 / q0:6.2f} {e1:8.3f}s "
              f"{e0:8.3f}s {e1 / e0:6.2f}  {'yes' if same else 'NO'} ({now[0]['value']:.12f})", flush=True)
    return ok


def _compare_bnb(args: argparse.Namespace, other: str) -> bool:
    """Seconds and nodes of the branch and bound (speed-up = then / now); whether the answers agree."""
    print(f"{'case':8s} {'seconds now':>11s} {'then':>8s} {'speed-up':>8s} {'nodes now':>9s} {'then':>8s}  same answer")
    ok = True
    for name, (n, d) in BNB.items():
        now, then = _alternate(other, n, d, args.repeats, _BNB_CHILD)
        s1, s0 = _median(now, "seconds"), _median(then, "seconds")
        same = abs(now[0]["value"] - then[0]["value"]) <= 1e-9 and now[0]["certified"] and then[0]["certified"]
        ok &= same
        print(f"{name:8s} {s1:10.2f}s {s0:7.2f}s {s0 / s1:7.2f}x {now[0]['nodes']:9d} {then[0]['nodes']:8d}  "
              f"{'yes' if same else 'NO'} ({now[0]['value']:.12f})", flush=True)
    return ok


if __name__ == "__main__":
    sys.exit(main())
