"""Exact mode's integer node pencils (``checker/_int_pencil.py``) against exact rational oracles:
the PSD decision against an independent Fraction LDL^T (``tests/_exact_reference.exact_psd``), the
node forms and the ladder decisions against the checker's Fraction forms of the same span."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from relu_gating.checker._exact_claims import psd_excluding as fraction_psd_excluding
from relu_gating.checker._int_pencil import Meter, first_proven, node_forms, psd, psd_excluding
from relu_gating.checker._problem import state_problem
from relu_gating.errors import CertificateError
from tests._exact_reference import exact_psd


def _matrices(rng, p):
    """Integer symmetric matrices: definite, singular PSD, nearly singular both ways, indefinite,
    with wide entries and diagonals of very different sizes."""
    out = []
    for _ in range(6):
        k = int(rng.integers(1, p + 1))
        G = rng.integers(-2**40, 2**40, size=(k, p)).astype(object)
        S = G.T.dot(G)  # PSD, singular when k < p
        v = rng.integers(-2**30, 2**30, size=p).astype(object)
        t = int(rng.integers(-3, 4))
        out += [S, S + t * np.eye(p, dtype=int).astype(object), S - np.outer(v, v) // 10**12]
        D = np.diag([1 << int(e) for e in rng.integers(0, 300, p)]).astype(object)
        out.append(D.dot(S).dot(D))  # congruent: same answer, diagonals 2^600 apart
    Z = np.zeros((p, p), dtype=object)
    Z[0, -1] = Z[-1, 0] = 1  # a zero diagonal with a nonzero row (p > 1)
    out += [Z, np.zeros((p, p), dtype=object)]
    return out


@pytest.mark.parametrize("p", [1, 2, 5, 9])
def test_psd_decides_as_the_fraction_oracle(p):
    rng = np.random.default_rng(p)
    for C in _matrices(rng, p):
        want = exact_psd(C.tolist())
        assert psd(C, Meter(1e18)) is want
        got = psd(C)  # floats and the exact refutation only: never wrong, may be undecided
        assert got is None or got is want


def test_float_acceptance_needs_a_margin():
    """A PSD matrix singular to 1 part in 2^100 is never accepted by floats (it goes exact)."""
    base = np.array([[1 << 100, 1 << 100], [1 << 100, (1 << 100) + 1]], dtype=object)
    assert psd(base) is None and psd(base, Meter(1e18)) is True
    bad = np.array([[1 << 100, 1 << 100], [1 << 100, (1 << 100) - 1]], dtype=object)
    assert psd(bad, Meter(1e18)) is False and exact_psd(bad.tolist()) is False


def _problem(n, feats, seed):
    rng = np.random.default_rng(seed)
    Phi = np.c_[rng.normal(size=(n, 2)), np.ones(n)]
    U = np.linalg.qr(rng.normal(size=(n, 2)))[0]
    H = {"bias": "bias", "none": None, "array": np.c_[np.ones(n), rng.normal(size=n)]}[feats]
    return state_problem(Phi, U, H)


@pytest.mark.parametrize("feats", ["bias", "none", "array"])
def test_node_forms_and_ladder_match_the_fraction_forms(feats):
    P = _problem(9, feats, 3)
    E, r = P.exact, P.Phi_r.shape[1]
    rng = np.random.default_rng(4)
    for trial in range(25):
        s = rng.integers(-1, 2, P.n)
        s[: int(rng.integers(0, 3))] = 1 if trial % 2 else -1  # few active rows: a redundant Phi basis
        plus, und = np.flatnonzero(s > 0).tolist(), np.flatnonzero(s == 0).tolist()
        k = len(und)
        zrows = [(i, E.Y[i] + [0] * k) for i in plus] + [(i, [0] * (r + t) + [1] + [0] * (k - t - 1))
                                                          for t, i in enumerate(und)]
        A, B, ZZ = E.forms(zrows, r + k)
        forms = node_forms(E, plus, und)
        assert exact_psd([[Fraction(x) for x in row] for row in forms[2].tolist()])
        meter = Meter(1e18)
        for u in (0.05, 0.3, 0.7, 0.95, 1.0, 1.2):
            assert psd_excluding(u, forms, meter) == fraction_psd_excluding(u, A, B, ZZ, None), (trial, u)
        ladder = [0.2, 0.5, 0.9, 1.1]
        want = next((u for u in ladder if fraction_psd_excluding(u, A, B, ZZ, None)), np.inf)
        got = first_proven(ladder, forms, meter)
        assert got >= want and (got == want or fraction_psd_excluding(got, A, B, ZZ, None))


def test_meter_refuses_past_its_limit():
    C = np.array([[1 << 100, 1 << 100], [1 << 100, (1 << 100) + 1]], dtype=object)
    with pytest.raises(CertificateError, match="exact mode"):
        psd(C, Meter(1.0))
