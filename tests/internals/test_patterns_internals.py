"""Tests of the private machinery of relu_gating.patterns: exact predicates, raw sweep
witnesses (no LP repair needed), the LP repair of witnesses."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from _patterns_reference import exact_witness_ok
from relu_gating.patterns import enumerate_patterns
from test_patterns import FAMILIES


# ----------------------------------------------------------------------------- internals
@pytest.mark.parametrize("name", list(FAMILIES))
def test_raw_sweep_witnesses_certify_without_repair(name):
    from relu_gating.patterns._enumerate import _top_level
    from relu_gating.patterns._rowspace import reduce_rows
    from relu_gating.patterns._sink import Sink
    from relu_gating.patterns._witness import float_certified

    Phi = FAMILIES[name]
    red = reduce_rows(Phi)
    sink = Sink(1, np.packbits(red.cls >= 0), red.m)  # from one row: the growth path too
    mirrored, rest = _top_level(red, (0, 1), False, None, sink)
    nzbits = np.packbits(np.any(Phi != 0, axis=1))[None, :]
    for s, k in mirrored + rest:
        assert float_certified(Phi, sink.packed[s:s + k], sink.W[s:s + k]).all()
    for s, k in mirrored:  # the mirrored half: complement on nonzero rows, -W
        assert float_certified(Phi, sink.packed[s:s + k] ^ nzbits, -sink.W[s:s + k]).all()


def test_witness_repair_by_lp():
    from relu_gating.patterns._witness import check_witnesses

    Phi = FAMILIES["grid 4x3"]
    ps = enumerate_patterns(Phi)
    W = ps.witnesses.copy()
    W[:5] = 0.0  # not witnesses any more; the LP finds max-margin ones
    W2, ok, n_exact = check_witnesses(Phi, ps.packed, W, repair=True)
    assert ok.all() and n_exact == 0
    assert exact_witness_ok(Phi, ps.masks, W2)
    _, ok2, _ = check_witnesses(Phi, ps.packed, W, repair=False)
    assert not ok2[:5].any() and ok2[5:].all()


def _fraction_det(M) -> int:
    from fractions import Fraction

    A = [[Fraction(int(v)) for v in row] for row in M]
    n, det = len(A), Fraction(1)
    for c in range(n):
        p = next((i for i in range(c, n) if A[i][c] != 0), None)
        if p is None:
            return 0
        if p != c:
            A[c], A[p] = A[p], A[c]
            det = -det
        det *= A[c][c]
        for i in range(c + 1, n):
            f = A[i][c] / A[c][c]
            A[i] = [a - f * b for a, b in zip(A[i], A[c])]
    return int(det)


def test_exact_predicates_against_fractions():
    from relu_gating.patterns._exact import cross_int, cross_stack, det_int, kernel_basis_int, rank_int

    rng = np.random.default_rng(9)
    for k in range(1, 6):
        R = rng.integers(-50, 51, size=(k, k + 1))
        X, P = cross_stack(R[None].astype(float))
        Xi = cross_int(R.tolist())
        np.testing.assert_array_equal(X[0], np.array(Xi, float))
        assert np.all(np.abs(Xi) <= P[0])
        x = rng.integers(-50, 51, size=k + 1)
        full = np.r_[x[None], R].tolist()
        assert det_int(full) == _fraction_det(full)
        assert sum(int(a) * b for a, b in zip(x, Xi)) == det_int(full)
        B = kernel_basis_int(R[:1].tolist() if k > 1 else R.tolist())
        for b in B:
            assert sum(int(a) * c for a, c in zip(R[0], b)) == 0
    assert rank_int([[1, 2, 3], [2, 4, 6], [0, 0, 1]]) == (2, [0, 2])


@settings(derandomize=True, deadline=None, max_examples=60)
@given(q=st.integers(1, 14), t=st.integers(1, 5), cap=st.integers(1, 40), data=st.data())
def test_subset_batches_list_every_subset_once_in_order(q, t, cap, data):
    from itertools import combinations

    from relu_gating.patterns import _subsets

    t = min(t, q)
    firsts = sorted(data.draw(st.sets(st.integers(0, q - t), max_size=q)))
    saved = _subsets.BATCH_RAYS
    _subsets.BATCH_RAYS = cap
    try:
        blocks = list(_subsets.batches(q, t, firsts))
    finally:
        _subsets.BATCH_RAYS = saved
    got = [tuple(r) for b in blocks for r in b.tolist()]
    assert got == [c for c in combinations(range(q), t) if c[0] in firsts]
    assert all(0 < b.shape[0] <= cap for b in blocks)


@settings(derandomize=True, deadline=None, max_examples=60)
@given(sizes=st.lists(st.integers(0, 9), max_size=8), guess=st.integers(-5, 5), rest=st.integers(0, 4),
       hint=st.integers(1, 90), seed=st.integers(0, 99))
def test_sink_places_the_complements_whatever_the_guess(sizes, guess, rest, hint, seed):
    # the mirrored half is written early at a guessed offset; too small, too large or right,
    # rows [L, 2L) end up the complements of [0, L) and the rest follows intact
    from relu_gating.patterns._sink import Sink, assemble

    rng = np.random.default_rng(seed)
    flip = np.array([0b11110110, 0b10000000], dtype=np.uint8)  # 9 rows, one of them zero
    L = sum(sizes)
    sink = Sink(hint, flip, 2, mirror_at=max(L + guess, 0) if guess > -5 else None)
    blocks, notes = [], []
    for k in sizes:
        pk = rng.integers(0, 256, size=(k, 2), dtype=np.uint8) & flip
        blocks.append(sink.put(pk, rng.normal(size=(k, 2)), mirror=True))
        notes.append((0, {}, np.zeros(0, dtype=np.int64)))
    first = (sink.packed[:L].copy(), sink.W[:L].copy())
    sink.skip_to(2 * L)
    sink.complements(L)
    child = rng.integers(0, 256, size=(rest, 2), dtype=np.uint8) & flip
    tail = [sink.put(child, np.ones((rest, 2)))]
    packed, W, _, bad, _ = assemble(sink, blocks, tail, notes + [(0, {}, np.zeros(0, dtype=np.int64))])
    assert packed.shape == (2 * L + rest, 2) and bad.size == 0
    assert np.array_equal(packed[:L], first[0]) and np.array_equal(W[:L], first[1])
    assert np.array_equal(packed[L:2 * L], first[0] ^ flip) and np.array_equal(W[L:2 * L], -first[1])
    assert np.array_equal(packed[2 * L:], child) and np.all(W[2 * L:] == 1.0)


def test_sink_asks_for_less_when_a_reservation_is_refused(monkeypatch):
    # an address-space limit refuses Cover's bound up front: the sink starts smaller and grows,
    # and the enumeration is the same
    from relu_gating.patterns import _enumerate, _sink

    Phi = np.c_[np.random.default_rng(2).normal(size=(30, 2)), np.ones(30)]
    want = enumerate_patterns(Phi)
    hint = len(want)  # general position: Cover's bound is the count
    real, refused = np.empty, []

    def empty(shape, dtype=float):
        if isinstance(shape, tuple) and shape[0] >= hint // 2:  # the first reservations only
            refused.append(shape)
            raise MemoryError
        return real(shape, dtype=dtype)

    class Refusing(_sink.Sink):
        def __init__(self, *a, **k):
            monkeypatch.setattr(_sink.np, "empty", empty)
            try:
                super().__init__(*a, **k)
            finally:
                monkeypatch.setattr(_sink.np, "empty", real)

    monkeypatch.setattr(_sink, "MIN_ROWS", 64)
    monkeypatch.setattr(_enumerate, "Sink", Refusing)
    got = enumerate_patterns(Phi)
    assert refused and np.array_equal(got.packed, want.packed) and np.array_equal(got.witnesses, want.witnesses)
