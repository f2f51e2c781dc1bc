"""Complementary pairs in the bound pass (relu_gating.search._kernels.mirror).

Oracles: exactly rounded sums (``math.fsum``) of the selected rows of ``V`` for the masked
products; the partition of the pattern indices for the chunks; the values of sampled neurons
grouped by pattern for the bounds of paired chunks (as for the unpaired pass in
test_bound_kernel.py).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from relu_gating.patterns import enumerate_patterns
from relu_gating.search._kernels import bound as kernel
from relu_gating.search._kernels.mirror import MIRROR_ERR, chunk_rows, mirror_products, paired, take_rows
from relu_gating.search.objectives import make_objective, neuron_values, with_rank
from relu_gating.search._exact.tasks import chunk_bounds

from _instances import random_basis
from test_bound_kernel import _data, _sampled_best


@settings(derandomize=True, deadline=None, max_examples=60)
@given(N=st.integers(0, 400), frac=st.floats(0, 0.5), chunk=st.integers(1, 70))
def test_chunks_partition_the_patterns_and_pair_complements(N, frac, chunk):
    L = int(frac * N)
    rows = chunk_rows(N, L, chunk)
    allrows = np.concatenate([r for r, _ in rows]) if rows else np.zeros(0, int)
    assert np.array_equal(np.sort(allrows), np.arange(N))
    for r, pair in rows:
        assert r.size <= max(chunk, 1)
        if pair:
            h = r.size // 2
            assert np.array_equal(r[h:], r[:h] + L) and r[h - 1] < L
        else:
            assert np.array_equal(r, np.arange(r[0], r[0] + r.size))


@settings(derandomize=True, deadline=None, max_examples=60)
@given(N=st.integers(1, 300), frac=st.floats(0, 0.5), chunk=st.integers(1, 70), seed=st.integers(0, 99))
def test_take_rows_is_the_gather(N, frac, chunk, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 256, size=(N, 3), dtype=np.uint8)
    for r, _ in chunk_rows(N, int(frac * N), chunk):
        got = take_rows(a, r)
        assert np.array_equal(got, a[r]) and not np.shares_memory(got, a)
    perm = np.arange(N)
    perm[[0, -1]] = perm[[-1, 0]]  # the ends of a run, not a run
    for r in (rng.permutation(N)[: max(N // 3, 1)], np.r_[0:N:2], perm, np.zeros(0, dtype=np.int64)):
        assert np.array_equal(take_rows(a, r), a[r])  # not runs: the plain gather


def _obj(kind: str, features: str, n: int, d: int, seed: int, zero_row: bool):
    Phi = _data(kind, n, d, seed)
    if features == "none":
        Phi = Phi[:, :-1]  # no bias column: a zero row is possible
    if zero_row:
        Phi[n // 2] = 0.0
    ps = enumerate_patterns(Phi)
    H = None if features == "none" else "bias"
    return with_rank(make_objective(Phi, random_basis(n, 3, seed), H), ps.rank), ps


@settings(derandomize=True, deadline=None, max_examples=25)
@given(kind=st.sampled_from(["gauss", "duplicates", "translated", "rescaled"]),
       features=st.sampled_from(["none", "bias"]), n=st.integers(6, 14), d=st.integers(1, 3),
       seed=st.integers(0, 10_000), zero_row=st.booleans())
def test_paired_products_are_within_the_wider_allowance_of_the_exact_sums(kind, features, n, d, seed, zero_row):
    obj, ps = _obj(kind, features, n, d, seed, zero_row and features == "none")
    plan = kernel.make_plan(obj)
    masks = ps.masks
    assert ps.n_mirrored > 0
    for rows, pair in chunk_rows(len(ps), ps.n_mirrored, 16):
        if not pair:
            continue
        for m, packed in ((masks[rows], False), (ps.packed[rows], True)):
            got = mirror_products(plan, obj.Phi, m, packed, kernel.products)
            assert got is not None  # the enumeration's pairs are complements on the nonzero rows
            P, wide = got
            assert np.array_equal(wide.err, MIRROR_ERR * plan.err)
            exact = np.array([[math.fsum(plan.V[masks[i], c]) for i in rows] for c in range(plan.V.shape[1])])
            assert np.all(np.abs(P - exact) <= wide.err[:, None] + 1e-16 * np.abs(exact))


def test_a_chunk_that_is_not_paired_gets_the_plain_product():
    obj, ps = _obj("gauss", "bias", 12, 2, 3, False)
    plan = kernel.make_plan(obj)
    m = ps.masks[:8]  # consecutive patterns: not complements
    assert not paired(m, False, np.ones(12, bool)) and mirror_products(plan, obj.Phi, m, False, kernel.products) is None
    out = chunk_bounds(obj, np.arange(8), m, ps.witnesses[:8], 1e-9, mirrored=True)
    ref = chunk_bounds(obj, np.arange(8), m, ps.witnesses[:8], 1e-9)
    np.testing.assert_array_equal(out.upper, ref.upper)


@settings(derandomize=True, deadline=None, max_examples=25)
@given(kind=st.sampled_from(["gauss", "duplicates", "translated", "rescaled"]),
       features=st.sampled_from(["none", "bias"]), n=st.integers(6, 14), d=st.integers(1, 3),
       seed=st.integers(0, 10_000))
def test_bounds_of_paired_chunks_dominate_sampled_neurons(kind, features, n, d, seed):
    obj, ps = _obj(kind, features, n, d, seed, False)
    masks = ps.masks
    thetas = np.random.default_rng(seed).normal(size=(3000, obj.Phi.shape[1]))
    best = _sampled_best(obj, masks, np.vstack([thetas, ps.witnesses]))
    for rows, pair in chunk_rows(len(ps), ps.n_mirrored, 32):
        out = chunk_bounds(obj, rows, masks[rows], ps.witnesses[rows], 1e-9, mirrored=pair)
        assert np.all(out.upper >= best[rows] - 1e-12 * (1 + np.abs(best[rows])))
        ok = np.isfinite(out.lower)
        np.testing.assert_allclose(out.lower[ok], neuron_values(obj, out.thetas[ok]), rtol=1e-7, atol=1e-9)
