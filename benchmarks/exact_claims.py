"""Benchmark: ``verify --exact`` with pattern claims and ``"d"`` leaves decided on integer forms (issue 37,
``checker/_exact_mode.py``, ``checker/_int_pencil.py``) against the Fraction path they ran on before
(``checker/_exact_claims.exact_claim`` and the former ``exact_lifted``, patched in), alternating in one run.

Instances: enumeration (pattern) certificates and branch-and-bound trees (``c`` and ``d`` leaves) of
Gaussian 2-d data with a bias or a feature column, and of nearly dependent features (``H = [1, 1 +
2^-E r]``).  Per instance: the CPU seconds of each path (median of ``--repeats``) and their ratio;
both verdicts must agree (else the run fails)::

    PYTHONPATH=$PWD python benchmarks/exact_claims.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # the tests' own imports (tests._exact_reference)

import test_float_range as fr  # noqa: E402
from _fraction_claims import fraction_lifted  # noqa: E402

import relu_gating as rg  # noqa: E402
from relu_gating.checker import _exact_claims, _exact_mode, _tree_exact  # noqa: E402


def _fraction_lifted(P, signs, zero, claims, got, meter=None) -> float:
    """The former exact-mode ``exact_lifted``: the Fraction forms of the tests' own oracle."""
    return fraction_lifted(P, signs, zero, claims, got)


def _fraction_claim(P, mask, claims, rows=None, N=None, meter=None) -> float:
    return _exact_claims.exact_claim(P, mask, claims, rows, N)


INTEGER = (_exact_mode.int_claim, _tree_exact.exact_lifted)


def _use(fraction: bool) -> None:
    _exact_mode.int_claim, _tree_exact.exact_lifted = (_fraction_claim, _fraction_lifted) if fraction else INTEGER


def _instances():
    for seed in (1, 2, 3):
        rng = np.random.default_rng([37, seed])
        n = 12
        X = rng.normal(size=(n, 2))
        U = np.linalg.qr(rng.normal(size=(n, 2)))[0]
        yield f"gauss 12x2 bias s{seed}", np.c_[X, np.ones(n)], U, "bias"
        yield f"gauss 12x2 H s{seed}", np.c_[X, np.ones(n)], U, np.c_[np.ones(n), rng.normal(size=n)]
    for seed in (0, 2, 4):
        yield f"ill 2-d s{seed}", *fr.ill_features(seed)[:3]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    tot = {"enumerate": [0.0, 0.0], "branch-and-bound": [0.0, 0.0]}
    for name, Phi, U, H in _instances():
        for strategy in tot:
            res = rg.best_neuron(Phi, U, features=H, strategy=strategy)
            kinds = "" if strategy == "enumerate" else " ".join(
                f"{k}:{sum(nd[0] == k for nd in res.certificate.nodes)}" for k in "bcd")
            times: dict = {True: [], False: []}
            verdicts = set()
            for _ in range(args.repeats):
                for fraction in (True, False):
                    _use(fraction)
                    t = time.process_time()
                    rep = rg.verify(res, Phi, U, features=H, exact=True)
                    times[fraction].append(time.process_time() - t)
                    verdicts.add((rep.valid, rep.certified, rep.upper_bound))
            _use(False)
            if len(verdicts) != 1:
                raise SystemExit(f"{name} {strategy}: the two paths disagree: {verdicts}")
            f, i = statistics.median(times[True]), statistics.median(times[False])
            tot[strategy][0] += f
            tot[strategy][1] += i
            print(f"{name:22s} {strategy[:4]} {kinds:14s} Fraction {f:6.3f} s  integers {i:6.3f} s  "
                  f"({f / max(i, 1e-9):4.1f}x)  {'C' if rep.certified else ('V' if rep.valid else 'X')}", flush=True)
    for strategy, (f, i) in tot.items():
        print(f"total {strategy}: Fraction {f:.2f} s, integers {i:.2f} s ({f / max(i, 1e-9):.1f}x)", flush=True)


if __name__ == "__main__":
    main()
