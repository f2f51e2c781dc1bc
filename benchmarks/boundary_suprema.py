"""How many N_K queries whose optimum is a one-sample neuron are certified, per strategy.

The instances are those of ``tests/test_boundary_suprema.py`` (``_instance``: ``Phi = [X, 1]``, n x 2
Gaussian ``X``; ``U_K`` large at the sample of largest first coordinate), kept when an exact
copositivity certificate proves the one-sample neuron optimal.  Every chamber across a wall or an
edge of that sample's chamber has its supremum on its boundary.  Prints, per strategy, how many
are certified and the largest ``upper_bound - l_i``; run it on two commits to compare::

    PYTHONPATH=$PWD python benchmarks/boundary_suprema.py --seeds 40
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_boundary_suprema import _instance, _one_sample_optimum  # noqa: E402

from relu_gating import best_neuron  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=40, help="seeds tried per (n, K) (default 40)")
    ap.add_argument("--n", type=int, nargs="+", default=[8, 12])
    ap.add_argument("--K", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    warnings.simplefilter("ignore")
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
