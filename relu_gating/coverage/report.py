r"""Coverage report: every coverage quantity and bound of the paper for one input.

Quantities are computed for the *features* ``F`` = ``H`` when given, else the
layer input ``Phi`` (taken as they are: include a ones column in ``H`` if the
readout ``Z = [H, 1]`` is meant).
"""

from __future__ import annotations

import os

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from relu_gating._inputs.validate import as_matrix
from relu_gating.coverage.bounds import coverage_ceiling, ky_fan_limits, target_coverage_bound
from relu_gating.coverage.metrics import (
    captured_features,
    check_basis,
    coverage_deficit,
    coverage_gap,
    leverage_scores,
    orthonormal_basis,
)
from relu_gating.errors import InputError

__all__ = ["CoverageReport", "coverage_report"]


def _json_float(x: Any) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


@dataclass(frozen=True, eq=False)
class CoverageReport:
    """Coverage of a feature matrix (see :func:`coverage_report`).

    ``to_dict()`` is JSON-safe (non-finite floats become ``None``); ``format()``
    is a human-readable summary.  ``rank`` and every projection are the float ones of
    :func:`~relu_gating.coverage.metrics.orthonormal_basis` (singular values above
    ``max(n, N) eps sigma_max``), not an exact rank: features built from float products
    (``H = A B`` of rank ``r``) are of full exact rank by rounding alone, and their coverage is that
    of the ``r`` directions the floats resolve.  The search decides the rank of its features
    exactly (:func:`relu_gating._inputs.feature_basis.feature_basis`).
    """

    n: int
    K: int
    features: str
    rank: int
    coverage_gap: float
    captured_features: float
    coverage_deficit: float
    leverage_max: float
    leverage_min: float
    coherence: float
    phi_captured_features: float
    etas: tuple[float, ...]
    ky_fan_benchmark: tuple[float, ...]
    ceiling: float
    ceiling_classes: int
    eigenvalues: tuple[float, ...] | None
    next_eigenvalue: float | None
    target: dict | None
    description: dict

    def to_dict(self) -> dict:
        d = {
            "n": self.n,
            "K": self.K,
            "features": self.features,
            "rank": self.rank,
            "coverage_gap": self.coverage_gap,
            "captured_features": self.captured_features,
            "coverage_deficit": self.coverage_deficit,
            "leverage": {"max": self.leverage_max, "min": self.leverage_min, "coherence": self.coherence},
            "phi_captured_features": self.phi_captured_features,
            "ky_fan_limit": {"etas": list(self.etas), "captured_at_most": list(self.ky_fan_benchmark)},
            "ceiling": {"captured_at_most": self.ceiling, "row_classes": self.ceiling_classes},
            "eigenvalues": None if self.eigenvalues is None else [_json_float(v) for v in self.eigenvalues],
            "next_eigenvalue": None if self.next_eigenvalue is None else _json_float(self.next_eigenvalue),
            "target": None if self.target is None else {k: _json_float(v) for k, v in self.target.items()},
            "input": self.description,
        }
        return d

    def format(self) -> str:
        lines = [
            f"coverage of {self.features} (rank {self.rank}, a float rank: singular values above max(n, N) eps "
            f"sigma_max) against U_K: n = {self.n}, K = {self.K}",
            f"  coverage gap       s_K   = {self.coverage_gap:.6g}",
            f"  captured features  N_K   = {self.captured_features:.6g}   (of K = {self.K})",
            f"  coverage deficit   delta = {self.coverage_deficit:.6g}",
            f"  leverage scores: max {self.leverage_max:.4g}, min {self.leverage_min:.4g}, "
            f"coherence n*max/K = {self.coherence:.4g}  (Prop 4.1)",
            f"  N_K(Phi) = {self.phi_captured_features:.6g}; Thm 5.13 etas (sines of M_Phi): "
            + ", ".join(f"{e:.4g}" for e in self.etas),
            "  Ky Fan benchmark sum_{i<=t} eta_i^2, t = 0..K: " + ", ".join(f"{e:.4g}" for e in self.ky_fan_benchmark),
            f"  Cor 5.2 ceiling N_K(V_P) = {self.ceiling:.6g} ({self.ceiling_classes} classes of identical rows)",
        ]
        if self.eigenvalues is not None:
            lines.append("  eigenvalues: " + ", ".join(f"{e:.4g}" for e in self.eigenvalues)
                         + (f"; lambda_(K+1) = {self.next_eigenvalue:.4g}" if self.next_eigenvalue is not None else ""))
        if self.target is not None:
            t = self.target
            lines += [
                f"  target f: ||g - f|| = {t['residual_norm']:.6g}",
                f"    Cor 3.1: s||P_K f|| + ||P_K^perp f|| = {t['projection_bound']:.6g}",
                f"    Cor 3.1: s||f|| + E(f)/sqrt(lambda_(K+1)) = {t['smoothness_bound']:.6g}",
                f"    Rem 6.1: sqrt(K - N_K)||f|| + E(f)/sqrt(lambda_(K+1)) = {t['deficit_bound']:.6g}",
            ]
        return "\n".join(lines)


def coverage_report(
    problem: Any = None,
    *,
    Phi: Any = None,
    U_K: Any = None,
    H: Any = None,
    f: Any = None,
    L: Any = None,
    next_eigenvalue: float | None = None,
    eigenvalues: Any = None,
) -> CoverageReport:
    """Coverage of ``H`` (or of ``Phi`` when ``H`` is None) with all the paper's bound terms.

    Parameters
    ----------
    problem : relu_gating.io.Problem, optional
        Resolved input; its fields are used unless overridden by keywords.
    Phi : array_like, shape (n, m)
        Layer input (for Thm 5.13 and the Cor 5.2 ceiling).
    U_K : array_like, shape (n, K)
    H : array_like, shape (n, N), optional
    f : array_like, shape (n,), optional
        Target; adds Cor 3.1 / Rem 6.1 terms (energy terms need ``L`` and
        ``next_eigenvalue``).

    Returns
    -------
    CoverageReport

    References
    ----------
    Paper: Lemma 3.5, Prop 4.1, Cor 3.1, Rem 6.1, Cor 5.2, Thm 5.13.
    """
    description: dict = {}
    if problem is not None:
        Phi = problem.Phi if Phi is None else Phi
        U_K = problem.U_K if U_K is None else U_K
        H = problem.H if H is None else H
        f = problem.f if f is None else f
        L = problem.L if L is None else L
        next_eigenvalue = problem.next_eigenvalue if next_eigenvalue is None else next_eigenvalue
        eigenvalues = problem.eigenvalues if eigenvalues is None else eigenvalues
        description = dict(problem.description)
        if isinstance(description.get("input"), str):  # the file's name, never the user's directory layout
            description["input_name"] = os.path.basename(description.pop("input"))
    if Phi is None or U_K is None:
        raise InputError("coverage_report needs Phi and U_K (or a Problem)")
    U = check_basis(U_K)
    n, K = U.shape
    P = as_matrix(Phi, "Phi", rows=n, allow_1d=True)
    name = "Phi" if H is None else "H"
    F = P if H is None else as_matrix(H, "H", rows=n, allow_1d=True)
    lev = leverage_scores(U)
    kf = ky_fan_limits(P, U)
    ceil = coverage_ceiling(P, U)
    target = None
    if f is not None:
        use_L = L is not None and next_eigenvalue is not None and np.isfinite(next_eigenvalue)
        tb = target_coverage_bound(F, f, U, L=L if use_L else None, next_eigenvalue=next_eigenvalue if use_L else None)
        target = {k: getattr(tb, k) for k in tb.__dataclass_fields__}
    return CoverageReport(
        n=n,
        K=K,
        features=name,
        rank=int(orthonormal_basis(F, name=name).shape[1]),
        coverage_gap=coverage_gap(F, U),
        captured_features=captured_features(F, U),
        coverage_deficit=coverage_deficit(F, U),
        leverage_max=float(lev.max()),
        leverage_min=float(lev.min()),
        coherence=float(n * lev.max() / K),
        phi_captured_features=kf.captured,
        etas=tuple(float(e) for e in kf.etas),
        ky_fan_benchmark=tuple(float(e) for e in kf.benchmark()),
        ceiling=float(ceil.value),
        ceiling_classes=int(ceil.q),
        eigenvalues=None if eigenvalues is None else tuple(float(v) for v in np.asarray(eigenvalues)),
        next_eigenvalue=None if next_eigenvalue is None else float(next_eigenvalue),
        target=target,
        description=description,
    )
