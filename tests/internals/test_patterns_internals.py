"""Tests of the private machinery of relu_gating.patterns: exact predicates, raw sweep
witnesses (no LP repair needed), the LP repair of witnesses."""

from __future__ import annotations

import numpy as np
import pytest

from _patterns_reference import exact_witness_ok
from relu_gating.patterns import enumerate_patterns
from test_patterns import FAMILIES


# ----------------------------------------------------------------------------- internals
@pytest.mark.parametrize("name", list(FAMILIES))
def test_raw_sweep_witnesses_certify_without_repair(name):
    from relu_gating.patterns._enumerate import _top_level
    from relu_gating.patterns._rowspace import reduce_rows
    from relu_gating.patterns._witness import float_certified

    Phi = FAMILIES[name]
    mirrored, rest = _top_level(reduce_rows(Phi), (0, 1), False)
    nzbits = np.packbits(np.any(Phi != 0, axis=1))[None, :]
    for pk, W in mirrored + rest:
        assert float_certified(Phi, pk, W).all()
    for pk, W in mirrored:  # the mirrored half: complement on nonzero rows, -W
        assert float_certified(Phi, pk ^ nzbits, -W).all()


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
