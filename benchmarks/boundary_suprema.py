"""How many N_K queries whose optimum is a one-sample neuron are certified, per strategy.

The instances are those of ``tests/test_boundary_suprema.py`` (``_instance``: ``Phi = [X, 1]``, n x 2
Gaussian ``X``; ``U_K`` large at the sample of largest first coordinate), kept when an exact
copositivity certificate proves the one-sample neuron optimal.  Every chamber across a wall or an
edge of that sample's chamber has its supremum on its boundary.  Prints, per strategy, how many
are certified and the largest ``upper_bound - l_i``; run it on two commits to compare::

    PYTHONPATH=$PWD python benchmarks/boundary_suprema.py --seeds 20

``--line``: the 3-d queries of ``_line_instance`` (samples on an axis; chambers of up to
``n_line + 1`` active samples share the one-sample optimum on a 2-d face), ``n_line`` in ``--n``:
per strategy the certified count, CPU seconds and (branch and bound) nodes and face leaves.  Run it
with ``PYTHONPATH`` on another checkout to compare (the instances come from this tree's tests)::

    PYTHONPATH=$PWD python benchmarks/boundary_suprema.py --line --seeds 6 --n 13 14 16
    PYTHONPATH=/path/to/main python benchmarks/boundary_suprema.py --line --seeds 6 --n 13 14 16

``--random``: random queries instead (Gaussian ``X`` in 2-d and 3-d, ``U_K`` random orthonormal with
``N_K``, or from a kNN graph with the bias), where boundary suprema occur among others; prints the
uncertified runs per family.  ``--compare``: each query run with and without the face step (step 2b
of ``settle_claims`` and the polish in ``kernel_evidence`` switched off), alternately first, in one
process: the time each takes and the certified counts, side by side.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_boundary_suprema import _instance, _line_instance, _one_sample_optimum  # noqa: E402

import numpy as np  # noqa: E402

import relu_gating as rg  # noqa: E402
from relu_gating import best_neuron  # noqa: E402


def _random(seed: int, d: int, family: str) -> tuple:
    """A random query: ``N_K`` with a random orthonormal ``U_K`` (K = 1..3, n = 8..14), or the bias
    with a kNN graph's ``U_K`` (K = 2..5, n = 10..21)."""
    if family == "nk":
        rng = np.random.default_rng([11, seed])
        n, K = int(rng.integers(8, 15 if d == 2 else 13)), int(rng.integers(1, 4))
        X = rng.standard_normal((n, d))
        return np.column_stack([X, np.ones(n)]), np.linalg.qr(rng.standard_normal((n, K)))[0], None
    rng = np.random.default_rng([13, seed])
    n, K = int(rng.integers(10, 22)), int(rng.integers(2, 6))
    X = rng.standard_normal((n, d))
    U = rg.low_frequency_basis(rg.laplacian(rg.sample_graph(X, kind="knn"), kind="combinatorial"), K=K).U_K
    return rg.layer_input(X), U, "bias"


def _without_faces():
    """A context in which the face step and the polish are off (the code before them)."""
    import contextlib

    from relu_gating.search import _claims
    from relu_gating.search._exact import dual_polish

    @contextlib.contextmanager
    def off():
        saved = _claims._faces, dual_polish.polish
        _claims._faces = lambda *a, **k: None
        dual_polish.polish = lambda *a, **k: None
        try:
            yield
        finally:
            _claims._faces, dual_polish.polish = saved
    return off()


def compare(seeds: int) -> None:
    import contextlib

    for d in (2, 3):
        for family in ("nk", "bias"):
            for strategy in ("enumerate", "branch-and-bound"):
                t = {True: 0.0, False: 0.0}
                ok = {True: 0, False: 0}
                for seed in range(seeds):
                    Phi, U, features = _random(seed, d, family)
                    for on in ((True, False) if seed % 2 else (False, True)):
                        with contextlib.nullcontext() if on else _without_faces():
                            t0 = time.perf_counter()
                            res = best_neuron(Phi, U, features=features, strategy=strategy)
                            t[on] += time.perf_counter() - t0
                        ok[on] += bool(res.certified)
                print(f"d={d} {family:>4} {strategy:>16}: certified {ok[True]}/{seeds} (without: {ok[False]}), "
                      f"{t[True]:6.1f} s (without: {t[False]:6.1f} s)", flush=True)


def random_queries(seeds: int) -> None:
    for d in (2, 3):
        for family in ("nk", "bias"):
            for strategy in ("enumerate", "branch-and-bound"):
                bad, t0 = [], time.perf_counter()
                for seed in range(seeds):
                    Phi, U, features = _random(seed, d, family)
                    res = best_neuron(Phi, U, features=features, strategy=strategy)
                    if not res.certified:
                        bad.append(f"{seed} ({res.upper_bound - res.value:.2g})")
                print(f"d={d} {family:>4} {strategy:>16}: {seeds - len(bad)}/{seeds} certified "
                      f"{time.perf_counter() - t0:6.1f} s; not: {', '.join(bad) or '-'}", flush=True)


def line_queries(seeds: int, sizes: list, Ks: list) -> None:
    """The ``--line`` family (module docstring): certified, CPU seconds, nodes and face leaves."""
    for strategy in ("enumerate", "branch-and-bound"):
        kept = certified = nodes = leaves = 0
        cpu = 0.0
        for n_line in sizes:
            for K in Ks:
                for seed in range(seeds):
                    Phi, U, i = _line_instance(seed, n_line, K)
                    if _one_sample_optimum(U, i) is None:
                        continue
                    t0 = time.process_time()
                    res = best_neuron(Phi, U, features=None, strategy=strategy)
                    cpu += time.process_time() - t0
                    kept += 1
                    certified += bool(res.certified)
                    if strategy == "branch-and-bound":
                        st = res.certificate.tree["stats"]
                        nodes += int(st.get("nodes", 0))
                        leaves += int(st.get("face_leaves", 0))
        extra = f", {nodes} nodes, {leaves} face leaves" if strategy == "branch-and-bound" else ""
        print(f"{rg.__file__}\n{strategy:>16}: {certified}/{kept} certified, {cpu:.1f} CPU s{extra}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=40, help="seeds tried per (n, K) (default 40)")
    ap.add_argument("--n", type=int, nargs="+", default=[8, 12])
    ap.add_argument("--K", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--random", action="store_true", help="random queries (see the module docstring)")
    ap.add_argument("--compare", action="store_true", help="random queries with and without the face step")
    ap.add_argument("--line", action="store_true", help="3-d samples on an axis (see the module docstring)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if args.line:
        line_queries(args.seeds, args.n, args.K)
        return
    if args.compare:
        compare(args.seeds)
        return
    if args.random:
        random_queries(args.seeds)
        return
    for strategy in ("enumerate", "branch-and-bound"):
        kept = certified = 0
        worst, t0 = 0.0, time.perf_counter()
        for n in args.n:
            for K in args.K:
                for seed in range(args.seeds):
                    Phi, U, i = _instance(seed, n, K)
                    li = _one_sample_optimum(U, i)
                    if li is None:
                        continue
                    res = best_neuron(Phi, U, features=None, strategy=strategy)
                    kept += 1
                    certified += bool(res.certified)
                    worst = max(worst, res.upper_bound - float(li))
        print(f"{strategy:>16}: {certified}/{kept} certified, largest upper_bound - l_i {worst:.3g}, "
              f"{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
