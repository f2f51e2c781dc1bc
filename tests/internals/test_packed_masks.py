"""The cone pricer's packed masks (``relu_gating.layers._packed_masks``) and its chunked Gram matrices.

Oracles: every read of :class:`PackedMasks` against the same indexing of the bool matrix it was packed
from (numpy's own indexing), and the Gram matrices against Python-integer sums over each chamber's rows.
"""

from __future__ import annotations

import numpy as np
import pytest

from relu_gating.layers import _cone_pricing, _packed_masks
from relu_gating.layers._packed_masks import PackedMasks
from relu_gating.patterns import enumerate_patterns
from _variation_reference import dyadic_phi


@pytest.mark.parametrize("dense_max", [0, 2**27])  # packed reads, and the small sets' unpacked copy
@pytest.mark.parametrize("n", [1, 7, 8, 13, 64, 101])
def test_every_read_agrees_with_the_bool_matrix(n, dense_max, monkeypatch):
    monkeypatch.setattr(_packed_masks, "DENSE_MAX", dense_max)
    rng = np.random.default_rng(n)
    S = rng.random((37, n)) < 0.4
    pm = PackedMasks(np.packbits(S, axis=1), n)
    assert (pm.dense is None) == (dense_max == 0)
    assert pm.shape == S.shape and len(pm) == 37
    assert np.array_equal(pm.unpacked(), S) and pm.unpacked().dtype == bool
    for k in (0, 5, 36, np.int64(11), -1):
        assert np.array_equal(pm[k], S[k])
    assert np.array_equal(pm[3:20], S[3:20]) and np.array_equal(pm[30:99], S[30:99])
    rows = rng.integers(0, 37, size=15)
    assert np.array_equal(pm[rows], S[rows])
    sel = rng.random(37) < 0.5
    assert np.array_equal(pm[sel], S[sel])
    cols = rng.integers(0, n, size=(15, 4))
    assert np.array_equal(pm[rows[:, None], cols], S[rows[:, None], cols])
    assert bool(pm[2, n - 1]) == bool(S[2, n - 1])
    assert np.array_equal(pm.sum(axis=1), S.sum(axis=1))


def test_bad_shapes_and_columns_are_refused(monkeypatch):
    monkeypatch.setattr(_packed_masks, "DENSE_MAX", 0)
    S = np.ones((3, 10), dtype=bool)
    with pytest.raises(ValueError):
        PackedMasks(np.packbits(S, axis=1)[:, :1], 10)
    pm = PackedMasks(np.packbits(S, axis=1), 10)
    with pytest.raises(IndexError):
        pm[np.array([0]), np.array([10])]  # a padding bit is not a row
    with pytest.raises(ValueError):
        pm.sum(axis=0)


def test_grams_in_chunks_are_the_exact_integer_sums(monkeypatch):
    monkeypatch.setattr(_packed_masks, "DENSE_MAX", 0)
    rng = np.random.default_rng(0)
    n, m = 300, 3
    P = rng.integers(-2**20 + 1, 2**20, size=(n, m))
    S = rng.random((2000, n)) < 0.5
    pm = PackedMasks(np.packbits(S, axis=1), n)
    G = _cone_pricing._grams(pm, P)  # 2^22 // 300 = 13,981 chambers a chunk: one chunk
    rows = rng.integers(0, 2000, size=25)
    Pl = P.tolist()
    for i in rows.tolist():  # Python integers: no int64 overflow possible in the oracle
        act = np.flatnonzero(S[i]).tolist()
        for a in range(m):
            for b in range(m):
                assert int(G[i, a, b]) == sum(Pl[r][a] * Pl[r][b] for r in act)
    monkeypatch.setattr(_cone_pricing, "_GRAM_CHUNK", 7 * n)  # chunks of 7 chambers: the same sums
    assert np.array_equal(_cone_pricing._grams(pm, P), G)


def test_the_pricer_reads_packed_masks_as_the_pattern_set():
    Phi = dyadic_phi(30, 2)
    pats = enumerate_patterns(Phi)
    cp = _cone_pricing.ConePricer(Phi, pats, batched=True)
    assert isinstance(cp.S, PackedMasks) and cp.S.packed.nbytes * 8 >= cp.S.shape[0] * cp.S.shape[1]
    assert np.array_equal(cp.S.unpacked(), pats.masks)
    assert np.array_equal(cp.n_active, pats.masks.sum(axis=1))
