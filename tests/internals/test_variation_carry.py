"""Norms that hand state to the next on the same Phi (variation_norm's and representability_constant's ``carry``).

The carried state (the cone pricer with its multipliers; with the early pricing the master LP and its
atoms, the right-hand side replaced) changes only where the column generation starts.  Oracles: the
LP over a dense sample of neurons and every witness (an upper end on each norm, so every certified
lower end lies below it), the search pricing's certified interval, the decomposition itself (it must
attain the upper end), and the certified dual checked on the dense sample (``|<y, d>| <= 1``).
"""

from __future__ import annotations

import numpy as np
import pytest

from relu_gating.errors import InputError
from relu_gating.layers import variation
from relu_gating.layers.variation import normalized_neurons, representability_constant, variation_norm
from relu_gating.patterns import enumerate_patterns
from _variation_reference import dense_atoms, dyadic_phi, lp_upper

_phi, _dense_atoms, _lp_upper = dyadic_phi, dense_atoms, lp_upper  # tests/_variation_reference.py


def _targets(Phi: np.ndarray, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [np.sin(2 * Phi[:, 0]) + 0.5 * np.abs(Phi[:, 1]), np.cos(3 * Phi[:, 1]) - Phi[:, 0] ** 2,
            rng.standard_normal(Phi.shape[0])]


@pytest.mark.parametrize("pricing", ["early", "cone"])
def test_carried_norms_are_certified_against_dense_sampling_and_the_search(monkeypatch, pricing):
    """Three norms in a row with one carry: each interval closes, holds the dense LP's value from below
    and the search's from above, its decomposition attains its upper end and its dual prices every
    sampled neuron at most 1; with the early pricing the master is the same LP, grown."""
    n = 20
    Phi = _phi(n, 11)
    pats = enumerate_patterns(Phi)
    Dd = _dense_atoms(Phi, pats.witnesses)
    monkeypatch.setattr(variation, "_MASTER_ATOMS", 6)  # the seed loop runs as on large problems
    monkeypatch.setattr(variation, "_CHUNK", 20 * 16)
    carry: dict = {}
    lps = []
    for v in _targets(Phi, 0):
        r = variation_norm(v, Phi, patterns=pats, tol=1e-3, pricing=pricing, max_iter=300, carry=carry)
        s = variation_norm(v, Phi, patterns=pats, tol=1e-2, pricing="search", max_iter=300)
        assert r.certified and s.certified
        assert r.lower <= _lp_upper(v, Dd) * (1 + 1e-9)
        assert r.lower <= s.upper * (1 + 1e-9) and s.lower <= r.upper * (1 + 1e-9)
        D = normalized_neurons(Phi, r.thetas)[0]
        assert np.linalg.norm(D @ r.weights - v) <= 1e-6 * np.linalg.norm(v)
        assert np.abs(r.weights).sum() == pytest.approx(r.upper, rel=1e-9)
        assert np.abs(r.dual @ Dd).max() <= 1 + 1e-9 and r.dual @ v == pytest.approx(r.lower, rel=1e-9)
        assert carry["cone"] is not None and carry["Phi"].shape == Phi.shape
        if pricing == "early":
            lps.append(carry["lp"])
            assert carry["thetas"].shape[0] == carry["D"].shape[1] == carry["lp"].J == carry["lp"].tag.size
            assert np.allclose(carry["D"], normalized_neurons(Phi, carry["thetas"])[0])  # atoms and columns aligned
    if pricing == "early":
        assert all(lp is lps[0] for lp in lps)  # one master (grown, and pruned of atoms long out of its basis)


def test_carry_of_another_problem_is_refused():
    Phi = _phi(14, 1)
    carry: dict = {}
    v = np.sin(Phi[:, 0])
    variation_norm(v, Phi, tol=1e-2, pricing="early", carry=carry)
    with pytest.raises(InputError, match="carry"):
        variation_norm(np.sin(Phi[:, 1]), _phi(14, 2), tol=1e-2, pricing="early", carry=carry)
    with pytest.raises(InputError, match="carry"):
        variation_norm(v, Phi, tol=1e-2, pricing="cone", carry=carry)
    with pytest.raises(InputError, match="carry must be a dict"):
        variation_norm(v, Phi, tol=1e-2, carry=[1])


def test_bracket_with_a_carry_holds_the_bracket_without(monkeypatch):
    """kappa's bracket with a shared carry (early pricing) overlaps the one computed with a fresh carry per
    norm, and its lower end is attained: ||direction||_A bounded above by the dense LP."""
    Phi = _phi(18, 5)
    pats = enumerate_patterns(Phi)
    rng = np.random.default_rng(2)
    U, _ = np.linalg.qr(np.c_[np.sin(2 * Phi[:, 0]), Phi[:, 1] ** 2, rng.standard_normal(18)])
    kw = dict(patterns=pats, tol=1e-3, refine=1, adaptive=1, max_iter=200, pricing="early")
    a = representability_constant(U, Phi, **kw)
    carry: dict = {}
    b = representability_constant(U, Phi, carry=carry, **kw)
    assert "lp" in carry and a.certified and b.certified
    monkeypatch.setattr(variation, "_carried_pricer", _fresh(variation._carried_pricer))
    c = representability_constant(U, Phi, **kw)  # every norm from scratch (the earlier behaviour)
    for x in (a, b):
        assert x.lower <= c.upper * (1 + 1e-9) and c.lower <= x.upper * (1 + 1e-9)
        assert x.lower <= _lp_upper(x.direction, _dense_atoms(Phi, pats.witnesses)) * (1 + 1e-9)


def _fresh(f):
    """``_carried_pricer`` with the carry emptied before each norm (no state handed on)."""
    def g(P, patterns, pricing, carry):
        if carry is not None:
            carry.clear()
        return f(P, patterns, pricing, carry)
    return g
