"""relu-gating: exact, certified best-ReLU-neuron search on a sample graph.

Public API (imported lazily so that ``import relu_gating`` stays cheap; cvxpy and
the solvers load on first use).  See ``SPEC.md`` of the project and the paper
"Propagation and Optimization of Low-Frequency Spectral Alignment in ReLU
Networks on a Fixed Sample Graph" for the mathematics.
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import (
    CertificateError,
    CheckpointError,
    InputError,
    ProblemTooLargeError,
    ReluGatingError,
    SolverFailure,
)

__version__ = "0.1.0"

# public name -> submodule that defines it
_LAZY: dict[str, str] = {
    # graphs and spectra
    "sample_graph": "graphs",
    "laplacian": "graphs",
    "low_frequency_basis": "spectra",
    "SpectralBasis": "spectra",
    # coverage metrics
    "dirichlet_energy": "coverage",
    "rayleigh_quotient": "coverage",
    "leverage_scores": "coverage",
    "coverage_gap": "coverage",
    "captured_features": "coverage",
    "coverage_deficit": "coverage",
    "principal_angles": "coverage",
    "marginal_gain": "coverage",
    "readout": "coverage",
    "Readout": "coverage",
    # networks
    "layer_input": "networks",
    "forward": "networks",
    # data
    "load_input": "io",
    # patterns
    "enumerate_patterns": "patterns",
    "count_patterns": "patterns",
    "PatternSet": "patterns",
    "check_completeness": "patterns",
    "PatternCount": "patterns",
    "CompletenessReport": "patterns",
    # search and certificates
    "best_neuron": "search",
    "best_neuron_from_samples": "search",
    "NeuronResult": "search",
    "cone_constraints": "objectives",
    "neuron_value": "objectives",
    "verify": "certificate",
    "VerifyReport": "certificate",
    "SpectralTieWarning": "spectra",
    "orthonormal_basis": "coverage",
    "InputData": "io",
    "Problem": "io",
    "resolve_problem": "io",
    "coverage_report": "report",
    "CoverageReport": "report",
    "relu": "networks",
    "NetworkFeatures": "networks",
    "copy_neurons": "networks",
    "class_spanning_neurons": "networks",
    "preserving_layer": "networks",
    "PreservingLayer": "networks",
    "target_coverage_bound": "bounds",
    "TargetBound": "bounds",
    "active_set_bound": "bounds",
    "ActiveSetBound": "bounds",
    "ky_fan_limits": "bounds",
    "KyFanLimits": "bounds",
    "coverage_ceiling": "bounds",
    "CoverageCeiling": "bounds",
    "row_partition": "bounds",
    "two_moons": "datasets",
    "circles": "datasets",
    "blobs": "datasets",
    "greedy_layer": "greedy",
    "GreedyLayer": "greedy",
    "random_search": "baselines",
    "local_search": "baselines",
}

__all__ = sorted(
    list(_LAZY)
    + ["ReluGatingError", "InputError", "ProblemTooLargeError", "SolverFailure", "CertificateError",
       "CheckpointError"]
)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'relu_gating' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
