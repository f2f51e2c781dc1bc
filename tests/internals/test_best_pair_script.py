"""benchmarks/best_pair.py: every pattern pair's upper bound holds for actual pairs of neurons (exact
rationals and dense sampling), a wrong bound is caught, and the run's bracket and file."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from tests._benchmarks import benchmark_script




@pytest.fixture(scope="module")
def setup():
    from relu_gating.patterns import enumerate_patterns

    bp = benchmark_script("best_pair")
    Phi, U, _ = bp.instance(16, 4, 0)
    pats = enumerate_patterns(Phi)
    masks = pats.masks
    bases, _, _ = bp.pattern_bases(Phi, masks.astype(float))
    lam, _, _ = bp.pair_bounds(bases, U)
    N = len(bases)
    I, J = np.triu_indices(N)
    index = {m.tobytes(): k for k, m in enumerate(masks)}
    flat = {(int(i), int(j)): k for k, (i, j) in enumerate(zip(I, J))}
    N0 = float(np.sum(U.mean(axis=0) ** 2) * U.shape[0])
    return bp, Phi, U, lam, I, J, index, flat, N0


def _pair_of(index, flat, Phi, t1, t2):
    a, b = index[(Phi @ t1 > 0).tobytes()], index[(Phi @ t2 > 0).tobytes()]
    return flat[(min(a, b), max(a, b))]


def _exact_value(Phi: np.ndarray, U: np.ndarray, thetas: np.ndarray) -> Fraction:
    """``N_K([1, relu(Phi theta_1), relu(Phi theta_2)])`` in rationals: ``tr(U^T H (H^T H)^-1 H^T U)``."""
    n = Phi.shape[0]
    F = [[Fraction(float(x)) for x in row] for row in Phi]
    th = [[Fraction(float(x)) for x in t] for t in thetas]
    H = [[Fraction(1)] + [max(sum(F[i][k] * t[k] for k in range(len(t))), Fraction(0)) for t in th] for i in range(n)]
    q = len(H[0])
    G = [[sum(H[i][a] * H[i][b] for i in range(n)) for b in range(q)] for a in range(q)]
    Uq = [[Fraction(float(x)) for x in row] for row in U]
    C = [[sum(H[i][a] * Uq[i][c] for i in range(n)) for c in range(U.shape[1])] for a in range(q)]
    # solve G X = C by Gauss-Jordan (G positive definite here)
    A = [G[a][:] + C[a][:] for a in range(q)]
    for p in range(q):
        piv = A[p][p]
        A[p] = [x / piv for x in A[p]]
        for r in range(q):
            if r != p and A[r][p]:
                f = A[r][p]
                A[r] = [x - f * y for x, y in zip(A[r], A[p])]
    X = [row[q:] for row in A]
    return sum(C[a][c] * X[a][c] for a in range(q) for c in range(U.shape[1]))


def test_the_bounds_hold_for_actual_pairs_in_exact_rationals(setup):
    bp, Phi, U, lam, I, J, index, flat, N0 = setup
    ub_kyfan, ub_seq = bp.combine(N0, lam, I, J, g1_upper=1.0)
    rng = np.random.default_rng(0)
    done = 0
    while done < 12:
        t1, t2 = rng.standard_normal((2, Phi.shape[1]))
        if not ((Phi @ t1 > 0).any() and (Phi @ t2 > 0).any()):
            continue  # a dead neuron: the normal equations below are singular
        done += 1
        k = _pair_of(index, flat, Phi, t1, t2)
        v = _exact_value(Phi, U, np.array([t1, t2]))
        assert float(v) <= min(ub_kyfan[k], ub_seq[k]) + 1e-12


def test_the_bounds_hold_for_many_sampled_pairs_and_a_wrong_bound_is_caught(setup):
    bp, Phi, U, lam, I, J, index, flat, N0 = setup
    ub_kyfan, ub_seq = bp.combine(N0, lam, I, J, g1_upper=1.0)
    rng = np.random.default_rng(1)
    worst, wrong = -np.inf, 0
    for _ in range(3000):
        t = rng.standard_normal((2, Phi.shape[1]))
        k = _pair_of(index, flat, Phi, *t)
        v = bp.layer_value(Phi, U, t)
        worst = max(worst, v - min(ub_kyfan[k], ub_seq[k]))
        wrong += v > N0 + lam[k, 0] + 1e-9  # without lambda_2 the bound is false
    assert worst <= 1e-9
    assert wrong > 0


def test_local_solves_stay_below_their_pairs_bound(setup):
    bp, Phi, U, lam, I, J, index, flat, N0 = setup
    ub_kyfan, _ = bp.combine(N0, lam, I, J, g1_upper=1.0)
    rng = np.random.default_rng(2)
    t1, t2 = rng.standard_normal((2, Phi.shape[1]))
    v, th = bp.local_pair(Phi, U, t1, t2, 200)
    assert v == pytest.approx(bp.layer_value(Phi, U, th), abs=1e-12)
    assert v <= ub_kyfan.max() + 1e-9 and v >= bp.layer_value(Phi, U, np.array([t1, t2])) - 1e-12


def test_the_run_brackets_the_best_pair_and_records_its_provenance(tmp_path):
    bp = benchmark_script("best_pair")
    out = tmp_path / "bp.json"
    assert bp.main(["--n", "12", "--K", "3", "--seed", "3", "--pool", "50", "--seconds", "1", "--iters", "50",
                    "--mp-sample", "2", "--out", str(out)]) == 0
    d = json.loads(out.read_text())
    r = d["result"]
    assert d["provenance"]["commit"] and d["provenance"]["command"].startswith("benchmarks/best_pair.py")
    assert r["best_found"] >= r["best_found_greedy"] - 1e-12 and r["certified_upper"] >= r["best_found"]
    assert r["certified_upper"] <= r["kyfan_upper_t2"] + 1e-9 and r["mp_check"]["max_abs_diff"] < 1e-10
    assert r["pairs_open"] + r["pairs_pruned"] == r["n_pairs"]
    upper, best = Fraction(r["certified_upper_exact"]), Fraction(r["best_found_exact"])
    assert r["upper_proven"] and upper >= best and r["optimum"] == (upper == best)
    assert r["certified_upper"] >= float(upper) and r["certified_upper"] >= r["float_upper"] - 1e-9
    assert Fraction(r["certified_upper"]) - upper < Fraction(1, 10**12)  # rounded up by at most one ulp


def test_a_dead_neuron_adds_nothing_and_the_float_value_matches_the_exact_one(setup):
    bp, Phi, U, *_ = setup
    rng = np.random.default_rng(3)
    t = rng.standard_normal(Phi.shape[1])
    dead = np.r_[np.zeros(Phi.shape[1] - 1), -1.0]  # relu(-1) = 0 on every row: a dead neuron
    assert not (Phi @ dead > 0).any()
    one = bp.layer_value(Phi, U, t[None, :])
    assert bp.layer_value(Phi, U, np.array([dead, t])) == pytest.approx(one, abs=1e-12)
    assert bp.exact_value(Phi, U, np.array([dead, t])) == pytest.approx(one, abs=1e-12)
    for _ in range(5):
        th = rng.standard_normal((2, Phi.shape[1]))
        assert bp.exact_value(Phi, U, th) == pytest.approx(bp.layer_value(Phi, U, th), abs=1e-10)
        if all((Phi @ x > 0).any() for x in th):  # the oracle's normal equations need live neurons
            assert bp.exact_value(Phi, U, th) == pytest.approx(float(_exact_value(Phi, U, th)), abs=1e-12)
