"""Branch and bound over the hyperplane arrangement of ``Phi``, certified by its tree.

:func:`branch_and_bound` answers the same query as :func:`relu_gating.best_neuron` without
enumerating every chamber; :class:`relu_gating.search.strategy.BranchAndBound` runs it for
``best_neuron(..., strategy="branch-and-bound")`` and when the plan chooses it.  The tree certificate is checked by :func:`relu_gating.verify`.
"""

from relu_gating.search.bnb._api import branch_and_bound
from relu_gating.search.bnb._replay import TreeGuide, merge_guides, tree_guide

__all__ = ["branch_and_bound", "tree_guide", "merge_guides", "TreeGuide"]
