"""Dual-first settlement of candidate patterns (``relu_gating.search._exact.evidence.dual_prune``).

A candidate whose dual evidence falls below the incumbent over alpha is settled by that
evidence, without an exact solve.  Checked here: it happens (not vacuous); the answer is
the one of exact solves for every candidate; the certificate verifies; the claims rest on
the evidence (withdrawing it makes them unproven); the branch and bound agrees too; a pattern
offered without a witness but with a point ``near`` it (a chamber thinner than floats resolve, issue 39)
is settled the same way and never claims below its exact value, wherever that point lies.
"""

from __future__ import annotations

import functools
import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


@functools.lru_cache(maxsize=None)
def _patterns(n: int, d: int, seed: int, count: int):
    """The problem's objective, its best value, and ``count`` of its realized patterns (mask, strict witness,
    the exact solve's value of the pattern: a neuron's, a lower end of its supremum)."""
    from relu_gating.search.objectives import make_objective

    Phi, U = _instance(n, d, seed)
    obj = make_objective(Phi, U, "bias")
    ps = rg.enumerate_patterns(Phi)
    pick = np.random.default_rng(seed).permutation(len(ps.masks))[:count]
    rows = []
    for k in pick.tolist():
        mask, w = np.asarray(ps.masks[k], dtype=bool), np.asarray(ps.witnesses[k], dtype=float)
        exact = tasks.solve_one(obj, mask, "auto", w)  # no target: solved
        rows.append((mask, w, exact.lower))
    return obj, rg.best_neuron(Phi, U).value, rows


@settings(derandomize=True, deadline=None, max_examples=6)
@given(seed=st.integers(0, 10_000), scale=st.sampled_from([0.0, 1e-3, 1.0, 100.0]))
def test_a_point_near_a_pattern_only_chooses_the_rows_of_its_evidence(seed, scale):
    """Each pattern offered without its witness, with ``near`` the witness moved by ``scale`` times a random
    direction of its size (0: on it; 1 and 100: far outside the cone): whatever the point, a dual-first
    claim is at least the value of a neuron of the pattern (its exact solve's, against which the claim is
    compared); without ``near`` nothing is settled dual-first (the old path: a solve), and with ``near`` on
    the witness the evidence settles patterns (not vacuous)."""
    obj, best, rows = _patterns(16, 4, 3, 24)
    rng = np.random.default_rng(seed)
    settled = 0
    for mask, w, value in rows:
        move = rng.standard_normal(w.size)
        near = w + scale * np.linalg.norm(w) * move / np.linalg.norm(move)
        got = tasks.solve_one(obj, mask, "auto", None, target=best, near=near)
        if got.method == "dual-first":
            settled += 1
            assert got.upper <= best and (np.isnan(value) or got.upper >= value - 1e-12), (got.upper, value)
            assert np.isnan(got.lower) and got.evidence is not None  # no neuron is claimed from the point
        assert tasks.solve_one(obj, mask, "auto", None, target=best).method != "dual-first"
    if scale == 0.0:
        assert settled > 0, "no pattern settled at its own witness: the test would not see the path"
