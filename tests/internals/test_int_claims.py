"""Exact mode's pattern claims and lifted (``"d"``) leaves in integers (``checker/_int_pencil.py``, issue 37)
against their former Fraction path (``tests/_fraction_claims.py``: the Fraction forms and an independent
exact PSD test), claim by claim, on the honest evidence of branch-and-bound trees and on forged evidence
(claims lowered, multipliers scaled, signs flipped, random multipliers): the same decision every time."""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import relu_gating as rg
from relu_gating.checker import state_problem
from relu_gating.checker._exact_mode import int_claim as exact_claim
from relu_gating.checker._int_pencil import Meter
from relu_gating.checker._tree import _lifted_evidence, _multipliers
from relu_gating.checker._tree_exact import exact_lifted
from tests._fraction_claims import fraction_claim, fraction_lifted

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import test_float_range as fr  # noqa: E402


#: Leaves of each kind checked per tree (the Fraction oracle is slow).
MAX_LEAVES = 2


def _leaves(nodes: list, zero: np.ndarray) -> list:
    """``(leaf, signs)`` of every leaf of a preorder tree."""
    out, pos = [], 0

    def visit(signs):
        nonlocal pos
        nd = nodes[pos]
        pos += 1
        if nd[0] == "s":
            for s in (1, -1):
                visit(np.where(np.arange(signs.size) == nd[1], s, signs))
        elif nd[0] == "i":
            visit(np.where(np.arange(signs.size) == nd[1], nd[2], signs))
        else:
            out.append((nd, signs))
    visit(np.where(zero, -1, 0))
    return out


def _instances():
    """Nearly dependent features (2-d, 1-d) and ordinary ones (bias, a Gaussian feature column)."""
    for seed in (0, 2, 4):
        yield fr.ill_features(seed)[:3]
        yield fr.ill_features_1d(seed)
    for seed in (1, 2):
        rng = np.random.default_rng([37, seed])
        n = 10
        X = rng.normal(size=(n, 2))
        U = np.linalg.qr(rng.normal(size=(n, 2)))[0]
        yield np.c_[X, np.ones(n)], U, "bias"
        yield np.c_[X, np.ones(n)], U, np.c_[np.ones(n), rng.normal(size=n)]


def _claims(u: float) -> list:
    return [u, u + 2.0**-40 * max(1.0, abs(u)), u + 1e-7, u - 1e-12, u - 1e-9, u * (1 - 1e-4), 0.5 * u]


@pytest.mark.parametrize("k", range(10))
def test_integer_claims_decide_as_the_fraction_path(k):
    Phi, U, H = list(_instances())[k]
    res = rg.best_neuron(Phi, U, features=H, strategy="branch-and-bound")
    P = state_problem(Phi, U, H)
    zero = ~np.any(Phi != 0, axis=1)
    rng = np.random.default_rng(k)
    seen = {"c": 0, "d": 0, "proven": 0, "refuted": 0}
    for nd, signs in _leaves(res.certificate.nodes, zero):
        mask = (signs > 0) & ~zero
        if nd[0] == "c" and len(nd) == 4 and seen["c"] < MAX_LEAVES:
            seen["c"] += 1
            rows = np.array(nd[2], dtype=np.int64)
            N = _multipliers(nd[3], rows.size)
            forged = [(rows, N), (rows, 0.5 * N), (rows, np.abs(rng.normal(size=N.shape))),
                      (rows, np.array([[Fraction(int(x * 2**20), 2**20 + 1) for x in r] for r in N], dtype=object)),
                      (None, None)]
            for u in _claims(float(nd[1])):
                for rw, NN in forged:
                    want = fraction_claim(P, mask, [u], rw, NN)
                    assert exact_claim(P, mask, [u], rw, NN) == want, (k, u)
                    seen["proven" if np.isfinite(want) else "refuted"] += 1
        if nd[0] == "d" and len(nd) == 5 and seen["d"] < MAX_LEAVES:
            seen["d"] += 1
            dec, N, mu = nd[2], nd[3], nd[4]
            for Nx, mx in ((N, mu), (None, mu), (None, [-m for m in mu]), (None, [2 * m + 1 for m in mu])):
                got = _lifted_evidence(P.n, signs, zero, float(nd[1]), dec, N, mx)
                if got is not None and Nx is None:
                    got = (got[0], 0.5 * got[1] + np.abs(rng.normal(size=got[1].shape)) * 1e-3, got[2], got[3])
                for u in _claims(float(nd[1])):
                    want = fraction_lifted(P, signs, zero, [u], got)
                    assert exact_lifted(P, signs, zero, [u], got, Meter(np.inf)) == want, (k, u)
                    seen["proven" if np.isfinite(want) else "refuted"] += 1
    assert seen["c"] + seen["d"] > 0 and seen["proven"] > 0 and seen["refuted"] > 0, seen


def test_integer_exclusions_decide_as_the_fraction_path():
    """Exact mode's exclusions on integer forms (``_exact_mode.int_excluded``) against the checker's
    Fraction ones (``_exact_claims.excluded``) on every pattern of small problems whose features hold unit
    vectors and near-unit ones (patterns excluded exactly, nearly, and not at all)."""
    from relu_gating.checker._exact_claims import excluded
    from relu_gating.checker._exact_mode import int_excluded

    rng = np.random.default_rng(11)
    n = 7
    Phi = np.c_[rng.normal(size=(n, 2)), np.ones(n)]
    U = np.linalg.qr(rng.normal(size=(n, 2)))[0]
    e = np.eye(n)
    counts = {True: 0, False: 0}
    for H in (np.c_[np.ones(n), e[0], e[1]], np.c_[np.ones(n), e[2] + 1e-12 * e[3], e[4]], np.c_[e[0] + e[1], e[5]]):
        P = state_problem(Phi, U, H)
        for bits in range(1, 2**n, 3):
            mask = np.array([(bits >> i) & 1 for i in range(n)], dtype=bool)
            want = excluded(P, mask)
            assert int_excluded(P, mask) == want, (bits, want)
            counts[bool(want)] += 1
    assert counts[True] >= 3 and counts[False] >= 3, counts
