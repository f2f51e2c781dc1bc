r"""Benchmark: the lifted bound on small nodes (1-8 undecided rows, where Clarabel is the fallback),
with the first-order steps of small nodes (``FO_SMALL_STEPS``/``FO_SMALL_CHECK``) beside the general
ones (``FO_STEPS``/``FO_CHECK``, the baseline), in the same run.

The nodes are those the branch and bound meets: a search runs ``--collect`` seconds on the case and
records a random fifth of the nodes of 1-8 undecided rows it tries the lifted bound on (signs,
interior points, the level that settles them).  Then ``strong_bound`` runs on every recorded node
with each setting, alternating, ``--repeats`` times; printed per setting: nodes settled (bound at most
the level), milliseconds per try (median over repeats), and how many the first-order steps alone
settled.  Single-threaded BLAS.

Run::

    python benchmarks/lifted_small.py --case clustered-1000x3 --collect 150
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real import case_problem  # noqa: E402


def collect(case: str, seconds: float, limit: int = 300) -> tuple:
    """Nodes of 1-8 undecided rows the search tries the lifted bound on: ``(objective, zero rows, [(signs, V, level)])``."""
    from relu_gating.search.proofs._problem import exact_rank
    from relu_gating.patterns._exact import single_thread_blas
    from relu_gating.search.bnb._api import _seed_incumbent
    from relu_gating.search.bnb._search import Search
    from relu_gating.search.objectives import make_objective, with_rank

    Phi, U, _, _ = case_problem(case)
    obj = make_objective(Phi, U, "bias")
    obj = with_rank(obj, exact_rank(obj.Phi))
    search = Search(obj, 1.0, 1e-9, "auto", 0, True)
    _seed_incumbent(search, obj, 0)
    rng, rec, orig = np.random.default_rng(1), [], Search.try_lifted

    def recording(self, node):
        k = int(np.sum((node.signs == 0) & ~self.P.zero_rows)) if node.signs is not None else 0
        if node.evidence is None and 1 <= k <= 8 and len(rec) < limit and rng.random() < 0.2:
            rec.append((node.signs.copy(), node.v.copy(), (self.best_value + self.tol) / self.alpha))
        return orig(self, node)

    Search.try_lifted = recording
    try:
        with single_thread_blas():
            search.run(time.perf_counter() + seconds)
    finally:
        Search.try_lifted = orig
    return obj, search.P.zero_rows, rec


def timed(obj, zero, rec, small: tuple) -> tuple[float, int, int]:
    """Seconds, nodes settled, nodes settled by the first-order steps alone, with the small nodes'
    first-order setting ``small`` = (steps, check)."""
    from relu_gating.search.bnb import _strong

    saved = _strong.FO_SMALL_STEPS, _strong.FO_SMALL_CHECK
    _strong.FO_SMALL_STEPS, _strong.FO_SMALL_CHECK = small
    calls = {"clarabel": 0}
    orig_solve = _strong._solve

    def counting(*a):
        calls["clarabel"] += 1  # Clarabel reached: the steps did not settle the node
        return orig_solve(*a)

    _strong._solve = counting
    try:
        t, ok = time.perf_counter(), 0
        for signs, V, level in rec:
            got = _strong.strong_bound(obj.Psi, obj.M, obj.Q_H, signs, zero, V, level=level)
            ok += got is not None and got[0] <= level
        return time.perf_counter() - t, ok, len(rec) - calls["clarabel"]
    finally:
        _strong.FO_SMALL_STEPS, _strong.FO_SMALL_CHECK = saved
        _strong._solve = orig_solve


def main(argv=None) -> None:
    from relu_gating.patterns._exact import single_thread_blas
    from relu_gating.search.bnb import _strong

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", default="clustered-1000x3")
    ap.add_argument("--collect", type=float, default=150.0, help="seconds of search that collect the nodes")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    obj, zero, rec = collect(a.case, a.collect)
    settings = {"baseline (FO_STEPS/FO_CHECK)": (_strong.FO_STEPS, _strong.FO_CHECK),
                "small nodes (FO_SMALL_STEPS/FO_SMALL_CHECK)": (_strong.FO_SMALL_STEPS, _strong.FO_SMALL_CHECK)}
    secs: dict = {k: [] for k in settings}
    counts: dict = {}
    with single_thread_blas():
        for _ in range(a.repeats):
            for name, small in settings.items():
                t, ok, fo = timed(obj, zero, rec, small)
                secs[name].append(t)
                counts[name] = (ok, fo)
    print(f"{a.case}: {len(rec)} nodes of 1-8 undecided rows")
    base = statistics.median(secs[next(iter(settings))])
    for name, small in settings.items():
        med = statistics.median(secs[name])
        ok, fo = counts[name]
        print(f"{name:45s} steps/check {small[0]:>3d}/{small[1]:<3d} settled {ok:>4d}  by the steps alone {fo:>4d}  "
              f"{1000 * med / max(len(rec), 1):6.2f} ms a try  ({med / base:.2f}x the baseline)")


if __name__ == "__main__":
    main()
