"""The variation norm's warm master LP and its seed phase against a cold LP over every column (scipy linprog)."""

from __future__ import annotations

import numpy as np
import pytest

from relu_gating.layers import variation as V
from relu_gating.layers._master_lp import MasterLP


def _cold(D: np.ndarray, v: np.ndarray, M: float) -> float:
    a, r, _ = V._master(D, v, M)
    return float(np.abs(a).sum() + M * np.abs(r).sum())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_columns_added_in_steps_reach_the_cold_optimum_with_a_feasible_dual(seed):
    rng = np.random.default_rng(seed)
    n = 25
    D = np.maximum(rng.standard_normal((n, 90)), 0.0)
    D /= np.linalg.norm(D, axis=0)
    v = rng.standard_normal(n)
    lp = MasterLP(v, 1e3)
    for lo, hi in ((0, 10), (10, 40), (40, 90)):
        lp.add(D[:, lo:hi])
        a, r, y = lp.solve()
        obj = float(np.abs(a).sum() + 1e3 * np.abs(r).sum())
        assert a.shape == (hi,) and obj == pytest.approx(_cold(D[:, :hi], v, 1e3), rel=1e-9)
        assert np.abs(D[:, :hi].T @ y).max() <= 1 + 1e-9 and np.abs(y).max() <= 1e3 * (1 + 1e-9)
        assert float(y @ v) == pytest.approx(obj, rel=1e-9)  # strong duality
        assert np.linalg.norm(D[:, :hi] @ a + r - v) <= 1e-9
    lp.set_penalty(0.5)  # the residual now cheaper than some atoms: the optimum moves
    a, r, _ = lp.solve()
    assert float(np.abs(a).sum() + 0.5 * np.abs(r).sum()) == pytest.approx(_cold(D, v, 0.5), rel=1e-9)


def test_an_empty_add_is_a_no_op_and_zero_entries_are_skipped():
    v = np.array([1.0, 2.0, 0.0])
    lp = MasterLP(v, 10.0)
    lp.add(np.zeros((3, 0)))
    lp.add(np.array([[1.0], [0.0], [0.0]]))  # e_1: one nonzero per signed column
    a, r, _ = lp.solve()
    assert lp.J == 1 and a == pytest.approx([1.0]) and r == pytest.approx([0.0, 2.0, 0.0])


@pytest.mark.parametrize("seed", [0, 1])
def test_the_seed_phase_ends_where_no_witness_violates_and_matches_the_lp_over_all(seed, monkeypatch):
    from relu_gating.data.datasets import two_moons
    from relu_gating.experiments._theory import dyadic
    from relu_gating.layers.networks import layer_input
    from relu_gating.patterns import enumerate_patterns

    monkeypatch.setattr(V, "_MASTER_ATOMS", 20)  # force the phase on a small instance (about 300 witnesses)
    monkeypatch.setattr(V, "_SEED_ADD", 20)
    monkeypatch.setattr(V, "_SEED_ADD_PER_ROW", 0.0)
    P = layer_input(dyadic(two_moons(25, noise=0.1, seed=seed)))
    u = np.random.default_rng(seed).standard_normal(25)
    u /= np.linalg.norm(u)
    pr = V._Pricer(P, enumerate_patterns(P), None)
    span = V._spanning_thetas(P)
    thetas = np.vstack([pr.W[pr.idx], span])
    lp, th, D, lps = V._seed_master(P, u, thetas, pr.idx.size, 1e-2, 1e3)
    assert lps >= 2 and th.shape[0] == D.shape[1] == lp.J < thetas.shape[0]
    assert np.allclose(D, V.normalized_neurons(P, th)[0])
    a, r, y = lp.solve()
    Dall = V.normalized_neurons(P, thetas)[0]
    assert np.abs(Dall.T @ y).max() <= 1 + 1e-2 / 4 + 1e-9  # no seed witness prices out
    obj = float(np.abs(a).sum() + 1e3 * np.abs(r).sum())
    assert _cold(Dall, u, 1e3) <= obj + 1e-9 and obj <= _cold(Dall, u, 1e3) * (1 + 1e-2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_new_target_reaches_the_cold_optimum_of_that_target(seed):
    """set_target (the carry's next norm) keeps the columns and the penalty and solves for the new v."""
    rng = np.random.default_rng(10 + seed)
    n = 20
    D = np.maximum(rng.standard_normal((n, 70)), 0.0)
    D /= np.linalg.norm(D, axis=0)
    lp = MasterLP(rng.standard_normal(n), 1e3)
    lp.add(D[:, :40])
    lp.solve()
    for v in (rng.standard_normal(n), np.zeros(n), rng.standard_normal(n)):
        lp.set_target(v)
        a, r, y = lp.solve()
        obj = float(np.abs(a).sum() + 1e3 * np.abs(r).sum())
        assert a.shape == (lp.J,) and obj == pytest.approx(_cold(D[:, :lp.J], v, 1e3), rel=1e-9, abs=1e-12)
        assert np.linalg.norm(D[:, :lp.J] @ a + r - v) <= 1e-9 and np.abs(D[:, :lp.J].T @ y).max() <= 1 + 1e-9
        lp.add(D[:, lp.J:lp.J + 15])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_drop_removes_only_the_nonbasic_atoms_asked_and_keeps_the_basis(seed):
    """MasterLP.drop: the atoms asked for and out of the basis go (basic ones stay even when asked), the
    tags follow, and the next solve starts from the same basis (no pivot, the cold optimum of what stays)."""
    rng = np.random.default_rng(20 + seed)
    n = 20
    D = np.maximum(rng.standard_normal((n, 120)), 0.0)
    D /= np.linalg.norm(D, axis=0)
    v = rng.standard_normal(n)
    lp = MasterLP(v, 1e3)
    lp.add(D, tag=np.arange(120))
    lp.solve()
    obj, basic = lp.h.getInfo().objective_function_value, lp._basic()
    ask = rng.uniform(size=120) < 0.7
    ask[np.flatnonzero(basic)[:2]] = True  # two basic atoms asked for: they stay
    keep = lp.drop(ask)
    assert np.array_equal(keep, ~ask | basic)
    assert np.array_equal(lp.tag, np.flatnonzero(keep)) and lp.J == int(keep.sum()) == lp.age.size
    a, r, y = lp.solve()
    assert lp.h.getInfo().simplex_iteration_count == 0
    assert lp.h.getInfo().objective_function_value == pytest.approx(obj, rel=1e-9)
    assert lp.h.getInfo().objective_function_value == pytest.approx(_cold(D[:, keep], v, 1e3), rel=1e-9)
    assert np.array_equal(lp.drop(np.zeros(lp.J, dtype=bool)), np.ones(lp.J, dtype=bool))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_distinct_takes_greedily_in_order_and_no_two_nearly_parallel(seed):
    """_distinct against a direct greedy over the pairwise cosines: every column taken is below the cosine
    to each one taken before it, every column skipped before the last one taken is above it to one taken
    before it, at most k, the first always taken."""
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((15, 6))
    Dc = base[:, rng.integers(0, 6, size=80)] + 0.05 * rng.standard_normal((15, 80))  # near copies of 6
    Dc /= np.linalg.norm(Dc, axis=0)
    G = np.abs(Dc.T @ Dc)
    for k, cmax in ((100, 0.98), (100, 0.9), (3, 0.98), (100, 2.0)):
        got = V._distinct(Dc, k, cmax).tolist()
        want: list[int] = []
        for i in range(80):
            if len(want) < k and all(G[i, j] <= cmax for j in want):
                want.append(i)
        assert got == want and got[0] == 0 and len(got) <= k
    assert len(V._distinct(Dc, 100, 2.0)) == 80 and len(V._distinct(Dc, 100, 0.9)) < 80


@pytest.mark.parametrize("seed", [0, 1])
def test_the_seed_loop_drops_each_witness_at_most_once_and_still_ends_at_the_lp_over_all(seed, monkeypatch):
    """With a drop threshold that prices nearly every witness out, the seed loop still ends where no
    witness violates and at the cold optimum over every witness, and no witness is dropped twice."""
    from relu_gating.data.datasets import two_moons
    from relu_gating.experiments._theory import dyadic
    from relu_gating.layers.networks import layer_input
    from relu_gating.patterns import enumerate_patterns

    monkeypatch.setattr(V, "_MASTER_ATOMS", 20)
    monkeypatch.setattr(V, "_SEED_ADD", 15)
    monkeypatch.setattr(V, "_SEED_ADD_PER_ROW", 0.0)
    monkeypatch.setattr(V, "_SEED_DROP", 0.99)  # far more than the default: most nonbasic witnesses leave
    drops: list[np.ndarray] = []
    real_drop = MasterLP.drop

    def drop(self, gone):
        before = self.tag.copy()
        keep = real_drop(self, gone)
        drops.append(before[~keep])
        return keep

    monkeypatch.setattr(MasterLP, "drop", drop)
    P = layer_input(dyadic(two_moons(25, noise=0.1, seed=seed)))
    u = np.random.default_rng(seed).standard_normal(25)
    u /= np.linalg.norm(u)
    pr = V._Pricer(P, enumerate_patterns(P), None)
    thetas = np.vstack([pr.W[pr.idx], V._spanning_thetas(P)])
    lp, th, D, lps = V._seed_master(P, u, thetas, pr.idx.size, 1e-2, 1e3)
    gone = np.concatenate(drops) if drops else np.zeros(0, dtype=int)
    assert gone.size > 0 and np.all(gone >= 0)  # witnesses were dropped, and only witnesses
    assert np.unique(gone).size == gone.size  # none twice
    assert th.shape[0] == D.shape[1] == lp.J and np.allclose(D, V.normalized_neurons(P, th)[0])
    a, r, y = lp.solve()
    Dall = V.normalized_neurons(P, thetas)[0]
    assert np.abs(Dall.T @ y).max() <= 1 + 1e-2 / 4 + 1e-9
    obj = float(np.abs(a).sum() + 1e3 * np.abs(r).sum())
    assert _cold(Dall, u, 1e3) <= obj + 1e-9 and obj <= _cold(Dall, u, 1e3) * (1 + 1e-2)


def test_a_seed_lp_adds_more_witnesses_on_more_rows():
    """_seed_add: the floor _SEED_ADD on small data, _SEED_ADD_PER_ROW a row beyond (n = 400: 1,000 a LP,
    where 400 left the seed loop at its LP cap)."""
    assert V._seed_add(50) == V._SEED_ADD == 400
    assert V._seed_add(400) == 1000 and V._seed_add(700) == 1750
