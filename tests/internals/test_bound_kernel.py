"""The vectorised bound pass (relu_gating.search._kernels.bound via tasks.chunk_bounds).

Oracles: the exact per-pattern maximum over the closed cone (all faces,
tests/_search_reference.pattern_best), the values of sampled neurons grouped by
pattern (lower bounds on each pattern's maximum), scipy's generalized
eigenvalues of the accurately formed pencil (the unconstrained maximum), and
the pre-change bound (pencils by pattern_matrices, solvers.top_generalized_eig).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl
from hypothesis import given, settings
from hypothesis import strategies as st

from relu_gating.patterns import enumerate_patterns
from relu_gating.search._kernels import bound as kernel
from relu_gating.search._kernels import stacks as stacks
from relu_gating.search.objectives import (leverage_bounds, make_objective, neuron_values, pattern_matrices,
                                           single_pattern_matrices, with_rank)
from relu_gating.search.state import EXACT
from relu_gating.search._exact.tasks import chunk_bounds, solve_chunk
from solvers.batched import top_generalized_eig

from _instances import duplicated_rows, random_basis
from _search_reference import pattern_best


def _data(kind: str, n: int, d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if kind == "duplicates":
        X = duplicated_rows(n, d, max(2, n // 3), seed)
    elif kind == "collinear":
        X = np.outer(rng.normal(size=n), rng.normal(size=d)) + (1e-3 * rng.normal(size=(n, d)) if d > 1 else 0)
        X[: n // 2] = np.outer(np.linspace(-1, 1, n // 2), np.ones(d))  # exactly collinear points
    elif kind == "translated":
        X = X + 250.0
    elif kind == "rescaled":
        X = X * np.logspace(-3, 3, d)[None, :]
    return np.c_[X, np.ones(n)]


def _features(kind: str, n: int, seed: int):
    if kind == "matrix":
        return np.random.default_rng(seed + 1).normal(size=(n, 2))
    return None if kind == "none" else "bias"


def _sampled_best(obj, masks: np.ndarray, thetas: np.ndarray) -> np.ndarray:
    """Per pattern, the largest value of the sampled neurons realizing it (-inf if none)."""
    keys = {m.tobytes(): i for i, m in enumerate(masks)}
    best = np.full(masks.shape[0], -np.inf)
    vals = neuron_values(obj, thetas)
    z = thetas @ obj.Phi.T
    for t in range(thetas.shape[0]):
        i = keys.get((z[t] > 0).tobytes())
        if i is not None and np.all(z[t] != 0) and np.isfinite(vals[t]):
            best[i] = max(best[i], vals[t])
    return best


def _old_upper(obj, masks: np.ndarray) -> np.ndarray:
    """The pre-change cheap bound (without the support bound of ill-conditioned pencils)."""
    A, B = pattern_matrices(obj, masks)
    eig = top_generalized_eig(A, B)
    return np.minimum(np.minimum(leverage_bounds(obj, masks), eig.upper), obj.cap + 1e-12)


def _setup(kind, features, n, d, seed):
    Phi = _data(kind, n, d, seed)
    ps = enumerate_patterns(Phi)
    obj = with_rank(make_objective(Phi, random_basis(n, 3, seed), _features(features, n, seed)), ps.rank)
    return obj, ps


@settings(derandomize=True, deadline=None, max_examples=30)
@given(kind=st.sampled_from(["gauss", "duplicates", "collinear", "translated", "rescaled"]),
       features=st.sampled_from(["none", "bias", "matrix"]), n=st.integers(6, 14), d=st.integers(1, 3),
       seed=st.integers(0, 10_000))
def test_bound_dominates_sampled_neurons_and_stays_near_the_old_bound(kind, features, n, d, seed):
    obj, ps = _setup(kind, features, n, d, seed)
    masks = ps.masks
    out = chunk_bounds(obj, np.arange(len(ps)), masks, ps.witnesses, 1e-9)
    thetas = np.random.default_rng(seed).normal(size=(3000, obj.Phi.shape[1]))
    best = _sampled_best(obj, masks, np.vstack([thetas, ps.witnesses]))
    assert np.all(out.upper >= best - 1e-12 * (1 + np.abs(best)))
    # lower values are values of genuine neurons of the pattern
    ok = np.isfinite(out.lower)
    assert np.all(out.lower[ok] <= out.upper[ok] + 1e-9)
    recomputed = neuron_values(obj, out.thetas[ok])
    np.testing.assert_allclose(out.lower[ok], recomputed, rtol=1e-7, atol=1e-9)
    # not uselessly loose: within the power-bound factor of the pre-change bound
    old = _old_upper(obj, masks)
    fin = np.isfinite(old)
    assert np.all(out.upper[fin] <= old[fin] * 1.03 + 1e-9)


@pytest.mark.parametrize("features", ["none", "bias"])
def test_bound_dominates_the_unconstrained_maximum(features):
    obj, ps = _setup("gauss", features, 40, 3, 4)
    masks = ps.masks
    out = chunk_bounds(obj, np.arange(len(ps)), masks, ps.witnesses, 1e-9)
    for i in range(0, len(ps), 97):
        A, B, _ = single_pattern_matrices(obj, masks[i])
        w = np.linalg.eigvalsh(B)
        if w[0] <= 1e-6 * w[-1]:
            continue
        top = sl.eigh(A, B, eigvals_only=True)[-1]
        assert out.upper[i] >= top * (1 - 1e-12) - 1e-15
        assert out.upper[i] <= max(top * 1.03, 1e-9) or np.isclose(out.upper[i], obj.cap + 1e-12)


def test_packed_masks_give_the_same_outcome():
    obj, ps = _setup("gauss", "bias", 30, 3, 1)
    idx = np.arange(len(ps))
    a = chunk_bounds(obj, idx, ps.masks, ps.witnesses, 1e-9)
    b = chunk_bounds(obj, idx, ps.packed, ps.witnesses, 1e-9)
    np.testing.assert_array_equal(a.upper, b.upper)
    np.testing.assert_array_equal(a.status, b.status)
    np.testing.assert_array_equal(np.isnan(a.lower), np.isnan(b.lower))
    assert a.method == b.method


def test_packed_single_sample():
    masks, packed = kernel.unpacked(np.array([[128], [0]], dtype=np.uint8), 1)
    assert packed and kernel.rows_bool(masks, packed, 1).tolist() == [[True], [False]]
    masks, packed = kernel.unpacked(np.array([[1], [0]], dtype=np.uint8), 1)
    assert not packed and masks.tolist() == [[True], [False]]


def test_certify_accepts_above_and_rejects_below_the_top_eigenvalue():
    rng = np.random.default_rng(3)
    k, r = 200, 4
    C = rng.normal(size=(4, r, k))
    Y = rng.normal(size=(r, r, k))
    A = np.einsum("abk,ack->bck", C, C)
    B = np.einsum("abk,ack->bck", Y, Y) + 0.1 * np.eye(r)[:, :, None]
    top = np.array([sl.eigh(A[:, :, j], B[:, :, j], eigvals_only=True)[-1] for j in range(k)])
    zero = np.zeros(k)
    assert kernel.certify(A, B, zero, zero, top * (1 + 1e-6)).all()
    assert not kernel.certify(A, B, zero, zero, top * (1 - 1e-6)).any()
    # an error allowance on B of the size of its smallest eigenvalue makes any bound uncertifiable
    wmin = np.array([np.linalg.eigvalsh(B[:, :, j])[0] for j in range(k)])
    assert not kernel.certify(A, B, zero, 1.01 * wmin, top * 1e3).any()


def test_tight_bounds_settle_attained_patterns_exactly():
    obj, ps = _setup("gauss", "bias", 20, 3, 7)
    out = chunk_bounds(obj, np.arange(len(ps)), ps.masks, ps.witnesses, 1e-9)
    ex = np.flatnonzero(out.status == EXACT)
    assert ex.size >= 3
    for i in ex[:3]:
        assert out.upper[i] - out.lower[i] <= 0.5e-9
        assert out.lower[i] == pytest.approx(pattern_best(obj.Phi, obj.U_K, ps.masks[i], np.ones((20, 1))), abs=1e-8)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gauss", "duplicates", "collinear", "translated", "rescaled"])
@pytest.mark.parametrize("features", ["none", "bias"])
def test_bound_dominates_the_exact_pattern_maximum(kind, features):
    n, d = 12, 2
    obj, ps = _setup(kind, features, n, d, 11)
    out = chunk_bounds(obj, np.arange(len(ps)), ps.masks, ps.witnesses, 1e-9)
    # the exact per-pattern solver: its value is that of a genuine neuron of the pattern
    exact = solve_chunk(obj, np.arange(len(ps)), ps.masks, "auto", ps.witnesses)
    assert np.sum(np.isfinite(exact.lower)) >= len(ps) // 2
    ok = np.isfinite(exact.lower)
    np.testing.assert_allclose(neuron_values(obj, exact.thetas[ok]), exact.lower[ok], rtol=1e-7, atol=1e-9)
    # the exact optimum lies on walls: its theta is realized only up to rounding (a row at 1e-12
    # instead of 0), and its value carries that rounding
    assert np.all(out.upper[ok] >= exact.lower[ok] - 1e-10)


def _old_bound_pass():
    """The pre-change bound pass, kept as the baseline of benchmarks/bound_pass.py."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "bound_pass.py"
    spec = importlib.util.spec_from_file_location("_bound_pass_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.old_chunk_bounds


@pytest.mark.parametrize("n,d,features", [(14, 2, "bias"), (12, 2, None),
                                          pytest.param(24, 2, "bias", marks=pytest.mark.slow),
                                          pytest.param(14, 3, "bias", marks=pytest.mark.slow),
                                          pytest.param(12, 3, "matrix", marks=pytest.mark.slow)])
def test_same_answer_as_the_old_bound_pass(monkeypatch, n, d, features):
    from relu_gating import best_neuron
    from relu_gating.search._enum import memory as front  # the in-memory driver

    rng = np.random.default_rng(n + d)
    Phi = np.c_[rng.normal(size=(n, d)), np.ones(n)]
    U = random_basis(n, 4, n)
    H = rng.normal(size=(n, 2)) if features == "matrix" else features
    new = best_neuron(Phi, U, features=H, chunk_size=64)
    monkeypatch.setattr(front, "chunk_bounds", _old_bound_pass())
    old = best_neuron(Phi, U, features=H, chunk_size=64)
    assert new.certified and old.certified
    assert new.value == pytest.approx(old.value, abs=1e-9)
    assert new.n_patterns == old.n_patterns
    ok = np.isfinite(new.lowers)
    assert np.all(new.bounds[ok] >= new.lowers[ok] - 1e-9)


@settings(derandomize=True, deadline=None, max_examples=20)
@given(kind=st.sampled_from(["gauss", "duplicates", "translated", "rescaled"]),
       features=st.sampled_from(["none", "bias", "matrix"]), n=st.integers(8, 16), d=st.integers(1, 3),
       seed=st.integers(0, 10_000), raise_by=st.sampled_from([0.0, 0.5, np.inf]))
def test_an_incumbent_only_skips_work_never_validity(kind, features, n, d, seed, raise_by):
    """chunk_bounds(..., incumbent): the pilot's value (attained, at most the optimum), or one
    wrongly above it, leaves every bound an upper bound and every value a genuine neuron's."""
    from relu_gating.search._exact.pilot import pilot_value

    obj, ps = _setup(kind, features, n, d, seed)
    inc = pilot_value(obj, seed=seed) + raise_by
    out = chunk_bounds(obj, np.arange(len(ps)), ps.packed, ps.witnesses, 1e-9, inc)
    thetas = np.random.default_rng(seed).normal(size=(3000, obj.Phi.shape[1]))
    best = _sampled_best(obj, ps.masks, np.vstack([thetas, ps.witnesses]))
    assert np.all(out.upper >= best - 1e-12 * (1 + np.abs(best)))
    ok = np.isfinite(out.lower)
    np.testing.assert_allclose(out.lower[ok], neuron_values(obj, out.thetas[ok]), rtol=1e-7, atol=1e-9)
    settled = out.status == EXACT
    assert np.all(out.upper[settled] - out.lower[settled] <= 0.5e-9)


@pytest.mark.parametrize("n,d,features", [(30, 2, "bias"), (16, 3, None), (14, 3, "matrix")])
@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_pilot_value_is_attained_and_the_answer_unchanged(monkeypatch, n, d, features):
    """The pilot's value never exceeds the certified optimum, and the query's answer is the same
    with the pilot switched off."""
    from relu_gating import best_neuron
    from relu_gating.search._enum import memory as front  # the in-memory driver
    from relu_gating.search._exact.pilot import pilot_value

    rng = np.random.default_rng(n * d)
    Phi = np.c_[rng.normal(size=(n, d)), np.ones(n)]
    U = random_basis(n, 4, n)
    H = rng.normal(size=(n, 2)) if features == "matrix" else features
    res = best_neuron(Phi, U, features=H, chunk_size=64)
    pv = pilot_value(make_objective(Phi, U, H))
    assert res.certified and np.isfinite(pv) and pv <= res.value + 1e-12
    monkeypatch.setattr(front, "pilot_value", lambda obj: -np.inf)
    off = best_neuron(Phi, U, features=H, chunk_size=64)
    assert off.certified and off.value == pytest.approx(res.value, abs=1e-9)


@pytest.mark.parametrize("kind,features", [("gauss", "bias"), pytest.param("translated", "none", marks=pytest.mark.slow),
                                           pytest.param("rescaled", "matrix", marks=pytest.mark.slow)])
@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_the_cut_bound_is_a_certified_bound_and_only_where_it_holds(kind, features):
    """pencil_bounds(..., cut): a pattern gets the bound ``cut`` only when its unconstrained
    maximum (scipy's generalized eigenvalues of the accurately formed pencil) is at most ``cut``;
    every pattern whose maximum exceeds ``cut`` keeps its own estimate (above ``cut``); the
    others' bounds are unchanged (to rounding) by the cut where it does not certify."""
    obj, ps = _setup(kind, features, 40, 3, 7)
    plan = kernel.make_plan(obj)
    free = kernel.pencil_bounds(obj, plan, ps.packed, True)
    tops = np.full(len(ps), np.nan)
    for i in range(len(ps)):
        A, B, _ = single_pattern_matrices(obj, ps.masks[i])
        w = np.linalg.eigvalsh(B)
        if w[0] > 1e-6 * w[-1]:
            tops[i] = sl.eigh(A, B, eigvals_only=True)[-1]
    ok = np.isfinite(tops)
    cut = float(np.quantile(tops[ok], 0.7))
    pb = kernel.pencil_bounds(obj, plan, ps.packed, True, cut)
    at_cut = pb.upper == cut
    assert 0.5 < np.mean(at_cut[ok]) <= 0.7 + 1e-9  # most of those below the cut, none above it
    assert np.all(tops[ok & at_cut] <= cut)
    assert np.all(pb.upper[ok] >= tops[ok] * (1 - 1e-12) - 1e-15)
    np.testing.assert_allclose(pb.upper[~at_cut], free.upper[~at_cut], rtol=1e-12)  # subsets: ulps apart
    np.testing.assert_array_equal(pb.reliable, pb.reliable | at_cut)


@pytest.mark.parametrize("kind,features", [("gauss", "bias"), pytest.param("translated", "none", marks=pytest.mark.slow)])
@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_the_query_with_the_cut_is_the_query_without_it(monkeypatch, kind, features):
    """Chunks large enough for the cut (more than ALL_ATTAINED_WORK pattern-samples): the same
    certified answer with and without it, every pattern cut is pruned, and the certificate
    verifies from the stated problem."""
    from relu_gating import best_neuron, verify
    from relu_gating.search._exact import tasks

    Phi = _data(kind, 45, 3, 11)
    U = random_basis(45, 4, 11)
    H = _features(features, 45, 11)
    res = best_neuron(Phi, U, features=H)
    assert 8192 * 45 > tasks.ALL_ATTAINED_WORK and res.n_patterns > 8192
    vals, counts = np.unique(res.bounds, return_counts=True)
    cut = vals[np.argmax(counts)]  # the pilot's value less CUT_BELOW, claimed by most patterns
    assert counts.max() > 0.3 * res.n_patterns and cut < res.value  # attained by the pilot, not always the optimum
    monkeypatch.setattr(tasks, "CUT_BELOW", np.inf)
    off = best_neuron(Phi, U, features=H)
    assert res.certified and off.certified and res.value == pytest.approx(off.value, abs=1e-12)
    np.testing.assert_array_equal(res.pattern, off.pattern)
    assert counts.max() > 100 * np.unique(off.bounds, return_counts=True)[1].max()
    assert verify(res, Phi, U, "bias" if features == "bias" else None).valid


def test_stacked_cholesky_against_lapack():
    # the stacked factorization (and its in-place test, certify's) against LAPACK, per pattern
    rng = np.random.default_rng(4)
    for r in (1, 2, 3, 4, 6):
        G = rng.normal(size=(r, r + 1, 500))
        X = np.einsum("iak,jak->ijk", G, G) - rng.uniform(0, 3, 500) * np.eye(r)[:, :, None]
        L, ok = stacks.cholesky(X)
        Y = X.copy()
        assert np.array_equal(stacks.cholesky_ok(Y), ok) and 0 < ok.sum() < ok.size
        for k in range(500):
            try:
                ref = np.linalg.cholesky(X[:, :, k])
            except np.linalg.LinAlgError:
                assert not ok[k]
                continue
            assert ok[k] and np.allclose(L[:, :, k], ref, rtol=1e-9, atol=1e-12)
