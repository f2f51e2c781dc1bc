"""The early pricing's starting columns (relu_gating.layers.variation._seed_master_chunked) and what they start.

Oracles: the dense matrix of every witness's neuron (the chunked scores, the seed LPs' stopping rule),
the LP over a dense sample of neurons (any finite atom set gives an upper end on the norm, so every
certified lower end must lie below it) and the certified enumeration search's interval.  The master's
starting size and the chunks are shrunk so that small problems take the path of large ones.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from relu_gating.layers import variation
from relu_gating.layers.variation import (_seed_master_chunked, _top_witnesses, _witness_scores, normalized_neurons,
                                          variation_norm)
from relu_gating.patterns import enumerate_patterns


def _phi(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((n, 2)) * 2.0**10) / 2.0**10  # dyadic: the cone pricing applies
    return np.c_[X, np.ones(n)]


def _lp_upper(v: np.ndarray, D: np.ndarray) -> float:
    """``min sum |a|`` s.t. ``D a = v``: an upper end on ``||v||_A`` (D's columns are atoms)."""
    J = D.shape[1]
    res = linprog(np.ones(2 * J), A_eq=np.hstack([D, -D]), b_eq=v, bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.fun)


def _oracle_upper(v: np.ndarray, Phi: np.ndarray, W: np.ndarray) -> float:
    T = np.vstack([W, np.random.default_rng(3).standard_normal((20_000, Phi.shape[1]))])
    return _lp_upper(v, normalized_neurons(Phi, T)[0])


def _dense_scores(Phi: np.ndarray, W: np.ndarray, y: np.ndarray) -> np.ndarray:
    H = np.maximum(Phi @ W.T, 0.0)
    nh = np.linalg.norm(H, axis=0)
    return np.array([abs(float(y @ H[:, j])) / nh[j] if nh[j] > 0 else 0.0 for j in range(W.shape[0])])


@pytest.mark.parametrize("chunk", [1, 7 * 24, 2**21])
def test_witness_scores_in_chunks_equal_the_dense_scores(monkeypatch, chunk):
    Phi = _phi(24, 0)
    W = np.vstack([enumerate_patterns(Phi).witnesses, [[0.0, 0.0, -1.0]]])  # the last neuron is zero
    y = np.random.default_rng(1).standard_normal(24)
    monkeypatch.setattr(variation, "_CHUNK", chunk)
    got = _witness_scores(Phi, W, y)
    assert got[-1] == 0.0
    np.testing.assert_allclose(got, _dense_scores(Phi, W, y), rtol=1e-12, atol=1e-14)
    top = _top_witnesses(Phi, W, y, 5)
    assert np.array_equal(top, W[np.argsort(-_dense_scores(Phi, W, y), kind="stable")[:5]])


@pytest.mark.parametrize("seed", [0, 1])
def test_chunked_seed_master_ends_with_no_witness_violating_its_dual(monkeypatch, seed):
    """Started from 5 aligned witnesses, its LPs add witnesses until the master's dual prices none above
    1 + tol/4 (dense oracle); every column is a witness or one of the other atoms; with no seed LP
    the columns are the aligned witnesses and the other atoms only (the earlier start)."""
    Phi = _phi(22, 20 + seed)
    W = enumerate_patterns(Phi).witnesses
    u = np.sin(3 * Phi[:, 0]) + Phi[:, 1] ** 2
    u /= np.linalg.norm(u)
    rest = np.random.default_rng(seed).standard_normal((3, 3))
    thetas = np.vstack([W, rest])
    tol = 1e-2
    monkeypatch.setattr(variation, "_MASTER_ATOMS", 5)
    monkeypatch.setattr(variation, "_SEED_ADD", 7)
    monkeypatch.setattr(variation, "_SEED_ADD_PER_ROW", 0.0)
    monkeypatch.setattr(variation, "_CHUNK", 22 * 10)
    lp, cols, D, lps = _seed_master_chunked(Phi, u, thetas, W.shape[0], tol, 1e3)
    assert 1 <= lps < variation._SEED_LPS
    _, _, y = lp.solve()
    assert _dense_scores(Phi, W, y).max() <= 1.0 + tol / 4 + 1e-9
    allowed = {tuple(t) for t in thetas.tolist()}
    assert all(tuple(t) in allowed for t in cols.tolist()) and cols.shape[0] == D.shape[1] == lp.J
    np.testing.assert_allclose(D, normalized_neurons(Phi, cols)[0])
    monkeypatch.setattr(variation, "_SEED_LPS", 0)
    _, cols0, _, lps0 = _seed_master_chunked(Phi, u, thetas, W.shape[0], tol, 1e3)
    assert lps0 == 0
    top = _top_witnesses(Phi, W, u, 5)
    assert cols0.shape[0] == 5 + 3 and np.array_equal(cols0[5:], rest)
    assert sorted(map(tuple, cols0[:5].tolist())) == sorted(map(tuple, top.tolist()))


@pytest.mark.parametrize("seed", [1, pytest.param(0, marks=pytest.mark.slow)])
def test_early_pricing_from_a_sampled_start_brackets_the_norm_every_round(monkeypatch, seed):
    """Every round's interval (on_round) and the final one hold the norm: each lower end below the LP
    over 20,000 sampled neurons and every witness, each upper end above the search's lower end; the
    final interval closes and overlaps the search's."""
    n = 20
    Phi = _phi(n, 10 + seed)
    pats = enumerate_patterns(Phi)
    rng = np.random.default_rng(seed)
    v = np.sin(2 * Phi[:, 0]) + 0.5 * np.abs(Phi[:, 1]) + 0.1 * rng.standard_normal(n)
    monkeypatch.setattr(variation, "_MASTER_ATOMS", 6)  # the seed block's own column generation runs
    monkeypatch.setattr(variation, "_CHUNK", 20 * 16)  # and prices the witnesses in chunks
    tol = 1e-3
    seen: list[tuple[int, float, float]] = []
    r = variation_norm(v, Phi, patterns=pats, tol=tol, pricing="early", max_iter=300,
                       on_round=lambda it, lo, up: seen.append((it, lo, up)))
    s = variation_norm(v, Phi, patterns=pats, tol=1e-2, pricing="search", max_iter=300)  # (slow: a looser tol)
    hi = _oracle_upper(v, Phi, pats.witnesses)
    assert r.certified and seen
    assert [it for it, _, _ in seen] == list(range(1, len(seen) + 1))
    lows = [lo for _, lo, _ in seen]
    assert lows == sorted(lows)
    for _, lo, up in [*seen, (0, r.lower, r.upper)]:
        assert lo <= hi * (1 + 1e-9)
        assert up >= s.lower * (1 - 1e-9)
    assert s.certified and r.lower <= s.upper * (1 + 1e-9) and s.lower <= r.upper * (1 + 1e-9)
    D = normalized_neurons(Phi, r.thetas)[0]
    assert np.linalg.norm(D @ r.weights - v) <= 1e-6 * np.linalg.norm(v)  # the decomposition attains upper
    assert np.abs(r.weights).sum() == pytest.approx(r.upper, rel=1e-9)
