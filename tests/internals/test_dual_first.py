"""Dual-first settlement of candidate patterns (``relu_gating.search._exact.evidence.dual_prune``).

A candidate whose dual evidence falls below the incumbent over alpha is settled by that
evidence, without an exact solve.  Checked here: it happens (not vacuous); the answer is
the one of exact solves for every candidate; the certificate verifies; the claims rest on
the evidence (withdrawing it makes them unproven); the branch and bound agrees too.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import relu_gating as rg
from relu_gating.search._exact import tasks
from relu_gating.search.bnb import branch_and_bound


def _instance(n: int, d: int, seed: int):
    X = np.random.default_rng(seed).normal(size=(n, d))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        U = rg.low_frequency_basis(rg.laplacian(rg.sample_graph(X, kind="knn")), 4).U_K
    return rg.layer_input(X), U


@pytest.mark.parametrize("n,d,seed", [(120, 2, 0), pytest.param(40, 3, 0, marks=pytest.mark.slow), (16, 4, 3),
                                      pytest.param(18, 4, 4, marks=pytest.mark.slow), pytest.param(12, 5, 1, marks=pytest.mark.slow),
                                      pytest.param(11, 6, 2, marks=pytest.mark.slow)])
@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_dual_first_gives_the_answer_of_exact_solves(n, d, seed, monkeypatch):
    Phi, U = _instance(n, d, seed)
    res = rg.best_neuron(Phi, U)
    monkeypatch.setattr(tasks, "DUAL_FIRST_MIN_M", 10**9)
    base = rg.best_neuron(Phi, U)
    assert res.certified and base.certified
    assert abs(res.value - base.value) <= 1e-9
    settled = [i for i, m in res.methods.items() if m == "dual-first"]
    assert settled, "dual-first settled nothing: the test would not see it"
    assert all(res.bounds[i] <= res.value / res.alpha + 1e-12 for i in settled)
    rep = rg.verify(json.loads(json.dumps(res.to_dict())), Phi, U, "bias")
    assert rep.valid and rep.certified


def test_dual_first_claims_rest_on_their_evidence():
    Phi, U = _instance(16, 4, 3)
    res = rg.best_neuron(Phi, U)
    cert = json.loads(json.dumps(res.to_dict()))
    settled = [i for i, m in res.methods.items() if m == "dual-first"]
    # the claims that only the evidence proves (the cheap pencil bound is above them)
    assert settled
    for i in settled:
        cert["evidence"].pop(str(i), None)
    rep = rg.verify(cert, Phi, U, "bias")
    assert not (rep.valid and rep.certified)


@pytest.mark.slow
def test_branch_and_bound_with_dual_first_matches_enumeration():
    Phi, U = _instance(14, 4, 5)
    bb = branch_and_bound(Phi, U)
    en = rg.best_neuron(Phi, U)
    assert bb.certified and abs(bb.value - en.value) <= 1e-9
    assert rg.verify(json.loads(json.dumps(bb.to_dict())), Phi, U, "bias").certified
