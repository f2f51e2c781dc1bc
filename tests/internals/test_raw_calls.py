"""The forced-rows pass's unchecked calls (relu_gating/search/bnb/_raw_calls.py) give the public calls'
answers: scipy's NNLS and numpy's inverse (the oracles), on random and degenerate inputs."""

import numpy as np
import pytest
from scipy.optimize import nnls as scipy_nnls

from relu_gating.search.bnb import _raw_calls
from relu_gating.search.bnb._cone_nnls import push


def _nnls_cases(rng):
    for _ in range(300):
        m, n = int(rng.integers(2, 8)), int(rng.integers(1, 40))
        yield rng.standard_normal((m, n)), rng.standard_normal(m)
    A = rng.standard_normal((6, 10))
    yield np.hstack([A, A]), A[:, :3].sum(axis=1)  # duplicated columns, b in their cone
    yield np.hstack([A, np.zeros((6, 3))]), rng.standard_normal(6)  # zero columns
    yield A, np.zeros(6)  # b = 0
    yield -np.abs(A), np.abs(rng.standard_normal(6))  # b outside the cone: x = 0
    B = rng.standard_normal((6, 12))
    yield B.T.T[:, ::2], B[:, 0]  # a strided (not contiguous) view
    yield np.asfortranarray(B), B[:, 1] + B[:, 2]  # Fortran order


def test_nnls_is_scipys_bitwise():
    rng = np.random.default_rng(0)
    for A, b in _nnls_cases(rng):
        x0, r0 = scipy_nnls(A, b)
        x1, r1 = _raw_calls.nnls(A, b)
        assert np.array_equal(x0, x1) and r0 == r1


def test_inv_is_numpys():
    rng = np.random.default_rng(1)
    for _ in range(300):
        k = int(rng.integers(1, 8))
        A = rng.standard_normal((k, k))
        np.testing.assert_allclose(_raw_calls.inv(A), np.linalg.inv(A), rtol=1e-12, atol=1e-12)
    A = rng.standard_normal((6, 6))
    A[:, 3] = A[:, 0]  # exactly singular: both raise
    A[:, 4] = 0.0
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.inv(A)
    with pytest.raises(np.linalg.LinAlgError):
        _raw_calls.inv(A)


def test_push_with_the_centers_least_slack_given_is_the_same():
    """``b_min`` (the cone's test of its center, made once) changes nothing: usable and unusable centers."""
    rng = np.random.default_rng(2)
    for t in range(200):
        G = rng.standard_normal((int(rng.integers(0, 30)), 6))
        G /= np.linalg.norm(G, axis=1, keepdims=True) if G.size else 1.0
        c = rng.standard_normal(6)
        if t % 2 == 0 and G.shape[0]:
            G = G * np.sign(G @ c)[:, None]  # c interior
        w, g = rng.standard_normal(6), rng.standard_normal(6)
        w /= np.linalg.norm(w)
        b = G @ c
        v0 = push(G, g, w, c, b=b)
        v1 = push(G, g, w, c, b=b, b_min=float(b.min(initial=np.inf)))
        assert (v0 is None and v1 is None) or np.array_equal(v0, v1)


def test_nnls_falls_back_to_scipys_public_call(monkeypatch):
    """Without the compiled routine (another scipy), the public NNLS answers."""
    monkeypatch.setattr(_raw_calls, "_nnls_compiled", None)
    rng = np.random.default_rng(3)
    A, b = rng.standard_normal((6, 15)), rng.standard_normal(6)
    x0, r0 = scipy_nnls(A, b)
    x1, r1 = _raw_calls.nnls(A, b)
    assert np.array_equal(x0, x1) and r0 == r1
