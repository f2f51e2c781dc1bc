"""Sample graphs, Laplacians and low-frequency spectral bases."""

from __future__ import annotations

from relu_gating.spectral.graphs import (  # noqa: F401
    sample_graph,
    laplacian,
    check_weights,
    DEFAULT_NEIGHBORS,
)
from relu_gating.spectral.spectra import (  # noqa: F401
    SpectralBasis,
    SpectralTieWarning,
    low_frequency_basis,
    check_laplacian,
    DENSE_LIMIT,
)

__all__ = ['sample_graph', 'laplacian', 'check_weights', 'DEFAULT_NEIGHBORS', 'SpectralBasis', 'SpectralTieWarning', 'low_frequency_basis', 'check_laplacian', 'DENSE_LIMIT']
