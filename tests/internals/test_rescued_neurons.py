"""The claims' rescue keeps the neuron it finds, and dual evidence below a pattern's own witness is not
taken (issue 37; seeds 7 and 51 of ``benchmarks/float_range_sweep.py``), against exact rationals."""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _exact_reference import exact_features, exact_objective, interior  # noqa: E402
from test_float_range import LOST  # noqa: E402

import relu_gating as rg  # noqa: E402
from relu_gating.search._claims import settle_claims  # noqa: E402
from relu_gating.search._exact.tasks import solve_one  # noqa: E402
from relu_gating.search.objectives import make_objective  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _instance(seed):
    P, u, features, _, _ = LOST[seed]
    Phi, U = np.array(P), np.array(u)[:, None]
    return Phi, U, features, make_objective(Phi, U, features, rank=3)


def test_rescue_keeps_the_neuron_of_a_refuted_claim():
    """Seed 7, chamber {2, 3}: the solver's claim 0.6927 (``h_2 = h_3``: the global basis cannot tell the
    rows apart) is refuted; the rescue solves the chamber in its own coordinates and returns its neuron,
    strictly inside (decided exactly) at the chamber's supremum ``u_2^2 + u_3^2`` (rationals)."""
    Phi, U, features, obj = _instance(7)
    mask = np.isin(np.arange(4), [2, 3])
    sup = Fraction(U[2, 0]) ** 2 + Fraction(U[3, 0]) ** 2  # max over h >= 0 on {2, 3}: an upper bound of the chamber
    got = settle_claims(obj, mask[None], np.array([0.6927333195844354]), [(np.zeros(0, np.int64), np.zeros((0, 0)))])
    assert got.bounds[0] >= float(sup) - 1e-15
    assert 0 in got.neurons
    theta, value = got.neurons[0]
    assert interior(Phi, mask, theta)
    exact = exact_objective(Phi, U, exact_features(features, 4), theta)
    assert abs(float(exact) - value) <= 1e-10
    assert exact >= sup - Fraction(1, 10**12) and exact <= sup


def test_dual_evidence_below_its_own_witness_is_not_taken():
    """Seed 51, chamber {2, 4}: an SDP's dual bound 0.0059 lay below the value of the chamber's own strict
    witness (0.3096, exactly); the pattern was taken as settled and never solved.  Now it is solved, and its
    bound is at least the witness's exact value."""
    Phi, U, features, obj = _instance(51)
    mask = np.isin(np.arange(5), [2, 4])
    ps = rg.enumerate_patterns(Phi)
    w = next(w for mk, w in zip(ps.masks, ps.witnesses) if np.array_equal(mk, mask))
    assert interior(Phi, mask, w)
    wv = exact_objective(Phi, U, exact_features(features, 5), w)
    assert wv > 0.3
    out = solve_one(obj, mask, "auto", w, target=0.1102058036)
    assert out.method != "dual-first"
    assert out.upper >= float(wv) - 1e-9, (out.upper, float(wv))


def test_leaf_signs_follow_the_preorder_paths():
    """:func:`leaf_signs` against the signs read off each leaf's path by hand (``+`` subtree first)."""
    from relu_gating.search.bnb._rechamber import leaf_signs

    nodes = [["s", 2], ["s", 1], ["i", 3, -1, [1, 2]], ["b", 0.1], ["b", 0.2], ["i", 0, 1, [2]], ["s", 3], ["c", 0.3, [], []],
             ["x"]]
    zero = np.array([False, False, False, False, True])
    got = leaf_signs(nodes, zero)
    want = {3: [0, 1, 1, -1, -1], 4: [0, -1, 1, 0, -1], 7: [1, 0, -1, 1, -1], 8: [1, 0, -1, -1, -1]}
    assert sorted(got) == sorted(want)
    for k, s in want.items():
        assert got[k].tolist() == s, k


def test_raised_tree_leaf_of_a_chamber_is_claimed_as_a_chamber():
    """Seed 7 by branch and bound: the ``b`` leaf the audit raised to the cap (1.0) is a chamber, claimed again
    as a ``c`` leaf; no leaf claims the cap, and the tree is certified at ``u_2^2 + u_3^2`` (rationals), float
    and exact verify."""
    Phi, U, features, obj = _instance(7)
    sup = Fraction(U[2, 0]) ** 2 + Fraction(U[3, 0]) ** 2
    res = rg.best_neuron(Phi, U, features=features, strategy="branch-and-bound")
    assert res.certified and abs(res.value - float(sup)) <= 1e-12, (res.value, res.upper_bound, res.notes)
    assert res.upper_bound >= float(sup) - 1e-15
    kinds = [nd[0] for nd in res.certificate.nodes]
    assert "c" in kinds and all(nd[1] <= 1.0 - 1e-3 for nd in res.certificate.nodes if nd[0] in "bcd")
    for exact in (False, True):
        assert rg.verify(res, Phi, U, features=features, exact=exact).certified, exact
