"""Two-row evidence for a batch of candidate patterns (``relu_gating.search._kernels.wedge``).

Oracles: exhaustive face enumeration per pattern (``_search_reference.pattern_best``, no code
shared with the search) must never exceed a claimed bound; the verifier's own proof of the
evidence (``relu_gating.certificate.prove_bounds``) must confirm every claim, and must reject
the claims once the evidence is tampered with; the query's answer must not change when the
two-row step is switched off.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relu_gating as rg
from relu_gating.search.proofs import prove_bounds
from relu_gating.search._exact import tasks
from relu_gating.search._kernels.wedge import wedge_settle
from relu_gating.search.objectives import make_objective, with_rank

from _search_reference import pattern_best


def _instance(n: int, d: int, seed: int, shift: float = 0.0):
    X = np.random.default_rng(seed).normal(size=(n, d))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        U = rg.low_frequency_basis(rg.laplacian(rg.sample_graph(X, kind="knn")), 4).U_K
    return rg.layer_input(X + shift), U


def _settled(n: int, d: int, seed: int, shift: float = 0.0):
    """The candidates of a query (bound above the optimum) and what the two-row step settles."""
    Phi, U = _instance(n, d, seed, shift)
    res = rg.best_neuron(Phi, U)
    obj = with_rank(make_objective(Phi, U, "bias"), res.rank)
    masks = res.masks
    # the patterns the query had to look at: settled by dual evidence or solved exactly
    cand = np.array(sorted(i for i, m in res.methods.items() if m not in ("spectral", "dead")), dtype=np.int64)[:400]
    got = wedge_settle(obj, masks[cand], res.value)
    return Phi, U, res, masks, cand, got


# (the exact per-pattern oracle is the cost: the default tier checks 2 settled patterns, the slow tier 6)
@pytest.mark.parametrize("n,d,seed,shift,checked", [pytest.param(40, 3, 0, 0.0, 6, marks=pytest.mark.slow),
                                                    pytest.param(24, 4, 1, 0.0, 6, marks=pytest.mark.slow),
                                                    pytest.param(36, 3, 0, 1e4, 6, marks=pytest.mark.slow),
                                                    (36, 3, 0, 1e4, 2)])
def test_two_row_claims_dominate_the_exact_maximum_and_verify(n, d, seed, shift, checked):
    Phi, U, res, masks, cand, got = _settled(n, d, seed, shift)
    assert got, "the two-row step settled nothing: the test would not see it"
    keys = sorted(got)[::max(1, len(got) // checked)][:checked]
    for j in keys:
        upper, (rows, N) = got[j]
        assert rows.shape == (2,) and N.shape == (2, 2) and N[0, 0] == N[1, 1] == 0 and N[0, 1] >= 0
        assert upper <= res.value + 1e-12
        exact = pattern_best(Phi, U, masks[cand[j]], np.ones((n, 1)))
        assert exact <= upper + 1e-9 * max(1.0, abs(upper))
    claims = np.array([got[j][0] for j in keys])
    proven = prove_bounds(Phi, U, "bias", masks[cand[keys]], claims, {k: got[j][1] for k, j in enumerate(keys)})
    assert np.all(proven <= claims * (1 + 1e-12) + 1e-15)  # the verifier confirms every claim


def test_tampered_two_row_evidence_is_not_proven():
    Phi, U, res, masks, cand, got = _settled(40, 3, 0)
    keys = sorted(got)[:20]
    claims = np.array([got[j][0] for j in keys])
    wrong_t = {k: (got[j][1][0], 0.25 * got[j][1][1]) for k, j in enumerate(keys)}  # multiplier shrunk
    swapped = {k: (np.array([got[j][1][0][0], (got[j][1][0][0] + 1) % Phi.shape[0]]), got[j][1][1])
               for k, j in enumerate(keys)}  # another row pair
    for forged in (wrong_t, swapped):
        proven = prove_bounds(Phi, U, "bias", masks[cand[keys]], claims, forged)
        assert np.sum(proven > claims * (1 + 1e-9)) >= len(keys) // 2


@pytest.mark.parametrize("n,d,seed", [pytest.param(80, 3, 3, marks=pytest.mark.slow), (24, 4, 4)])
@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_answer_unchanged_without_the_two_row_step(n, d, seed, monkeypatch):
    Phi, U = _instance(n, d, seed)
    res = rg.best_neuron(Phi, U)
    monkeypatch.setattr(tasks, "wedge_settle", lambda obj, masks, target: {})
    base = rg.best_neuron(Phi, U)
    assert res.certified and base.certified and abs(res.value - base.value) <= 1e-9
    rep = rg.verify(json.loads(json.dumps(res.to_dict())), Phi, U, "bias")
    assert rep.valid and rep.certified


PENCILS = dict(seed=st.integers(0, 10**6), r=st.integers(2, 7), k=st.integers(1, 5), kink=st.booleans())


@settings(max_examples=12, deadline=None, derandomize=True)
@given(**PENCILS)
def test_the_wedge_multiplier_minimizes_the_top_eigenvalue(seed, r, k, kink):
    _wedge_multiplier_is_the_minimum(seed, r, k, kink)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=True)
@given(**PENCILS)
def test_the_wedge_multiplier_minimizes_the_top_eigenvalue_slow(seed, r, k, kink):
    _wedge_multiplier_is_the_minimum(seed, r, k, kink)


def _wedge_multiplier_is_the_minimum(seed, r, k, kink):
    """``_minimize`` (safeguarded Newton, bisection where it stalls) reaches the minimum of the
    convex ``lambda_max(A + t S)`` over ``t >= 0`` found by a dense grid with golden-section
    refinement (scipy), for random pencils and for ones built with a double top eigenvalue at the
    minimum (a kink, where Newton cannot converge); ``A`` positive semidefinite, as the whitened
    ``A_S`` of a pattern is."""
    from scipy.optimize import minimize_scalar

    from relu_gating.search._kernels.wedge import _minimize, _slope

    rng = np.random.default_rng(seed)
    A, S = [], []
    while len(A) < k:
        a, b = rng.normal(size=r), rng.normal(size=r)
        Sk = np.outer(a, b) + np.outer(b, a)
        if kink:  # lambda_max(A + t S) = max(2 - t, 1 + t) on two eigenvectors: a kink at t = 1/2
            Q = np.linalg.qr(rng.normal(size=(r, r)))[0]
            Ak = Q @ np.diag(np.r_[2.0, 1.0, 0.1 * np.abs(rng.normal(size=r - 2))]) @ Q.T
            Sk = Q @ np.diag(np.r_[-1.0, 1.0, np.zeros(r - 2)]) @ Q.T
        else:  # as in the search: A is a whitened A_S, positive semidefinite
            C = rng.normal(size=(r, r))
            Ak = C @ C.T
        if _slope(Ak[None], Sk[None], np.zeros(1))[1][0] < 0:
            A.append(Ak)
            S.append(Sk)
    A, S = np.array(A), np.array(S)
    t = _minimize(A, S)
    got = _slope(A, S, t)[0]
    for j in range(k):
        f = lambda x, Aj=A[j], Sj=S[j]: float(np.linalg.eigvalsh(Aj + x * Sj)[-1])  # noqa: E731
        grid = np.linspace(0.0, 4.0 * t[j] + 1.0, 4001)
        g = grid[int(np.argmin([f(x) for x in grid]))]
        step = grid[1]
        best = minimize_scalar(f, bounds=(max(g - step, 0.0), g + step), method="bounded",
                               options={"xatol": 1e-12}).fun
        scale = 1.0 + np.abs(A[j]).max() + np.abs(S[j]).max()
        assert got[j] <= min(best, f(g)) + 1e-8 * scale
        if kink:
            assert abs(t[j] - 0.5) < 1e-6
