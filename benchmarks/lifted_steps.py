r"""Benchmark: the lifted bound's first-order steps with the complementarity matrices held by their factors
and the top eigenpair alone per step (``_strong.STRUCTURED``, ``_strong.TOP_ONLY``, the defaults) beside the
dense ``(|U|, d, d)`` stack and the whole ``eigh`` (before), on the nodes the branch and bound meets.

A serial search runs ``--cpu`` CPU seconds on the case (``benchmarks/real.py``'s cases) and records a
random ``--fraction`` of the nodes it tries the lifted bound on (signs, interior points, the level that
settles them).  Then ``strong_bound`` runs on every recorded node both ways, alternating, ``--repeats``
times, on the CPU clock (so the figures hold under load); printed per band of undecided rows: nodes,
settled both ways, largest difference of the bounds found, CPU milliseconds a try (medians) and their ratio.
Single-threaded BLAS.

Run::

    python benchmarks/lifted_steps.py --case bc-pca5-n200 --cpu 60
    python benchmarks/lifted_steps.py --case bc-pca5-n200 --cpu 60 --nodes /tmp/nodes.pkl   # kept for reruns
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real import case_problem  # noqa: E402


def collect(case: str, cpu: float, fraction: float, limit: int = 400) -> tuple:
    """Nodes the search tries the lifted bound on: ``(objective, zero rows, [(k, signs, V, level)])``."""
    from relu_gating.patterns import single_thread_blas
    from relu_gating.search.bnb import _strong
    from relu_gating.search.bnb._api import _seed_incumbent, _starts
    from relu_gating.search.bnb._search import Search
    from relu_gating.search.objectives import make_objective, with_rank
    from relu_gating.search.proofs import exact_rank

    Phi, U, _, _ = case_problem(case)
    obj = with_rank(make_objective(Phi, U, "bias"), exact_rank(make_objective(Phi, U, "bias").Phi))
    c0 = time.process_time()
    search = Search(obj, 1.0, 1e-9, "auto", 0, True)
    _seed_incumbent(search, obj, 0, _starts(None, obj.Phi.shape[1]))
    search.reserve = lambda: 2e9 if time.process_time() - c0 > cpu else 0.0
    rng, rec, orig = np.random.default_rng(1), [], _strong.strong_bound

    def recording(Q, M, QH, signs, zero, V, k=_strong.N_DECIDED, level=-np.inf):
        if len(rec) < limit and rng.random() < fraction:
            rec.append((int(np.sum((signs == 0) & ~zero)), signs.copy(), V.copy(), level))
        return orig(Q, M, QH, signs, zero, V, k, level)

    _strong.strong_bound = recording
    try:
        with single_thread_blas():
            search.run(time.perf_counter() + 1e9)
    finally:
        _strong.strong_bound = orig
    return obj, search.P.zero_rows, rec


def run_all(obj, zero, rec, structured: bool) -> tuple[list, list]:
    """CPU seconds and bound (inf for none) of ``strong_bound`` on every recorded node."""
    from relu_gating.search.bnb import _strong

    saved = _strong.STRUCTURED, _strong.TOP_ONLY
    _strong.STRUCTURED = _strong.TOP_ONLY = structured
    secs, bounds = [], []
    try:
        for _, signs, V, level in rec:
            t = time.process_time()
            got = _strong.strong_bound(obj.Psi, obj.M, obj.Q_H, signs, zero, V, level=level)
            secs.append(time.process_time() - t)
            bounds.append(np.inf if got is None else got[0])
    finally:
        _strong.STRUCTURED, _strong.TOP_ONLY = saved
    return secs, bounds


def main(argv=None) -> None:
    from relu_gating.patterns import single_thread_blas

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", default="bc-pca5-n200")
    ap.add_argument("--cpu", type=float, default=60.0, help="CPU seconds of search that collect the nodes")
    ap.add_argument("--fraction", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--nodes", help="a pickle of recorded nodes: read it when it exists (no search), else write it")
    a = ap.parse_args(argv)
    if a.nodes and Path(a.nodes).exists():
        with open(a.nodes, "rb") as f:
            obj, zero, rec = pickle.load(f)
    else:
        obj, zero, rec = collect(a.case, a.cpu, a.fraction)
        if a.nodes:
            with open(a.nodes, "wb") as f:
                pickle.dump((obj, zero, rec), f)
    ways = {"dense (before)": False, "factors (now)": True}
    secs: dict = {w: [] for w in ways}
    bounds: dict = {}
    with single_thread_blas():
        for r in range(a.repeats):
            for w in (list(ways) if r % 2 == 0 else list(ways)[::-1]):
                s, b = run_all(obj, zero, rec, ways[w])
                secs[w].append(s)
                bounds[w] = np.array(b)
    med = {w: np.median(np.array(secs[w]), axis=0) for w in ways}
    ks = np.array([x[0] for x in rec])
    levels = np.array([x[3] for x in rec])
    print(f"{a.case}: {len(rec)} nodes recorded in {a.cpu:g} CPU s of search")
    print(f"{'undecided':>10s} {'nodes':>6s} {'settled before/now':>19s} {'max |diff|':>11s} "
          f"{'ms before':>10s} {'ms now':>8s} {'now/before':>11s}")
    for lo, hi in ((1, 31), (32, 63), (64, 95), (96, 128), (1, 128)):
        m = (ks >= lo) & (ks <= hi)
        if not m.any():
            continue
        sb, sn = (bounds[w][m] <= levels[m] for w in ways)
        fin = np.isfinite(bounds["dense (before)"][m]) & np.isfinite(bounds["factors (now)"][m])
        diff = float(np.max(np.abs(bounds["dense (before)"][m][fin] - bounds["factors (now)"][m][fin]), initial=0.0))
        tb, tn = (1000 * float(med[w][m].mean()) for w in ways)
        print(f"{lo:>4d}-{hi:<5d} {int(m.sum()):>6d} {int(sb.sum()):>9d}/{int(sn.sum()):<9d} {diff:>11.2e} "
              f"{tb:>10.1f} {tn:>8.1f} {tn / tb:>11.2f}")
    print("CPU seconds of each pass:", {w: [round(sum(s), 2) for s in secs[w]] for w in ways},
          "median ratio", round(statistics.median(sum(x) for x in secs["factors (now)"])
                                / statistics.median(sum(x) for x in secs["dense (before)"]), 3))


if __name__ == "__main__":
    main()
