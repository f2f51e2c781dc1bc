"""Rows forced by a node's cone, found in one batch (relu_gating.search.bnb._forced).

Oracles: an LP per candidate row (scipy's HiGHS: the minimum of ``s phi_i theta`` over the
cone within a box is 0 exactly when the row is forced) and the exact Farkas check on rationals
(relu_gating.search.proofs._farkas.implied_exact) of every claimed combination.  The data are
Gaussian, translated far from the origin, or with columns in wildly different units.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from _fuzz_instances import instance
from scipy.optimize import linprog

from relu_gating import BranchAndBoundOptions
from relu_gating.search.proofs._farkas import implied_exact
from relu_gating.search.bnb._forced import forced_rows


def _lp_forced(Phi: np.ndarray, signs: np.ndarray, dec: np.ndarray, i: int, s: int) -> bool:
    """min s phi_i theta over {signs_j phi_j theta >= 0, j in dec} (in a box) is 0, not < 0."""
    Q, _ = np.linalg.qr(Phi)  # theta' = R theta: the same question in well-scaled coordinates
    A = -(signs[dec, None] * Q[dec]) / np.linalg.norm(Q[dec], axis=1)[:, None]
    c = s * Q[i] / np.linalg.norm(Q[i])
    out = linprog(c, A_ub=A, b_ub=np.zeros(dec.size), bounds=[(-1, 1)] * Phi.shape[1], method="highs")
    assert out.status == 0
    return out.fun >= -1e-9


def _case(kind: str, n: int, d: int, k: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if kind == "translated":
        X = X + 250.0
    elif kind == "rescaled":
        X = X * np.logspace(-4, 4, d)[None, :]
    Phi = np.c_[X, np.ones(n)]
    theta = rng.normal(size=d + 1)
    theta[-1] = -(X @ theta[:-1]).mean() + 0.1 * (X @ theta[:-1]).std() * theta[-1]  # a plane through the data
    z = Phi @ theta
    signs = np.zeros(n, dtype=np.int8)
    dec = rng.choice(n, size=k, replace=False)
    signs[dec] = np.where(z[dec] > 0, 1, -1)
    Q, R = np.linalg.qr(Phi)  # the search's coordinates: a well-conditioned basis of col(Phi)
    Gn = Q / np.linalg.norm(Q, axis=1)[:, None]
    inner = R @ theta / np.linalg.norm(R @ theta)
    cand = np.setdiff1d(np.arange(n), dec)
    side = np.where(z[cand] > 0, 1, -1)
    return Phi, Gn, signs, np.sort(dec), cand, side, inner


FORCED_CASES = dict(kind=st.sampled_from(["gauss", "translated", "rescaled"]), d=st.integers(2, 4),
                    k=st.integers(6, 30), seed=st.integers(0, 10_000))


@settings(derandomize=True, deadline=None, max_examples=5)
@given(**FORCED_CASES)
def test_claims_are_forced_and_nearly_all_forced_rows_are_found(kind, d, k, seed):
    _claims_are_forced(kind, d, k, seed)


@pytest.mark.slow
@settings(derandomize=True, deadline=None, max_examples=25)
@given(**FORCED_CASES)
def test_claims_are_forced_and_nearly_all_forced_rows_are_found_slow(kind, d, k, seed):
    _claims_are_forced(kind, d, k, seed)


def _claims_are_forced(kind, d, k, seed):
    Phi, Gn, signs, dec, cand, side, inner = _case(kind, 80, d, k, seed)
    calls = []

    def exact(i, s, rows):
        calls.append(i)
        return implied_exact(Phi, signs, i, s, [int(j) for j in rows])

    got = forced_rows(Gn, signs, dec, cand, side, inner, exact)
    oracle = {int(i) for i, s in zip(cand, side) if _lp_forced(Phi, signs, dec, int(i), int(s))}
    for i, rows in got.items():
        s = int(side[cand.tolist().index(i)])
        assert len(rows) == d + 1 and set(rows) <= set(dec.tolist())
        assert implied_exact(Phi, signs, i, s, list(rows)), (i, rows)
        assert i in oracle
    if len(cand) >= 8:
        assert len(got) >= 0.9 * len(oracle) - 1, (len(got), len(oracle))


def test_out_of_range_or_too_few_is_left_to_the_per_row_tests():
    Phi, Gn, signs, dec, cand, side, inner = _case("gauss", 40, 1, 6, 0)  # rank 2
    assert forced_rows(Gn, signs, dec, cand, side, inner, lambda *a: True) == {}
    Phi, Gn, signs, dec, cand, side, inner = _case("gauss", 40, 3, 6, 0)
    assert forced_rows(Gn, signs, dec, cand[:3], side[:3], inner, lambda *a: True) == {}


@settings(derandomize=True, deadline=None, max_examples=15)
@given(kind=st.sampled_from(["gauss", "translated", "rescaled"]), d=st.integers(1, 3), seed=st.integers(0, 10_000))
def test_exhaustive_farkas_finds_a_combination_exactly_when_the_row_is_forced(kind, d, seed):
    from relu_gating.search.bnb._forced import exhaustive_farkas

    Phi, Gn, signs, dec, cand, side, inner = _case(kind, 30, d, 5, seed)
    for i, s in list(zip(cand.tolist(), side.tolist()))[:10]:
        got = exhaustive_farkas(dec, i, (s,), d + 1, lambda i_, s_, rows: implied_exact(Phi, signs, i_, s_, list(rows)))
        assert (got is not None) == _lp_forced(Phi, signs, dec, i, s)
        if got is not None:
            assert got[0] == s and implied_exact(Phi, signs, i, s, list(got[1]))


@pytest.mark.parametrize("seed", [8] + [pytest.param(s, marks=pytest.mark.slow)
                                        for s in (4, 32, 50, 55, 59)])
def test_thin_nodes_are_settled_from_the_exact_chambers(seed):
    """The fuzz instances whose nodes the float tests cannot split (rows dependent to within
    rounding): the search builds those subtrees from the exact chambers, certifies the
    enumeration's answer, and the verifier accepts the tree."""
    from relu_gating import best_neuron, verify

    I = instance(seed)
    assert I.kind == "thin"
    b = best_neuron(I.Phi, I.U, features=I.features, strategy="branch-and-bound",
                    options=BranchAndBoundOptions(lifted=False))  # the path under test: the lifted bound settles first
    e = best_neuron(I.Phi, I.U, features=I.features)
    assert b.tree["stats"]["thin_exact"] > 0 and b.tree["stats"]["unproven_empty"] == 0
    assert b.certified and e.certified and abs(b.value - e.value) <= 1e-9 * max(1.0, abs(e.value))
    rep = verify(json.loads(json.dumps(b.to_dict())), I.Phi, I.U, I.features)
    assert rep.valid and rep.certified


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), m=st.integers(2, 8), zero_first=st.booleans(), flip=st.booleans())
def test_slice_basis_is_an_orthonormal_complement(seed, m, zero_first, flip):
    """The slice's coordinates (a Householder reflection): orthonormal and orthogonal to the
    interior point, whatever the sign of its first entry (zero included)."""
    from relu_gating.search.bnb._forced import _slice_basis

    c = np.random.default_rng(seed).normal(size=m)
    c[0] = 0.0 if zero_first else (-abs(c[0]) if flip else abs(c[0]))
    c /= np.linalg.norm(c)
    Q = _slice_basis(c)
    assert Q.shape == (m, m - 1)
    assert np.abs(Q.T @ Q - np.eye(m - 1)).max() < 1e-13
    assert np.abs(c @ Q).max() < 1e-13


def _thin_case(n: int, seed: int):
    """Lines computed in floating point (rows dependent only to within rounding, the fuzz kind
    "thin"), 3 columns: a node with a few decided rows."""
    from _fuzz_instances import make_X

    rng = np.random.default_rng(seed)
    X = make_X("thin", n, 2, rng)
    Phi = np.c_[X, np.ones(n)]
    theta = rng.normal(size=3)
    z = Phi @ theta
    signs = np.zeros(n, dtype=np.int8)
    dec = np.sort(rng.choice(n, size=6, replace=False))
    signs[dec] = np.where(z[dec] > 0, 1, -1)
    Q, _ = np.linalg.qr(Phi)
    return Phi, Q / np.linalg.norm(Q, axis=1)[:, None], signs, dec, np.setdiff1d(np.arange(n), dec), z


@settings(derandomize=True, deadline=None, max_examples=15)
@given(kind=st.sampled_from(["gauss", "translated", "rescaled", "thin"]), d=st.integers(1, 3),
       seed=st.integers(0, 10_000))
def test_the_float_screen_of_the_exhaustive_search_loses_no_proof(kind, d, seed):
    """With the float screen (``screen=(Gn, signs)``) the exhaustive search finds a combination
    exactly when the row is forced (the LP oracle, and the unscreened search on degenerate
    data), each checked exactly, with fewer exact checks."""
    from relu_gating.search.bnb._forced import exhaustive_farkas

    if kind == "thin":
        Phi, Gn, signs, dec, cand, z = _thin_case(30, seed)
        pairs = [(int(i), s) for i in cand[:10] for s in (1, -1)]
        rank = 3
    else:
        Phi, Gn, signs, dec, cand, side, inner = _case(kind, 30, d, 5, seed)
        pairs = [(int(i), -int(s)) for i, s in zip(cand[:10], side[:10])] + list(zip(cand[:10].tolist(), side[:10].tolist()))
        rank = d + 1
    n_plain, n_screened = [], []
    for i, s in pairs:
        def exact(i_, s_, rows, log):
            log.append(1)
            return implied_exact(Phi, signs, i_, s_, list(rows))
        plain = exhaustive_farkas(dec, i, (s,), rank, lambda *a: exact(*a, n_plain))
        got = exhaustive_farkas(dec, i, (s,), rank, lambda *a: exact(*a, n_screened), (Gn, signs))
        assert (got is not None) == (plain is not None), (i, s)
        if kind != "thin":
            assert (got is not None) == _lp_forced(Phi, signs, dec, i, s)
        if got is not None:
            assert got[0] == s and implied_exact(Phi, signs, i, s, list(got[1]))
    assert len(n_screened) <= len(n_plain)
    if kind != "thin":
        assert len(n_screened) < len(n_plain)


@pytest.mark.parametrize("seed", [4, 8, 32, 50, 55, 59])
@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_nodes_without_evidence_are_split_anyway_beyond_the_exact_chamber_list(seed, monkeypatch):
    """Without the exact chamber list (as beyond Cover's bound of ``_thin.MAX_CHAMBERS``), the
    thin fuzz instances used to keep leaves without interior ("unproven_empty": not certified,
    seed 8 with a worse value): those nodes are now split anyway and their pointless sides
    decided exactly (relu_gating.search.bnb._blind); the enumeration's answer is certified and
    the verifier accepts the tree."""
    from relu_gating import best_neuron, verify
    from relu_gating.search.bnb import _thin

    monkeypatch.setattr(_thin, "MAX_CHAMBERS", 0)
    I = instance(seed)
    b = best_neuron(I.Phi, I.U, features=I.features, strategy="branch-and-bound",
                    options=BranchAndBoundOptions(lifted=False))  # the path under test: the lifted bound settles first
    e = best_neuron(I.Phi, I.U, features=I.features)
    st = b.tree["stats"]
    assert st["thin_exact"] == 0 and st["unproven_empty"] == 0 and st["blind"] > 0
    assert b.certified and e.certified and abs(b.value - e.value) <= 1e-9 * max(1.0, abs(e.value))
    rep = verify(json.loads(json.dumps(b.to_dict())), I.Phi, I.U, I.features)
    assert rep.valid and rep.certified


@settings(derandomize=True, deadline=None, max_examples=4)
@given(kind=st.sampled_from(["gauss", "translated", "rescaled"]), d=st.integers(4, 5), k=st.integers(8, 24),
       seed=st.integers(0, 10_000))
def test_a_nodes_forced_rows_from_nnls_and_one_float_batch(kind, d, k, seed):
    """The per-node step at ranks above the triangulation's (d = 5: rank 6), where NNLS proposes the
    Farkas rows of every candidate and one float batch clears them (issue 39): every row fixed is
    forced (the LP oracle) by rows checked exactly, every row left free is not forced, and every
    forced row that the interior point does not see on both sides is found."""
    from relu_gating.search.bnb._search import Search
    from relu_gating.search.objectives import make_objective, with_rank

    Phi, _, signs, dec, cand, side, inner_qr = _case(kind, 48, d, k, seed)
    U = np.linalg.qr(np.random.default_rng(seed).normal(size=(48, 3)))[0]
    obj = with_rank(make_objective(Phi, U, "bias"), d + 1)
    search = Search(obj, 1.0, 1e-9, "auto", seed)
    theta = np.linalg.solve(np.linalg.qr(Phi)[1], inner_qr)  # the plane that signed the decided rows
    inner = np.linalg.lstsq(obj.to_theta, theta, rcond=None)[0]  # in the search's coordinates
    assert np.all(signs[dec] * (obj.Psi[dec] @ inner) > 0)  # an interior point of the node's cone
    node = search._node(signs.copy(), inner[None], 0)
    fixed = signs.copy()
    chain, free, _ = search._fix_forced(node, fixed, inner[None])
    oracle = {int(i): s for i in cand.tolist() for s in (1, -1) if _lp_forced(Phi, signs, dec, int(i), s)}
    for i, s, rows in chain:
        assert oracle.get(i) == s and implied_exact(Phi, signs, i, s, list(rows)), (i, s, rows)
    assert not set(free.tolist()) & set(oracle)
    assert {i for i, _, _ in chain} == set(oracle)
