"""Sample graphs, Laplacians and low-frequency spectral bases (the checks of a caller's graph or
Laplacian are :mod:`relu_gating.spectral.checks`, loaded when those are given)."""

from __future__ import annotations

from relu_gating.spectral.graphs import (  # noqa: F401
    sample_graph,
    laplacian,
    DEFAULT_NEIGHBORS,
)
from relu_gating.spectral.spectra import (  # noqa: F401
    SpectralBasis,
    SpectralTieWarning,
    low_frequency_basis,
    DENSE_LIMIT,
)

__all__ = ['sample_graph', 'laplacian', 'DEFAULT_NEIGHBORS', 'SpectralBasis', 'SpectralTieWarning', 'low_frequency_basis', 'DENSE_LIMIT']
