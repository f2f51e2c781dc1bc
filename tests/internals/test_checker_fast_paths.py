"""The checker's cheaper paths of issue 39 against independent references: the lifted test by blocks against
the dense formula it replaced (genuine and tampered evidence), the vectorised Farkas filter against exact
rationals (nan, inf, singular and huge systems in the same batch), ``fro`` against exact sums at the float
range's edges, and the sparse multipliers' reader refusing what the old one refused."""

from __future__ import annotations

import copy
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relu_gating.checker._tree as T
from relu_gating import verify
from relu_gating.certificate import packed_multipliers
from relu_gating.checker._floats import allow, fro
from relu_gating.checker._problem import state_problem
from relu_gating.search.bnb import branch_and_bound


def _dense_lifted(P, signs, zero, claim, dec, N, mu):
    """The float test of a ``"d"`` leaf as it was before issue 39 (dense ``E`` and ``G``): the reference."""
    Q, M, QH = P.Q, P.M, P.QH
    n, r = Q.shape
    got = T._lifted_evidence(n, signs, zero, claim, dec, N, mu)
    if got is None:
        return np.inf
    dec, N, mu, und = got
    k = und.size
    plus = np.flatnonzero((signs > 0) & ~zero)
    E = np.zeros((n, r + k))
    E[plus, :r] = Q[plus]
    E[und, r + np.arange(k)] = 1.0
    aE = np.abs(E)
    ME = M.T @ E
    A, B = ME.T @ ME, E.T @ E
    magA, magB = float(((np.abs(M).T @ aE).T @ (np.abs(M).T @ aE)).sum()), float((aE.T @ aE).sum())
    if QH is not None:
        HE = QH.T @ E
        B = B - HE.T @ HE
        magB += float(((np.abs(QH).T @ aE).T @ (np.abs(QH).T @ aE)).sum())
    G = np.zeros((dec.size + 2 * k, r + k))
    G[:dec.size, :r] = signs[dec, None] * Q[dec]
    G[dec.size + np.arange(2 * k), r + np.tile(np.arange(k), 2)] = 1.0
    G[dec.size + k:, :r] = -Q[und]
    Nc = np.maximum(0.5 * N + 0.5 * N.T, 0.0)
    C = np.zeros((r + k, r + k))
    idx = r + np.arange(k)
    C[idx, idx] = mu
    C[idx, :r] -= 0.5 * mu[:, None] * Q[und]
    C[:r, idx] = C[idx, :r].T
    slack = claim * B - A - G.T @ Nc @ G - C
    aG = np.abs(G)
    mag = (abs(claim) * magB + magA + float((aG.T @ Nc @ aG).sum())
           + float(np.abs(mu).sum() + (np.abs(mu)[:, None] * np.abs(Q[und])).sum()))
    allowance = 4.0 * allow(n + G.shape[0], r + k) * mag + P.basis_allowance(claim, float(Nc.sum() + np.abs(mu).sum()))
    return float(claim) if float(np.linalg.eigvalsh(0.5 * (slack + slack.T))[0]) > allowance else np.inf


@pytest.fixture(scope="module")
def d_leaves():
    """A branch and bound tree with lifted leaves, its stated problem, and each ``"d"`` leaf with its node's signs."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 3))
    Phi, U = np.c_[X, np.ones(12)], np.linalg.qr(rng.normal(size=(12, 3)))[0]
    res = branch_and_bound(Phi, U, features="bias", lifted=True)
    d = json.loads(json.dumps(res.to_dict()))
    P = state_problem(Phi, U, "bias")
    seen = []
    leaf = T._leaf

    def record(node, signs, N, exact):
        seen.append((node, signs.copy(), N.zero))
        return leaf(node, signs, N, exact)

    T._leaf = record
    try:
        T.walk(d["tree"]["nodes"], P)
    finally:
        T._leaf = leaf
    ds = [(node, s, z) for node, s, z in seen if node[0] == "d" and len(node) == 5]
    assert ds
    return Phi, U, d, P, ds


def test_lifted_by_blocks_decides_as_the_dense_test(d_leaves):
    """Genuine evidence, a claim below it, ``N`` halved, one multiplier's sign flipped, ``mu`` shifted: the
    blocked test accepts and refuses exactly as the dense one, and accepts the genuine leaves."""
    _, _, _, P, ds = d_leaves
    accepted = 0
    for node, signs, zero in ds:
        claim, dec, Ns, mu = float(node[1]), node[2], node[3], node[4]
        p = len(dec) + 2 * int(((signs == 0) & ~zero).sum())
        N = T._multipliers(T._packed(Ns, p) if "kl" in Ns else Ns, p)  # (written packed: decoded first)
        i, j = np.unravel_index(np.argmax(N), N.shape)
        flip = N.copy()
        flip[i, j] = flip[j, i] = -N[i, j]
        tries = [(claim, Ns, mu), (claim * 0.9, Ns, mu), (claim, N * 0.5, mu), (claim, flip, mu),
                 (claim, Ns, [m + 0.5 * (max(map(abs, mu), default=0.0) + 1.0) for m in mu])]
        for c, n_, m in tries:
            assert T.lifted_bound(P, signs, zero, c, dec, n_, m) == _dense_lifted(P, signs, zero, c, dec, n_, m)
        accepted += np.isfinite(T.lifted_bound(P, signs, zero, claim, dec, Ns, mu))
    assert accepted == len(ds)


def test_a_forged_d_leaf_is_refused_whatever_is_tried_first(d_leaves):
    """The leaf's lifted evidence is tried before its node bound: a claim the evidence does not prove falls
    to the node bound, and a claim below both is unproven; forged multipliers likewise."""
    Phi, U, d, _, _ = d_leaves
    assert verify(d, Phi, U, "bias").valid
    nodes = d["tree"]["nodes"]
    k = max((j for j, nd in enumerate(nodes) if nd[0] == "d"), key=lambda j: nodes[j][1])
    for forge in ("claim", "sign", "row"):
        bad = copy.deepcopy(d)
        nd = bad["tree"]["nodes"][k]
        if forge == "claim":
            nd[1] *= 0.5
        elif forge == "sign":
            E = T._packed(nd[3], nd[3]["p"])["entries"]  # as written: packed
            nd[3] = packed_multipliers({"p": nd[3]["p"], "entries": E * [1, 1, -1]})
            nd[1] *= 0.9
        else:
            nd[2] = [Phi.shape[0] + 3] + nd[2][1:]
            nd[1] *= 0.9
        rep = verify(bad, Phi, U, "bias")
        assert not rep.valid, forge


def test_sparse_multipliers_refuse_what_they_refused():
    """A flat list, an entry of two or four numbers, a bool or float index, a nested entry: ValueError;
    entries as JSON writes them: the dense matrix."""
    for ent in ([0, 1, 0.5], [[0, 1]], [[0, 1, 0.5, 2]], [[True, 1, 0.5]], [[0, 1.0, 0.5]], [[[0], 1, 0.5]],
                [[0, 1, 0.5], [0, 1]], [(0, 1, 0.5), 3]):
        with pytest.raises((ValueError, TypeError)):
            T._multipliers({"p": 3, "entries": ent}, 3)
    got = T._multipliers({"p": 3, "entries": [[0, 1, 0.5], [2, 2, 1], [2, 0, -0.25]]}, 3)
    assert np.array_equal(got, [[0, 0.5, -0.25], [0.5, 0, 0], [-0.25, 0, 1.0]])
    assert np.array_equal(T._multipliers({"p": 2, "entries": []}, 2), np.zeros((2, 2)))


def _exact(A, b):
    """The exact solution of ``A y = b`` (floats read as rationals), None if singular (Gauss-Jordan)."""
    n = len(b)
    R = [[Fraction(float(v)) for v in row] + [Fraction(float(w))] for row, w in zip(A, b)]
    for c in range(n):
        p = next((i for i in range(c, n) if R[i][c] != 0), None)
        if p is None:
            return None
        R[c], R[p] = R[p], R[c]
        for i in range(n):
            if i != c and R[i][c] != 0:
                f = R[i][c] / R[c][c]
                R[i] = [x - f * y for x, y in zip(R[i], R[c])]
    return [R[i][n] / R[i][i] for i in range(n)]


@settings(derandomize=True, max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), r=st.integers(2, 6))
def test_farkas_filter_agrees_with_rationals(seed, r):
    """Each batch mixes ordinary, nearly singular, exactly singular, integer, scaled, huge, nan and inf
    systems: a sign the floats decide is the exact one; the unusable ones are left undecided (0)."""
    rng = np.random.default_rng(seed)
    c = 24
    A = rng.normal(size=(c, r, r))
    y = rng.uniform(0.05, 2.0, size=(c, r)) * rng.choice([1.0, 1.0, 1.0, -1.0], size=(c, r))
    A[1, :, -1] = A[1, :, 0] + 1e-14 * rng.normal(size=r)
    A[2, :, -1] = A[2, :, 0]  # exactly singular
    A[3] = rng.integers(-3, 4, size=(r, r))
    A[4] *= 10.0 ** rng.integers(-80, 80, size=(1, r))
    A[5, 0, 0] = 1e200
    b = np.einsum("kij,kj->ki", A, y)
    A[6, 1, 1] = np.nan
    b[7, 0] = np.inf
    y[8, 0] = 0.0  # on a face: positive in no float margin
    b[8] = A[8] @ y[8]
    out = T._implied_float(A, b)
    assert set(out.tolist()) <= {-1, 0, 1}
    assert out[5] == out[6] == out[7] == out[2] == 0
    for k in np.flatnonzero(out).tolist():
        ex = _exact(A[k], b[k])
        assert ex is not None
        assert (out[k] == 1) == all(v > 0 for v in ex) and (out[k] == -1) == any(v < 0 for v in ex)
    assert np.count_nonzero(out[9:]) >= (c - 9) // 2  # the filter decides ordinary systems


@pytest.mark.parametrize("scale", [0.0, 2.0**-1074, 2.0**-1000, 2.0**-540, 2.0**-401, 2.0**-399, 1.0, 2.0**399,
                                   2.0**401, 2.0**520, 2.0**1000])
@pytest.mark.parametrize("size", [1, 3, 50])
def test_fro_against_exact_sums(scale, size):
    """Every float range (subnormal, where squares underflow or overflow, the fast path's edges): the norm to
    within the float sum's rounding, never below it by more; 0, inf and nan as they are."""
    rng = np.random.default_rng(size)
    a = rng.uniform(0.5, 1.0, size=size) * scale
    e = math.frexp(scale)[1] if scale > 0 else 0  # the exact sum of squares, scaled by 2^-2e to stay in range
    exact = math.ldexp(math.sqrt(float(sum((Fraction(float(v)) / Fraction(2) ** e) ** 2 for v in a))), e)
    got = fro(a)
    assert got >= exact * (1 - 4 * size * 2.0**-53) - 2.0**-1074 * math.sqrt(size)
    assert got <= exact * (1 + 4 * size * 2.0**-53) + 2.0**-1073 * math.sqrt(size) + 2.0**-1074 * size
    assert fro(np.array([np.inf, 1.0])) == np.inf and np.isnan(fro(np.array([np.nan, 1.0])))
