r"""The paper's bounds as plain functions, and kappa intervals closed to a target width (private).

The experiments record these numbers per greedy step and decide their checks from them; the tests
of ``tests/internals/test_experiment_checks.py`` call the same functions with deliberately wrong inputs.

* :func:`lemma59_bound` -- Lemma 5.9: ``G* >= s^2 (s - eps)^2 / kappa^2`` (0 when ``s <= eps``).
* :func:`kappa_from_gain` -- the same read backwards: a certified upper bound ``B >= G*`` at a
  step with gap ``s`` gives ``kappa >= s (s - eps) / sqrt(B)``, a lower bound on every valid kappa.
* :func:`rate_bound`, :func:`gap_bound` -- Thm 5.10's ``delta_t`` and ``s_t^2`` bounds.
* :func:`column_basis` -- independent columns of a feature matrix spanning the same space.
* :func:`dyadic`, :func:`exact_product` -- data and weights on a dyadic grid, so that the theory's
  identities (``relu(p) - relu(-p) = p``, hence ``col(Phi)`` inside the features of Prop 5.5, Prop 3.3
  and the skip layers) hold exactly in the stated problem, not only to rounding.
* :func:`closed_kappa` -- :func:`~relu_gating.layers.variation.representability_constant`
  with a growing net and ascent until ``(upper - lower) / upper <= width`` (or the budget ends).
"""

from __future__ import annotations

import math
import time
from typing import Any

__all__ = ["lemma59_bound", "kappa_from_gain", "rate_bound", "gap_bound", "closed_kappa", "column_basis",
           "dyadic", "exact_product", "exact_neurons", "GRID_BITS"]

#: Bits after the binary point of the experiments' data and constructed weights (a grid of 2^-16,
#: about 1.5e-5: far below the moons' noise 0.1, and far above rounding).
GRID_BITS = 16


def lemma59_bound(s: float, eps: float, kappa: float) -> float:
    """Lemma 5.9's lower bound ``s^2 (s - eps)^2 / kappa^2`` on ``G*`` (0 when ``s <= eps``)."""
    return 0.0 if s <= eps else s**2 * (s - eps) ** 2 / kappa**2


def kappa_from_gain(s: float, eps: float, G_upper: float) -> float:
    """Smallest kappa Lemma 5.9 allows when ``G* <= G_upper``: ``s (s - eps) / sqrt(G_upper)`` (0 if ``s <= eps``)."""
    if s <= eps:
        return 0.0
    return math.inf if G_upper <= 0 else s * (s - eps) / math.sqrt(G_upper)


def rate_bound(delta0: float, t: int, K: int, kappa: float, alpha: float) -> float:
    """Thm 5.10: ``delta_t <= (1 / delta_0 + alpha t / (4 K^2 kappa^2))^{-1}``."""
    return 0.0 if delta0 <= 0 else 1.0 / (1.0 / delta0 + alpha * t / (4 * K**2 * kappa**2))


def gap_bound(t: int, K: int, kappa: float, alpha: float, eps: float = 0.0) -> float:
    """Thm 5.10: ``s_t^2 <= max(4 eps^2, 4 K^2 kappa^2 / (alpha t))`` for ``t >= 1``."""
    return max(4 * eps**2, 4 * K**2 * kappa**2 / (alpha * t))


def column_basis(H: Any) -> Any:
    """Independent columns of ``H`` (QR with column pivoting; original order) spanning ``col(H)``.

    Every quantity of the experiments (``N_K``, ``s_K``, the marginal gain) depends on ``col(H)`` only,
    and rows equal on these columns are equal on all.  The Prop 5.5 and copy-neuron starts are rank
    deficient (``relu(p) - relu(-p) = p``); on the independent columns the search proves tighter bounds.
    """
    import numpy as np
    from scipy.linalg import qr

    H = np.asarray(H, dtype=float)
    r = int(np.linalg.matrix_rank(H))
    return H[:, np.sort(qr(H, mode="r", pivoting=True)[1][:r])]


def closed_kappa(U: Any, Phi: Any, *, patterns: Any = None, width: float = 0.05, start: int | None = None,
                 max_directions: int = 48, max_refine: int = 8, seconds: float = 120.0) -> tuple[Any, dict]:
    """``kappa(U)`` bracketed until the relative width is at most ``width``, doubling the net.

    Returns the :class:`~relu_gating.layers.variation.Representability` and a row saying how far
    it got: ``n_directions``, ``refine``, ``rel_width``, ``closed`` and, when not closed, ``why``
    (net or time budget exhausted; a round is not started when twice the last one's time would
    overrun ``seconds``).  The upper end tightens with the net's inradius, the lower end
    with the dual ascent (``refine``).
    """
    from relu_gating.layers.variation import representability_constant

    K = U.shape[1]
    nd, rf = (start or max(K, 2)), 0
    t0 = time.perf_counter()
    while True:
        t1 = time.perf_counter()
        kap = representability_constant(U, Phi, n_directions=nd, refine=rf, patterns=patterns)
        rel = (kap.upper - kap.lower) / kap.upper if kap.upper > 0 else 0.0
        spent, last = time.perf_counter() - t0, time.perf_counter() - t1
        why = ""
        if rel <= width:
            break
        if nd >= max_directions:
            why = f"net of {nd} directions and {rf} ascent steps reached (budget)"
            break
        if spent + 2 * last > seconds:  # the next round (twice the net) would overrun the budget
            why = f"time budget {seconds:g} s: the next round (about {2 * last:.0f} s) would exceed it"
            break
        nd, rf = min(2 * nd, max_directions), min(rf + 2, max_refine)
    return kap, {"n_directions": nd, "refine": rf, "rel_width": rel, "closed": rel <= width, "why": why,
                 "seconds": spent}


def dyadic(a: Any, bits: int = GRID_BITS) -> Any:
    """``a`` rounded to the nearest multiple of ``2^-bits`` (float64, exactly representable).

    Why: the certified search answers the problem as stated, in exact arithmetic on the given
    floats.  A feature built as ``relu(Phi theta)`` with float products satisfies
    ``relu(p) - relu(-p) = p`` only to rounding, so ``col(Phi)`` lies in ``col(H)`` only to 1e-16;
    the neurons near ``col(H)`` then have a residual made of rounding, and no bound on them can
    be proven tight.  On a dyadic grid the products below are exact (:func:`exact_product`), the
    identity holds exactly, and the search proves its bounds (it decides exact kernels exactly).
    """
    import numpy as np

    scale = 2.0**bits
    return np.round(np.asarray(a, dtype=float) * scale) / scale


def exact_product(A: Any, B: Any, bits: int = GRID_BITS) -> tuple[Any, Any, Any]:
    """``(A_q, B_q, A_q @ B_q)`` with ``A``, ``B`` on the dyadic grid and the product exact in float64.

    Every product of two grid values is a multiple of ``2^(-2 bits)``; while each row of
    ``|A_q| @ |B_q|`` stays below ``2^(53 - 2 bits - 1)`` every partial sum is such a multiple below
    ``2^52`` of them, hence exact.  Raises ``ValueError`` when the magnitudes are too large for that.
    """
    import numpy as np

    Aq, Bq = dyadic(A, bits), dyadic(B, bits)
    if Aq.size and Bq.size and float((np.abs(Aq) @ np.abs(Bq)).max()) >= 2.0 ** (52 - 2 * bits):
        raise ValueError(f"exact_product: magnitudes too large for an exact product on a 2^-{bits} grid")
    return Aq, Bq, Aq @ Bq


def exact_neurons(Phi: Any, thetas: Any, bits: int = GRID_BITS) -> Any:
    """``relu(Phi theta)`` for each row of ``thetas``, each ``theta`` first scaled by a power of two to
    ``max |theta_j|`` in ``[1/2, 1)`` and rounded to the grid, the product exact (:func:`exact_product`).

    For a layer's outputs passed on as the next layer's input: on the rows where a neuron is active its
    output equals ``Phi theta`` exactly, so the next input's columns are dependent there exactly (not to
    rounding), and the search decides those kernels exactly.  The scaling changes no span; the rounding
    changes each weight by at most ``2^-(bits + 1)`` relative to the largest.
    """
    import numpy as np

    T = np.atleast_2d(np.asarray(thetas, dtype=float)).T
    exponent = np.frexp(np.abs(T).max(axis=0))[1]  # top = f 2^e with f in [1/2, 1) (e = 0 for top = 0)
    return np.maximum(exact_product(Phi, np.ldexp(T, -exponent), bits)[2], 0.0)
