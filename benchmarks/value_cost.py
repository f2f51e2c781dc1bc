r"""Benchmark: the cost of issue 37's exact-or-proven features basis and reported value on ordinary
inputs, beside the float code they replace, in one run.

Per size: the features' basis (``relu_gating._inputs.feature_basis.feature_basis``: exact rank, proven
``eta_H``) against the float-threshold basis (``coverage.metrics.orthonormal_basis``), and the
reported value of one neuron (``search._value.reported_value``: float under a proven bound, else
exact) against the float value (``search.objectives.neuron_values``).  Features: the bias and
``q - 1`` ReLU neurons of Gaussian data (well conditioned); and one nearly dependent case
(``[1, 1 + 2^-40 r]``, where the value goes exact).  Printed: median milliseconds of each.

Run::

    python benchmarks/value_cost.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from relu_gating._inputs.feature_basis import feature_basis
from relu_gating.coverage.metrics import orthonormal_basis
from relu_gating.search._value import reported_value
from relu_gating.search.objectives import make_objective, neuron_values


def _ms(f, repeats: int = 5) -> float:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        out.append(1e3 * (time.perf_counter() - t))
    return statistics.median(out)


def _case(n: int, q: int, ill: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    Phi = np.c_[X, np.ones(n)]
    if ill:
        H = np.c_[np.ones(n), 1 + 2.0**-40 * rng.integers(-3, 4, size=n)]
    else:
        H = np.c_[np.ones(n), np.maximum(Phi @ rng.normal(size=(4, q - 1)), 0.0)]
    U = np.linalg.qr(rng.normal(size=(n, 4)))[0]
    return Phi, U, H, rng.normal(size=4)


def main() -> None:
    print(f"{'n':>6} {'q':>3} {'features':>9} | {'basis float':>11} {'basis exact':>11} | "
          f"{'value float':>11} {'value proven':>12}")
    for n, q, ill in ((1000, 1, False), (1000, 8, False), (10000, 8, False), (10000, 30, False),
                      (100, 2, True), (1000, 2, True)):
        Phi, U, H, theta = _case(n, q, ill)
        obj = make_objective(Phi, U, H)
        b0, b1 = _ms(lambda H=H: orthonormal_basis(H)), _ms(lambda H=H: feature_basis(H))
        v0 = _ms(lambda obj=obj, t=theta: neuron_values(obj, t[None, :]))
        v1 = _ms(lambda obj=obj, t=theta: reported_value(obj, t))
        print(f"{n:>6} {H.shape[1]:>3} {'nearly dep' if ill else 'relu':>9} | {b0:>11.2f} {b1:>11.2f} | "
              f"{v0:>11.2f} {v1:>12.2f}")


if __name__ == "__main__":
    main()
