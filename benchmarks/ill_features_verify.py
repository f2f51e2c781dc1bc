"""The checker on nearly dependent features (issue 37): its proven ``eta_H``, the branch-and-bound tree
it lets the search write, and the CPU seconds of float and exact verify.

Same instances as ``benchmarks/ill_features.py`` (``H = [1, 1 + 2^-E r]``, E = 30..52, 9 samples, 2-d and
1-d).  With a checker ``eta_H`` above ``CHAMBER_LEAVES_ETA`` the search ends in chamber leaves only
(``c``/``x``: every chamber, up to 4,096); below it, in ordinary ``b``/``d`` leaves.  Per seed: the
checker's ``eta_H``, the tree's nodes and leaves by kind, the verdicts and CPU seconds of
``verify`` and ``verify --exact``; run it on two commits to compare::

    PYTHONPATH=$PWD python benchmarks/ill_features_verify.py --seeds 12
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import test_float_range as fr  # noqa: E402

import relu_gating as rg  # noqa: E402
from relu_gating.checker import state_problem  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=12)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    families = {"2-d": lambda s: fr.ill_features(s)[:3], "1-d": fr.ill_features_1d}
    for name, make in families.items():
        tot = collections.Counter()
        for seed in range(args.seeds):
            Phi, U, H = make(seed)
            eta = state_problem(Phi, U, H).eta_H
            t = time.process_time()
            res = rg.best_neuron(Phi, U, features=H, strategy="branch-and-bound")
            t_search = time.process_time() - t
            kinds = collections.Counter(nd[0] for nd in res.certificate.nodes)
            leaves = sum(v for k, v in kinds.items() if k not in ("s", "i"))
            row = [f"eta_H {eta:.1e}", f"{'C' if res.certified else '-'} {res.value:.9f}", f"search {t_search:.2f} s",
                   f"nodes {len(res.certificate.nodes)} leaves {leaves} (" + " ".join(f"{k}:{v}" for k, v in
                                                                                 sorted(kinds.items())) + ")"]
            for exact in (False, True):
                t = time.process_time()
                rep = rg.verify(res, Phi, U, features=H, exact=exact)
                dt = time.process_time() - t
                tot[f"verify{'_exact' if exact else ''}"] += dt
                row.append(f"{'exact' if exact else 'float'} {'C' if rep.certified else ('V' if rep.valid else 'X')} {dt:.2f} s")
            tot["leaves"] += leaves
            tot["chamber_leaves"] += kinds["c"] + kinds["x"]
            tot["certified"] += bool(res.certified)
            tot["search"] += t_search
            print(f"{name} seed {seed:2d}: " + " | ".join(row), flush=True)
        print(f"{name} total: certified {tot['certified']}/{args.seeds}, leaves {tot['leaves']} (chamber leaves "
              f"{tot['chamber_leaves']}), search {tot['search']:.1f} s, verify {tot['verify']:.2f} s, verify --exact "
              f"{tot['verify_exact']:.2f} s CPU", flush=True)


if __name__ == "__main__":
    main()
