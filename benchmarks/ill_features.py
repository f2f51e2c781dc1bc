"""How many queries with nearly dependent features are certified, per strategy (issue 37).

The instances are those of ``tests/test_float_range.py``: ``H = [1, 1 + 2^-E r]`` (exact rank 2,
condition about 2^E, E = 30..52), 9 samples, ``X`` in 2-d (``ill_features``) or 1-d
(``ill_features_1d``), ``U_K`` from a Gaussian kNN graph; and with ``--moderate`` the condition
1e5-1e6 family (``moderate_features``, E = 17..20).  Prints per strategy how many are certified and,
per seed, the value and the upper bound; run it on two commits to compare::

    PYTHONPATH=$PWD python benchmarks/ill_features.py --seeds 12
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import test_float_range as fr  # noqa: E402

import relu_gating as rg  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=12)
    ap.add_argument("--moderate", action="store_true", help="the condition 1e5-1e6 family instead")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    families = {"moderate 1-d": lambda s: fr.moderate_features(s, 1), "moderate 2-d": lambda s: fr.moderate_features(s, 2)} \
        if args.moderate else {"2-d": lambda s: fr.ill_features(s)[:3], "1-d": fr.ill_features_1d}
    for name, make in families.items():
        counts = {s: 0 for s in fr.STRATEGIES}
        for seed in range(args.seeds):
            Phi, U, H = make(seed)
            row = []
            for strategy in fr.STRATEGIES:
                t = time.process_time()
                res = rg.best_neuron(Phi, U, features=H, strategy=strategy)
                counts[strategy] += bool(res.certified)
                row.append(f"{strategy[:4]} {'C' if res.certified else '-'} {res.value:.9f} <= {res.upper_bound:.9f} "
                           f"({time.process_time() - t:.1f} s CPU)")
            print(f"{name} seed {seed:2d}: " + " | ".join(row), flush=True)
        print(f"{name}: certified " + ", ".join(f"{s} {c}/{args.seeds}" for s, c in counts.items()), flush=True)


if __name__ == "__main__":
    main()
