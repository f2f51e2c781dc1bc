"""Issue 40's rate, best-layer and spectral-gap helpers, each fed an input that must fail or be refused."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from relu_gating.experiments.greedy_rate import gap_K
from tests._benchmarks import benchmark_script



def test_gap_K_skips_a_tie_and_takes_the_nearest_gap():
    tie = np.array([0.0, 8.0, 11.0, 11.0, 11.0, 11.0, 14.0])  # greedy-rate's old n = 14 spectrum: K = 3 tied
    assert gap_K([tie], 3) == 2  # K = 2 and K = 6 qualify; 2 is nearer
    assert gap_K([tie], 5) == 6
    other = np.array([0.0, 8.0, 8.2, 11.0, 12.0, 12.0, 14.0])  # K = 2 gap below 5% here: both draws must agree
    assert gap_K([tie, other], 2) == 1  # K = 1 and K = 3 are as near; K = 3 ties in the first draw
    assert gap_K([tie, other], 4) == 6


def test_gap_K_refuses_a_spectrum_without_a_gap():
    with pytest.raises(ValueError, match="no K"):
        gap_K([np.array([0.0, 0.0, 0.0, 0.0])], 2)


def test_pair_scores_equal_the_captured_coverage_recomputed():
    bl = benchmark_script("best_layer")
    rng = np.random.default_rng(1)
    n, K = 12, 3
    Phi = np.c_[rng.standard_normal((n, 2)), np.ones(n)]
    U = np.linalg.qr(rng.standard_normal((n, K)))[0]
    H0 = np.ones((n, 1))
    R, B, g, pool = bl.pool_scores(Phi, U, H0, rng.standard_normal((15, 3)))
    pairs = bl.best_pairs(R, B, g, top=200)
    assert len(pairs) == pool.shape[0] * (pool.shape[0] - 1) // 2  # every unordered pair, once
    for value, i, j in pairs:  # the formula against N_K recomputed from scratch (QR of [H0, two neurons])
        assert bl.layer_value(Phi, U, H0, pool[[i, j]]) == pytest.approx(bl.captured(H0, U) + value, abs=1e-9)
    best = max(bl.captured(np.c_[H0, np.maximum(Phi @ pool[[i, j]].T, 0)], U)
               for i, j in itertools.combinations(range(pool.shape[0]), 2))
    assert bl.captured(H0, U) + pairs[0][0] == pytest.approx(best, abs=1e-9)


def test_captured_with_a_dead_neuron_keeps_the_later_columns():
    # [1, 0, x]: an unpivoted QR dropped the zero column's direction and with it part of x (N_K 1.5, not 2)
    bl = benchmark_script("best_layer")
    x = np.arange(5.0)
    U = np.linalg.qr(np.c_[np.ones(5), x])[0]
    assert bl.captured(np.c_[np.ones(5), np.zeros(5), x], U) == pytest.approx(2.0, abs=1e-12)
    assert bl.captured(np.c_[np.ones(5), x, np.zeros(5), 2 * x], U) == pytest.approx(2.0, abs=1e-12)


def test_rate_bound_violations_are_reported():
    gr = benchmark_script("greedy_rates")
    good = {"steps": [{"t": 0, "delta": 1.0, "rate_bound": 1.0, "applies": True},
                      {"t": 1, "delta": 0.5, "rate_bound": 0.9, "s2": 0.5, "s2_bound": 20.0, "applies": True}]}
    assert gr.bound_violations(good) == []
    bad = {"steps": [{**good["steps"][0]}, {**good["steps"][1], "delta": 0.95, "s2": 30.0}]}
    assert len(gr.bound_violations(bad)) == 2
    beyond = {"steps": [{**good["steps"][0]}, {**bad["steps"][1], "applies": False}]}  # s_t < 2 eps: not claimed
    assert gr.bound_violations(beyond) == []


def test_t_interval_matches_scipy():
    from scipy import stats

    gr = benchmark_script("greedy_rates")
    v = [-1.2, -0.8, -1.1, -1.4, -0.9]
    m, lo, hi = gr.t_interval(v)
    ref = stats.t.interval(0.95, len(v) - 1, loc=np.mean(v), scale=stats.sem(v))
    assert m == pytest.approx(np.mean(v)) and (lo, hi) == pytest.approx(ref)
    assert np.isnan(gr.t_interval([-1.0])[1])


def test_explicit_pair_is_tight_on_an_atom_and_valid_off_the_span():
    gr = benchmark_script("greedy_rates")
    x = np.linspace(0.0, 1.0, 41)
    atom = np.maximum(x - 0.5, 0.0)
    u = (atom / np.linalg.norm(atom))[:, None]
    kap, eps = gr.explicit_pair(x, u, np.array([0.25, 0.5, 0.75]))
    assert eps < 1e-9 and 1.0 <= kap <= 1.0 + 1e-5  # one atom: ||u||_A = 1 exactly
    w = np.sin(7 * x)[:, None] / np.linalg.norm(np.sin(7 * x))  # not in the 7 atoms' span
    kap, eps = gr.explicit_pair(x, w, np.array([0.25, 0.5, 0.75]))
    D = np.column_stack([np.ones_like(x)] + [np.maximum(s * (x - a), 0) for a in (0.25, 0.5, 0.75) for s in (1, -1)])
    resid = np.linalg.norm(w[:, 0] - D @ np.linalg.lstsq(D, w[:, 0], rcond=None)[0])
    assert eps >= resid - 1e-12 and eps > 0.1  # eps is at least the distance to the atoms' span


def test_rem514_flags_a_fall_of_s_past_a_multiple_eta1():
    gr = benchmark_script("greedy_rates")
    ok = {"steps": [{"t": 0}, {"t": 1, "s_fell": False, "eta1_multiplicity_prev": 2},
                    {"t": 2, "s_fell": True, "eta1_multiplicity_prev": 1}]}
    assert gr.rem514_violations(ok) == []
    bad = {"steps": [{"t": 0}, {"t": 1, "s_fell": True, "eta1_multiplicity_prev": 2}]}
    assert len(gr.rem514_violations(bad)) == 1
    # the multiplicity itself: from the bias, M_H = [0, u_2, ..., u_K] has eta_1 = 1 of multiplicity K - 1
    rng = np.random.default_rng(0)
    U = np.linalg.qr(np.c_[np.ones(20), rng.standard_normal((20, 3))])[0]
    sv = gr.top_singular_values(np.ones((20, 1)), U)
    assert np.sum(sv >= sv[0] - 1e-9) == 3 and sv[-1] < 1e-12


def test_prop41_violations_are_reported():
    p41 = benchmark_script("prop41")
    rng = np.random.default_rng(2)
    n, K = 16, 3
    A = (rng.random((n, n)) < 0.4).astype(float)
    W = np.triu(A, 1) + np.triu(A, 1).T
    L = np.diag(W.sum(axis=1)) - W
    U = np.linalg.eigh(L)[1][:, :K]
    h = np.maximum(rng.standard_normal(n), 0.0)
    row = p41.limits(h, U, L)
    assert p41.violations(row) == []  # a theorem: holds on any h, U, L
    assert row["N_K"] <= row["spectral"] + 1e-12 and row["R"] >= row["lambda_min_AA"] - 1e-12
    assert len(p41.violations({**row, "N_K": row["spectral"] + 0.1, "R": row["lambda_min_AA"] - 0.1})) == 2
