"""Tests of relu_gating.patterns: exact enumeration of realized gating patterns.

Oracles: Cover's formula on random data (general position), a brute-force LP
enumeration (tests/_patterns_reference.py) on degenerate families, exact
rational checks of every witness, exact rational general-position checks on
near-degenerate data.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from _patterns_reference import brute_force_patterns, cover, exact_witness_ok, fraction_general_position, fraction_rank
from relu_gating.errors import InputError, ProblemTooLargeError
from relu_gating.patterns import (
    CompletenessReport,
    PatternCount,
    PatternSet,
    check_completeness,
    count_patterns,
    enumerate_patterns,
)


def as_set(ps: PatternSet) -> set:
    return {tuple(r) for r in ps.masks.tolist()}


def assert_valid(Phi, ps: PatternSet) -> None:
    M = ps.masks
    assert M.shape == (len(ps), Phi.shape[0]) and M.dtype == bool
    assert ps.witnesses.shape == (len(ps), Phi.shape[1])
    assert len(as_set(ps)) == len(ps), "duplicate patterns"
    # float check with the contract's formula (margin: witnesses are float-certified)
    V = (2 * M - 1) * (Phi @ ps.witnesses.T).T
    nz = np.any(Phi != 0, axis=1)
    if ps.n_exact_only == 0:
        assert np.all(V[:, nz] > 0)
    assert not M[:, ~nz].any()


# ----------------------------------------------------------------------------- random data
GRID = [(2, 1), (2, 2), (2, 7), (2, 30), (3, 3), (3, 12), (3, 40), (4, 3), (4, 9), (4, 15), (4, 25),
        (5, 6), (5, 14), (6, 7), (6, 11)]


@pytest.mark.parametrize("r,n", GRID)
def test_count_is_cover_on_random_data(r, n):
    rng = np.random.default_rng(1000 * r + n)
    Phi = np.c_[rng.normal(size=(n, r - 1)), np.ones(n)]
    ps = enumerate_patterns(Phi)
    assert ps.rank == min(r, n) == fraction_rank(Phi)
    assert len(ps) == cover(n, min(r, n))
    assert_valid(Phi, ps)
    cnt = count_patterns(Phi)
    assert (cnt.count, cnt.exact) == (len(ps), True)
    rep = check_completeness(Phi, ps.masks, ps.witnesses)
    assert rep.ok and rep.expected == len(ps) == rep.found


@pytest.mark.parametrize("r,n", [(3, 8), (4, 9), (5, 9), (6, 10)])
def test_random_data_exact_witnesses_and_gp(r, n):
    rng = np.random.default_rng(7 * r + n)
    Phi = rng.normal(size=(n, r))  # no bias column: still rank r
    assert fraction_general_position(Phi)
    ps = enumerate_patterns(Phi)
    assert len(ps) == cover(n, r)
    assert exact_witness_ok(Phi, ps.masks, ps.witnesses)


# ----------------------------------------------------------------------------- degenerate families
def _grid2(a, b):
    g = np.array([(i, j) for i in range(a) for j in range(b)], float)
    return np.c_[g, np.ones(len(g))]


def _families():
    rng = np.random.default_rng(11)
    fam = {}
    fam["grid 4x3"] = _grid2(4, 3)
    fam["grid 3x3 centred"] = _grid2(3, 3) - [1, 1, 0]
    g3 = np.array([(i, j, k) for i in range(3) for j in range(2) for k in range(2)], float)
    fam["grid 3x2x2"] = np.c_[g3, np.ones(len(g3))]
    X = rng.normal(size=(6, 2))
    fam["duplicated samples"] = np.c_[np.r_[X, X[:3], X[:1]], np.ones(10)]
    X = rng.normal(size=(6, 3))
    fam["antiparallel, parallel, zero rows"] = np.r_[X, -X[:3], 2 * X[3:5], 0.25 * X[5:], np.zeros((2, 3))]
    H = np.maximum(rng.normal(size=(7, 3)) @ rng.normal(size=(3, 4)), 0)
    fam["[H, 1] ReLU layer, repeated rows"] = np.c_[np.r_[H, H[:3]], np.ones(10)]
    X = rng.integers(-6, 7, size=(9, 2)) / 4
    fam["rank deficient (col3 = x1 + 2 x2)"] = np.c_[X, X @ [1.0, 2.0], np.ones(9)]
    fam["rank 2 in R^4"] = np.outer(rng.integers(-3, 4, 8), [1, 0, 2, 1]) + np.outer(rng.integers(-3, 4, 8), [0, 1, 1, -1]).astype(float)
    pts = [(t, 2 * t + 1) for t in range(5)] + [(0, 3), (1, 1), (2, 2), (4, 0)]
    fam["collinear points"] = np.c_[np.array(pts, float), np.ones(9)]
    fam["coplanar points in R^3"] = np.c_[rng.integers(-3, 4, size=(10, 2)), np.zeros(10), np.ones(10)] @ np.array(
        [[1, 0, 1, 0], [0, 1, 1, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])
    fam["small integers 10x4"] = rng.integers(-2, 3, size=(10, 4)).astype(float)
    fam["rank 1"] = np.outer([1.0, -2.0, 0.0, 3.0, 0.5], [1.0, 2.0])
    fam["single row"] = np.array([[0.5, -1.0, 2.0]])
    return fam


FAMILIES = _families()


#: Brute-force oracle comparisons: one family in the default run, all of them in CI's slow tier.
_FAST_FAMILY = "grid 4x3"


@pytest.mark.parametrize("name", [pytest.param(f, marks=() if f == _FAST_FAMILY else pytest.mark.slow)
                                  for f in FAMILIES])
def test_degenerate_family_matches_brute_force(name):
    Phi = FAMILIES[name]
    ps = enumerate_patterns(Phi)
    ref = brute_force_patterns(Phi)
    assert as_set(ps) == ref
    assert len(ps) == len(ref)
    assert ps.rank == fraction_rank(Phi)
    assert_valid(Phi, ps)
    assert exact_witness_ok(Phi, ps.masks, ps.witnesses)
    cnt = count_patterns(Phi, method="exact")
    assert cnt.exact and cnt.count == len(ref)
    assert count_patterns(Phi, method="bound").count >= len(ref)
    assert check_completeness(Phi, ps.masks, ps.witnesses).ok


def test_zero_matrix_has_one_pattern():
    Phi = np.zeros((4, 3))
    ps = enumerate_patterns(Phi)
    assert len(ps) == 1 and not ps.masks.any() and ps.rank == 0
    assert check_completeness(Phi, ps.masks, ps.witnesses).ok


@pytest.mark.parametrize("name", ["grid 4x3"] + [pytest.param(f, marks=pytest.mark.slow) for f in
                                  ("grid 3x2x2", "collinear points", "[H, 1] ReLU layer, repeated rows",
                                   "duplicated samples")])
def test_near_degenerate_perturbation_is_general_position(name):
    Phi = FAMILIES[name].copy()
    rng = np.random.default_rng(5)
    Phi[:, :-1] += 1e-12 * rng.normal(size=Phi[:, :-1].shape)
    assert fraction_general_position(Phi)  # exact: the perturbed data are in general position
    r = fraction_rank(Phi)
    ps = enumerate_patterns(Phi)
    assert len(ps) == cover(Phi.shape[0], r) > len(brute_force_patterns(FAMILIES[name]))
    assert exact_witness_ok(Phi, ps.masks, ps.witnesses)
    rep = check_completeness(Phi, ps.masks, ps.witnesses)
    assert rep.ok and rep.method == "cover"


def test_last_bit_parallel_rows_are_distinct_hyperplanes():
    # 3 * x rounds: the rows are NOT exactly parallel; the exact count says so
    x = np.array([0.1, 0.7, 1.0])
    y = 3 * x
    assert fraction_rank(np.array([x, y])) == 2
    Phi = np.array([x, y, [1.0, -1.0, 0.0]])
    assert count_patterns(Phi).count == cover(3, 2 + 1) == 8


@pytest.mark.slow
@settings(derandomize=True, deadline=None, max_examples=40)
@given(st.integers(1, 9), st.integers(1, 4), st.integers(0, 2 ** 31 - 1))
def test_small_integer_matrices_match_brute_force(n, m, seed):
    Phi = np.random.default_rng(seed).integers(-2, 3, size=(n, m)).astype(float)
    ps = enumerate_patterns(Phi)
    assert as_set(ps) == brute_force_patterns(Phi)
    assert count_patterns(Phi, method="exact").count == len(ps)
    assert exact_witness_ok(Phi, ps.masks, ps.witnesses)


# ----------------------------------------------------------------------------- completeness check
@pytest.fixture(scope="module")
def grid_set():
    Phi = FAMILIES["grid 4x3"]
    return Phi, enumerate_patterns(Phi)


def test_check_completeness_accepts_true_set(grid_set):
    Phi, ps = grid_set
    rep = check_completeness(Phi, ps.masks, ps.witnesses)
    assert isinstance(rep, CompletenessReport)
    assert rep.ok and rep.reason == "" and rep.expected == rep.found == len(ps)
    assert rep.method == "deletion-restriction"


def test_check_completeness_rejects_dropped(grid_set):
    Phi, ps = grid_set
    rep = check_completeness(Phi, ps.masks[1:], ps.witnesses[1:])
    assert not rep.ok and rep.found == len(ps) - 1 and "arrangement has" in rep.reason


def test_check_completeness_rejects_duplicate(grid_set):
    Phi, ps = grid_set
    M = np.r_[ps.masks, ps.masks[:1]]
    W = np.r_[ps.witnesses, ps.witnesses[:1]]
    rep = check_completeness(Phi, M, W)
    assert not rep.ok and "duplicate" in rep.reason
    # duplicate replacing a pattern: same count, still rejected
    M2, W2 = ps.masks.copy(), ps.witnesses.copy()
    M2[1], W2[1] = M2[0], W2[0]
    assert not check_completeness(Phi, M2, W2).ok


def test_check_completeness_rejects_altered_witness(grid_set):
    Phi, ps = grid_set
    W = ps.witnesses.copy()
    W[3] = -W[3]
    rep = check_completeness(Phi, ps.masks, W)
    assert not rep.ok and "witness" in rep.reason
    M = ps.masks.copy()
    M[5, 2] = ~M[5, 2]
    assert not check_completeness(Phi, M, ps.witnesses).ok


def test_check_completeness_rejects_witness_on_a_wall(grid_set):
    Phi, ps = grid_set
    W = ps.witnesses.copy()
    W[0] = 0.0  # realizes nothing strictly
    assert not check_completeness(Phi, ps.masks, W).ok


# ----------------------------------------------------------------------------- API
def test_patternset_api(grid_set):
    Phi, ps = grid_set
    assert ps.n == 12 and ps.m == 3 and ps.rank == 3 and ps.n_hyperplanes == 12
    chunks = list(ps.iter_chunks(7))
    assert sum(len(c) for c in chunks) == len(ps)
    np.testing.assert_array_equal(np.concatenate([c.masks for c in chunks]), ps.masks)
    M = ps.masks
    for k in (0, 17, len(ps) - 1):
        assert ps.index_of(M[k]) == k
        assert M[k] in ps
    fake = np.zeros(12, dtype=bool)
    fake[[0, 11]] = True  # two opposite corners alone: not separable by a line
    assert ps.index_of(fake) is None and fake not in ps
    with pytest.raises(InputError, match="mask"):
        ps.index_of(np.zeros(5, dtype=bool))
    with pytest.raises(InputError, match="size"):
        next(ps.iter_chunks(0))
    assert np.array_equal(np.unpackbits(ps.packed, axis=1, count=12).astype(bool), M)


def test_deterministic_order():
    rng = np.random.default_rng(3)
    Phi = np.c_[rng.normal(size=(20, 3)), np.ones(20)]
    a, b = enumerate_patterns(Phi), enumerate_patterns(Phi)
    np.testing.assert_array_equal(a.packed, b.packed)
    np.testing.assert_array_equal(a.witnesses, b.witnesses)


@pytest.mark.parametrize("name", ["random", "grid 3x2x2", "[H, 1] ReLU layer, repeated rows"])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_parts_partition_the_set(name, k):
    Phi = np.c_[np.random.default_rng(4).normal(size=(18, 3)), np.ones(18)] if name == "random" else FAMILIES[name]
    full = enumerate_patterns(Phi)
    parts = [enumerate_patterns(Phi, part=(i, k)) for i in range(k)]
    sets = [as_set(p) for p in parts]
    assert sum(len(p) for p in parts) == len(full)
    assert set().union(*sets) == as_set(full)
    for p in parts:
        assert_valid(Phi, p)


def test_max_patterns():
    rng = np.random.default_rng(8)
    Phi = np.c_[rng.normal(size=(20, 2)), np.ones(20)]
    N = cover(20, 3)
    assert len(enumerate_patterns(Phi, max_patterns=N)) == N
    with pytest.raises(ProblemTooLargeError, match=str(N)):
        enumerate_patterns(Phi, max_patterns=N - 1)
    # degenerate: the Cover bound exceeds the limit but the exact count does not
    G = FAMILIES["grid 4x3"]
    exact = count_patterns(G, method="exact").count
    assert cover(12, 3) > exact
    assert len(enumerate_patterns(G, max_patterns=exact)) == exact


def test_count_patterns_methods():
    G = FAMILIES["grid 4x3"]
    b = count_patterns(G, method="bound")
    assert isinstance(b, PatternCount) and not b.exact and b.count == cover(12, 3)
    e = count_patterns(G)
    assert e.exact and e.method == "deletion-restriction" and e.count < b.count
    rng = np.random.default_rng(2)
    c = count_patterns(np.c_[rng.normal(size=(9, 2)), np.ones(9)])
    assert c.method == "cover" and c.exact and c.n_hyperplanes == 9


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("bad,match", [
    (np.array([[1.0, np.nan], [0.0, 1.0]]), "Phi.*NaN"),
    (np.array([[1.0, np.inf], [0.0, 1.0]]), "Phi.*inf"),
    (np.ones(3), "Phi.*2-D"),
    (np.ones((2, 2, 2)), "Phi.*2-D"),
    (np.zeros((0, 3)), "Phi.*row"),
    (np.zeros((3, 0)), "Phi.*column"),
    ([["a", "b"]], "Phi"),
])
def test_bad_phi(bad, match):
    for f in (enumerate_patterns, count_patterns):
        with pytest.raises(InputError, match=match):
            f(bad)
    with pytest.raises(InputError, match=match):
        check_completeness(bad, np.zeros((1, 2), bool), np.zeros((1, 2)))


def test_bad_arguments():
    Phi = np.c_[np.eye(3), np.ones(3)]
    with pytest.raises(InputError, match="max_patterns"):
        enumerate_patterns(Phi, max_patterns=0)
    with pytest.raises(InputError, match="part"):
        enumerate_patterns(Phi, part=(2, 2))
    with pytest.raises(InputError, match="method"):
        count_patterns(Phi, method="fast")
    with pytest.raises(InputError, match="masks"):
        check_completeness(Phi, np.zeros((2, 5), bool), np.zeros((2, 4)))
    with pytest.raises(InputError, match="masks"):
        check_completeness(Phi, np.full((2, 3), 2), np.zeros((2, 4)))
    with pytest.raises(InputError, match="witnesses"):
        check_completeness(Phi, np.zeros((2, 3), bool), np.zeros((2, 3)))
    with pytest.raises(InputError, match="witnesses"):
        check_completeness(Phi, np.zeros((2, 3), bool), np.zeros((3, 4)))
    with pytest.raises(InputError, match="witnesses"):
        check_completeness(Phi, np.zeros((1, 3), bool), np.full((1, 4), np.nan))


# ----------------------------------------------------------------------------- heavier oracles
@pytest.mark.slow
@pytest.mark.parametrize("n,m", [(200, 3), (100, 4), (40, 5), (30, 6)])
def test_benchmark_sizes_are_complete(n, m):
    rng = np.random.default_rng(n + m)
    Phi = np.c_[rng.normal(size=(n, m - 1)), np.ones(n)]
    ps = enumerate_patterns(Phi)
    assert len(ps) == cover(n, m)
    rep = check_completeness(Phi, ps.masks, ps.witnesses)
    assert rep.ok


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_bigger_degenerate_sets_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    Phi = np.c_[rng.integers(-2, 3, size=(13, 3)), np.ones(13)]
    ps = enumerate_patterns(Phi)
    assert as_set(ps) == brute_force_patterns(Phi)
    rep = check_completeness(Phi, ps.masks, ps.witnesses)
    assert rep.ok and rep.method == "deletion-restriction"


@pytest.mark.slow
def test_large_grid_deletion_restriction_agrees():
    Phi = _grid2(14, 14)
    ps = enumerate_patterns(Phi)
    rep = check_completeness(Phi, ps.masks, ps.witnesses)
    assert rep.ok and rep.method == "deletion-restriction"


def test_relu_layer_wider_than_input_has_rounding_thin_chambers():
    # pre-activations of rank 3 in 5 columns: after rounding, the all-positive rows are
    # dependent only to within 1e-16, so a few exact chambers are ~1e-16 thin: no float64
    # witness exists, they get exact integer witnesses (tests/test_patterns_exact_witness.py)
    rng = np.random.default_rng(183)
    n, m = int(rng.integers(3, 16)), int(rng.integers(2, 7))
    H = np.maximum(rng.normal(size=(n, 3)) @ rng.normal(size=(3, m - 1)), 0)
    Phi = np.c_[np.r_[H, H[:2]], np.ones(n + 2)]
    ps = enumerate_patterns(Phi)
    exact = count_patterns(Phi, method="exact")
    assert exact.method == "deletion-restriction" and len(ps) == exact.count == len(as_set(ps))
    assert ps.uncertified.size == 0 and 0 < len(ps.exact_witnesses) < 10
    thin = np.array(sorted(ps.exact_witnesses))
    assert not any(exact_witness_ok(Phi, ps.masks[[k]], ps.witnesses[[k]]) for k in thin)
    F = [[Fraction(float(a)) for a in row] for row in Phi]  # exact witnesses checked in rationals
    for k in thin:
        vals = [sum(a * b for a, b in zip(row, ps.exact_witnesses[k])) for row in F]
        assert all(v != 0 and (v > 0) == s for v, s in zip(vals, ps.masks[k]))
    good = np.setdiff1d(np.arange(len(ps)), thin)
    assert exact_witness_ok(Phi, ps.masks[good[::7]], ps.witnesses[good[::7]])
    rep = check_completeness(Phi, ps.masks, ps.witnesses)
    assert not rep.ok and "witness" in rep.reason
    rep = check_completeness(Phi, ps.masks, ps.witnesses, exact_witnesses=ps.exact_witnesses)
    assert rep.ok and rep.n_exact_witnesses == thin.size


@pytest.mark.slow
def test_perturbed_10x10_grid_counts_exactly():
    # 10 collinear points per grid line, moved by 1e-12: general position (Cover count),
    # but a few chambers are ~1e-17 thin: their patterns are exact, their witnesses exact integers
    P = _grid2(10, 10)
    P[:, :-1] += 1e-12 * np.random.default_rng(0).normal(size=P[:, :-1].shape)
    ps = enumerate_patterns(P)
    assert len(ps) == len(as_set(ps)) == cover(100, 3)
    assert ps.uncertified.size == 0 and 0 < len(ps.exact_witnesses) <= 10
    rep = check_completeness(P, ps.masks, ps.witnesses, exact_witnesses=ps.exact_witnesses)
    assert rep.ok and rep.method == "cover" and rep.expected == cover(100, 3)
    good = np.setdiff1d(np.arange(len(ps)), sorted(ps.exact_witnesses))
    rep2 = check_completeness(P, ps.masks[good], ps.witnesses[good])
    assert not rep2.ok and "arrangement has" in rep2.reason  # all others certify; only the count is short
