"""Fixtures shared by the experiment tests of this folder."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def rate_seed0():
    """greedy-rate numbers for one seed at n = 7, K = 2, two steps (a few seconds, computed once):
    ``(steps, starts, kappas, cert)`` as ``greedy_rate._one_seed`` returns them."""
    from relu_gating.experiments.greedy_rate import _one_seed

    return _one_seed(7, 2, 2, 0, 2, 0)
