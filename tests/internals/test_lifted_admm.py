"""ADMM multipliers of the lifted relaxation at a level (``bnb/_lifted_admm.py``): on nodes a search met, where
the first-order steps did not prove the level, they are accepted by the checker
(:func:`relu_gating.search.proofs._lifted.lifted_leaf_bound`), never below a neuron of the node, and forged
ones are refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from relu_gating import verify
from relu_gating.patterns import single_thread_blas
from relu_gating.search.bnb import _lifted_admm, _strong, branch_and_bound
from relu_gating.search.proofs._lifted import lifted_leaf_bound

pytestmark = pytest.mark.usefixtures("lifted_now", "one_blas_thread")  # the lifted bound from the first node


@pytest.fixture(scope="module")
def one_blas_thread():
    """One BLAS thread, as the search holds it (its products are small: more threads only wait)."""
    with single_thread_blas():
        yield


def _greedy_instance(n: int, d: int, seed: int):
    """A clustered instance and the features of its greedy step 2 (``[1, relu(Phi theta_1)]``)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(scale=3.0, size=(3, d))[rng.integers(0, 3, size=n)] + 0.5 * rng.normal(size=(n, d))
    U = np.linalg.qr(rng.normal(size=(n, 3)))[0]
    Phi = np.c_[X, np.ones(n)]
    first = branch_and_bound(Phi, U, features="bias", workers=1)
    return Phi, U, np.c_[np.ones(n), np.maximum(Phi @ first.theta, 0.0)]


@pytest.fixture(scope="module")
def failing_nodes():
    """The nodes of a greedy step's search (first-order steps only, as before ADMM) whose lifted try did not
    prove the level: ``(Q, M, QH, signs, zero, V, level)`` each, and the search's certified value."""
    Phi, U, H = _greedy_instance(30, 4, 3)
    rec, orig = [], _strong.strong_bound

    def recording(Q, M, QH, signs, zero, V, k=_strong.N_DECIDED, level=-np.inf, **kw):
        got = orig(Q, M, QH, signs, zero, V, k, level, **kw)
        if np.isfinite(level) and (got is None or got[0] > level):
            rec.append((Q, M, QH, signs.copy(), zero, V.copy(), float(level)))
        return got

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_strong, "LEVEL_ADMM", False)
        mp.setattr(_strong, "strong_bound", recording)
        bb = branch_and_bound(Phi, U, features=H, workers=1)
    assert bb.certified
    return [r for r in rec if int(np.sum((r[3] == 0) & ~r[4])) > _strong.CLARABEL_MAX_UNDECIDED], bb.value


def _pieces(node):
    Q, M, QH, signs, zero, V, level = node
    dec = _strong.pick_decided(Q, signs, zero, V)
    A, B, G, C, U = _strong.lifted_parts(Q, M, QH, signs, zero, dec)
    return dec, A, B, G, C, U


def _admm(A, B, G, C, U, at: float, level: float):
    """ADMM at ``at``, its multipliers accepted where ``_strong.proven_at`` proves ``at`` (at most ``level``)."""
    return _lifted_admm.admm_level(A, B, G, U.size, at, lambda N, mu: _strong.proven_at(A, B, G, C, N, mu, at) <= level)


def _neuron_value(Q, M, QH, v) -> float:
    h = np.maximum(Q @ v, 0.0)
    den = h @ h - (0.0 if QH is None else float(np.sum((QH.T @ h) ** 2)))
    return float(np.sum((M.T @ h) ** 2) / den)


def test_rows_by_blocks_are_the_dense_rows():
    """``_Rows`` applies ``s G`` and ``(s G)^T M (s G)`` by the blocks of ``G``: the dense products."""
    rng = np.random.default_rng(2)
    for n, r, und in ((20, 3, 7), (60, 5, 30)):
        Q, M = rng.standard_normal((n, r)), rng.standard_normal((n, 3))
        signs = rng.choice(np.array([-1, 1], dtype=np.int8), size=n)
        signs[rng.choice(n, und, replace=False)] = 0
        zero = np.zeros(n, dtype=bool)
        dec = np.flatnonzero(signs != 0)[:12]
        _, _, G, _, U = _strong.lifted_parts(Q, M, None, signs, zero, dec)
        rows = _lifted_admm._Rows(G, dec.size, U.size)
        Gh = rows.s[:, None] * G
        F, W = rng.standard_normal((G.shape[1], 3)), rng.standard_normal((G.shape[0],) * 2)
        assert np.allclose(rows.times(F), Gh @ F, atol=1e-13)
        assert np.allclose(rows.congruence(W), Gh.T @ W @ Gh, atol=1e-12)


def test_the_partial_projection_is_the_whole_one():
    """``_spectraplex`` from the ``k`` largest eigenpairs (more where needed) is the projection on the unit-trace
    PSD matrices computed from the whole ``eigh``."""
    rng = np.random.default_rng(4)
    for d, k in ((6, 2), (40, 1), (40, 4), (75, 3)):
        S = rng.standard_normal((d, d))
        S = S + S.T + np.diag(np.r_[np.full(3, 5.0), np.zeros(d - 3)])
        w, V = np.linalg.eigh(S)
        lam = _lifted_admm._simplex(w)
        assert np.isclose(lam.sum(), 1.0) and np.all(lam >= 0)
        F, _ = _lifted_admm._spectraplex(S, k)
        assert np.allclose(F @ F.T, (V * lam) @ V.T, atol=1e-10)


def test_the_warm_projection_is_the_whole_one_near_the_previous_eigenvectors_and_declines_otherwise():
    """``_spectraplex_warm`` (Rayleigh-Ritz on ``[U, S U]``, ``ADMM_WARM``): from the eigenvectors of a nearby
    matrix it is the projection of the whole ``eigh`` to within the perturbation; where its least Ritz value is
    above the projection's threshold (an eigenvalue outside the subspace may be too) it returns None."""
    rng = np.random.default_rng(5)
    for d in (40, 90):
        E = rng.standard_normal((d, d))
        S = E + E.T + np.diag(np.r_[np.full(3, 8.0), np.zeros(d - 3)])
        w, V = np.linalg.eigh(S)
        lam = _lifted_admm._simplex(w)
        P = (V * lam) @ V.T
        F0, _ = _lifted_admm._spectraplex(S, 4)
        D = rng.standard_normal((d, d))
        S2 = S + 1e-6 * (D + D.T)
        F = _lifted_admm._spectraplex_warm(S2, F0 / np.linalg.norm(F0, axis=0))
        assert F is not None and np.allclose(F @ F.T, P, atol=1e-4)
        flat = np.eye(d)  # every eigenvalue equal: the threshold is below all, no Ritz value is left out
        assert _lifted_admm._spectraplex_warm(flat, np.eye(d)[:, :2]) is None


def test_admm_multipliers_settle_nodes_the_first_order_steps_left_and_the_checker_accepts_them(failing_nodes):
    """On the nodes where the first-order steps failed, ADMM proves the level on some (seeded instance: at
    least 2), each accepted by the checker at the level, which is never below a neuron of the node (its
    interior points); a level below such a neuron is never proven."""
    nodes, value = failing_nodes
    assert len(nodes) >= 3
    settled = 0
    for node in nodes:
        Q, M, QH, signs, zero, V, level = node
        dec, A, B, G, C, U = _pieces(node)
        aim = level - _strong.FO_AIM * abs(level)
        got = _admm(A, B, G, C, U, aim, level)
        inside = max(_neuron_value(Q, M, QH, v) for v in np.atleast_2d(V))
        assert inside <= value + 1e-9
        if got is not None:
            settled += 1
            N, mu = got[0], got[1]
            assert np.all(N >= 0) and np.allclose(N, N.T)
            assert lifted_leaf_bound(Q, M, QH, signs, zero, level, dec, N, mu) == level
            assert level >= inside
            assert np.isinf(lifted_leaf_bound(Q, M, QH, signs, zero, inside - 1e-6, dec, N, mu))
        below = inside - 1e-4
        low = _admm(A, B, G, C, U, below, below)
        assert low is None
    assert settled >= 2


def test_forged_admm_multipliers_are_refused(failing_nodes):
    """ADMM's multipliers with ``N`` raised on a pair of constraints both positive at a neuron of the node
    (its slack then negative there), with ``mu`` of the wrong length, or with an undecided row listed as
    decided: refused.  ``accept`` decides: refusing everything returns nothing."""
    nodes, _ = failing_nodes
    forged = 0
    for node in nodes:
        Q, M, QH, signs, zero, V, level = node
        dec, A, B, G, C, U = _pieces(node)
        aim = level - _strong.FO_AIM * abs(level)
        assert _lifted_admm.admm_level(A, B, G, U.size, aim, lambda N, mu: False, steps=40) is None
        got = _admm(A, B, G, C, U, aim, level)
        if got is None:
            continue
        N, mu = got[0], got[1]
        v = np.atleast_2d(V)[0]
        x = np.r_[v, np.maximum(Q[U] @ v, 0.0)]  # the lifted point of the neuron v
        g = G @ x
        k, l = np.argsort(-g)[:2]
        assert g[k] > 0 and g[l] > 0
        slack_at_x = level * x @ B @ x - x @ A @ x - g @ N @ g
        bad = N.copy()
        bad[k, l] = bad[l, k] = N[k, l] + (abs(slack_at_x) + 1.0) / (g[k] * g[l])
        assert np.isinf(lifted_leaf_bound(Q, M, QH, signs, zero, level, dec, bad, mu))
        assert np.isinf(lifted_leaf_bound(Q, M, QH, signs, zero, level, dec, N, mu[:-1]))
        assert np.isinf(lifted_leaf_bound(Q, M, QH, signs, zero, level, np.r_[dec[:-1], U[0]], N, mu))
        forged += 1
    assert forged >= 2


@pytest.mark.slow  # a search with ADMM on (not the default): its CPU, not the fixture's
def test_strong_bound_with_admm_settles_more_and_its_trees_verify(failing_nodes, monkeypatch):
    """``strong_bound`` with ADMM after the first-order steps (the default) settles at least what it settled
    without, here more, each accepted by the checker; the search with it certifies the same value as
    without, and its certificate verifies."""
    nodes, value = failing_nodes
    settled = {False: 0, True: 0}
    for node in nodes:
        Q, M, QH, signs, zero, V, level = node
        for way in (False, True):
            monkeypatch.setattr(_strong, "LEVEL_ADMM", way)
            got = _strong.strong_bound(Q, M, QH, signs, zero, V, level=level)
            if got is not None and got[0] <= level:
                settled[way] += 1
                assert lifted_leaf_bound(Q, M, QH, signs, zero, got[0], *got[1]) == got[0]
    assert settled[True] > settled[False]
    monkeypatch.setattr(_strong, "LEVEL_ADMM", True)
    Phi, U, H = _greedy_instance(30, 4, 3)
    bb = branch_and_bound(Phi, U, features=H, workers=1)
    assert bb.certified and abs(bb.value - value) <= 1e-9 * max(1.0, value)
    d = json.loads(json.dumps(bb.to_dict()))
    assert verify(d, Phi, U, features=H).certified
