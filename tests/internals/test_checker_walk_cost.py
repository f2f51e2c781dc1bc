"""The tree walk's cheaper pieces of issue 39 (reach IV) against the computations they stand for: the node bound
with its kept bases of the - block and its unscaled + block gives the floats computed anew; the sparse
multipliers refuse a pair named twice in any order; the Farkas batch built flat still leaves a singular system to
exact rationals, and a forged implied sign beside it is refused; a forged tree is refused by the walk."""

from __future__ import annotations

import numpy as np
import pytest

import relu_gating.checker._tree as T
from relu_gating.checker._problem import state_problem


def _problem(Phi, features="bias", seed=0):
    U = np.linalg.qr(np.random.default_rng(seed).normal(size=(Phi.shape[0], 3)))[0]
    return state_problem(Phi, U, features)


def _anew(P):
    """A node's data with nothing kept and every + block scaled: the node bound as it was computed before."""
    N = T._Node(P)
    N.same_rows, N.scale = False, True
    return N


def _signs(rng, n, trials):
    return [rng.choice(np.array([-1, 0, 1], dtype=np.int8), size=n, p=p) for p in
            ([0.3, 0.4, 0.3], [0.6, 0.1, 0.3], [0.1, 0.1, 0.8], [0.9, 0.05, 0.05])] * trials


@pytest.mark.parametrize("features", ["bias", "none", "array"])
def test_node_bound_with_kept_bases_is_the_bound_computed_anew(features):
    """Bias features (every row of H the same: the - block's basis kept by its size), none, and features whose
    rows differ (nothing kept): bit for bit the node bound computed anew, twice over (kept, then reused)."""
    rng = np.random.default_rng(3)
    n = 40
    Phi = np.c_[rng.normal(size=(n, 3)), np.ones(n)]
    H = {"bias": "bias", "none": None, "array": np.c_[np.ones(n), rng.normal(size=n)]}[features]
    P = _problem(Phi, H)
    N, ref = T._Node(P), _anew(P)
    assert N.same_rows == (features == "bias") and not N.scale
    for signs in _signs(rng, n, 3) * 2:
        assert T.node_bound(N, signs) == T.node_bound(ref, signs)
    assert (len(N.bases) > 0) == (features == "bias")


def test_rows_beyond_the_range_are_still_scaled():
    """A column of ``Phi`` whose entries span past ``2^±400`` of its largest: the + block's columns are scaled as
    before (``scale``), and the bound is the one computed anew."""
    rng = np.random.default_rng(4)
    n = 30
    X = rng.normal(size=(n, 3))
    X[:10, 0] *= 2.0**-450  # rows whose column 0 is tiny: a + block of them alone has its column scaled
    P = _problem(np.c_[X, np.ones(n)])
    assert np.abs(P.Phi_r[P.Phi_r != 0]).min() < 2.0**-400
    N, ref = T._Node(P), _anew(P)
    assert N.scale
    for signs in _signs(rng, n, 2):
        signs[:10] = 1
        assert T.node_bound(N, signs) == T.node_bound(ref, signs)


def test_kept_bases_are_bounded_by_the_problem():
    """Past ``2^22`` floats nothing more is kept, and the bound is the same."""
    rng = np.random.default_rng(5)
    n = 30
    P = _problem(np.c_[rng.normal(size=(n, 3)), np.ones(n)])
    N, ref = T._Node(P), _anew(P)
    N.kept = 1 << 22  # as if full
    for signs in _signs(rng, n, 1):
        assert T.node_bound(N, signs) == T.node_bound(ref, signs)
    assert not N.bases


def test_a_pair_named_twice_is_refused_in_any_order():
    """Entries in the writer's order or out of it give the same matrix; a pair named twice, next to each other,
    apart, or as ``(l, k)``, is refused, as JSON lists and as an array."""
    ok = [[0, 1, 0.5], [0, 2, 1.0], [2, 2, -0.25]]
    want = T._multipliers({"p": 3, "entries": ok}, 3)
    assert np.array_equal(T._multipliers({"p": 3, "entries": ok[::-1]}, 3), want)
    assert np.array_equal(T._multipliers({"p": 3, "entries": np.array(ok)}, 3), want)
    for bad in ([[0, 1, 0.5], [0, 1, 0.5]], [[0, 1, 0.5], [2, 2, 1.0], [1, 0, 0.3]], [[1, 0, 0.5], [0, 1, 0.5]],
                [[0, 1, 0.5], [0, 2, 1.0], [0, 1, 0.5]], [[2, 2, 1.0], [2, 2, 1.0]]):
        with pytest.raises(ValueError):
            T._multipliers({"p": 3, "entries": bad}, 3)
        with pytest.raises(ValueError):
            T._multipliers({"p": 3, "entries": np.array(bad, dtype=float)}, 3)


def _farkas_problem():
    """Integer rows: ``phi_0 = phi_1 + 2 phi_2 + phi_3 + 3 phi_4`` exactly, rows 7 and 8 the same."""
    rng = np.random.default_rng(6)
    Phi = np.c_[rng.integers(-4, 5, size=(10, 3)), np.ones(10)].astype(float)
    Phi[0] = Phi[1] + 2 * Phi[2] + Phi[3] + 3 * Phi[4]
    Phi[8] = Phi[7]
    return _problem(Phi)


def test_a_forged_implied_sign_beside_a_singular_system_is_refused():
    """A true implied sign, one whose Farkas rows repeat a row of ``Phi`` (singular: left to exact rationals), and a
    false one, in one batch: the first failing node is named, as exact rationals decide."""
    P = _farkas_problem()
    assert np.linalg.matrix_rank(np.c_[P.Phi_r[[1, 2, 3, 4]].T]) == 4  # the seeded rows 1-4 are independent
    true = (10, 0, 1, [1, 2, 3, 4], [1, 1, 1, 1])
    singular = (11, 0, 1, [5, 6, 7, 8], [1, 1, 1, 1])
    false = (12, 0, -1, [1, 2, 3, 4], [1, 1, 1, 1])
    A = np.stack([(np.array(rs, float)[:, None] * P.Phi_r[rows]).T for _, _, _, rows, rs in (true, singular)])
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.inv(A)  # exactly singular: the floats must leave it undecided
    assert T.implied(P, [list(true)] * 3, False) is None
    assert T.implied(P, [list(true), list(singular), list(false)], False) == 11
    assert T.implied(P, [list(true), list(false), list(singular)], False) == 12
    assert T.implied(P, [list(true)] * 5 + [list(false)], False) == 12
    out = T._implied_float(A, np.stack([P.Phi_r[0]] * 2))
    assert out.tolist() == [1, 0]


def test_a_forged_tree_is_refused_by_the_walk():
    """A split on a decided row, an implied sign with a false Farkas combination, a truncated tree and a node past
    the last leaf: each refused, with the node named as before."""
    P = _farkas_problem()
    cap = float(T.cap_bound(P))
    leaf = ["b", cap]

    def tree(plus):  # rows 1-4 split in turn; the all-+ branch holds ``plus``, every other branch a leaf
        return [["s", 1], ["s", 2], ["s", 3], ["s", 4]] + plus + [leaf] * 4

    leaves, why, counts = T.walk(tree([["i", 0, 1, [1, 2, 3, 4]], leaf]), P)
    assert not why and counts == {"split": 4, "implied": 1, "leaves": 5} and len(leaves) == 5
    assert T.walk(tree([["i", 0, -1, [1, 2, 3, 4]], leaf]), P)[1] == [
        "node 4: the implied sign of row 0 is not proven by its Farkas rows"]
    assert T.walk(tree([["s", 1], leaf, leaf]), P)[1] == ["node 4: row 1 is not an undecided row of its node"]
    assert T.walk(tree([["i", 0, 1, [1, 2, 3, 4]], leaf])[:-1], P)[1] == [
        "tree is truncated: a split or implied node lacks a child"]
    assert T.walk(tree([["i", 0, 1, [1, 2, 3, 4]], leaf]) + [leaf], P)[1] == ["tree has 1 node(s) beyond its last leaf"]
