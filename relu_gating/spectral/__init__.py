"""Sample graphs, Laplacians and low-frequency spectral bases (the checks of a caller's graph or
Laplacian, :mod:`relu_gating.spectral.checks`, load on first use)."""

from __future__ import annotations

from typing import Any

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

__all__ = ['sample_graph', 'laplacian', 'check_weights', 'DEFAULT_NEIGHBORS', 'SpectralBasis', 'SpectralTieWarning', 'low_frequency_basis', 'check_laplacian', 'DENSE_LIMIT']


def __getattr__(name: str) -> Any:
    if name in ("check_weights", "check_laplacian"):
        from relu_gating.spectral import checks

        return getattr(checks, name)
    raise AttributeError(f"module 'relu_gating.spectral' has no attribute {name!r}")
