"""Dual multipliers polished at a face supremum (``relu_gating.search._exact.dual_polish``).

Reference problems with the supremum on a face of ``{G x >= 0}``, their exact multipliers known in
closed form; the solver's ``N`` is simulated by the exact one perturbed at 1e-8, as an interior
point method returns it.  The polished ``N`` must recover the exact one to rounding, and the slack
at ``lam + 2^-40`` must be PSD in exact rationals (where the perturbed one is not).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from relu_gating.search._exact.dual_polish import polish
from _exact_reference import exact_psd as _psd



def _slack_exact(u, A, B, G, N):
    """``u B - A - G^T N G`` in rationals (floats taken as the rationals they are)."""
    F = lambda X: [[Fraction(float(x)) for x in row] for row in np.atleast_2d(X)]  # noqa: E731
    A, B, G, N = F(A), F(B), F(G), F(N)
    U = Fraction(float(u))
    r, p = len(A), len(G)
    D = [[sum(G[a][i] * N[a][b] * G[b][j] for a in range(p) for b in range(p)) for j in range(r)] for i in range(r)]
    return [[U * B[i][j] - A[i][j] - D[i][j] for j in range(r)] for i in range(r)]


@pytest.mark.parametrize("q", [0.3, 0.125, 0.7])
def test_orthant_corner(q):
    """``max x^T A x / x^T x`` on ``x >= 0`` with ``A = [[1, -q], [-q, 1/2]]``: the top eigenvector has
    mixed signs, the supremum is 1 at ``e_1`` (a face: ``x_2 = 0``), and ``N_12 = q`` exactly."""
    A = np.array([[1.0, -q], [-q, 0.5]])
    B, G = np.eye(2), np.eye(2)
    N0 = np.array([[0.0, q + 1e-5], [q + 1e-5, 0.0]])  # off by 1e-5: its slack is indefinite by 1e-10
    lam, N = polish(A, B, G, N0, 1.0 + 1e-5)
    assert abs(lam - 1.0) <= 4e-16 and abs(N[0, 1] - q) <= 4e-16 * q and N[0, 1] == N[1, 0]
    u = 1.0 + 2.0**-40
    assert _psd(_slack_exact(u, A, B, G, N))
    assert not _psd(_slack_exact(u, A, B, G, N0))  # the solver's multipliers do not prove it


@pytest.mark.parametrize("seed", range(8))
def test_sector_face_from_the_solvers_multipliers(seed):
    """A sector of the plane (two rows, plus a redundant third) and a random pencil: where the
    supremum is on a boundary ray (the top eigenvector outside the sector), the solver's
    (``solvers.cone_dual``) multipliers polished there give ``lam`` equal to the ray's value (exact
    reference: the ray's Rayleigh quotient in rationals) and prove ``lam + 2^-40`` exactly."""
    import solvers

    rng = np.random.default_rng([6, seed])
    a, b = sorted(rng.uniform(0, np.pi, 2))
    n1 = np.array([-np.sin(a), np.cos(a)])  # x . n1 >= 0: angle >= a
    n2 = np.array([np.sin(b), -np.cos(b)])  # x . n2 >= 0: angle <= b
    G = np.vstack([n1, n2, n1 + n2])
    A = rng.standard_normal((2, 2))
    A = A + A.T
    B = np.eye(2) + 0.3 * np.diag(rng.uniform(0, 1, 2))
    rays = [np.array([np.cos(t), np.sin(t)]) for t in (a, b)]
    F = lambda x: Fraction(float(x))  # noqa: E731
    def value(x):
        xs = [F(v) for v in x]
        num = sum(xs[i] * F(A[i, j]) * xs[j] for i in range(2) for j in range(2))
        return num / sum(xs[i] * F(B[i, j]) * xs[j] for i in range(2) for j in range(2))
    import scipy.linalg

    w, V = scipy.linalg.eigh(A, B)
    top = V[:, -1]
    inside = any(np.all(G @ (sg * top) >= 0) for sg in (1.0, -1.0))
    ray = max(float(value(r)) for r in rays)
    sup = float(w[-1]) if inside else ray
    dual = solvers.cone_dual(A, B, G)
    got = polish(A, B, G, dual.N, float(dual.upper))
    assert got is not None
    lam, N = got
    assert np.all(N >= 0) and np.array_equal(N, N.T)
    assert abs(lam - sup) <= 1e-14 * max(1.0, abs(sup)), (lam, sup, inside)
    assert _psd(_slack_exact(lam + 2.0**-40 * max(1.0, abs(lam)), A, B, G, N))
    if not inside:  # a boundary supremum, the ray's value exactly to rounding
        assert lam >= ray - 1e-15
