"""LP realizability and cone utilities of :mod:`solvers`, and the LP backend chain."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import solvers
from solvers import _lp
from _cone_reference import gating_cone


def _facets_by_lp(G):
    """Oracle: row i is a facet iff min g_i x over the other rows (and g_i x >= -1) is < 0,
    keeping one row per group of positively parallel rows."""
    Gn = G / np.linalg.norm(G, axis=1)[:, None]
    out = []
    for i in range(len(G)):
        if any(np.allclose(Gn[i], Gn[j], atol=1e-10) for j in out):
            continue
        others = [j for j in range(len(G)) if not np.allclose(Gn[j], Gn[i], atol=1e-10)]
        A_ub = -np.vstack([Gn[others], Gn[i]])
        b_ub = np.r_[np.zeros(len(others)), 1.0]
        res = linprog(Gn[i], A_ub=A_ub, b_ub=b_ub, bounds=[(None, None)] * G.shape[1], method="highs")
        assert res.status == 0
        if res.fun < -0.5:
            out.append(i)
    return out


@pytest.mark.parametrize("seed,n,m", [(s, n, m) for s in range(3) for n, m in ((12, 3), (30, 4), (40, 5), (25, 6))])
def test_facet_rows_match_lp_oracle(seed, n, m):
    G = gating_cone(np.random.default_rng(seed), n, m)
    got = solvers.facet_rows(G)
    want = _facets_by_lp(G)
    assert sorted(got.tolist()) == sorted(want)


@settings(derandomize=True, deadline=None, max_examples=25)
@given(seed=st.integers(0, 10_000), m=st.integers(2, 5), extra=st.integers(1, 6))
def test_facets_unchanged_by_redundant_rows(seed, m, extra):
    """Adding positive combinations of rows never adds a facet."""
    rng = np.random.default_rng(seed)
    G = gating_cone(rng, 10, m)
    W = rng.exponential(size=(extra, G.shape[0])) * (rng.random((extra, G.shape[0])) < 0.5)
    W[:, 0] += 1.0
    G2 = np.vstack([G, W @ G])
    a = solvers.facet_rows(G)
    b = solvers.facet_rows(G2)
    Gn = lambda M: M / np.linalg.norm(M, axis=1)[:, None]  # noqa: E731
    np.testing.assert_allclose(np.sort(Gn(G[a]), axis=0), np.sort(Gn(G2[b]), axis=0), atol=1e-9)


def test_interior_point_full_dimensional():
    G = gating_cone(np.random.default_rng(1), 20, 4)
    ip = solvers.interior_point(G)
    assert ip.margin > 0 and ip.dim == 4 and ip.implicit_equalities.size == 0 and ip.certified
    Gn = G / np.linalg.norm(G, axis=1)[:, None]
    np.testing.assert_allclose((Gn @ ip.x).min(), ip.margin, atol=1e-9)
    assert np.all(G @ ip.relative_x > 0)


def test_interior_point_lower_dimensional():
    G = gating_cone(np.random.default_rng(2), 10, 4)
    G = np.vstack([G, G[3], -G[3], -2 * G[3]])
    ip = solvers.interior_point(G)
    assert ip.margin <= 1e-9 and ip.dim == 3 and ip.certified
    assert set(ip.implicit_equalities.tolist()) == {3, 10, 11, 12}
    rest = np.setdiff1d(np.arange(len(G)), ip.implicit_equalities)
    assert np.all(G[rest] @ ip.relative_x > 0)
    assert np.abs(G[ip.implicit_equalities] @ ip.relative_x).max() <= 1e-12


def test_interior_point_thin_is_not_lower_dimensional():
    """Issue 23: a wedge 2^-45 wide is full-dimensional, exactly; a float LP may call its rows
    implicit equalities, the answer must not (only exact positive dependences count)."""
    w = 2.0 ** -45
    G = np.array([[0.0, 1.0, 0.0], [w, -1.0, 0.0], [0.0, 0.0, 1.0], [w, 0.0, -1.0]])
    ip = solvers.interior_point(G)
    assert ip.dim == 3 and ip.implicit_equalities.size == 0
    G2 = np.vstack([G, [0.0, -1.0, 0.0]])  # x_1 = 0 exactly: rows 0 and 4 are implicit equalities
    ip2 = solvers.interior_point(G2)
    assert ip2.dim == 2 and set(ip2.implicit_equalities.tolist()) == {0, 4} and ip2.certified


def test_realizable_feasible_and_infeasible():
    # theta with Phi_A theta = v, Phi_B theta <= 0
    Phi_A = np.array([[1.0, 0.0, 1.0]])
    Phi_B = np.array([[0.0, 1.0, 1.0], [0.0, -1.0, 1.0]])
    r = solvers.realizable(Phi_A, [2.0], Phi_B)
    assert r.feasible and r.residual <= 1e-9 and r.backend == "highs"
    np.testing.assert_allclose(Phi_A @ r.x, [2.0], atol=1e-9)
    assert np.all(Phi_B @ r.x <= 1e-9)
    # with margin 1: x1 + x2 <= -1 and -x1 + x2 <= -1 are jointly feasible
    assert solvers.realizable(np.zeros((0, 3)), None, Phi_B, margin=1.0).feasible
    # x0 = 1 and x0 <= -1: infeasible
    bad = solvers.realizable([[1.0, 0, 0]], [1.0], [[1.0, 0, 0]], margin=1.0)
    assert not bad.feasible and bad.x is None
    # the other sense
    assert solvers.realizable([[1.0, 0, 0]], [1.0], [[1.0, 0, 0]], sense=">=", margin=1.0).feasible


@pytest.mark.parametrize("kwargs,name", [
    (dict(A_eq=np.ones(3)), "A_eq"),
    (dict(A_eq=np.ones((1, 3)), b_eq=[1.0, 2.0]), "b_eq"),
    (dict(A_eq=np.ones((1, 3)), A_in=np.ones((2, 2))), "A_in"),
    (dict(A_eq=np.ones((1, 3)), sense="<"), "sense"),
    (dict(A_eq=np.ones((1, 3)), margin=-1.0), "margin"),
])
def test_realizable_validation(kwargs, name):
    with pytest.raises(solvers.ProblemError, match=name):
        solvers.realizable(**kwargs)


def test_backend_failure_falls_back_and_is_recorded(monkeypatch):
    def broken(*args):
        raise RuntimeError("simulated HiGHS crash")

    monkeypatch.setitem(_lp._RUNNERS, "highs", broken)
    r = solvers.realizable([[1.0, 1.0]], [1.0], [[1.0, -1.0]])
    assert r.feasible and r.backend == "scipy"
    assert any("simulated HiGHS crash" in f for f in r.failures)


def test_optimal_but_violating_answer_is_downgraded(monkeypatch):
    monkeypatch.setitem(_lp._RUNNERS, "highs", lambda c, A, rl, ru, cl, cu: ("optimal", np.full(A.shape[1], 1e3)))
    sol = _lp.solve_lp(np.zeros(2), np.eye(2), np.zeros(2), np.zeros(2), np.full(2, -np.inf), np.full(2, np.inf))
    assert sol.status == "optimal" and sol.backend == "scipy"
    assert "violates" in sol.failures[0]


def test_every_backend_failing_raises(monkeypatch):
    for name in _lp.LP_BACKENDS:
        monkeypatch.setitem(_lp._RUNNERS, name, lambda *a: ("error:simulated", None))
    with pytest.raises(solvers.BackendError, match="simulated"):
        solvers.realizable([[1.0, 1.0]], [1.0])


@pytest.mark.parametrize("backend", _lp.LP_BACKENDS)
def test_each_backend_decides_the_same(backend):
    rng = np.random.default_rng(4)
    G = gating_cone(rng, 15, 3)
    for v, _want in (([1.0], True), ([-1.0], None)):
        r = solvers.realizable(G[:1], v, -G[1:], backends=(backend,))
        # G x >= 0 with g_0 x = 1 is feasible (the cone is full-dimensional); g_0 x = -1 is not
        assert r.backend == backend
        assert r.feasible == (v[0] > 0)


def test_cone_constraints_cvxpy():
    import cvxpy as cp

    G = gating_cone(np.random.default_rng(5), 12, 3)
    x = cp.Variable(3)
    ip = solvers.interior_point(G)
    prob = cp.Problem(cp.Maximize(ip.relative_x @ x), solvers.cone_constraints(G, x) + [cp.norm(x, 2) <= 1])
    prob.solve(solver=cp.CLARABEL)
    assert prob.status == "optimal" and np.all(G @ x.value >= -1e-7)
    assert solvers.cone_constraints(np.zeros((0, 3)), x) == []


def test_lower_is_polished_to_exact_feasibility():
    """Witnesses satisfy G x >= 0 in floating point on every non-equality row."""
    from _cone_reference import gating_instance

    for seed, m in itertools.product(range(5), (3, 4, 5)):
        A, B, G = gating_instance(seed, 30, m)
        r = solvers.solve(solvers.ConeEigProblem(A, B, G), "faces")
        assert np.all(G @ r.x >= 0)


def test_all_backends_failing_gives_failed_result(monkeypatch):
    for name in _lp.LP_BACKENDS:
        monkeypatch.setitem(_lp._RUNNERS, name, lambda *a: ("error:simulated", None))
    # a lower-dimensional cone: no cheap interior point, the LP is needed
    G = np.array([[1.0, 0, 0], [-1.0, 0, 0], [0, 1.0, 0]])
    r = solvers.solve(solvers.ConeEigProblem(np.eye(3), np.eye(3), G), "faces")
    assert r.status is solvers.Status.FAILED and r.upper == np.inf and r.x is None
    assert "simulated" in r.message
