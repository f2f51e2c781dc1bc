"""relu-gating: exact, certified best-ReLU-neuron search on a sample graph.

Public API (imported lazily so that ``import relu_gating`` stays cheap; cvxpy and
the solvers load on first use).  docs/api.md gives a tour; the certificate format
is ``relu_gating/certificate/FORMAT.md`` and the JSON shapes are in
``relu_gating/schemas/``.  The mathematics and its numbering follow the paper
"Propagation and Optimization of Low-Frequency Spectral Alignment in ReLU
Networks on a Fixed Sample Graph".
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING
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

if TYPE_CHECKING:  # the lazy map, visible to IDEs and type checkers
    from relu_gating.checker import VerifyReport, verify
    from relu_gating.coverage.bounds import ActiveSetBound, CoverageCeiling, KyFanLimits, TargetBound, active_set_bound, coverage_ceiling, ky_fan_limits, row_partition, target_coverage_bound
    from relu_gating.coverage.metrics import Readout, captured_features, coverage_deficit, coverage_gap, dirichlet_energy, leverage_scores, marginal_gain, orthonormal_basis, principal_angles, rayleigh_quotient, readout
    from relu_gating.coverage.report import CoverageReport, coverage_report
    from relu_gating.layers.variation import Representability, VariationNorm, representability_constant, variation_norm
    from relu_gating.data.datasets import blobs, circles, two_moons
    from relu_gating.data.io import InputData, Problem, load_input, resolve_problem
    from relu_gating.layers.greedy import GreedyLayer, greedy_layer
    from relu_gating.layers.networks import NetworkFeatures, PreservingLayer, class_spanning_neurons, copy_neurons, forward, layer_input, preserving_layer, relu
    from relu_gating.patterns import CompletenessReport, PatternCount, PatternSet, check_completeness, count_patterns, enumerate_patterns
    from relu_gating.search.baselines import local_search, random_search
    from relu_gating.search.front import best_neuron
    from relu_gating.search.from_samples import best_neuron_from_samples
    from relu_gating.search.plan import QueryPlan, plan_query
    from relu_gating.search.objectives import cone_constraints, neuron_value
    from relu_gating.search.options import BranchAndBoundOptions, EnumerateOptions
    from relu_gating.search.result import NeuronResult
    from relu_gating.spectral.graphs import laplacian, sample_graph
    from relu_gating.spectral.spectra import SpectralBasis, SpectralTieWarning, low_frequency_basis

# public name -> submodule that defines it
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
