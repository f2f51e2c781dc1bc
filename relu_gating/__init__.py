"""relu-gating: exact, certified best-ReLU-neuron search on a sample graph.

Public API (imported lazily so that ``import relu_gating`` stays cheap; cvxpy and
the solvers load on first use).  The README gives a tour; the certificate format
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
    from relu_gating.certificate import VerifyReport, verify
    from relu_gating.coverage.bounds import ActiveSetBound, CoverageCeiling, KyFanLimits, TargetBound, active_set_bound, coverage_ceiling, ky_fan_limits, row_partition, target_coverage_bound
    from relu_gating.coverage.metrics import Readout, captured_features, coverage_deficit, coverage_gap, dirichlet_energy, leverage_scores, marginal_gain, orthonormal_basis, principal_angles, rayleigh_quotient, readout
    from relu_gating.coverage.report import CoverageReport, coverage_report
    from relu_gating.coverage.variation import Representability, VariationNorm, representability_constant, variation_norm
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
    from relu_gating.search.result import NeuronResult
    from relu_gating.spectral.graphs import laplacian, sample_graph
    from relu_gating.spectral.spectra import SpectralBasis, SpectralTieWarning, low_frequency_basis

# public name -> submodule that defines it
_LAZY: dict[str, str] = {
    # graphs and spectra
    "sample_graph": "spectral.graphs",
    "laplacian": "spectral.graphs",
    "low_frequency_basis": "spectral.spectra",
    "SpectralBasis": "spectral.spectra",
    # coverage metrics
    "dirichlet_energy": "coverage.metrics",
    "rayleigh_quotient": "coverage.metrics",
    "leverage_scores": "coverage.metrics",
    "coverage_gap": "coverage.metrics",
    "captured_features": "coverage.metrics",
    "coverage_deficit": "coverage.metrics",
    "principal_angles": "coverage.metrics",
    "marginal_gain": "coverage.metrics",
    "readout": "coverage.metrics",
    "Readout": "coverage.metrics",
    # networks
    "layer_input": "layers.networks",
    "forward": "layers.networks",
    # data
    "load_input": "data.io",
    # patterns
    "enumerate_patterns": "patterns",
    "count_patterns": "patterns",
    "PatternSet": "patterns",
    "check_completeness": "patterns",
    "PatternCount": "patterns",
    "CompletenessReport": "patterns",
    # search and certificates
    "best_neuron": "search.front",
    "best_neuron_from_samples": "search.from_samples",
    "plan_query": "search.plan",
    "QueryPlan": "search.plan",
    "NeuronResult": "search.result",
    "cone_constraints": "search.objectives",
    "neuron_value": "search.objectives",
    "verify": "certificate",
    "VerifyReport": "certificate",
    "SpectralTieWarning": "spectral.spectra",
    "orthonormal_basis": "coverage.metrics",
    "InputData": "data.io",
    "Problem": "data.io",
    "resolve_problem": "data.io",
    "coverage_report": "coverage.report",
    "CoverageReport": "coverage.report",
    "relu": "layers.networks",
    "NetworkFeatures": "layers.networks",
    "copy_neurons": "layers.networks",
    "class_spanning_neurons": "layers.networks",
    "preserving_layer": "layers.networks",
    "PreservingLayer": "layers.networks",
    "target_coverage_bound": "coverage.bounds",
    "TargetBound": "coverage.bounds",
    "active_set_bound": "coverage.bounds",
    "ActiveSetBound": "coverage.bounds",
    "ky_fan_limits": "coverage.bounds",
    "KyFanLimits": "coverage.bounds",
    "coverage_ceiling": "coverage.bounds",
    "CoverageCeiling": "coverage.bounds",
    "row_partition": "coverage.bounds",
    "two_moons": "data.datasets",
    "circles": "data.datasets",
    "blobs": "data.datasets",
    "greedy_layer": "layers.greedy",
    "GreedyLayer": "layers.greedy",
    "random_search": "search.baselines",
    "local_search": "search.baselines",
    "variation_norm": "coverage.variation",
    "VariationNorm": "coverage.variation",
    "representability_constant": "coverage.variation",
    "Representability": "coverage.variation",
}

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
