"""The checker's own basis of nearly dependent features (issue 37, ``checker/_orth.py``): its proven
``eta_H``, ``d_M`` and ``sigma_H`` against exact projectors in rationals, and its allowance, which never
becomes nan (``0 x`` an unproven norm)."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

from _exact_reference import exact_projector, exact_psd, spectral_norm_at_most
from relu_gating.checker import _orth, state_problem


def _features(seed: int, E: int, q: int) -> np.ndarray:
    """``H = [1, 1 + 2^-E r, ...]``: ``q`` columns, exact rank ``q``, condition about ``2^E``."""
    rng = np.random.default_rng([seed, E, q])
    n = 9
    cols = [np.ones(n)]
    for _ in range(q - 1):
        r = rng.integers(-3, 4, size=n).astype(float)
        r[len(cols)] = len(cols)  # independent of the earlier columns exactly
        cols.append(cols[-1] + 2.0**-E * r)
    return np.column_stack(cols)


@pytest.mark.parametrize("q", [2, 3])
@pytest.mark.parametrize("E", [20, 30, 40, 52])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_checker_proves_a_tiny_eta_on_nearly_dependent_features(seed, E, q):
    """``eta_H`` below 1e-12 whatever ``E``, and it bounds ``||Q_H Q_H^T - Pi_H||_2`` exactly (not vacuously);
    ``d_M`` bounds ``||M - (I - Pi_H) U_K||_2`` exactly; ``sigma_H <= sigma_min(H_s)`` exactly."""
    H = _features(seed, E, q)
    n = H.shape[0]
    rng = np.random.default_rng(seed)
    U = np.linalg.qr(rng.normal(size=(n, 2)))[0]
    Phi = np.c_[rng.normal(size=(n, 2)), np.ones(n)]
    P = state_problem(Phi, U, H)
    assert P.QH.shape == (n, q) and P.eta_H < 1e-12
    Pi = exact_projector(H)
    Q = [[Fraction(x) for x in row] for row in P.QH.tolist()]
    D = [[sum((Q[i][k] * Q[j][k] for k in range(q)), Fraction(0)) - Pi[i][j] for j in range(n)] for i in range(n)]
    assert spectral_norm_at_most(D, P.eta_H)
    assert not spectral_norm_at_most(D, P.eta_H / 1e6)  # the bound is not vacuous: the gap is of its order
    Uf = [[Fraction(x) for x in row] for row in U.tolist()]
    ME = [[Fraction(P.M[i, k]) - Uf[i][k] + sum((Pi[i][j] * Uf[j][k] for j in range(n)), Fraction(0)) for k in range(2)]
          for i in range(n)]
    assert spectral_norm_at_most([[sum((ME[i][k] * ME[j][k] for k in range(2)), Fraction(0)) for j in range(n)]
                          for i in range(n)], P.d_M**2)
    Hs = [[Fraction(x) for x in row] for row in P.Hs.tolist()]
    s2 = Fraction(P.sigma_H) ** 2
    assert exact_psd([[sum((h[a] * h[b] for h in Hs), Fraction(0)) - (s2 if a == b else 0) for b in range(q)]
                      for a in range(q)])


def test_the_exact_basis_spans_h_and_is_orthogonal():
    """The integer columns of :func:`_orth.exact_orthogonal`: pairwise orthogonal, and each column of ``H``
    is in their span and each of theirs in ``H``'s (ranks decided in rationals)."""
    H = _features(3, 52, 3)
    W = _orth.exact_orthogonal(H)
    assert W is not None and len(W) == 3
    assert all(sum(a * b for a, b in zip(W[i], W[j])) == 0 for i in range(3) for j in range(i))
    Hf = [[Fraction(x) for x in col] for col in H.T.tolist()]
    for h in Hf:  # h - sum_j (h.w_j / w_j.w_j) w_j = 0 exactly
        r = list(h)
        for w in W:
            f = sum(x * y for x, y in zip(h, w)) / sum(y * y for y in w)
            r = [x - f * y for x, y in zip(r, w)]
        assert not any(r)


def test_past_its_work_limit_the_svd_basis_stays(monkeypatch):
    """Beyond :data:`_orth.ORTH_WORK` no exact basis is built: the SVD's ``eta_H`` (large or unproven) stays,
    and the allowance built on it is ``inf``, never nan, also at a claim of 0 (``0 x inf`` is 0 there)."""
    H = _features(0, 52, 2)
    n = H.shape[0]
    rng = np.random.default_rng(5)
    U = np.linalg.qr(rng.normal(size=(n, 1)))[0]
    Phi = np.c_[rng.normal(size=(n, 2)), np.ones(n)]
    monkeypatch.setattr(_orth, "ORTH_WORK", 0)
    P = state_problem(Phi, U, H)
    assert not P.eta_H < 1e-6
    P = type(P)(**{**P.__dict__, "eta_H": np.inf, "d_M": np.inf})  # unproven: the case of the warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = P.basis_allowance(np.array([0.0, 0.5, np.inf]))
        one = P.basis_allowance(0.0)
    assert np.all(got == np.inf) and float(one) == np.inf


def test_a_zero_factor_times_an_unproven_norm_is_zero():
    """The products of :meth:`StatedProblem.basis_allowance`: ``0 x inf = 0`` (a norm finite but unbounded
    here, times 0), ``a x inf = inf`` for ``a > 0``, finite products as they are; never a warning."""
    from relu_gating.checker._problem import _times

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _times(np.array([0.0, 2.0, 3.0]), np.inf)
        fin = _times(np.array([0.0, 2.0]), 0.25)
    assert got.tolist() == [0.0, np.inf, np.inf] and fin.tolist() == [0.0, 0.5]
