"""A tie ``lambda_K = lambda_{K+1}`` told in words: which ``K`` sit at a spectral gap (where ``span(U_K)``
is unique).  :func:`relu_gating.spectral.spectra.low_frequency_basis` loads this on a tie only and warns
with :func:`tie_message` (a :class:`~relu_gating.spectral.spectra.SpectralTieWarning`)."""

from __future__ import annotations

import numpy as np

__all__ = ["gap_Ks", "tie_message"]


def gap_Ks(ev: np.ndarray, tol: float) -> list[int]:
    """The ``K`` (1 <= K < len(ev)) with ``lambda_{K+1} - lambda_K > tol``: where ``U_K`` is unique."""
    return [k for k in range(1, ev.size) if ev[k] - ev[k - 1] > tol]


def tie_message(ev: np.ndarray, K: int, tie_tol: float) -> str:
    """The warning that ``lambda_K = lambda_{K+1}`` (eigenvalues ``ev`` ascending, beyond ``K + 1``), naming
    the nearest ``K`` at a spectral gap below and above."""
    gaps = gap_Ks(ev, tie_tol)
    below = [k for k in gaps if k < K]
    above = [k for k in gaps if k > K]
    hint = ", ".join(f"K = {k}" for k in ([below[-1]] if below else []) + above[:1])
    return (f"lambda_K = {ev[K - 1]:.6g} and lambda_(K+1) = {ev[K]:.6g} tie (K = {K}): span(U_K) is not "
            f"unique; " + (f"the nearest K at a spectral gap: {hint}" if hint else
                           f"no spectral gap among the first {ev.size} eigenvalues"))
