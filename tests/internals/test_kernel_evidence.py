"""Exact evidence for patterns whose pencil has an exact kernel (relu_gating.search._exact.kernel_evidence).

Fuzz instance 4 (a thin instance, d = 2, no features): pattern {0, 8} has two active samples and
three columns of ``Phi``, so ``S Phi`` has an exact one-dimensional kernel.  A solver's float
multipliers never vanish on it exactly, the exact check refuted them, and the pattern fell back to
its support bound 0.354 (issue 23).  Multipliers on row combinations that annihilate the kernel,
made exact rationals, prove 0.169956069506 against the exact chamber maximum 0.169956069504
(face enumeration in rationals with 80-digit eigenvalues, ``tests/_exact_reference.py``).
"""

from __future__ import annotations

import json
import os
import warnings
from fractions import Fraction

import numpy as np
import pytest
from _exact_reference import chamber_max, exact_features
from _fuzz_instances import instance

from relu_gating import best_neuron, verify
from relu_gating.certificate import save_binary
from relu_gating.search._claims import settle_claims
from relu_gating.search._exact.kernel_evidence import exact_nullspace
from relu_gating.search.objectives import make_objective

MASK = (0, 8)


@pytest.fixture(scope="module")
def seed4():
    I = instance(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = best_neuron(I.Phi, I.U, features=I.features)
    masks = np.unpackbits(res.packed, axis=1)[:, :I.n].astype(bool)
    k = int(np.flatnonzero((masks == np.isin(np.arange(I.n), MASK)).all(axis=1))[0])
    return I, res, k


def test_exact_nullspace_is_exact():
    M = [[Fraction(1), Fraction(2), Fraction(3)], [Fraction(2), Fraction(4), Fraction(6)]]
    K = exact_nullspace(M, 3)
    assert len(K) == 2 and all(sum(a * b for a, b in zip(row, v)) == 0 for v in K for row in M)
    assert exact_nullspace([[Fraction(1), Fraction(0)], [Fraction(0), Fraction(1)]], 2) == []


def test_kernel_pattern_is_settled_tight_and_valid(seed4):
    I, res, k = seed4
    exact = chamber_max(I.Phi, I.U, exact_features(I.features, I.n), np.isin(np.arange(I.n), MASK))
    assert exact <= res.bounds[k] <= exact + 1e-9 * max(1.0, exact), (res.bounds[k], exact)
    rows, N = res.evidence[k]
    assert np.asarray(N).dtype == object and all(isinstance(v, Fraction) and v >= 0 for v in np.ravel(N))


def test_settle_claims_replaces_the_refuted_evidence():
    I = instance(4)
    obj = make_objective(I.Phi, I.U, I.features)
    mask = np.isin(np.arange(I.n), MASK)
    claim = 0.169956069504
    got = settle_claims(obj, mask[None], np.array([claim]), [(np.zeros(0, np.int64), np.zeros((0, 0)))])
    assert 0 in got.replaced and got.keep_evidence[0] and not got.fallback[0]
    # at most the claim (0.169956069504 is the exact maximum rounded up; multipliers polished at the
    # face may prove less than it, never less than the exact maximum)
    exact = chamber_max(I.Phi, I.U, exact_features(I.features, I.n), mask)
    assert exact <= got.bounds[0] <= claim * (1 + 1e-9) + 1e-9


@pytest.mark.parametrize("exact", [False, True])
def test_certificates_with_exact_multipliers_verify(seed4, tmp_path, exact):
    I, res, k = seed4
    d = json.loads(json.dumps(res.to_dict()))
    assert any(isinstance(x, str) for row in d["evidence"][str(k)]["N"] for x in row)
    rep = verify(d, I.Phi, I.U, I.features, exact=exact)
    assert rep.valid, rep.reasons
    path = os.fspath(tmp_path / "c.npz")
    save_binary(res, path)
    rep = verify(path, I.Phi, I.U, I.features, exact=exact)
    assert rep.valid, rep.reasons


def test_forged_exact_multipliers_are_refused(seed4):
    """A tampered exact entry, or a claim lowered below the chamber's maximum, is not proven."""
    I, res, k = seed4
    d = json.loads(json.dumps(res.to_dict()))
    N = d["evidence"][str(k)]["N"]
    i, j = next((a, b) for a, row in enumerate(N) for b, x in enumerate(row) if isinstance(x, str))
    N[i][j] = str(Fraction(N[i][j]) * 3)
    N[j][i] = N[i][j]
    d["patterns"]["bounds"][k] = res.bounds[k] * (1 - 1e-6)  # below the exact maximum: no evidence proves it
    rep = verify(d, I.Phi, I.U, I.features)
    assert not rep.valid and any("not proven" in r for r in rep.reasons), rep.reasons


@pytest.mark.parametrize("bad", ["1/0", "abc", "1e5", "1/2/3", "9" * 5000])
def test_malformed_exact_entries_are_refused(seed4, bad):
    I, res, k = seed4
    d = json.loads(json.dumps(res.to_dict()))
    d["evidence"][str(k)]["N"][0][0] = bad
    rep_or_exc = None
    try:
        rep_or_exc = verify(d, I.Phi, I.U, I.features)
    except Exception as exc:  # noqa: BLE001 - the error type is part of what is tested
        rep_or_exc = exc
    assert type(rep_or_exc).__name__ == "CertificateError", rep_or_exc


def test_exact_multipliers_round_trip_through_json_and_the_checker_reader():
    from relu_gating.certificate import multipliers_json
    from relu_gating.checker._read import multipliers

    N = np.array([[Fraction(1, 3), Fraction(1, 2)], [Fraction(1, 2), Fraction(2**-60)]], dtype=object)
    js = json.loads(json.dumps(multipliers_json(N)))
    assert js[0][0] == "1/3" and js[0][1] == 0.5 and js[1][1] == 2.0**-60  # floats stay numbers
    back = multipliers(js, 2, "test")
    assert back.dtype == object and (back == N).all()
    assert multipliers([[0.5, 1.0], [1.0, 0.25]], 2, "test").dtype == float


@pytest.mark.slow  # the default tier keeps its siblings (under 90 s: README)
def test_branch_and_bound_agrees_with_verify_on_the_kernel_instance():
    I = instance(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = best_neuron(I.Phi, I.U, features=I.features, strategy="branch-and-bound")
    d = json.loads(json.dumps(b.to_dict()))
    for exact in (False, True):
        rep = verify(d, I.Phi, I.U, I.features, exact=exact)
        assert rep.valid and rep.certified == b.certified, rep.reasons
