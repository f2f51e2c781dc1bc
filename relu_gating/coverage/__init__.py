"""Coverage theory: metrics (s_K, N_K, leverage, principal angles), the paper's bounds and reports."""

from __future__ import annotations

from relu_gating.coverage.metrics import (  # noqa: F401
    orthonormal_basis,
    complement_apply,
    check_basis,
    dirichlet_energy,
    rayleigh_quotient,
    leverage_scores,
    coverage_gap,
    captured_features,
    coverage_deficit,
    principal_angles,
    marginal_gain,
    readout,
    Readout,
)
from relu_gating.coverage.bounds import (  # noqa: F401
    TargetBound,
    target_coverage_bound,
    ActiveSetBound,
    active_set_bound,
    KyFanLimits,
    ky_fan_limits,
    CoverageCeiling,
    coverage_ceiling,
    row_partition,
)
from relu_gating.coverage.report import (  # noqa: F401
    CoverageReport,
    coverage_report,
)

__all__ = ['orthonormal_basis', 'complement_apply', 'check_basis', 'dirichlet_energy', 'rayleigh_quotient', 'leverage_scores', 'coverage_gap', 'captured_features', 'coverage_deficit', 'principal_angles', 'marginal_gain', 'readout', 'Readout', 'TargetBound', 'target_coverage_bound', 'ActiveSetBound', 'active_set_bound', 'KyFanLimits', 'ky_fan_limits', 'CoverageCeiling', 'coverage_ceiling', 'row_partition', 'CoverageReport', 'coverage_report']
