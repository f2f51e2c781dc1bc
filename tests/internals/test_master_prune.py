"""The master LP pruned of atoms long out of its basis, and kappa brackets saved partially (issue 40).

Pruning changes only which columns the restricted master holds.  Oracles: the cold LP (scipy
linprog) over the atoms kept (the warm pruned LP must reach its optimum), the same norms computed
without pruning (certified intervals that must overlap), the LP over a dense sample of neurons and
every witness (an upper end on each norm: every certified lower end lies below it), and the dual
checked on that sample.  Partial brackets: every snapshot reported during a bracket (after each norm,
after each round) must hold a bracket computed independently, and its lower end must lie below the
dense LP of its direction.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from tests._benchmarks import benchmark_script

from relu_gating.layers import variation
from relu_gating.layers._master_lp import MasterLP
from relu_gating.layers.variation import normalized_neurons, representability_constant, variation_norm
from relu_gating.patterns import enumerate_patterns
from _variation_reference import dense_atoms, dyadic_phi, lp_upper

_phi, _dense_atoms, _lp_upper = dyadic_phi, dense_atoms, lp_upper  # tests/_variation_reference.py


def _cold(D: np.ndarray, v: np.ndarray, M: float) -> float:
    a, r, _ = variation._master(D, v, M)
    return float(np.abs(a).sum() + M * np.abs(r).sum())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pruned_master_keeps_its_basis_and_reaches_the_cold_optimum_of_what_it_keeps(seed):
    rng = np.random.default_rng(seed)
    n = 20
    D = np.maximum(rng.standard_normal((n, 150)), 0.0)
    D /= np.linalg.norm(D, axis=0)
    v = rng.standard_normal(n)
    lp = MasterLP(v, 1e3)
    held = np.zeros(0, dtype=int)  # which columns of D the LP holds, in its order
    for lo, hi in ((0, 50), (50, 100), (100, 150)):
        lp.add(D[:, lo:hi], tag=np.arange(lo, hi))
        held = np.r_[held, np.arange(lo, hi)]
        a, _, _ = lp.solve()
        obj = lp.h.getInfo().objective_function_value
        basic = lp._basic()
        keep = lp.prune(0)  # every atom not basic now goes
        assert np.array_equal(keep, basic) and np.all(a[~keep] == 0) and 0 < keep.sum() <= n
        held = held[keep]
        assert np.array_equal(lp.tag, held) and lp.J == held.size == lp.age.size
        a2, _, y = lp.solve()
        assert lp.h.getInfo().simplex_iteration_count == 0  # the basis survived: no pivot
        assert lp.h.getInfo().objective_function_value == pytest.approx(obj, rel=1e-9)
        assert lp.h.getInfo().objective_function_value == pytest.approx(_cold(D[:, held], v, 1e3), rel=1e-9)
        assert np.abs(D[:, held].T @ y).max() <= 1 + 1e-9
    lp.set_target(rng.standard_normal(n))  # a new target after pruning: still the cold optimum of what is held
    lp.add(D[:, :30], tag=np.arange(30))
    held = np.r_[held, np.arange(30)]
    lp.solve()
    assert lp.h.getInfo().objective_function_value == pytest.approx(
        _cold(D[:, held], np.asarray(lp.h.getLp().row_lower_), 1e3), rel=1e-9)


def test_prune_ages_count_solves_out_of_the_basis():
    rng = np.random.default_rng(4)
    D = np.abs(rng.standard_normal((8, 40)))
    D /= np.linalg.norm(D, axis=0)
    lp = MasterLP(rng.standard_normal(8), 1e3)
    lp.add(D)
    for _ in range(3):
        lp.solve()
    basic, age = lp._basic(), lp.age.copy()
    assert np.all(age[basic] == 0) and np.all(age <= 3) and np.any(age == 3)
    keep = lp.prune(2)
    assert np.array_equal(keep, (age <= 2) | basic) and np.array_equal(lp.age, age[keep])


@pytest.mark.parametrize("seed", [11, 12])
def test_pruned_norms_hold_the_unpruned_intervals_and_the_dense_oracle(monkeypatch, seed):
    """Three norms with one carry and aggressive pruning (every atom out of the basis for one solve) against
    the same norms unpruned: both close, the intervals overlap, the dense LP lies above each lower end,
    each decomposition attains its upper end and each dual prices every sampled neuron at most 1."""
    n = 20
    Phi = _phi(n, seed)
    pats = enumerate_patterns(Phi)
    Dd = _dense_atoms(Phi, pats.witnesses)
    monkeypatch.setattr(variation, "_MASTER_ATOMS", 6)  # the seed loop runs as on large problems
    monkeypatch.setattr(variation, "_CHUNK", 20 * 16)
    rng = np.random.default_rng(seed)
    targets = [np.sin(2 * Phi[:, 0]) + 0.5 * np.abs(Phi[:, 1]), np.cos(3 * Phi[:, 1]) - Phi[:, 0] ** 2,
               rng.standard_normal(n)]
    dropped = []
    real = MasterLP.prune

    def counting(self, max_age):
        keep = real(self, max_age)
        dropped.append(int((~keep).sum()))
        return keep

    monkeypatch.setattr(MasterLP, "prune", counting)
    out = {}
    for age, above in ((None, 4), (1, 0)):
        monkeypatch.setattr(variation, "_PRUNE_AGE", age)
        monkeypatch.setattr(variation, "_PRUNE_ABOVE", above)
        carry: dict = {}
        out[age] = [variation_norm(v, Phi, patterns=pats, tol=1e-3, pricing="early", max_iter=300, carry=carry)
                    for v in targets]
        assert carry["thetas"].shape[0] == carry["D"].shape[1] == carry["lp"].J
    assert sum(dropped) > 0  # the pruned run did drop atoms
    for v, r, s in zip(targets, out[1], out[None]):
        assert r.certified and s.certified
        assert r.lower <= s.upper * (1 + 1e-9) and s.lower <= r.upper * (1 + 1e-9)
        assert r.lower <= _lp_upper(v, Dd) * (1 + 1e-9)
        D = normalized_neurons(Phi, r.thetas)[0]
        assert np.linalg.norm(D @ r.weights - v) <= 1e-6 * np.linalg.norm(v)
        assert np.abs(r.weights).sum() == pytest.approx(r.upper, rel=1e-9)
        assert np.abs(r.dual @ Dd).max() <= 1 + 1e-9 and r.dual @ v == pytest.approx(r.lower, rel=1e-9)


def test_partial_brackets_hold_the_full_bracket_and_the_dense_oracle():
    """Every snapshot of a bracket (after each norm, after each round of each norm) is valid: its lower end
    below an independent bracket's upper end and below the dense LP of its direction, its upper end (inf
    until the basis is in) above the independent lower end; which norms closed is recorded."""
    Phi = _phi(18, 5)
    pats = enumerate_patterns(Phi)
    Dd = _dense_atoms(Phi, pats.witnesses)
    rng = np.random.default_rng(2)
    U, _ = np.linalg.qr(np.c_[np.sin(2 * Phi[:, 0]), Phi[:, 1] ** 2, rng.standard_normal(18)])
    kw = dict(patterns=pats, tol=1e-3, refine=1, adaptive=1, max_iter=200)
    snaps: list = []
    full = representability_constant(U, Phi, pricing="early", carry={}, on_norm=lambda k: snaps.append(("norm", k)),
                                     on_round=lambda k: snaps.append(("round", k)), **kw)
    ref = representability_constant(U, Phi, pricing="cone", **kw)  # independent: no carry, the cone pricing
    assert full.certified and ref.certified and full.closed.all()
    assert [k.norms.shape[0] for w, k in snaps if w == "norm"] == list(range(1, full.norms.shape[0] + 1))
    assert any(w == "round" for w, _ in snaps)
    for w, k in snaps:
        J = k.norms.shape[0]
        assert k.closed.shape == (J,) and (w == "norm" or not k.closed[-1])  # a round: its norm still open
        assert k.lower <= ref.upper * (1 + 1e-9)
        assert (k.upper == math.inf) == (J < 3)
        assert k.upper >= ref.lower * (1 - 1e-9)
        if k.lower > 0:
            assert k.lower <= _lp_upper(k.direction, Dd) * (1 + 1e-9)
            assert np.linalg.norm(k.direction) == pytest.approx(1.0, rel=1e-9)


def test_kappa_n_saves_a_running_norm_and_records_provenance(tmp_path, monkeypatch):
    """A run stopped in the middle of a norm leaves a valid file: partial row, upper inf before the basis,
    the running norm open, the commit, command and loads recorded."""
    mod = benchmark_script("kappa_n")
    argv = ["--n", "24", "--seeds", "0", "--families", "moons", "--refine", "0", "--adaptive", "0",
            "--pricing", "early", "--save-every", "0", "--out-dir", str(tmp_path)]
    real = mod.rows_for

    def stop_mid_norm(*a, on_row=None, **k):
        def save(rows):
            on_row(rows)
            if rows and not all(rows[-1]["closed"]):
                raise KeyboardInterrupt
        return real(*a, on_row=save, **k)

    monkeypatch.setattr(mod, "rows_for", stop_mid_norm)
    with pytest.raises(KeyboardInterrupt):
        mod.main(argv)
    d = json.loads((tmp_path / "moons_d2_n24_s0.json").read_text())
    assert d["complete"] is False and not list(tmp_path.glob("*.tmp"))
    (row,) = d["rows"]
    assert row["final"] is False and row["closed"][-1] is False and row["basis_complete"] is False
    assert row["upper"] == math.inf and len(row["closed"]) == len(row["norms"]) <= 4
    assert len(d["provenance"]["commit"]) == 40 and d["provenance"]["command"]
    assert len(d["provenance"]["load_end"]) == 3 and d["provenance"]["saved"]
    (tmp_path / "moons_d2_n24_s0.running").unlink()
    monkeypatch.setattr(mod, "rows_for", real)
    mod.main(argv[:-4] + ["--out-dir", str(tmp_path)])  # the incomplete case is redone, to the end
    d = json.loads((tmp_path / "moons_d2_n24_s0.json").read_text())
    (row,) = d["rows"]
    assert d["complete"] and row["final"] and row["basis_complete"] and all(row["closed"])
    assert row["lower"] <= row["upper"] < math.inf
