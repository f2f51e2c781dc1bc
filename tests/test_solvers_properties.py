"""Properties of the cone eigenvalue methods that must hold for all inputs
(hypothesis, derandomized), and slower brute-force comparisons."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import solvers
from solvers import ConeEigProblem, Status
from _cone_reference import gating_cone, gating_instance, integer_instance, random_psd, realistic_instance, reference


def _tol(v):
    return 1e-9 * max(1.0, abs(v))


@st.composite
def problems(draw):
    seed = draw(st.integers(0, 2**31 - 1))
    m = draw(st.integers(2, 5))
    n = draw(st.integers(1, 8))
    rankA = draw(st.integers(1, m))
    singular = draw(st.booleans())
    rng = np.random.default_rng(seed)
    if singular:
        # ker B inside ker A, as for gating pencils, exactly: small integer factors (a float
        # product M M^T of Gaussians is singular only to rounding; read as the exact rationals
        # it is, B is then nonsingular, and most often indefinite: no finite exact optimum)
        M = rng.integers(-3, 4, size=(m, m - 1)).astype(float)
        Ai = rng.integers(-3, 4, size=(m, rankA)).astype(float)
        B = M @ M.T
        A = B @ (Ai @ Ai.T) @ B
    else:
        A = random_psd(rng, m, rankA)
        B = random_psd(rng, m, m)
    G = gating_cone(rng, n, m)
    if draw(st.booleans()):
        G = np.vstack([G, G[:1], 2 * G[-1:]])  # duplicate / parallel rows (2 g: exactly parallel)
    return A, B, G


@pytest.mark.slow
@settings(derandomize=True, deadline=None, max_examples=60)
@given(problems())
def test_faces_equals_brute_force(prob):
    A, B, G = prob
    ref = reference(A, B, G)
    r = solvers.solve(ConeEigProblem(A, B, G), "faces")
    assert r.status.value == ref.status
    if ref.status == "exact":
        assert abs(r.lower - ref.value) <= _tol(ref.value) and r.upper >= ref.value - 1e-12


@settings(derandomize=True, deadline=None, max_examples=40)
@given(problems())
def test_bounds_are_ordered(prob):
    """spectral.lower <= faces value <= spectral.upper, and faces lower <= upper."""
    A, B, G = prob
    P = ConeEigProblem(A, B, G)
    f = solvers.solve(P, "faces")
    s = solvers.solve(P, "spectral")
    if f.status is Status.EXACT:
        assert s.lower <= f.lower + _tol(f.lower) and f.upper <= s.upper + _tol(f.upper)
        assert f.lower <= f.upper


@settings(derandomize=True, deadline=None, max_examples=30)
@given(seed=st.integers(0, 10_000), m=st.integers(2, 5))
def test_adding_a_row_never_increases_the_maximum(seed, m):
    A, B, G = gating_instance(seed, 8, m)
    rng = np.random.default_rng(seed + 1)
    g = rng.standard_normal(m)
    r1 = solvers.solve(ConeEigProblem(A, B, G), "faces")
    r2 = solvers.solve(ConeEigProblem(A, B, np.vstack([G, g])), "faces")
    if r2.status is Status.EXACT:
        assert r2.lower <= r1.lower + _tol(r1.lower)


@settings(derandomize=True, deadline=None, max_examples=30)
@given(seed=st.integers(0, 10_000), m=st.integers(2, 5))
def test_invariant_under_change_of_variables(seed, m):
    """x = T y: (T^T A T, T^T B T, G T) has the same maximum."""
    A, B, G = gating_instance(seed, 8, m)
    T = np.random.default_rng(seed).standard_normal((m, m)) + 3 * np.eye(m)
    r1 = solvers.solve(ConeEigProblem(A, B, G), "faces")
    r2 = solvers.solve(ConeEigProblem(T.T @ A @ T, T.T @ B @ T, G @ T), "faces")
    assert abs(r1.lower - r2.lower) <= 1e-7 * max(1.0, abs(r1.lower))


@pytest.mark.slow
@pytest.mark.parametrize("seed,n,m", [(s, n, m) for s in range(3) for n, m in ((16, 4), (14, 5), (12, 6))])
@pytest.mark.parametrize("method", ["faces", "auto"])
def test_brute_force_more_rows(seed, n, m, method):
    for A, B, G in (gating_instance(50 + seed, n, m), realistic_instance(60 + seed, n, m, 2)):
        ref = reference(A, B, G)
        r = solvers.solve(ConeEigProblem(A, B, G), method)
        assert r.status.value == ref.status
        if ref.status == "exact":
            assert abs(r.lower - ref.value) <= _tol(ref.value)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_dnn_bounds_at_m8(seed):
    """Above the faces range: dnn bounds bracket the faces answer, auto stays exact."""
    A, B, G = realistic_instance(70 + seed, 60, 8, 3)
    P = ConeEigProblem(A, B, G)
    f = solvers.solve(P, "faces")
    d = solvers.solve(P, "dnn")
    a = solvers.solve(P, "auto")
    assert f.status is Status.EXACT and a.status is Status.EXACT
    assert d.lower <= f.lower + _tol(f.lower) and d.upper >= f.lower - 1e-12
    assert abs(a.lower - f.lower) <= _tol(f.lower)


@pytest.mark.slow
@pytest.mark.parametrize("face_filter", [True, False])
def test_integer_cones_many(face_filter):
    """300 degenerate {-1, 0, 1} cones: faces (with and without the face filter) agrees with
    the exact reference, or returns a weaker status that is still valid.

    INFEASIBLE / UNBOUNDED are decided exactly: they must match.  On a bounded problem faces
    is EXACT (its value the exact optimum) or, where the verified path cannot decide that a
    top eigenspace plus ``ker B`` misses the cone (it never decides "outside" in floats),
    BOUNDED, saying why: then ``lower`` must be attained by its witness and ``upper`` must
    bound the exact optimum.  Either way ``lower`` is the quotient of a feasible witness.
    """
    bounded = []
    for seed in range(300):
        A, B, G = integer_instance(seed)
        ref = reference(A, B, G)
        P = ConeEigProblem(A, B, G)
        r = solvers.solve(P, "faces", face_filter=face_filter)
        if ref.status != "exact":
            assert r.status.value == ref.status, seed
            continue
        assert r.status in (Status.EXACT, Status.BOUNDED), (seed, r.status)
        assert r.verify(P), seed
        assert r.lower <= ref.value + _tol(ref.value) and r.upper >= ref.value - _tol(ref.value), seed
        if r.status is Status.EXACT:
            assert abs(r.lower - ref.value) <= _tol(ref.value), seed
        else:
            assert r.message and r.certificate.get("fragile"), seed
            bounded.append(seed)
    # the known weaker answer (seed 241: the top eigenvector is outside the cone, ker B lies in
    # the cone's lineality space); a new one is worth a look, not a silent pass
    assert set(bounded) <= {241}, bounded


@settings(derandomize=True, deadline=None, max_examples=80)
@given(seed=st.integers(0, 2**31 - 1), p=st.integers(1, 3), rank=st.integers(0, 3),
       repeat=st.booleans(), scale=st.sampled_from([1e-150, 1e-8, 1.0, 1e8, 1e150]))
def test_closed_form_top_eigenvalue_matches_eigvalsh(seed, p, rank, repeat, scale):
    """solvers.sym_eigmax_small (the bound pass's estimate) against LAPACK, on PSD stacks with
    repeated, zero and widely scaled eigenvalues."""
    rng = np.random.default_rng(seed)
    k = 64
    Q = np.linalg.qr(rng.normal(size=(k, p, p)))[0]
    w = np.sort(rng.uniform(0, 1, size=(k, p)), axis=1) * scale
    w[:, : max(0, p - rank)] = 0.0  # rank-deficient
    if repeat and p > 1:
        w[:, -2] = w[:, -1]  # a double top eigenvalue: the cubic's hardest case
    G = np.einsum("kij,kj,klj->kil", Q, w, Q)
    G = 0.5 * (G + np.transpose(G, (0, 2, 1)))
    est = solvers.sym_eigmax_small(np.ascontiguousarray(np.transpose(G, (1, 2, 0))))
    ref = np.linalg.eigvalsh(G)[:, -1]
    norm = np.abs(w).max(axis=1)
    assert np.all(np.abs(est - ref) <= 1e-7 * norm + 1e-300)


def test_closed_form_top_eigenvalue_refuses_larger_orders():
    assert solvers.sym_eigmax_small(np.zeros((4, 4, 3))) is None
