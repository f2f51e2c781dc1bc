"""Type stub of :mod:`relu_gating` (for IDEs and type checkers): the package imports its public names
lazily (``__init__.py``), so they are listed here, where no import runs."""

from relu_gating._version import __version__ as __version__
from relu_gating.errors import (
    CertificateError as CertificateError,
    CheckpointError as CheckpointError,
    InputError as InputError,
    ProblemTooLargeError as ProblemTooLargeError,
    ReluGatingError as ReluGatingError,
    SolverFailure as SolverFailure,
)
from relu_gating.checker import (
    VerifyReport as VerifyReport,
    verify as verify,
)
from relu_gating.coverage.bounds import (
    ActiveSetBound as ActiveSetBound,
    CoverageCeiling as CoverageCeiling,
    KyFanLimits as KyFanLimits,
    TargetBound as TargetBound,
    active_set_bound as active_set_bound,
    coverage_ceiling as coverage_ceiling,
    ky_fan_limits as ky_fan_limits,
    row_partition as row_partition,
    target_coverage_bound as target_coverage_bound,
)
from relu_gating.coverage.metrics import (
    Readout as Readout,
    captured_features as captured_features,
    coverage_deficit as coverage_deficit,
    coverage_gap as coverage_gap,
    dirichlet_energy as dirichlet_energy,
    leverage_scores as leverage_scores,
    marginal_gain as marginal_gain,
    orthonormal_basis as orthonormal_basis,
    principal_angles as principal_angles,
    rayleigh_quotient as rayleigh_quotient,
    readout as readout,
)
from relu_gating.coverage.report import (
    CoverageReport as CoverageReport,
    coverage_report as coverage_report,
)
from relu_gating.layers.variation import (
    Representability as Representability,
    VariationNorm as VariationNorm,
    representability_constant as representability_constant,
    variation_norm as variation_norm,
)
from relu_gating.data.datasets import (
    blobs as blobs,
    circles as circles,
    two_moons as two_moons,
)
from relu_gating.data.io import (
    InputData as InputData,
    Problem as Problem,
    load_input as load_input,
    resolve_problem as resolve_problem,
)
from relu_gating.layers.greedy import (
    GreedyLayer as GreedyLayer,
    greedy_layer as greedy_layer,
)
from relu_gating.layers.networks import (
    NetworkFeatures as NetworkFeatures,
    PreservingLayer as PreservingLayer,
    class_spanning_neurons as class_spanning_neurons,
    copy_neurons as copy_neurons,
    forward as forward,
    layer_input as layer_input,
    preserving_layer as preserving_layer,
    relu as relu,
)
from relu_gating.patterns import (
    CompletenessReport as CompletenessReport,
    PatternCount as PatternCount,
    PatternSet as PatternSet,
    check_completeness as check_completeness,
    count_patterns as count_patterns,
    enumerate_patterns as enumerate_patterns,
)
from relu_gating.search.baselines import (
    local_search as local_search,
    random_search as random_search,
)
from relu_gating.search.front import (
    best_neuron as best_neuron,
)
from relu_gating.search.from_samples import (
    best_neuron_from_samples as best_neuron_from_samples,
)
from relu_gating.search.plan import (
    QueryPlan as QueryPlan,
    plan_query as plan_query,
)
from relu_gating.search.objectives import (
    cone_constraints as cone_constraints,
    neuron_value as neuron_value,
)
from relu_gating.search.options import (
    BranchAndBoundOptions as BranchAndBoundOptions,
    EnumerateOptions as EnumerateOptions,
)
from relu_gating.search.result import (
    NeuronResult as NeuronResult,
)
from relu_gating.spectral.graphs import (
    laplacian as laplacian,
    sample_graph as sample_graph,
)
from relu_gating.spectral.spectra import (
    SpectralBasis as SpectralBasis,
    SpectralTieWarning as SpectralTieWarning,
    low_frequency_basis as low_frequency_basis,
)

__all__: list[str]
