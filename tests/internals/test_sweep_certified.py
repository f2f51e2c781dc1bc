"""The sweep's own witness proof (``certified_simple``) against exact rational arithmetic.

The sweep proves most simple chambers' witnesses from the ray's row values and a bound on
the step (no second product with every row).  Every witness it accepts must realize its
mask exactly; and it must reject witnesses that do not (a check that cannot fail is none).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from relu_gating.patterns import _enumerate, _sweep, _sweep_level
from relu_gating.patterns._enumerate import enumerate_patterns

from _patterns_reference import exact_witness_ok  # noqa: E402  (tests/ on sys.path via conftest)
from test_patterns import FAMILIES


def _recorded(Phi, keep: int = 400, seed: int = 0):
    """Enumerate ``Phi`` and return ``(Phi_scaled, masks, W, n_sure, n_offered)`` for a sample of
    the witnesses the sweep proved (``sure``), as the certifier saw them."""
    seen: list = []
    orig = _enumerate._Certifier.__call__

    def spy(self, pk, W, prov, sure=None):
        if sure is not None:
            seen.append((self.Phi, pk.copy(), W.copy(), sure.copy()))
        return orig(self, pk, W, prov, sure)

    _enumerate._Certifier.__call__ = spy
    try:
        enumerate_patterns(Phi)
    finally:
        _enumerate._Certifier.__call__ = orig
    rng = np.random.default_rng(seed)
    rows, n_sure, n_all = [], 0, 0
    for P, pk, W, sure in seen:
        n_sure, n_all = n_sure + int(sure.sum()), n_all + sure.size
        rows += [(P, pk[k], W[k]) for k in np.flatnonzero(sure)]
    if len(rows) > keep:
        rows = [rows[i] for i in rng.choice(len(rows), keep, replace=False)]
    return rows, n_sure, n_all


def _all_exact(rows) -> bool:
    for P, pk, w in rows:
        mk = np.unpackbits(pk, count=P.shape[0]).astype(bool)
        if not exact_witness_ok(P, mk[None, :], w[None, :]):
            return False
    return True


CASES = {
    "gaussian 60x3 + 1": lambda r: np.c_[r.normal(size=(60, 3)), np.ones(60)],
    "translated X + 250": lambda r: np.c_[r.normal(size=(40, 3)) + 250.0, np.ones(40)],
    "mixed units (1e-6, 1, 1e6)": lambda r: np.c_[r.normal(size=(40, 3)) * [1e-6, 1.0, 1e6], np.ones(40)],
    "near-collinear (1e-12)": lambda r: np.c_[np.outer(r.normal(size=30), [1.0, 2.0, 3.0])
                                              + 1e-12 * r.normal(size=(30, 3)), np.ones(30)],
    "small integers 30x4": lambda r: r.integers(-3, 4, size=(30, 4)).astype(float),
    "gaussian 14x6": lambda r: r.normal(size=(14, 6)),
}


SLOW_CASES = ("near-collinear (1e-12)", "small integers 30x4")  # the degenerate families below stay in the default tier


@pytest.mark.parametrize("name", [pytest.param(c, marks=pytest.mark.slow) if c in SLOW_CASES else c for c in CASES])
def test_proved_witnesses_realize_exactly(name):
    Phi = CASES[name](np.random.default_rng(3))
    rows, n_sure, n_all = _recorded(Phi)
    assert _all_exact(rows)
    if name.startswith("gaussian"):  # it does carry the load on ordinary data
        assert n_sure >= 0.9 * n_all


@pytest.mark.parametrize("name", list(FAMILIES))
def test_proved_witnesses_on_degenerate_families(name):
    rows, _, _ = _recorded(FAMILIES[name])
    assert _all_exact(rows)


WITNESS_CASES = dict(seed=st.integers(0, 2 ** 31 - 1), n=st.integers(5, 25), d=st.integers(2, 4),
                     shift=st.sampled_from([0.0, 1.0, 250.0, -1e4]), scale=st.sampled_from([1e-8, 1.0, 1e5]))


@settings(max_examples=4, deadline=None, derandomize=True)
@given(**WITNESS_CASES)
def test_proved_witnesses_property(seed, n, d, shift, scale):
    _proved_witnesses(seed, n, d, shift, scale)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, derandomize=True)
@given(**WITNESS_CASES)
def test_proved_witnesses_property_slow(seed, n, d, shift, scale):
    _proved_witnesses(seed, n, d, shift, scale)


def _proved_witnesses(seed, n, d, shift, scale):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, d)) * scale + shift
    if n > 6:
        X[-2:] = X[:2] + 1e-13 * scale  # near-duplicate samples: thin chambers
    rows, _, _ = _recorded(np.c_[X, np.ones(n)], keep=60, seed=seed)
    assert _all_exact(rows)


def _level_exact(rows: list, mask: np.ndarray, w: np.ndarray) -> bool:
    """``w`` strictly realizes ``mask`` on the level's integer rows (exact rationals)."""
    from fractions import Fraction
    wf = [Fraction(float(x)) for x in w]
    for row, bit in zip(rows, mask):
        v = sum((a * b for a, b in zip(row, wf)), Fraction(0))
        if v == 0 or (v > 0) != bool(bit):
            return False
    return True


@pytest.mark.parametrize("corrupt", ["ray only", "flipped", "far step", "half step"])
def test_corrupted_witnesses(corrupt):
    # the proof fed wrong witnesses: whatever it still accepts must be exactly right, and a
    # negated witness (it realizes the complement) is never accepted
    captured: list = []
    orig = _sweep_level.simple_chambers

    def spy(lv, rays, signs):
        out = orig(lv, rays, signs)
        if out is not None:
            si = np.flatnonzero(signs.simple)
            gen = out[0][np.arange(si.size)[:, None], out[2]]
            captured.append((lv, rays, signs, si, gen, out[0].copy(), out[1].copy()))
        return out

    _sweep.simple_chambers = spy  # the name the sweep calls
    try:
        enumerate_patterns(np.c_[np.random.default_rng(5).normal(size=(40, 3)), np.ones(40)])
    finally:
        _sweep.simple_chambers = orig
    rng = np.random.default_rng(1)
    n_acc = n_all = 0
    for lv, rays, signs, si, gen, P, W in captured:
        _, vh, xn, As = _sweep_level._simple_witnesses(lv, rays, signs.rowmin, si, gen)
        step = W - vh
        W2 = {"ray only": vh.copy(), "flipped": -W, "half step": vh + 0.5 * step,
              "far step": vh + 1e3 * step}[corrupt]
        sure = _sweep_level.certified_simple(lv, rays, signs, si, gen, W2, vh, xn, As)
        n_acc, n_all = n_acc + int(sure.sum()), n_all + sure.size
        acc = np.flatnonzero(sure)
        for k in rng.choice(acc, min(acc.size, 40), replace=False) if acc.size else []:
            assert _level_exact(lv.rows, P[k], W2[k])
    assert n_all > 1000
    if corrupt == "flipped":
        assert n_acc == 0
    if corrupt == "half step":  # still inside the chamber: proved as before
        assert n_acc >= 0.9 * n_all
