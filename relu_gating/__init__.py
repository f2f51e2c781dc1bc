"""relu-gating: exact, certified best-ReLU-neuron search on a sample graph.

Public API (imported lazily so that ``import relu_gating`` stays cheap; cvxpy and
the solvers load on first use; ``__init__.pyi`` beside this file names every public name's
type for IDEs and type checkers).  docs/api.md gives a tour; the certificate format
is ``relu_gating/certificate/FORMAT.md`` and the JSON shapes are in
``relu_gating/schemas/``.  The mathematics and its numbering follow the paper
"Propagation and Optimization of Low-Frequency Spectral Alignment in ReLU
Networks on a Fixed Sample Graph".
"""

from __future__ import annotations

import importlib as _importlib
from typing import Any as _Any

from relu_gating.errors import (
    CertificateError,
    CheckpointError,
    InputError,
    ProblemTooLargeError,
    ReluGatingError,
    SolverFailure,
)

from relu_gating._version import __version__

#: The lazy map: module (under relu_gating) -> the public names it provides.
_BY_MODULE: tuple[tuple[str, str], ...] = (
    ("spectral.graphs", "sample_graph laplacian"),
    ("spectral.spectra", "low_frequency_basis SpectralBasis SpectralTieWarning"),
    ("coverage.metrics", "dirichlet_energy rayleigh_quotient leverage_scores coverage_gap captured_features"),
    ("coverage.metrics", "coverage_deficit principal_angles marginal_gain readout Readout orthonormal_basis"),
    ("layers.networks", "layer_input forward relu NetworkFeatures copy_neurons class_spanning_neurons"),
    ("layers.networks", "preserving_layer PreservingLayer"),
    ("data.io", "load_input InputData Problem resolve_problem"),
    ("patterns", "enumerate_patterns count_patterns PatternSet check_completeness PatternCount"),
    ("patterns", "CompletenessReport"),
    ("search.front", "best_neuron"),
    ("search.from_samples", "best_neuron_from_samples"),
    ("search.plan", "plan_query QueryPlan"),
    ("search.result", "NeuronResult"),
    ("search.options", "EnumerateOptions BranchAndBoundOptions"),
    ("search.objectives", "cone_constraints neuron_value"),
    ("checker", "verify VerifyReport"),
    ("coverage.report", "coverage_report CoverageReport"),
    ("coverage.bounds", "target_coverage_bound TargetBound active_set_bound ActiveSetBound ky_fan_limits"),
    ("coverage.bounds", "KyFanLimits coverage_ceiling CoverageCeiling row_partition"),
    ("data.datasets", "two_moons circles blobs"),
    ("layers.greedy", "greedy_layer GreedyLayer"),
    ("search.baselines", "random_search local_search"),
    ("layers.variation", "variation_norm VariationNorm representability_constant Representability"),
)
_LAZY: dict[str, str] = {name: module for module, names in _BY_MODULE for name in names.split()}

__all__ = sorted(  # noqa: PLE0604
    list(_LAZY)
    + ["ReluGatingError", "InputError", "ProblemTooLargeError", "SolverFailure", "CertificateError",
       "CheckpointError"]
)


def __getattr__(name: str) -> _Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'relu_gating' has no attribute {name!r}")
    value = getattr(_importlib.import_module(f"relu_gating.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(__all__) | {"__version__"})
