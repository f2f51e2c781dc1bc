"""The branch and bound against the enumeration on the seeded fuzz instances (every kind,
every features option, degenerate data included), and against the independent lower-bound
oracle of ``_fuzz_instances`` (random neurons, walls and rays, evaluated by definition).

Per instance: the tree certificate is valid and says what the search says; a certified
answer equals the enumeration's (1e-9) and is never below the oracle; on generic data every
answer the enumeration certifies is certified, on degenerate data (thin chambers, duplicated
or collinear points) too: nodes the float tests cannot split are settled from the exact
chambers (relu_gating.search.bnb._thin).
"""

from __future__ import annotations

import json

import pytest
from _fuzz_instances import instance, oracle_lower

from relu_gating import best_neuron, verify

DEFAULT = [0, 1, 2, 3, 5, 6]  # the default tier's share (it stays under 90 s); the rest run in the slow tier
SLOW = [s for s in range(60) if s not in DEFAULT]


def _check(seed: int) -> None:
    I = instance(seed)
    e = best_neuron(I.Phi, I.U, features=I.features)
    b = best_neuron(I.Phi, I.U, features=I.features, strategy="branch-and-bound")
    what = I.recipe()
    rep = verify(json.loads(json.dumps(b.to_dict())), I.Phi, I.U, I.features)
    # the search's certified is verify's, either way (the tree is audited by the checker before it is claimed)
    assert rep.valid and rep.certified == b.certified, (what, rep.reasons, b.notes)
    assert abs(rep.value - b.value) <= 1e-12, what
    if b.certified:
        assert b.value >= oracle_lower(I.Phi, I.U, I.H, n_random=2000) - 1e-9, what
        if e.certified:
            assert abs(b.value - e.value) <= 1e-9 * max(1.0, abs(e.value)), what
    else:
        assert not e.certified, (what, b.notes)  # degenerate data included (thin nodes: exact chambers)


@pytest.mark.parametrize("seed", DEFAULT)
def test_bnb_matches_enumeration_on_fuzz_instances(seed):
    _check(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW)
def test_bnb_matches_enumeration_on_fuzz_instances_slow(seed):
    _check(seed)
