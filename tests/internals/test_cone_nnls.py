"""The forced-rows NNLS on a working set of the decided rows (relu_gating.search.bnb._cone_nnls).

Oracles: an LP per candidate row (scipy's HiGHS, on ``Phi`` in a QR basis: the row is forced exactly
when the least ``s phi_i theta`` over the node's cone within a box is 0), the exact Farkas check on
rationals (``implied_exact`` on ``Phi``), exact rational products (``fractions.Fraction``) for every
witness, and the full NNLS (``WORKING_SET = False``, the old way) for the classification.  Nodes are
Gaussian, translated, rescaled, with duplicated rows or collinear points, with many decided rows (so
the working set is a small part of them).
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from _fuzz_instances import instance, make_X
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from relu_gating import best_neuron, verify
from relu_gating.search.bnb import _cone_nnls
from relu_gating.search.bnb._cone_nnls import DecidedCone
from relu_gating.search.bnb._lp import WITNESS_MARGIN
from relu_gating.search.proofs._farkas import implied_exact


def _node(kind: str, n: int, d: int, k: int, seed: int):
    """``Phi`` (n x d+1), the node's signs on ``k`` decided rows (those of a random plane through the
    data), its signed unit rows ``G`` in a QR basis, interior points, the undecided rows."""
    rng = np.random.default_rng(seed)
    if kind in ("duplicates", "collinear"):
        X = make_X(kind, n, d, rng)
    else:
        X = rng.normal(size=(n, d)) * (np.logspace(-3, 3, d)[None, :] if kind == "rescaled" else 1.0)
        X = X + (250.0 if kind == "translated" else 0.0)
    Phi = np.c_[X, np.ones(n)]
    Q, R = np.linalg.qr(Phi)
    Gn = Q / np.linalg.norm(Q, axis=1)[:, None]
    theta = rng.normal(size=d + 1)
    z = Gn @ theta
    dec = np.sort(rng.choice(np.flatnonzero(np.abs(z) > 1e-6), size=k, replace=False))
    signs = np.zeros(n, dtype=np.int8)
    signs[dec] = np.where(z[dec] > 0, 1, -1)
    G = signs[dec, None] * Gn[dec]
    pts = [theta / np.linalg.norm(theta)]
    for _ in range(6):  # a few more interior points (near the first: thin cones keep few)
        p = pts[0] + 0.05 * rng.normal(size=d + 1)
        if (G @ p).min() > 1e-6 * np.linalg.norm(p):
            pts.append(p / np.linalg.norm(p))
    return Phi, Gn, signs, dec, G, np.array(pts), np.setdiff1d(np.arange(n), dec)


def _lp_forced(Gn: np.ndarray, G: np.ndarray, i: int, s: int) -> bool:
    out = linprog(s * Gn[i], A_ub=-G, b_ub=np.zeros(G.shape[0]), bounds=[(-1, 1)] * Gn.shape[1], method="highs")
    assert out.status == 0
    return out.fun >= -1e-9


def _exact_witness(G: np.ndarray, g: np.ndarray, v: np.ndarray) -> bool:
    """``G v > 0`` and ``g . v < 0`` in exact rationals (the float rows and point as they are)."""
    fv = [Fraction(x) for x in v.tolist()]

    def dot(row):
        return sum((Fraction(a) * b for a, b in zip(row.tolist(), fv)), Fraction(0))

    return all(dot(row) > 0 for row in G) and dot(g) < 0


def _classify_all(G, dec, pts, rank, targets, working_set, monkeypatch):
    monkeypatch.setattr(_cone_nnls, "WORKING_SET", working_set)
    cone = DecidedCone(G, dec, pts, rank)
    return [cone.classify(g) for g in targets], cone


NODE_CASES = dict(kind=st.sampled_from(["gauss", "translated", "rescaled", "duplicates", "collinear"]),
                  d=st.integers(2, 5), k=st.integers(4, 70), seed=st.integers(0, 10_000))


@settings(derandomize=True, deadline=None, max_examples=10)
@given(**NODE_CASES)
def test_the_working_set_classifies_each_row_as_the_full_nnls_and_each_claim_holds(kind, d, k, seed):
    with pytest.MonkeyPatch.context() as mp:
        _check_node(kind, d, k, seed, mp)


@pytest.mark.slow
@settings(derandomize=True, deadline=None, max_examples=60)
@given(**NODE_CASES)
def test_the_working_set_classifies_each_row_as_the_full_nnls_and_each_claim_holds_slow(kind, d, k, seed):
    with pytest.MonkeyPatch.context() as mp:
        _check_node(kind, d, k, seed, mp)


def _check_node(kind, d, k, seed, mp):
    Phi, Gn, signs, dec, G, pts, und = _node(kind, 90, d, k, seed)
    rank = d + 1
    pairs = [(int(i), s) for i in und[:25].tolist() for s in (1, -1)]
    targets = [s * Gn[i] for i, s in pairs]
    new, cone = _classify_all(G, dec, pts, rank, targets, True, mp)
    old, _ = _classify_all(G, dec, pts, rank, targets, False, mp)
    for (i, s), (kind_new, got), (kind_old, _) in zip(pairs, new, old):
        forced = _lp_forced(Gn, G, i, s)
        if kind_new == "farkas":  # a float claim, checked exactly by the caller (else: the LP, as before)
            assert forced, (i, s)
            proven = got.size <= rank and implied_exact(Phi, signs, i, s, got.tolist())
            assert proven or kind in ("duplicates", "collinear"), (i, s, got)  # generic data: every claim holds
        elif kind_new == "witness":  # a true interior point of the other side: the row is not forced
            assert not forced and _exact_witness(G, s * Gn[i], got), (i, s)
            assert (G @ got).min() > WITNESS_MARGIN
        # the same answer as the full NNLS, or a conclusive one where it gave up (to the LP)
        assert kind_new == kind_old or kind_old == "lp", (i, s, kind_new, kind_old)
    assert sum(x[0] == "lp" for x in new) <= sum(x[0] == "lp" for x in old)


def test_a_large_node_is_answered_on_a_small_working_set(monkeypatch):
    """With many decided rows the NNLS runs on few of them (the cutting planes add what the witness
    checks need), and a row forced by rows outside the first working set is still found."""
    Phi, Gn, signs, dec, G, pts, und = _node("gauss", 400, 5, 300, 3)
    targets = [s * Gn[i] for i in und.tolist() for s in (1, -1)]
    new, cone = _classify_all(G, dec, pts, 6, targets, True, monkeypatch)
    old, _ = _classify_all(G, dec, pts, 6, targets, False, monkeypatch)
    assert cone.S is not None and cone.S.size < dec.size // 4
    assert all(a[0] == b[0] or b[0] == "lp" for a, b in zip(new, old))
    assert sum(x[0] == "farkas" for x in new) > 0 and sum(x[0] == "witness" for x in new) > 0
    assert cone.hits > 0  # kept simplices answered rows without an NNLS


def test_the_centered_push_finds_witnesses_the_fixed_push_misses():
    """From a first interior point 1e-8 from a wall, ``w + 1e-3 p`` and ``w + 1e-6 p`` leave the cone;
    the push towards a central point with ``eps`` chosen from the slacks does not (checked exactly)."""
    from relu_gating.search.bnb._cone_nnls import _old_push, push

    G = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    g = np.array([1.0, 1.0, -1.0]) / np.sqrt(3.0)  # not forced: (1, 1, 3) is inside, on its other side
    w = np.array([0.0, 0.0, 1.0])  # on the walls x = 0, y = 0, with g . w < 0
    near = np.array([1e-8, 0.5, 0.5])
    near /= np.linalg.norm(near)
    assert _old_push(G, g, w, near) is None
    c = np.ones(3) / np.sqrt(3.0)
    v = push(G, g, w, c)
    assert v is not None and _exact_witness(G, g, v)


@pytest.mark.parametrize("seed,d,n", [(1, 3, 12), (2, 4, 10), pytest.param(1, 5, 14, marks=pytest.mark.slow),
                                      pytest.param(5, 5, 22, marks=pytest.mark.slow), pytest.param(9, 5, 22, marks=pytest.mark.slow)])
def test_the_search_certifies_the_enumerations_value_either_way_and_each_certificate_verifies(seed, d, n, monkeypatch):
    """Ranks 4-6 (at 6 the NNLS pass; at n = 22 nodes with more decided rows than the first working set):
    the branch and bound with the working set and with the full NNLS certifies the enumeration's value;
    both certificates verify."""
    I = instance(seed, kind="gauss", n=n, d=d, K=3)
    e = best_neuron(I.Phi, I.U, features=I.features)
    assert e.certified
    for ws in (True, False):
        monkeypatch.setattr(_cone_nnls, "WORKING_SET", ws)
        b = best_neuron(I.Phi, I.U, features=I.features, strategy="branch-and-bound")
        assert b.certified and abs(b.value - e.value) <= 1e-9 * max(1.0, abs(e.value)), (ws, b.value, e.value)
        rep = verify(json.loads(json.dumps(b.to_dict())), I.Phi, I.U, I.features)
        assert rep.valid and rep.certified


@settings(derandomize=True, deadline=None, max_examples=10)
@given(**NODE_CASES)
def test_the_batched_simplex_test_answers_each_row_as_the_per_row_test(kind, d, k, seed):
    """``watch`` then ``classify(at=)`` (each kept simplex tested on every registered row once, when kept) gives
    every row the answer of the per-row test (``BATCH = False``): the same kind and the same Farkas rows (the
    first kept simplex holding it), and each Farkas claim it makes holds exactly (generic data)."""
    Phi, Gn, signs, dec, G, pts, und = _node(kind, 90, d, k, seed)
    rank = d + 1
    pairs = [(int(i), s) for i in und[:30].tolist() for s in (1, -1)]
    T = np.array([s * Gn[i] for i, s in pairs]).reshape(len(pairs), Gn.shape[1])
    answers = {}
    for batch in (True, False):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_cone_nnls, "BATCH", batch)
            cone = DecidedCone(G, dec, pts, rank)
            cone.watch(T)
            answers[batch] = ([cone.classify(g, j) for j, g in enumerate(T)], cone.hits)
    (new, hits_new), (old, hits_old) = answers[True], answers[False]
    assert hits_new == hits_old
    for (i, s), (kn, gn), (ko, go) in zip(pairs, new, old):
        assert kn == ko, (i, s, kn, ko)
        if kn == "farkas":
            assert np.array_equal(np.sort(gn), np.sort(go))
            assert kind in ("duplicates", "collinear") or (gn.size > rank or implied_exact(Phi, signs, i, s, gn.tolist()))
