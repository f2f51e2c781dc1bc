"""The checker's exact mode is the oracle of its float path, and its primitives have oracles of their own.

* ``verify(..., exact=True)`` (every claim decided in rationals) and the float ``verify`` reach
  the same verdict on certificates of both strategies (pattern and tree), honest and tampered;
* exact positive semidefiniteness against the principal-minor criterion;
* the checker's own chamber count against the enumerator's (independent code) on degenerate
  integer arrangements.
"""

from __future__ import annotations

import copy
import itertools
import json
from fractions import Fraction

import numpy as np
import pytest
from _fuzz_instances import instance

from relu_gating import best_neuron, verify

SEEDS = list(range(12))


@pytest.fixture(scope="module", params=["enumerate", "branch-and-bound"])
def certs(request):
    out = []
    for seed in SEEDS:
        I = instance(seed)
        res = best_neuron(I.Phi, I.U, features=I.features, strategy=request.param)
        out.append((seed, I, json.loads(json.dumps(res.to_dict(), allow_nan=False))))
    return out


@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_exact_and_float_verdicts_agree(certs):
    for seed, I, d in certs:
        a = verify(d, I.Phi, I.U, I.features)
        b = verify(d, I.Phi, I.U, I.features, exact=True)
        assert (a.valid, a.certified) == (b.valid, b.certified), (seed, a.reasons, b.reasons)
        assert a.value == pytest.approx(b.value, abs=1e-12)
        if a.valid:
            assert min(a.upper_bound, b.upper_bound) >= a.value - 1e-9


def _lower_top(d: dict) -> dict:
    """Every claimed bound halved below the certificate's value (the chamber of theta is beaten)."""
    f = copy.deepcopy(d)
    low = 0.5 * d["value"]
    if d.get("kind") == "tree":
        for nd in f["tree"]["nodes"]:
            if nd[0] in "bcd":
                nd[1] = min(nd[1], low)
    else:
        f["patterns"]["bounds"] = [min(b, low) for b in f["patterns"]["bounds"]]
    return f


@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_exact_and_float_refuse_the_same_tampering(certs):
    for seed, I, d in certs[:6]:
        if d["value"] <= 0:
            continue
        f = _lower_top(d)
        a = verify(f, I.Phi, I.U, I.features)
        b = verify(f, I.Phi, I.U, I.features, exact=True)
        assert not a.valid and not b.valid, seed


def _psd_by_minors(C) -> bool:
    from relu_gating.checker._rational import det

    r = len(C)
    for k in range(1, r + 1):
        for idx in itertools.combinations(range(r), k):
            if det([[C[i][j] for j in idx] for i in idx]) < 0:
                return False
    return True


def test_exact_psd_against_principal_minors():
    from relu_gating.checker._rational import is_psd

    rng = np.random.default_rng(0)
    seen = {True: 0, False: 0}
    for _ in range(400):
        r = int(rng.integers(1, 5))
        G = rng.integers(-2, 3, size=(r, int(rng.integers(1, r + 2))))
        C = (G @ G.T - int(rng.integers(0, 2)) * np.diag(rng.integers(0, 2, size=r))).tolist()
        got = is_psd(C)
        assert got == _psd_by_minors(C), C
        assert is_psd([[Fraction(x, 3) for x in row] for row in C]) == got
        seen[got] += 1
    assert min(seen.values()) > 50  # both outcomes exercised, singular ones included


def test_own_chamber_count_against_the_enumerator():
    from relu_gating.checker._complete import chamber_count, hyperplanes
    from relu_gating.checker._problem import state_problem
    from relu_gating.patterns import count_patterns

    rng = np.random.default_rng(1)
    for _ in range(40):
        n, m = int(rng.integers(3, 12)), int(rng.integers(2, 5))
        Phi = np.c_[rng.integers(-2, 3, size=(n, m - 1)).astype(float), np.ones(n)]
        P = state_problem(Phi, np.linalg.qr(rng.normal(size=(n, 1)))[0], None)
        normals, r = hyperplanes(P)
        assert chamber_count(normals, r) == count_patterns(Phi).count
