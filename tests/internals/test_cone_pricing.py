"""The exact chamber-by-chamber pricing of the variation norm (relu_gating.layers._cone_pricing).

Oracles: dense sampling of neurons (every sampled |<y, d>| must lie below the certified bound), the
certified best-neuron search on the same dual (the bound must be as tight), and exact rationals for the
two-row chambers.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from relu_gating.layers._cone_pricing import ConePricer, _sqrt_up, _two_row_bound, integer_scale
from relu_gating.layers.variation import _Pricer, variation_norm
from relu_gating.errors import InputError
from relu_gating.patterns import enumerate_patterns


def _phi(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((n, 2)) * 2.0**10) / 2.0**10  # dyadic
    return np.c_[X, np.ones(n)]


def _sampled_max(Phi: np.ndarray, y: np.ndarray, seed: int = 1, count: int = 60_000) -> float:
    T = np.random.default_rng(seed).standard_normal((count, Phi.shape[1]))
    H = np.maximum(Phi @ T.T, 0.0)
    nrm = np.linalg.norm(H, axis=0)
    ok = nrm > 0
    return float(np.max(np.abs(y @ H[:, ok]) / nrm[ok]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_bound_is_above_every_sampled_neuron_and_as_tight_as_the_certified_search(seed):
    Phi = _phi(14, seed)
    pats = enumerate_patterns(Phi)
    cp = ConePricer(Phi, pats)
    y = np.random.default_rng(10 + seed).standard_normal(14)
    B, yq, thetas, exact = cp.bound(y)
    assert Fraction(B) ** 2 >= exact
    assert B >= _sampled_max(Phi, yq) * (1 - 1e-12)
    g, _ = _Pricer(Phi, pats, None).certified(yq, 1.0)  # the certified search on the same (rounded) dual
    assert B <= g * (1 + 1e-6) and B >= g * (1 - 1e-6)
    assert thetas.shape[1] == 3 and thetas.shape[0] >= 1


def test_warm_multipliers_across_rounds_keep_the_bound_valid():
    Phi = _phi(16, 3)
    cp = ConePricer(Phi, enumerate_patterns(Phi))
    rng = np.random.default_rng(4)
    y = rng.standard_normal(16)
    for _ in range(4):  # a dual that moves: the stored multipliers are reused, then re-tightened
        B, yq, _, _ = cp.bound(y)
        assert B >= _sampled_max(Phi, yq, count=30_000) * (1 - 1e-12)
        y = y + 0.3 * rng.standard_normal(16)


def test_two_row_bound_is_exact_where_b_lies_in_the_row_space():
    # rows a = (1, 0, 1), b = (0, 1, 1), and a third row c = (1, 1, 1) whose constraint (inactive side) binds
    P = [[1, 0, 1], [0, 1, 1], [1, 1, 1]]
    sg = [1, 1, -1]
    c = [3, 4, 7]  # P_S^T y_S for y_S = (3, 4)
    val = _two_row_bound(P, sg, 0, 1, c, np.zeros(3))  # mu = 0: b = c is in the row space, ||w|| = ||(3, 4)||
    assert val == Fraction(25)
    val2 = _two_row_bound(P, sg, 0, 1, c, np.array([0.0, 0.0, 2.0]))  # b = c - 2 (1, 1, 1) = (1, 2, 5): not in it
    assert val2 is None  # no row can repair this mu: refused, never a wrong bound


def test_sqrt_up_is_an_upper_root():
    for x in (Fraction(2), Fraction(1, 3), Fraction(10**30 + 7, 10**12)):
        s = _sqrt_up(x)
        assert Fraction(s) ** 2 >= x and s <= float(x) ** 0.5 * (1 + 1e-15)


def test_integer_scale_accepts_dyadic_data_only():
    assert integer_scale(np.array([[0.5, 1.0], [0.25, 1.0]])) == 2
    assert integer_scale(np.array([[0.1, 1.0]])) is None


def test_variation_norm_cone_and_search_intervals_overlap_and_cone_closes():
    Phi = _phi(12, 5)
    pats = enumerate_patterns(Phi)
    v = np.random.default_rng(6).standard_normal(12)
    rc = variation_norm(v, Phi, patterns=pats, tol=1e-3, pricing="cone")
    rs = variation_norm(v, Phi, patterns=pats, tol=1e-3, pricing="search")
    assert rc.certified and rc.lower <= rc.upper
    assert rc.lower <= rs.upper * (1 + 1e-9) and rs.lower <= rc.upper * (1 + 1e-9)
    D = np.maximum(Phi @ rc.thetas.T, 0.0)
    D = D / np.linalg.norm(D, axis=0)
    assert np.allclose(D @ rc.weights, v, atol=1e-8) and abs(np.abs(rc.weights).sum() - rc.upper) <= 1e-9 * rc.upper
    assert _sampled_max(Phi, rc.dual) <= 1 + 1e-12  # the returned dual proves the lower end


def test_cone_pricing_refuses_non_dyadic_data_and_auto_falls_back():
    Phi = np.c_[np.linspace(0.1, 0.9, 7), np.ones(7)] * (1 + 1e-12)
    v = np.maximum(Phi[:, 0] - 0.5, 0.0)
    with pytest.raises(InputError, match="pricing='cone'"):
        variation_norm(v, Phi, pricing="cone")
    assert variation_norm(v, Phi, pricing="auto").certified
    with pytest.raises(InputError, match="pricing must be"):
        variation_norm(v, Phi, pricing="fast")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_batched_multipliers_give_a_valid_bound_as_tight_as_the_certified_search(seed):
    """The vectorized active-set multipliers (ConePricer(batched=True)): the bound is above every sampled
    neuron and equal (to 1e-6) to the certified enumeration search's on the same rounded dual."""
    Phi = _phi(18, 20 + seed)
    pats = enumerate_patterns(Phi)
    rng = np.random.default_rng(30 + seed)
    y = rng.standard_normal(18)
    cp = ConePricer(Phi, pats, batched=True)
    for _ in range(3):  # a moving dual: stored multipliers reused, then replaced where the batch does better
        B, yq, _, exact = cp.bound(y)
        assert Fraction(B) ** 2 >= exact
        assert B >= _sampled_max(Phi, yq, count=30_000) * (1 - 1e-12)
        g, _ = _Pricer(Phi, pats, None).certified(yq, 1.0)
        assert g * (1 - 1e-6) <= B <= g * (1 + 1e-6)
        y = y + 0.3 * rng.standard_normal(18)


def test_batched_and_per_chamber_multipliers_give_the_same_bound():
    Phi = _phi(20, 7)
    pats = enumerate_patterns(Phi)
    y = np.random.default_rng(8).standard_normal(20)
    B1, *_ = ConePricer(Phi, pats, batched=False).bound(y)
    B2, *_ = ConePricer(Phi, pats, batched=True).bound(y)
    assert B2 == pytest.approx(B1, rel=1e-6)


def test_cheap_columns_violate_and_are_empty_when_nothing_violates():
    """ConePricer.columns (the early exit): every column it returns violates by its own neuron; scaled so
    that the certified bound is below the limit, it returns none."""
    from relu_gating.layers.variation import normalized_neurons

    Phi = _phi(16, 9)
    cp = ConePricer(Phi, enumerate_patterns(Phi))
    y = np.random.default_rng(5).standard_normal(16)
    B, yq, _, _ = cp.bound(y)
    T = cp.columns(yq, 0.9 * B)
    assert T.shape[0] >= 1
    D, keep = normalized_neurons(Phi, T)
    assert keep.size == T.shape[0] and np.all(np.abs(yq @ D) > 0.9 * B)
    assert cp.columns(yq, B * (1 + 1e-9)).shape[0] == 0


@pytest.mark.parametrize("pricing", ["batched", "early"])
def test_variation_norm_new_pricings_agree_with_the_enumeration_search(pricing):
    """Same interval (within tol) as the certified enumeration search's, and both intervals hold the
    norm: each lower end at most the other's upper end."""
    x = np.round(np.linspace(-1, 1, 13) * 2.0**8) / 2.0**8
    Phi = np.c_[x, x * x, np.ones(13)]
    v = np.sin(3 * x)
    pats = enumerate_patterns(Phi)
    tol = 1e-3
    a = variation_norm(v, Phi, patterns=pats, tol=tol, pricing="search", max_iter=300)
    b = variation_norm(v, Phi, patterns=pats, tol=tol, pricing=pricing, max_iter=300)
    assert b.certified
    assert b.lower <= a.upper * (1 + 1e-9) and a.lower <= b.upper * (1 + 1e-9)
    assert b.upper == pytest.approx(a.upper, rel=2 * tol)


def _tightened(Phi: np.ndarray, y: np.ndarray) -> tuple:
    """``(pricer, integer products c, nonsingular chambers, their estimates)`` after one vectorized
    active set from no multipliers."""
    cp = ConePricer(Phi, enumerate_patterns(Phi), batched=True)
    Y, k = cp._quantize(y)
    c, _ = cp._products(Y)
    N = cp.S.shape[0]
    mi, mv = np.zeros((N, 4), dtype=np.int64), np.zeros((N, 4))
    rows = np.flatnonzero(cp.full)
    cp._tighten_batch(rows, c, k, mi, mv, [])
    return cp, c, rows, cp._estimate(c, k, mi, mv, np.full(N, np.inf), rows)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_vectorized_active_set_reaches_each_chambers_nnls_optimum(seed):
    """ConePricer._tighten_batch (on each chamber's facet rows; chambers leave the batch once they add no
    row, and only those that dropped a negative multiplier are solved again) against scipy's NNLS per
    chamber: from no multipliers, each nonsingular chamber's ``min_{mu >= 0} (c + A^T mu)^T G^-1 (c + A^T
    mu)`` is reached (to the rounding of the stored multipliers) wherever it matters: the batch's largest
    value is the largest optimum, and no chamber is above both its optimum and that."""
    from scipy.optimize import nnls

    Phi = _phi(24, 40 + seed)
    cp, c, rows, got = _tightened(Phi, np.random.default_rng(50 + seed).standard_normal(24))
    S = cp.S.unpacked()
    best, free = np.empty(rows.size), np.empty(rows.size)
    for h, i in enumerate(rows.tolist()):
        G = cp.G[i].astype(float)
        Li = np.linalg.inv(np.linalg.cholesky(G))
        A = np.where(S[i], 1.0, -1.0)[:, None] * cp.Pf
        best[h] = nnls(Li @ A.T, -(Li @ c[i].astype(float)))[1] ** 2
        free[h] = float(c[i] @ np.linalg.solve(G, c[i].astype(float)))
    top = best.max()
    assert top <= got.max() <= top * (1 + 1e-6)
    assert np.all(got <= np.maximum(best * (1 + 1e-6) + 1e-9 * free, top * (1 + 1e-6)))
    assert np.sum(best < free * (1 - 1e-6)) > rows.size // 4  # most maxima are on a face: multipliers matter


def test_chambers_that_miss_a_facet_are_solved_on_all_rows(monkeypatch):
    """Two coincident rows: no single flip of a pattern crosses their hyperplane, so the chambers it
    bounds miss that facet; their maximizer on the facet rows violates it and they are solved again on
    all rows: no chamber ends above both what the active set on all rows reaches and the batch's largest
    value, which is the same as on all rows."""
    import relu_gating.layers._cone_pricing as cpm

    Phi = _phi(24, 42)
    Phi[1] = Phi[0]
    y = np.random.default_rng(52).standard_normal(24)
    _, _, rows, facets = _tightened(Phi, y)
    monkeypatch.setattr(cpm, "FACETS", False)
    _, c, _, every = _tightened(Phi, y)
    assert facets.max() == pytest.approx(every.max(), rel=1e-9)
    assert np.all(facets <= np.maximum(every * (1 + 1e-9) + 1e-12 * every.max(), every.max() * (1 + 1e-9)))


@pytest.mark.parametrize("coincident", [False, True])
def test_facet_rows_first_give_the_bound_of_all_rows(coincident, monkeypatch):
    """The active set on each chamber's facet rows (then on all rows where the maximizer violates one):
    the same certified bounds as on all rows over a moving dual, also with two coincident rows (whose
    hyperplane no single flip crosses); every bound as tight as the certified enumeration search's."""
    import relu_gating.layers._cone_pricing as cpm

    Phi = _phi(22, 60 + coincident)
    if coincident:
        Phi[1] = Phi[0]
    pats = enumerate_patterns(Phi)
    got = {}
    for facets in (False, True):
        monkeypatch.setattr(cpm, "FACETS", facets)
        cp, rng = ConePricer(Phi, pats), np.random.default_rng(70)
        y, out = rng.standard_normal(22), []
        for _ in range(4):
            out.append(cp.bound(y)[0])
            y = y + 0.3 * rng.standard_normal(22)
        got[facets] = out
    assert got[True] == pytest.approx(got[False], rel=1e-9)
    rng = np.random.default_rng(70)
    y = rng.standard_normal(22)
    for B in got[True]:
        Y, k = ConePricer(Phi, pats)._quantize(y)
        g, _ = _Pricer(Phi, pats, None).certified(Y / 2.0**k, 1.0)
        assert g * (1 - 1e-6) <= B <= g * (1 + 1e-6)
        y = y + 0.3 * rng.standard_normal(22)


@pytest.mark.parametrize("m", [3, 4])
def test_the_chambers_products_in_floats_are_the_exact_integers(m):
    """_products' float GEMM on halves of ``Y`` (_split_columns, _join_columns) against Python integers, at
    the ends of the ranges the pricer allows (``|Y| < 2^24``, ``|P| < 2^20``, 1,024 rows): every sum exact."""
    from relu_gating.layers._cone_pricing import _join_columns, _split_columns

    rng = np.random.default_rng(m)
    n = 1024
    P = rng.integers(-(2**20) + 1, 2**20, size=(n, m))
    P[0], P[1], P[2] = 2**20 - 1, -(2**20 - 1), 0
    Y = rng.integers(-(2**24) + 1, 2**24, size=n)
    Y[:6] = [2**24 - 1, -(2**24) + 1, 0, -1, 1, 2**12]
    S = rng.random((300, n)) < 0.5
    S[0], S[1] = True, False
    exact = S.astype(object) @ np.c_[Y[:, None] * P, np.maximum(Y, 0) ** 2, np.minimum(Y, 0) ** 2].astype(object)
    got = _join_columns(S.astype(np.float64) @ _split_columns(Y, P), m)
    assert got.dtype == np.int64 and (got.astype(object) == exact).all()


def test_packed_masks_give_the_same_multipliers():
    """Above ``DENSE_MAX`` entries the masks stay packed (n = 700 at d = 2): the facet rows, the candidate rows'
    signs (single bits read by broadcast index arrays) and the chambers' products agree with the unpacked masks."""
    Phi = _phi(24, 44)
    y = np.random.default_rng(54).standard_normal(24)
    cp, c, rows, dense = _tightened(Phi, y)
    packed_cp = ConePricer(Phi, enumerate_patterns(Phi), batched=True)
    packed_cp.S.dense = None  # as for masks above DENSE_MAX
    Y, k = packed_cp._quantize(y)
    c2, pos2 = packed_cp._products(Y)
    assert np.array_equal(c2, c)
    N = packed_cp.S.shape[0]
    mi, mv = np.zeros((N, 4), dtype=np.int64), np.zeros((N, 4))
    packed_cp._tighten_batch(rows, c2, k, mi, mv, [])
    assert np.array_equal(packed_cp._estimate(c2, k, mi, mv, np.full(N, np.inf), rows), dense)
    assert np.array_equal(packed_cp._facet_rows().indices, cp._facet_rows().indices)
