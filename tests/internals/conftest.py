"""Fixtures shared by the experiment tests of this folder."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def rate_seed0():
    """greedy-rate numbers for one seed at n = 7, K = 2, two steps (a few seconds, computed once):
    ``(steps, starts, kappas, cert)`` as ``greedy_rate._one_seed`` returns them."""
    from relu_gating.experiments.greedy_rate import _one_seed

    return _one_seed(7, 2, 2, 0, 2, 0)


@pytest.fixture(scope="module")
def lifted_now():
    """The lifted bound without its delay (``_node_bounds.LIFTED_DELAY_NODES``), for a whole module: the
    small trees of its tests would settle before the delay ends, and they test the lifted bound itself."""
    from relu_gating.search.bnb._node_bounds import NodeBounds

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(NodeBounds, "lifted_after", 0)
        yield
