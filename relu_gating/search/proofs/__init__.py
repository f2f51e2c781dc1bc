"""The search's proofs: what the search claims, it first proves with these (public to the search).

The checker (:mod:`relu_gating.checker`) re-checks every claim with its own primitives and shares
nothing with this package; the search calls the checker's proofs where it must claim no more than
the checker accepts (:func:`prove_bounds`, :func:`chamber_bound`).

* :mod:`._problem`: the stated problem (``Phi``, ``U_K``, features), ``exact_rank``;
* :mod:`._pattern`: a pattern's bounds (pencil, support, cap) and its exact proofs in rationals;
* :mod:`._node`: the branch and bound's node bound (``node_problem``, ``node_bound``, ``bound_parts``);
* :mod:`._lifted`: a node's lifted bound from multipliers coupling its undecided rows;
* :mod:`._farkas`: implied signs, decided by a float filter with a rigorous margin, else exactly;
* :mod:`._checker`: the checker's proofs offered to the search (``prove_bounds``).
"""

from relu_gating.search.proofs._problem import StatedProblem, exact_rank, pow2_scales, state_problem
from relu_gating.search.proofs._pattern import (cap_bound, exact_below, exact_claim, exact_excluded, exact_feature_basis,
                                                exact_gram, exact_parts, exact_pencil, exact_psd, gross_scale,
                                                pattern_pencils, pencil_bounds, support_bounds)
from relu_gating.search.proofs._farkas import implied_exact
from relu_gating.search.proofs._node import NodeProblem, bound_matrix, bound_parts, chamber_bound, node_bound, node_problem
from relu_gating.search.proofs._lifted import lifted_leaf_bound, multiplier_matrix
from relu_gating.search.proofs._checker import checker_eta, checker_excluded, checker_lifted, prove_bounds

__all__ = ["StatedProblem", "state_problem", "exact_rank", "pow2_scales",
           "cap_bound", "exact_below", "exact_claim", "exact_excluded", "exact_feature_basis", "exact_gram",
           "exact_parts", "exact_pencil", "exact_psd", "gross_scale", "pattern_pencils", "pencil_bounds",
           "support_bounds", "implied_exact", "NodeProblem", "node_problem", "node_bound", "bound_parts",
           "bound_matrix", "chamber_bound", "lifted_leaf_bound", "multiplier_matrix", "prove_bounds", "checker_excluded", "checker_lifted",
           "checker_eta"]
