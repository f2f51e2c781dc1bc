"""Every method of :mod:`solvers` through ONE common suite, against the exact
brute-force face enumeration of ``_cone_reference`` (all row subsets)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import solvers
from solvers import ConeEigProblem, Status
from _cone_reference import (degenerate_instances, gating_instance, integer_instance, marginal_instance,
                             realistic_instance, reference)

def _tiered(cases: list[tuple], fast: int) -> list:
    """The first ``fast`` cases in the default run, the rest in CI's slow oracle tier."""
    return [c if k < fast else pytest.param(*c, marks=pytest.mark.slow) for k, c in enumerate(cases)]


# small dimensions first: they run by default, every backend; larger ones in the slow tier
GATING = _tiered([(seed, m) for m in range(2, 7) for seed in range(4)], 8)
REALISTIC = _tiered([(seed, m, K) for m in (3, 4, 5) for seed, K in ((0, 1), (1, 2), (2, 3))], 3)
MARGINAL = _tiered([(seed, m, seed % 2 == 0) for m in (3, 4, 5) for seed in range(3)], 3)
DEGENERATE = {name: (A, B, G) for name, A, B, G in degenerate_instances()}


@functools.lru_cache(maxsize=None)
def _case(kind: str, *key):
    if kind == "gating":
        seed, m = key
        A, B, G = gating_instance(seed, 9, m)
    elif kind == "realistic":
        seed, m, K = key
        A, B, G = realistic_instance(100 + seed, 10, m, K)
    elif kind == "marginal":
        seed, m, all_active = key
        A, B, G = marginal_instance(300 + seed, 10, m, 2, all_active)
    elif kind == "integer":
        A, B, G = integer_instance(key[0])
    else:
        A, B, G = DEGENERATE[key[0]]
    return (A, B, G), reference(A, B, G)


def _tol(v: float) -> float:
    return 1e-9 * max(1.0, abs(v))


class ConeEigCommonTests:
    """The suite every method passes; subclasses set ``method`` and ``exact``."""

    method: str = ""
    exact: bool = False  # exact to 1e-9 on every bounded feasible instance

    def _check(self, kind, *key):
        (A, B, G), ref = _case(kind, *key)
        P = ConeEigProblem(A, B, G)
        res = solvers.solve(P, self.method)
        assert res.method == self.method
        assert res.seconds >= 0
        if ref.status == "infeasible":
            assert res.status is Status.INFEASIBLE
            assert res.x is None and res.lower == -np.inf
            return res
        if ref.status == "unbounded":
            assert res.status is Status.UNBOUNDED
            assert res.upper == np.inf and res.lower == np.inf
            d = res.certificate["ray"]
            assert P.violation(d) <= 1e-9
            assert np.linalg.norm(B @ d) <= 1e-8 and d @ A @ d > 1e-8
            return res
        assert res.status in (Status.EXACT, Status.BOUNDED)
        # lower <= exact <= upper, always
        assert res.lower <= ref.value + _tol(ref.value)
        assert res.upper >= ref.value - 1e-12 * max(1.0, abs(ref.value))
        if res.x is not None:
            assert res.verify(P)
            np.testing.assert_allclose(P.quotient(res.x), res.lower, rtol=1e-12, atol=1e-14)
            assert P.violation(res.x) <= 1e-12  # polished: feasible to rounding
        if self.exact:
            assert res.status is Status.EXACT, res.message
            assert abs(res.lower - ref.value) <= _tol(ref.value)
            assert res.upper - ref.value <= _tol(ref.value)
        if res.status is Status.EXACT:
            assert res.is_exact() and res.gap() <= 2 * _tol(ref.value)
        return res

    @pytest.mark.parametrize("seed,m", GATING)
    def test_random_gating_cones(self, seed, m):
        self._check("gating", seed, m)

    @pytest.mark.parametrize("seed,m,K", REALISTIC)
    def test_realistic_family(self, seed, m, K):
        self._check("realistic", seed, m, K)

    @pytest.mark.parametrize("seed,m,all_active", MARGINAL)
    def test_marginal_gain_family(self, seed, m, all_active):
        """Prop 4.5 pencils over the bias feature; all-active patterns have singular B."""
        self._check("marginal", seed, m, all_active)

    @pytest.mark.parametrize("name", sorted(DEGENERATE))
    def test_degenerate_cones(self, name):
        self._check("degenerate", name)

    @pytest.mark.parametrize("seed", [s if s < 8 else pytest.param(s, marks=pytest.mark.slow) for s in range(36)])
    def test_integer_degenerate_cones(self, seed):
        self._check("integer", seed)

    @pytest.mark.parametrize("sa,sb", [(1e-6, 1e6), (1e8, 1.0), (1e-10, 1e-10)])
    def test_extreme_scaling(self, sa, sb):
        """Tolerances are relative to the value scale max|A| / max|B|, not absolute."""
        for key in ((0, 4), (1, 4), (2, 5)):
            (A, B, G), ref = _case("gating", *key)
            r = solvers.solve(ConeEigProblem(sa * A, sb * B, G), self.method)
            v = ref.value * sa / sb
            assert r.lower <= v * (1 + 1e-9) and r.upper >= v * (1 - 1e-12)
            if self.exact:
                assert r.status is Status.EXACT and abs(r.lower - v) <= 1e-9 * v
            if r.status is Status.EXACT:
                assert r.gap() <= 2e-9 * v

    def test_scaling_invariance(self):
        """Scaling A scales the value; scaling rows of G or x changes nothing."""
        (A, B, G), ref = _case("gating", 1, 4)
        r0 = solvers.solve(ConeEigProblem(A, B, G), self.method)
        r1 = solvers.solve(ConeEigProblem(3.0 * A, B, G * np.arange(1, G.shape[0] + 1)[:, None]), self.method)
        assert r1.lower <= 3 * ref.value + 3 * _tol(ref.value) and r1.upper >= 3 * ref.value - 1e-9
        if self.exact:
            np.testing.assert_allclose(r1.lower, 3 * r0.lower, rtol=1e-9)


class TestSpectral(ConeEigCommonTests):
    method = "spectral"

    def test_exact_when_top_eigenvector_inside(self):
        # the cone x_0 >= 0 contains +-v for every eigenvector: always realizable
        A = np.diag([3.0, 1.0, 2.0])
        r = solvers.solve(ConeEigProblem(A, np.eye(3), [[1.0, 0, 0]]), "spectral")
        assert r.status is Status.EXACT and abs(r.lower - 3.0) <= 1e-12

    def test_eigenspace_not_just_basis_vectors(self):
        # top eigenspace span(e0, e1); the cone only holds e0 + e1 directions
        G = np.array([[1.0, -1, 0], [-1, 1, 0], [1, 1, 0]])
        r = solvers.solve(ConeEigProblem(np.diag([2.0, 2, 1]), np.eye(3), G), "spectral")
        assert r.status is Status.EXACT and abs(r.lower - 2.0) <= 1e-12
        assert r.certificate["realized"]


class TestFaces(ConeEigCommonTests):
    method = "faces"
    exact = True

    @pytest.mark.parametrize("seed", range(3))
    def test_face_filter_off_agrees(self, seed):
        A, B, G = realistic_instance(200 + seed, 60, 5, 3)
        a = solvers.solve(ConeEigProblem(A, B, G), "faces")
        b = solvers.solve(ConeEigProblem(A, B, G), "faces", face_filter=False)
        assert a.status is Status.EXACT and b.status is Status.EXACT
        assert abs(a.lower - b.lower) <= _tol(a.lower)

    def test_budget_gives_valid_bounds(self):
        A, B, G = gating_instance(5, 9, 6)
        ref = reference(A, B, G)
        r = solvers.solve(ConeEigProblem(A, B, G), "faces", max_flats=1)
        assert r.lower <= ref.value + _tol(ref.value) <= r.upper + 2 * _tol(ref.value)

    @pytest.mark.parametrize("method", ["faces", "auto"])
    def test_time_budget_gives_valid_bounds(self, method):
        """``max_seconds=0``: the enumeration stops after its first level, BOUNDED, and the bounds
        still hold the exact value (the reference); an ample budget changes nothing."""
        A, B, G = gating_instance(5, 9, 6)
        ref = reference(A, B, G)
        full = solvers.solve(ConeEigProblem(A, B, G), "faces")
        r = solvers.solve(ConeEigProblem(A, B, G), method, max_seconds=0.0)
        assert r.status is Status.BOUNDED and (method == "auto" or "time budget" in r.message)
        assert r.lower <= ref.value + _tol(ref.value) <= r.upper + 2 * _tol(ref.value)
        ample = solvers.solve(ConeEigProblem(A, B, G), "faces", max_seconds=1e6)
        assert ample.status is full.status and ample.lower == full.lower and ample.upper == full.upper


class TestDnn(ConeEigCommonTests):
    method = "dnn"

    def test_dual_bound_valid_for_any_nonnegative_N(self):
        from solvers.methods.dnn import dual_bound

        (A, B, G), ref = _case("gating", 2, 4)
        P = ConeEigProblem(A, B, G)
        red = solvers._core.prepare(P).red
        rng = np.random.default_rng(0)
        f = red.H.shape[0]
        for _ in range(20):
            N = rng.exponential(size=(f, f)) * (rng.random((f, f)) < 0.5)
            assert dual_bound(red.Q.T @ A @ red.Q, red.Q.T @ B @ red.Q, red.H, N) >= ref.value - 1e-9
        # a negative N is clipped, never trusted
        assert dual_bound(red.Q.T @ A @ red.Q, red.Q.T @ B @ red.Q, red.H, -np.ones((f, f))) >= ref.value - 1e-9

    def test_scs_selectable(self):
        (A, B, G), ref = _case("gating", 0, 3)
        r = solvers.solve(ConeEigProblem(A, B, G), "dnn", solver="SCS")
        assert r.certificate["solver"] == "SCS"
        assert r.lower <= ref.value + _tol(ref.value) and r.upper >= ref.value - 1e-12

    def test_ecos_rejected(self):
        with pytest.raises(solvers.ProblemError, match="ECOS"):
            solvers.solve(ConeEigProblem(np.eye(2), np.eye(2), np.eye(2)), "dnn", solver="ECOS")


class TestAuto(ConeEigCommonTests):
    method = "auto"
    exact = True

    def test_steps_recorded(self):
        (A, B, G), _ = _case("gating", 3, 5)
        r = solvers.solve(ConeEigProblem(A, B, G), "auto")
        assert r.certificate["steps"][0]["method"] == "spectral"
