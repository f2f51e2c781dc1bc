"""How many queries with columns spanning the float range are certified, and whether the checker agrees (issue 37).

Each seed draws one instance of the dynamic-range family of ``tests/test_float_range.py``: ``X`` of
n = 3..6 rows and d = 1..2 columns, entries ``+-k 2^e`` (``k < 2^20``, ``e`` in -1074..1003) or 0, the
ones column, ``U_K`` one Gaussian column, ``N_K`` or the bias.  Inputs refused (a column spanning more
than the float range) are counted apart.  Per strategy: how many are certified, how many certified
results float and exact verify certify too (a mismatch: the search certified, the checker refused),
and the false claims the test oracle finds (an upper bound or a value against exact rationals).  Run
it on two commits to compare::

    PYTHONPATH=$PWD python benchmarks/float_range_sweep.py --seeds 60

``--open`` prints, per uncertified result, the patterns or leaves whose bound stays above the value.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import test_float_range as fr  # noqa: E402

import relu_gating as rg  # noqa: E402


def draw(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, str | None]:
    """One instance of the family (module docstring)."""
    n, d = int(rng.integers(3, 7)), int(rng.integers(1, 3))

    def entry() -> float:
        k = int(rng.integers(1, 2**20)) * (2 * int(rng.integers(0, 2)) - 1)
        return math.ldexp(float(k), int(rng.integers(-1074, 1004)))

    X = np.array([[entry() if rng.integers(0, 2) else 0.0 for _ in range(d)] for _ in range(n)])
    U = np.linalg.qr(rng.normal(size=(n, 1)))[0]
    return np.c_[X, np.ones(n)], U, [None, "bias"][int(rng.integers(0, 2))]


def open_parts(res: rg.NeuronResult, n: int) -> list[str]:
    """What keeps an uncertified result open: the patterns (enumeration) or tree leaves (branch and bound)
    whose proven bound exceeds the value, with their active rows, bound and how they were settled."""
    c, out = res.certificate, []
    gap = res.value + 1e-9
    if hasattr(c, "packed"):
        masks = np.unpackbits(c.packed, axis=1, count=n).astype(bool)
        for i in np.flatnonzero(np.asarray(c.bounds) > gap).tolist():
            out.append(f"pattern {i} rows {np.flatnonzero(masks[i]).tolist()} bound {c.bounds[i]:.10f} "
                       f"settlement {int(c.settlement[i])} method {c.methods.get(i)} evidence {i in c.evidence}")
    else:
        for nd in c.nodes:
            if nd[0] in ("b", "c", "d") and nd[1] > gap:
                out.append(f"leaf {nd[0]} bound {nd[1]:.10f}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=60)
    ap.add_argument("--open", action="store_true", help="print, per uncertified result, what stays open")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    count = {s: {"results": 0, "certified": 0, "checker agrees": 0, "mismatch": 0, "false": 0} for s in fr.STRATEGIES}
    refused = 0
    t0 = time.process_time()
    for seed in range(args.seeds):
        Phi, U, features = draw(np.random.default_rng([37, seed]))
        try:
            ref = rg.best_neuron(Phi, U, features=features, strategy="enumerate")
        except rg.InputError:
            refused += 1
            continue
        exhibit = list(ref.witnesses) + list(np.random.default_rng(seed).normal(size=(50, Phi.shape[1])))
        for s in fr.STRATEGIES:
            res = ref if s == "enumerate" else rg.best_neuron(Phi, U, features=features, strategy=s)
            c = count[s]
            c["results"] += 1
            try:
                fr.assert_no_false_claims(res, Phi, U, features, exhibit + [ref.theta, res.theta])
            except AssertionError as e:
                c["false"] += 1
                print(f"seed {seed} {s}: false claim {e}")
            vf = rg.verify(res, Phi, U, features=features).certified
            ve = rg.verify(res, Phi, U, features=features, exact=True).certified
            c["certified"] += res.certified
            if args.open and not res.certified:
                print(f"seed {seed} {s}: value {res.value:.10f}, upper bound {res.upper_bound:.10f}, n {Phi.shape[0]}, "
                      f"m {Phi.shape[1]}, rank {res.problem.rank}, features {features}")
                for line in open_parts(res, Phi.shape[0])[:6]:
                    print("    " + line)
            c["checker agrees"] += bool(res.certified and vf and ve)
            if res.certified != vf or vf != ve:
                c["mismatch"] += 1
                print(f"seed {seed} {s}: search {res.certified}, verify {vf}, verify --exact {ve}")
    print(f"{args.seeds} seeds, {refused} refused (InputError), CPU {time.process_time() - t0:.1f} s")
    for s, c in count.items():
        print(f"  {s:17s} " + ", ".join(f"{k} {v}" for k, v in c.items()))


if __name__ == "__main__":
    main()
