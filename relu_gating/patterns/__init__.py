"""Exact enumeration of realized gating patterns (chambers of the arrangement).

A neuron ``h = relu(Phi theta)`` has gating pattern ``S = 1[Phi theta > 0]``.
The patterns realized on open sets are the chambers of the central hyperplane
arrangement ``{theta : phi_i^T theta = 0}`` in ``R^m`` (SPEC 3.1; paper Prop 4.3):

.. math::

    \\mathcal{S}(\\Phi) = \\{ 1[\\Phi\\theta > 0] : \\theta \\in \\mathbb{R}^m,\\
    \\phi_i^T\\theta \\neq 0 \\text{ for every nonzero row } i \\}.

Public API: :func:`enumerate_patterns`, :class:`PatternSet`,
:func:`count_patterns`, :class:`PatternCount`, :func:`check_completeness`,
:class:`CompletenessReport`; for the other stages (the search's plan and its branch and bound):
:func:`cover_count` (Cover's bound for q hyperplanes in rank r) and :func:`reduce_rows` (rows merged
exactly into distinct hyperplanes in the row space), :func:`single_thread_blas` (BLAS held to one thread
for the skinny products of these stages).  Samples are rows (``Phi`` is n x m; the paper's
``X`` is d x n).

How (details in the private modules): rows are merged exactly into distinct
hyperplanes and moved to the row space of rank r (:mod:`._rowspace`); chambers
are listed by a lowest-vertex sweep over the rays of the arrangement, one chamber
per simple ray, local recursion at non-simple rays, and a recursion in dimension
r - 2 for the rest (:mod:`._sweep`); every sign is decided exactly by filtered
predicates (:mod:`._exact`); every witness is certified (:mod:`._witness`), and a
chamber too thin for any float64 witness gets an exact integer one
(:mod:`._exact_witness`); the completeness proof is :mod:`._completeness`.

References
----------
T. M. Cover, "Geometrical and statistical properties of systems of linear
inequalities", IEEE Trans. Electron. Comput., 1965.  T. Zaslavsky, "Facing up to
arrangements", Mem. AMS 154, 1975.  Paper: Prop 4.3 (cones of patterns).
"""

from __future__ import annotations

from relu_gating.patterns._completeness import CompletenessReport, check_completeness
from relu_gating.patterns._count import PatternCount, cover_count
from relu_gating.patterns._enumerate import PatternSet, count_patterns, enumerate_patterns, phi_digest
from relu_gating.patterns._exact import single_thread_blas
from relu_gating.patterns._rowspace import Reduction, reduce_rows

__all__ = ["enumerate_patterns", "PatternSet", "count_patterns", "PatternCount", "check_completeness",
           "CompletenessReport", "phi_digest", "cover_count", "reduce_rows", "Reduction",
           "single_thread_blas"]
