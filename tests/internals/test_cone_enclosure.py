"""The float filter of the exact pricing maximum (relu_gating.layers._cone_pricing.ConePricer._exact_max).

``_exact_max`` evaluates in integers only the chambers whose rigorous float enclosure reaches the
largest lower end.  Oracles: exact rationals (``fractions.Fraction``) of every chamber's value, for the
enclosure of each chamber (well and badly conditioned Gram matrices, the largest admitted integers)
and for the maximum over all chambers (the reference below evaluates every chamber exactly, as the
code before the filter did), on d = 2 and d = 3 data and on near-ties built to sit inside the margin.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from relu_gating.layers._cone_pricing import ConePricer, _adj3
from relu_gating.layers.variation import _Pricer, normalized_neurons
from relu_gating.patterns import enumerate_patterns


def _phi(n: int, d: int, seed: int, thin: float = 1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[:, -1] *= thin
    return np.c_[np.round(X * 2.0**12) / 2.0**12, np.ones(n)]


def _reference_b(cp: ConePricer, c, k, mi, mv, i) -> list:
    """``b = c + sum_t M_t sg_t P_(row t)`` of chamber ``i`` in Python integers (``M`` the rounded multipliers)."""
    b = [int(x) for x in c[i]]
    for t in range(mi.shape[1]):
        M = max(round(float(mv[i, t]) * 2.0**k), 0)
        if M >= 2**39:  # the cap: mu = 0
            continue
        sg = 1 if cp.S[i, mi[i, t]] else -1
        b = [b[j] + M * sg * int(cp.P[mi[i, t], j]) for j in range(len(b))]
    return b


def _reference_max(cp: ConePricer, c, k, mi, mv, pos, two) -> Fraction:
    """Every chamber's ``min(b^T adj b / det, pos, two)`` in Fractions (no float anywhere), the max."""
    out = Fraction(0)
    for i in range(cp.S.shape[0]):
        v = Fraction(int(pos[i]))
        if cp.full[i]:
            bi = _reference_b(cp, c, k, mi, mv, i)
            m = len(bi)
            q = sum(bi[a] * int(cp.adj[i, a, t]) * bi[t] for a in range(m) for t in range(m))
            v = min(v, Fraction(q, int(cp.det[i])))
        if i in two:
            v = min(v, two[i])
        out = max(out, v)
    return out


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("d,n,seed,thin", [(2, 14, 0, 1.0), (2, 16, 1, 1.0), (3, 11, 2, 1.0), (3, 12, 3, 0.02)])
def test_filtered_maximum_equals_the_exact_maximum_over_every_chamber(d, n, seed, thin, batched, monkeypatch):
    Phi = _phi(n, d, seed, thin)
    cp = ConePricer(Phi, enumerate_patterns(Phi), batched=batched)
    seen = []
    real = ConePricer._exact_max

    def checked(self, c, k, mi, mv, pos, two, est):
        got = real(self, c, k, mi, mv, pos, two, est)
        seen.append((got, _reference_max(self, c, k, mi, mv, pos, two)))
        return got

    monkeypatch.setattr(ConePricer, "_exact_max", checked)
    rng = np.random.default_rng(40 + seed)
    y = rng.standard_normal(n)
    for _ in range(3):  # warm multipliers across rounds, both signs each round
        cp.bound(y)
        y = y + 0.3 * rng.standard_normal(n)
    assert len(seen) == 6
    for got, ref in seen:
        assert got == ref
    mi, mv = cp.mu[1]
    assert np.count_nonzero(mv) > 0  # the multipliers were used (b differs from c somewhere)
    rows = np.arange(cp.S.shape[0])
    c = rng.integers(-2**40, 2**40, size=(rows.size, Phi.shape[1]))
    b = cp._b(c, 24, mi, mv, rows)
    assert np.any(b != c)
    assert all([int(x) for x in b[i]] == _reference_b(cp, c, 24, mi, mv, i) for i in rows.tolist())


@pytest.mark.parametrize("seed", range(4))
def test_enclosure_holds_every_exact_value_at_the_largest_integers_and_ill_conditioned_grams(seed):
    rng = np.random.default_rng(seed)
    m, N = 4, 400
    A = rng.integers(-2**19, 2**19, size=(N, 6, m))
    A[N // 2:, :, -1] = A[N // 2:, :, 0] + rng.integers(-1, 2, size=(N - N // 2, 6))  # nearly dependent columns
    G = np.einsum("nri,nrj->nij", A, A)  # integer Gram matrices, entries near 2^40
    adj, det = _adj3(G)
    keep = np.array([x != 0 for x in det])
    cp = ConePricer.__new__(ConePricer)
    cp.full, cp.adj, cp.det, cp._adjf, cp._detf = keep, adj, det, None, None
    full = np.flatnonzero(keep)
    b = rng.integers(-2**62, 2**62, size=(full.size, m), dtype=np.int64)
    # b along the adjugate's smallest direction on half of them: q far below T (cancellation)
    for t in range(0, full.size, 2):
        w, V = np.linalg.eigh(adj[full[t]].astype(float))
        v = V[:, 0] / np.abs(V[:, 0]).max() * 2.0**61
        b[t] = np.round(v).astype(np.int64)
    pos = rng.integers(0, 2**58, size=N, dtype=np.int64)
    pos[full] = 2**62  # the Gram bound decides there
    lo, hi = cp._enclose(full, b, pos, {})
    for t, i in enumerate(full.tolist()):
        bi = [int(x) for x in b[t]]
        q = sum(bi[a] * int(adj[i, a, s]) * bi[s] for a in range(m) for s in range(m))
        val = min(Fraction(q, int(det[i])), Fraction(int(pos[i])))
        assert Fraction(lo[i]) <= val <= Fraction(hi[i])
        if i < N // 2 and t % 2:  # well conditioned, b at random: the enclosure is also tight
            assert hi[i] - lo[i] <= 1e-9 * hi[i]
    for i in np.flatnonzero(~keep).tolist():
        assert Fraction(lo[i]) <= Fraction(int(pos[i])) <= Fraction(hi[i])


def test_near_ties_inside_the_margin_are_decided_exactly():
    # many chambers whose values differ by one part in 2^60: every float order is a guess, the integers decide
    Phi = _phi(10, 3, 7)
    cp = ConePricer(Phi, enumerate_patterns(Phi), batched=True)
    N = cp.S.shape[0]
    base = 2**58
    pos = np.full(N, base, dtype=np.int64)
    winner = N // 3
    pos[winner] += 1  # the unique maximum, 2^-58 above the rest in relative terms
    c = np.zeros((N, 4), dtype=np.int64)
    c[:, 0] = 2**50  # Gram values (>= 2^69) far above pos: pos decides every full chamber
    mi, mv = np.zeros((N, 4), dtype=np.int64), np.zeros((N, 4))
    got = cp._exact_max(c, 0, mi, mv, pos, {}, np.zeros(N))
    assert got == _reference_max(cp, c, 0, mi, mv, pos, {})
    assert got == Fraction(base + 1)


@pytest.mark.parametrize("d,seed,thin", [(2, 0, 1.0), (3, 1, 1.0), (3, 2, 0.05)])
def test_cold_pass_bound_equals_the_certified_search_and_lies_above_sampled_neurons(d, seed, thin):
    # the per-chamber pricing of variation_norm's "auto" (batched=False) starts each sign with the cold pass
    n = 12
    Phi = _phi(n, d, seed, thin)
    pats = enumerate_patterns(Phi)
    cp = ConePricer(Phi, pats, batched=False)
    rng = np.random.default_rng(60 + seed)
    y = rng.standard_normal(n)
    T = np.random.default_rng(seed).standard_normal((100_000, d + 1))
    D, _ = normalized_neurons(Phi, T)
    for _ in range(2):  # the cold round, then a warm one
        B, yq, thetas, exact = cp.bound(y)
        assert Fraction(B) ** 2 >= exact
        assert B >= float(np.max(np.abs(yq @ D))) * (1 - 1e-12)
        g, _ = _Pricer(Phi, pats, None).certified(yq, 1.0)
        assert abs(B - g) <= 1e-6 * g
        y = y + 0.3 * rng.standard_normal(n)
