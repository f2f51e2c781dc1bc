"""Branch and bound over the hyperplane arrangement of ``Phi``, certified by its tree.

:func:`branch_and_bound` answers the same query as :func:`relu_gating.best_neuron` without
enumerating every chamber; ``best_neuron(..., strategy="branch-and-bound" | "auto")``
dispatches here.  The tree certificate is checked by :func:`relu_gating.verify`.
"""

from relu_gating.search.bnb._api import (AUTO_CHAMBERS, STRATEGIES, branch_and_bound, check_strategy, choose_strategy,
                                        dispatch)

__all__ = ["branch_and_bound", "check_strategy", "choose_strategy", "dispatch", "STRATEGIES", "AUTO_CHAMBERS"]
