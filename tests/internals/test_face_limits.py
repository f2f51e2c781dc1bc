"""The face step's limits (``search/_exact/faces.py``, issue 37): one-sample faces in closed form on
chambers of any size, faces highest first, and the exact work of large chambers charged to the
claims budget.  References: the generic sub-support path for the closed form, and a brute force
over the one-sample faces in exact rationals for what is listed."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relu_gating.search._exact import faces as F


def _pencil(seed: int, t: int, K: int) -> tuple[np.ndarray, np.ndarray]:
    """``(M M^T, I - q q^T)`` on ``t`` samples: ``M`` (t x K) with one dominant row, ``q`` a unit
    feature column (or none when ``K`` is even)."""
    rng = np.random.default_rng([41, seed, t, K])
    M = rng.standard_normal((t, K)) * 0.05
    M[:, 0] = -np.abs(rng.standard_normal(t)) * 0.2  # negative couplings: one-sample faces exist
    a = int(rng.integers(t))
    M[a] = 0.0
    M[a, 0] = 1.5
    B = np.eye(t)
    if K % 2:
        q = rng.standard_normal(t)
        q /= np.linalg.norm(q)
        B = B - np.outer(q, q) * 0.5
    return M @ M.T, B


def _exact_one_sample(A: np.ndarray, B: np.ndarray, lo: float, hi: float) -> list[int]:
    """Samples ``a`` with ``lo <= A_aa / B_aa < hi`` and ``A_ja - (A_aa / B_aa) B_ja <= 0`` for every
    ``j != a``, in exact rationals, highest value first."""
    t = A.shape[0]
    Af = [[Fraction(float(x)) for x in r] for r in A]
    Bf = [[Fraction(float(x)) for x in r] for r in B]
    out = []
    for a in range(t):
        if Bf[a][a] <= 0:
            continue
        lam = Af[a][a] / Bf[a][a]
        if lo <= lam < hi and all(Af[j][a] - lam * Bf[j][a] <= 0 for j in range(t) if j != a):
            out.append((lam, a))
    return [a for _, a in sorted(out, reverse=True)]


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**20), t=st.integers(2, 12), K=st.integers(1, 3))
def test_closed_form_matches_the_generic_one_sample_faces(seed, t, K):
    """Up to 12 samples the generic path lists sub-supports; its one-sample faces are exactly those
    of the closed form, with the same values and neurons."""
    A, B = _pencil(seed, t, K)
    lo, hi = -1.0, float(np.max(np.diag(A) / np.diag(B))) + 1.0
    generic = [(lam, sup, h) for lam, sup, h in F.faces(A, B, lo, hi) if len(sup) == 1]
    closed = F._one_sample_faces(A, B, lo, hi)
    assert [s for _, s, _ in generic] == [s for _, s, _ in closed]
    for (l1, _, h1), (l2, _, h2) in zip(generic, closed):
        assert abs(l1 - l2) <= 1e-12 * max(1.0, abs(l1)) and np.allclose(h1, h2, rtol=1e-12)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**20), t=st.integers(13, 40), K=st.integers(1, 3))
def test_large_chambers_list_one_sample_faces_highest_first(seed, t, K):
    """Beyond 12 samples: only one-sample faces, highest first, the same samples as the exact brute
    force wherever its KKT signs are not within rounding of zero."""
    A, B = _pencil(seed, t, K)
    lo, hi = -1.0, float(np.max(np.diag(A) / np.diag(B))) + 1.0
    got = F.faces(A, B, lo, hi)
    assert all(len(sup) == 1 for _, sup, _ in got)
    lams = [lam for lam, _, _ in got]
    assert lams == sorted(lams, reverse=True)
    want = _exact_one_sample(A, B, lo, hi)
    assert set(want) <= {s[0] for _, s, _ in got}  # the float test allows rounding, never less
    assert want[:1] == [s[0] for _, s, _ in got][:1] or len(got) > len(want)


def test_faces_are_listed_and_highest_first():
    """Not vacuous: over 20 seeds the generic path (8 samples) and the closed form (20) list faces,
    several at a time, highest first; the top one-sample face is the exact brute force's."""
    counts = []
    for seed in range(20):
        for t in (8, 20):
            A, B = _pencil(seed, t, 2)
            got = F.faces(A, B, -1.0, 100.0)
            lams = [lam for lam, _, _ in got]
            assert lams == sorted(lams, reverse=True)
            one = [s[0] for _, s, _ in got if len(s) == 1]
            assert one[:1] == _exact_one_sample(A, B, -1.0, 100.0)[:1]
            counts.append(len(got))
    assert min(counts) >= 1 and max(counts) >= 2, counts


class _Budget:
    def __init__(self, left: int) -> None:
        self.left = left


@pytest.mark.parametrize("t, units", [(1, 0), (12, 0), (13, 2), (24, 8), (25, 10), (60, 125)])
def test_charge_counts_a_large_elimination_in_twelve_sample_units(t, units):
    b = _Budget(1000)
    assert F._charge(b, t) and b.left == 1000 - units
    small = _Budget(units - 1) if units else None
    if small is not None:
        assert not F._charge(small, t) and small.left == units - 1  # refused, nothing spent
    assert F._charge(None, t)
