"""Tree certificates of the branch and bound: they verify, survive JSON, and forgeries are rejected."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relu_gating import best_neuron, verify
from relu_gating.search.proofs._node import implied_exact
from relu_gating.errors import CertificateError


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(21)
    X = rng.normal(size=(16, 2))
    Phi = np.c_[X, np.ones(16)]
    U = np.linalg.qr(rng.normal(size=(16, 3)))[0]
    res = best_neuron(Phi, U, features="bias", strategy="branch-and-bound")
    assert res.certified
    return Phi, U, json.loads(json.dumps(res.to_dict()))


def _first(nodes, kind):
    return next(k for k, nd in enumerate(nodes) if nd[0] == kind)


def test_verifies(case, tmp_path):
    Phi, U, d = case
    assert d["kind"] == "tree"
    path = tmp_path / "cert.json"
    path.write_text(json.dumps(d))
    rep = verify(str(path), Phi, U, "bias")
    assert rep.valid and rep.certified, rep.reasons
    assert rep.checks["tree"]["leaves"] >= 2


def test_flipped_split_rejected(case):
    """The + and - subtrees of a split exchanged: their bounds no longer hold where they now sit."""
    Phi, U, d = case
    nodes = d["tree"]["nodes"]
    rejected = 0
    for k in [k for k, nd in enumerate(nodes) if nd[0] == "s"][:10]:
        f = copy.deepcopy(d)
        # a split on another undecided row of the same node: the subtrees' signs are then wrong
        f["tree"]["nodes"][k] = ["s", (nodes[k][1] + 1) % 16]
        rep = verify(f, Phi, U, "bias")
        rejected += not rep.valid
    assert rejected >= 5


def test_missing_child_rejected(case):
    Phi, U, d = case
    f = copy.deepcopy(d)
    k = _first(f["tree"]["nodes"], "b")
    del f["tree"]["nodes"][k]
    rep = verify(f, Phi, U, "bias")
    assert not rep.valid
    f = copy.deepcopy(d)
    f["tree"]["nodes"].append(["b", 0.0])
    assert not verify(f, Phi, U, "bias").valid


def test_lowered_leaf_bound_rejected(case):
    Phi, U, d = case
    f = copy.deepcopy(d)
    nodes = f["tree"]["nodes"]
    k = max((k for k, nd in enumerate(nodes) if nd[0] == "b"), key=lambda k: nodes[k][1])
    nodes[k][1] = nodes[k][1] - 0.05
    rep = verify(f, Phi, U, "bias")
    assert not rep.valid and any("not proven" in r for r in rep.reasons)


def test_forged_chamber_evidence_rejected(case):
    Phi, U, d = case
    f = copy.deepcopy(d)
    nodes = f["tree"]["nodes"]
    cs = [k for k, nd in enumerate(nodes) if nd[0] == "c"]
    assert cs
    for k in cs:
        nodes[k][1] = nodes[k][1] * 0.5
    assert not verify(f, Phi, U, "bias").valid


def test_forged_implication_rejected(case):
    Phi, U, d = case
    nodes = d["tree"]["nodes"]
    k = _first(nodes, "i")
    f = copy.deepcopy(d)
    f["tree"]["nodes"][k][2] = -nodes[k][2]  # the other sign
    rep = verify(f, Phi, U, "bias")
    assert not rep.valid and any("implied" in r for r in rep.reasons)
    f = copy.deepcopy(d)
    f["tree"]["nodes"][k][3] = []
    assert not verify(f, Phi, U, "bias").valid


def test_wrong_problem_rejected(case):
    Phi, U, d = case
    rep = verify(d, Phi, U, None)
    assert not rep.valid and "another problem" in rep.reasons[0]
    U2 = np.linalg.qr(np.random.default_rng(1).normal(size=(16, 3)))[0]
    assert not verify(d, Phi, U2, "bias").valid
    f = copy.deepcopy(d)
    f["value"] = f["value"] + 1e-3
    assert not verify(f, Phi, U, "bias").valid


def test_false_certified_claim_rejected():
    """An early-stopped run's certificate, edited to claim certification, is rejected."""
    rng = np.random.default_rng(22)
    Phi = np.c_[rng.normal(size=(40, 2)), np.ones(40)]
    U = np.linalg.qr(rng.normal(size=(40, 3)))[0]
    res = best_neuron(Phi, U, strategy="branch-and-bound", max_seconds=0.02)
    d = json.loads(json.dumps(res.to_dict()))
    rep = verify(d, Phi, U, "bias")
    assert rep.valid and not rep.certified and not res.certified  # the budget ends it at the root
    d["certified"] = True
    rep = verify(d, Phi, U, "bias")
    assert not rep.valid and any("certified is claimed" in r for r in rep.reasons)
    d["certified"] = False
    d["upper_bound"] = d["value"]  # below what the verifier proves
    assert not verify(d, Phi, U, "bias").valid


def test_malformed(case):
    Phi, U, d = case
    f = copy.deepcopy(d)
    del f["tree"]
    with pytest.raises(CertificateError):
        verify(f, Phi, U, "bias")
    f = copy.deepcopy(d)
    f["tree"]["nodes"][0] = ["q"]
    assert not verify(f, Phi, U, "bias").valid
    f = copy.deepcopy(d)
    k = _first(f["tree"]["nodes"], "c")
    f["tree"]["nodes"][k][3] = [[1.0, 2.0]]  # N of the wrong shape
    with pytest.raises(CertificateError):
        verify(f, Phi, U, "bias")


@pytest.mark.parametrize("row", ["float", "bool", "negative", "n", "string", "nested"])
def test_row_indices_of_implied_nodes_are_read_strictly(case, row):
    """An implied node's rows as the checker reads them (a fast path for plain ints): an integral
    float (strict integers, issue 37), a bool, a row off the range, a string or a list is refused as
    malformed, never used as an index."""
    Phi, U, d = case
    f = copy.deepcopy(d)
    k = _first(f["tree"]["nodes"], "i")
    rows = f["tree"]["nodes"][k][3]
    rows[0] = {"float": float(rows[0]), "bool": True, "negative": -1, "n": len(Phi), "string": str(rows[0]),
               "nested": [rows[0]]}[row]
    with pytest.raises(CertificateError, match="tree node"):
        verify(f, Phi, U, "bias")


def test_implied_exact_oracle():
    """Exact Farkas check against constructed combinations (float rows, exact rationals)."""
    rng = np.random.default_rng(5)
    for trial in range(60):
        Phi = rng.normal(size=(6, 3)) * 10.0 ** rng.integers(-3, 3)
        signs = np.array([1, -1, 1, -1, 0, 0], dtype=np.int8)
        y = np.array([0.5, 0.25, 2.0]) * (1 if trial % 2 else -1) ** np.arange(3)
        Phi[4] = y[0] * Phi[0] - y[1] * Phi[1] + y[2] * Phi[2]  # rounded: generically not exact
        expect = bool(np.all(y > 0))
        assert implied_exact(Phi, signs, 4, 1, [0, 1, 2]) == expect
        assert not implied_exact(Phi, signs, 4, -1, [0, 1, 2])
    Phi = np.array([[1.0, 2.0], [1.0, 2.0], [2.0, 4.0], [0.0, 1.0]])
    s = np.array([1, 0, 0, 0], dtype=np.int8)
    assert implied_exact(Phi, s, 1, 1, [0]) and implied_exact(Phi, s, 2, 1, [0])  # duplicates, parallel
    assert not implied_exact(Phi, s, 3, 1, [0])


def _exact_gap(X: np.ndarray, O: np.ndarray) -> float:
    """||P_X - O O^T||_2 with P_X in exact rationals (the difference rounded once to floats)."""
    from fractions import Fraction

    k, c = X.shape
    Xf = [[Fraction(float(v)) for v in row] for row in X]
    G = [[sum(Xf[t][i] * Xf[t][j] for t in range(k)) for j in range(c)] for i in range(c)]
    A = [row[:] + [Fraction(int(i == j)) for j in range(c)] for i, row in enumerate(G)]  # Gauss-Jordan
    for col in range(c):
        p = next(r for r in range(col, c) if A[r][col] != 0)
        A[col], A[p] = A[p], A[col]
        piv = A[col][col]
        A[col] = [v / piv for v in A[col]]
        for r in range(c):
            if r != col and A[r][col] != 0:
                f = A[r][col]
                A[r] = [a - f * b for a, b in zip(A[r], A[col])]
    Gi = [row[c:] for row in A]
    XGi = [[sum(Xf[t][a] * Gi[a][j] for a in range(c)) for j in range(c)] for t in range(k)]
    Of = [[Fraction(float(v)) for v in row] for row in O]
    D = np.array([[float(sum(XGi[i][a] * Xf[j][a] for a in range(c)) - sum(Of[i][a] * Of[j][a] for a in range(c)))
                   for j in range(k)] for i in range(k)])
    return float(np.linalg.norm(D, 2))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(3, 10), c=st.integers(1, 3), cond=st.sampled_from([0, 3, 6, 9]))
def test_projector_allowance_is_proven(seed, k, c, cond):
    """The node bound's rounding allowance: eta >= ||P_X - O O^T|| (exact rationals), at any conditioning."""
    from relu_gating.search.proofs._node import _projector_gap

    rng = np.random.default_rng(seed)
    if k <= c:
        return
    X = rng.normal(size=(k, c)) @ np.diag(10.0 ** -np.linspace(0, cond, c)) @ np.linalg.qr(rng.normal(size=(c, c)))[0]
    O, sv, Vt = np.linalg.svd(X, full_matrices=False)
    exact = _exact_gap(X, O)
    # the inverse of O^T X computed inside, the SVD's own, and a wrong one: all proven (a bad
    # approximate inverse may only lose the bound, never make it wrong)
    for Z in (None, Vt.T / sv, Vt.T / sv + rng.normal(size=(c, c)) * 1e-3 / sv[-1]):
        eta, s = _projector_gap(O, X, Z)
        if np.isfinite(eta):
            assert eta >= exact
            assert 0 < s <= sv[-1] * (1 + 1e-9)
        if Z is None:
            assert cond >= 6 or eta < 1e-9  # well conditioned: a useful allowance


def _rational_solution(A: np.ndarray, b: np.ndarray):
    """The exact solution of ``A y = b`` (floats read as rationals), None if ``A`` is singular."""
    from fractions import Fraction

    from _thin_cone_reference import solve

    return solve([[Fraction(float(v)) for v in row] for row in A], [Fraction(float(v)) for v in b])


@settings(derandomize=True, max_examples=120, deadline=None)
@given(seed=st.integers(0, 10**6), m=st.integers(2, 6),
       kind=st.sampled_from(["gauss", "zero-coefficient", "near-singular", "scaled", "integer"]))
def test_float_filter_of_the_farkas_check_agrees_with_rationals(seed, m, kind):
    """The verifier's float filter (relu_gating.search.proofs._farkas._signs_float) decides a sign
    only where exact rational arithmetic agrees, and leaves exact zeros to the exact path."""
    from relu_gating.search.proofs._farkas import _signs_float

    rng = np.random.default_rng(seed)
    A = rng.normal(size=(m, m))
    y0 = rng.uniform(0.1, 2.0, size=m) * rng.choice([1.0, 1.0, -1.0], size=m)
    if kind == "integer":
        A = rng.integers(-4, 5, size=(m, m)).astype(float)
        y0 = rng.integers(-2, 4, size=m).astype(float)
    if kind == "near-singular":
        A[:, -1] = A[:, 0] + 1e-13 * rng.normal(size=m)
    if kind == "scaled":
        A = A * 10.0 ** rng.integers(-60, 60, size=(1, m))
    if kind == "zero-coefficient":
        A = rng.integers(-4, 5, size=(m, m)).astype(float)
        y0 = np.abs(rng.integers(1, 4, size=m)).astype(float)
        y0[rng.integers(m)] = 0.0  # b on a face of the cone: the exact answer is True, not decidable in floats
    b = A @ y0
    exact = _rational_solution(A, b)
    quick = _signs_float(A, b)
    if exact is None:
        assert quick is None
        return
    truth = all(v >= 0 for v in exact)
    if quick is not None:
        assert quick == truth
    if kind == "zero-coefficient" and any(v == 0 for v in exact):
        assert quick is None
    if kind == "gauss" and np.linalg.cond(A) < 1e6:
        assert quick is not None  # the filter does its job on ordinary data


@settings(derandomize=True, max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), m=st.integers(2, 6))
def test_batched_float_filter_decides_only_where_rationals_agree(seed, m):
    """The checker's vectorised filter (``relu_gating.checker._tree._implied_float``, run on every
    implied sign of a tree) on a stack mixing every kind of system above: each decision agrees with
    exact rational arithmetic, and ordinary well-conditioned systems are decided."""
    from relu_gating.checker._tree import _implied_float

    rng = np.random.default_rng(seed)
    As, bs, kinds = [], [], []
    for k in range(40):
        kind = ["gauss", "zero-coefficient", "near-singular", "scaled", "integer", "singular"][k % 6]
        A = rng.normal(size=(m, m))
        y0 = rng.uniform(0.1, 2.0, size=m) * rng.choice([1.0, 1.0, -1.0], size=m)
        if kind in ("integer", "zero-coefficient"):
            A = rng.integers(-4, 5, size=(m, m)).astype(float)
            y0 = rng.integers(-2, 4, size=m).astype(float) if kind == "integer" else rng.integers(1, 4, size=m) * 1.0
            if kind == "zero-coefficient":
                y0[rng.integers(m)] = 0.0
        if kind == "near-singular":
            A[:, -1] = A[:, 0] + 1e-13 * rng.normal(size=m)
        if kind == "singular":
            A[:, -1] = A[:, 0]
        if kind == "scaled":
            A = A * 10.0 ** rng.integers(-60, 60, size=(1, m))
        As.append(A)
        bs.append(A @ y0)
        kinds.append(kind)
    out = _implied_float(np.array(As), np.array(bs))
    for A, b, kind, got in zip(As, bs, kinds, out.tolist()):
        exact = _rational_solution(A, b)
        if exact is None:
            assert got == 0
            continue
        if got != 0:
            assert (got == 1) == all(v >= 0 for v in exact), kind
        if kind == "gauss" and np.linalg.cond(A) < 1e6:
            assert got != 0


def test_batched_implied_checks_agree_with_the_exact_check(case):
    """The checker's batched check (``relu_gating.checker._tree.implied``: the float filter, then
    exact rationals) on a tree's implied rows with random row signs, either sign: on each claim it
    answers as the search's exact check, ``implied_exact``, and it accepts every claim that check
    accepts in one batch."""
    from relu_gating.checker import state_problem
    from relu_gating.checker._tree import implied

    Phi, U, d = case
    P = state_problem(Phi, U, "bias")
    signs = np.where(np.all(Phi == 0, axis=1), -1, 0).astype(np.int8)
    rng = np.random.default_rng(0)
    accepted, other = [], []
    for k, node in enumerate(d["tree"]["nodes"][:4000]):  # the implied nodes met first
        if node[0] == "i":
            rows = [int(j) for j in node[3]]
            rs = [int(v) for v in rng.choice([-1, 1], size=len(rows))]
            other += [(k, int(node[1]), -int(node[2]), rows, rs), (k, int(node[1]), int(node[2]), rows, rs)]
    assert other
    for claim in other:
        sg = signs.copy()
        sg[claim[3]] = claim[4]
        assert (implied(P, [claim], False) is None) == implied_exact(Phi, sg, *claim[1:4])
        accepted += [claim] if implied_exact(Phi, sg, *claim[1:4]) else []
    assert accepted and implied(P, accepted, False) is None


def test_chamber_claim_proven_by_the_pencil_inequality_where_the_evidence_is_weak():
    """A chamber whose ``B_S`` is near singular (rows dependent to 1e-12; fuzz instance 0): dual
    evidence without rows proves only a loose float bound, the pencil inequality at a claim proves
    the claim (as in the enumeration certificate), and no claim below the value of a neuron of the
    chamber (recomputed from ``relu(Phi theta)``) is ever proven.  The branch and bound's leaf for
    it claims what this check proves, so the search certifies whatever BLAS rounds."""
    from _fuzz_instances import instance
    from relu_gating.search.proofs._problem import state_problem
    from relu_gating.search.proofs._pattern import pattern_pencils
    from relu_gating.search.proofs._node import chamber_bound
    from relu_gating.search.objectives import make_objective, neuron_values
    from relu_gating.search._exact.tasks import solve_one

    I = instance(0)
    S = state_problem(I.Phi, I.U, I.features)
    mask = np.array([0, 1, 1, 1, 1, 0, 1, 1, 0, 1, 0, 1, 1], bool)
    _, B = pattern_pencils(mask.astype(float)[None], S.Q, S.M, S.QH)
    assert np.linalg.eigvalsh(B[0])[0] < 1e-10 * np.linalg.eigvalsh(B[0])[-1]  # the near-singular case
    out = solve_one(make_objective(I.Phi, I.U, I.features), mask, "auto")
    z = I.Phi @ out.theta
    assert np.all(np.where(mask, z, -z) >= -1e-9 * np.abs(z).max())  # a neuron of the (closed) chamber
    low = float(neuron_values(make_objective(I.Phi, I.U, I.features), out.theta[None])[0])
    none = (np.zeros(0, dtype=np.int64), np.zeros((0, 0)))
    for claim in (low + 0.01, low + 1e-3):
        assert chamber_bound(S, mask, claim, *none) <= claim + 1e-12
    for claim in (low - 1e-6, low - 0.05):
        assert chamber_bound(S, mask, claim, *none) >= low - 1e-9
    b = best_neuron(I.Phi, I.U, features=I.features, strategy="branch-and-bound")
    rep = verify(json.loads(json.dumps(b.to_dict())), I.Phi, I.U, I.features)
    assert b.certified and rep.valid and rep.certified
    f = b.to_dict()
    c = [k for k, nd in enumerate(f["tree"]["nodes"]) if nd[0] == "c" and not nd[2]]
    assert c  # chambers settled without evidence rows: tampering with their claims is caught
    for k in c:
        f["tree"]["nodes"][k][1] *= 0.9
    assert not verify(json.loads(json.dumps(f)), I.Phi, I.U, I.features).valid


def test_collector_is_on_again_after_verify(case):
    """``verify`` pauses the cyclic collector while it reads and walks a tree, and always turns it
    back on, also when the certificate is rejected."""
    import gc

    Phi, U, d = case
    assert verify(d, Phi, U, "bias").valid and gc.isenabled()
    with pytest.raises(CertificateError):
        verify("{not json", Phi, U, "bias")
    assert gc.isenabled()
