"""Pieces of a branch-and-bound expansion (``relu_gating.search.bnb``): the hit-and-run interior
points and the strong-branching scores.

Oracles: a direct check of every point against the node's rows (no code shared with the walk's
carried slacks), and the node bound of each child computed in full
(``relu_gating.search.proofs._node.bound_matrix``, which the rank-one scores must reproduce).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from relu_gating.search.proofs._node import bound_matrix, bound_parts, node_bound, node_problem
from relu_gating.search.bnb._rows import sample_interior
from relu_gating.search.bnb._score import child_bounds
from relu_gating.search.objectives import make_objective


def _problem(seed: int, n: int, d: int, shift: float):
    """A node problem of Gaussian data (translated by ``shift``) and a random cone of signs."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + shift
    Phi = np.c_[X, np.ones(n)]
    U, _ = np.linalg.qr(rng.normal(size=(n, 3)))
    obj = make_objective(Phi, U, "bias")
    P = node_problem(obj.Phi, obj.Psi, obj.M, obj.Q_H, obj.feature_matrix)
    return obj, P, rng


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(6, 40), d=st.integers(1, 4), decided=st.floats(0.0, 0.9),
       shift=st.sampled_from([0.0, 250.0]))
def test_interior_points_lie_strictly_inside_the_cone(seed, n, d, decided, shift):
    """Every point of the walk satisfies ``G v > margin ||v||`` when checked directly; the start
    points come first; the walk is reproducible from its seed."""
    obj, _, rng = _problem(seed, n, d, shift)
    Gn = obj.Psi / np.linalg.norm(obj.Psi, axis=1)[:, None]
    v0 = rng.normal(size=obj.rank)
    rows = np.flatnonzero(rng.uniform(size=n) < decided)
    G = np.sign(Gn[rows] @ v0)[:, None] * Gn[rows]  # the cone of v0's signs on these rows
    G = G[np.abs(Gn[rows] @ v0) > 1e-6]
    pts = sample_interior(G, v0[None], np.random.default_rng(seed))
    again = sample_interior(G, v0[None], np.random.default_rng(seed))
    assert np.array_equal(pts, again)
    assert np.allclose(pts[0], v0 / np.linalg.norm(v0))
    assert np.allclose(np.linalg.norm(pts, axis=1), 1.0)
    if G.shape[0]:
        assert np.all(G @ pts[1:].T > 1e-9 * np.linalg.norm(pts[1:], axis=1))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(8, 40), d=st.integers(1, 4), shift=st.sampled_from([0.0, 250.0]))
def test_strong_branching_scores_are_the_childrens_bounds(seed, n, d, shift):
    """The rank-one children's scores match each child's K x K bound matrix computed in full, with
    the node's matrix passed in (as the search does) or computed inside."""
    obj, P, rng = _problem(seed, n, d, shift)
    signs = rng.choice(np.array([-1, 0, 1], dtype=np.int8), size=n, p=[0.3, 0.4, 0.3])
    cands = np.flatnonzero(signs == 0)
    if cands.size == 0:
        return
    u, z, T = bound_parts(P, signs)
    assert u == node_bound(P, signs) and np.allclose(node_bound(P, signs, want_vector=True)[1], z)
    given_T = child_bounds(P, signs, cands, T)
    inside = child_bounds(P, signs, cands)
    if given_T is None:
        assert inside is None
        return
    assert inside is not None
    for s, got, again in zip((1, -1), given_T, inside):
        assert np.array_equal(got, again)
        for j, i in enumerate(cands.tolist()):
            sg = signs.copy()
            sg[i] = s
            full = np.linalg.eigvalsh(bound_matrix(P, sg)[0])[-1]
            assert abs(got[j] - full) <= 1e-8 * (1.0 + P.trM)


def _score_oracle(plus: float, minus: float, claim: float, level: float) -> Fraction:
    """The product rule in exact rationals, written from its definition: each child's gain is the
    parent's claim less the larger of the child's bound and the level, clamped to [0, claim - level],
    and counts as at least 1e-6 of that gap."""
    c, lv = Fraction(claim), Fraction(level)
    eps = Fraction(1, 10**6) * (c - lv)

    def gain(b: float) -> Fraction:
        return max(min(c - max(Fraction(b), lv), c - lv), Fraction(0))

    return max(gain(plus), eps) * max(gain(minus), eps)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 12))
def test_split_scores_rank_candidates_as_the_product_of_the_childrens_gains(seed, k):
    """The order :func:`split_scores` gives candidates is the exact product rule's (ties aside), and a
    split that lowers both children beats one that lowers only one to the same larger bound (which the
    larger child's bound alone could not tell apart); the search's split (``_branch_row``) is the best scored."""
    from relu_gating.search.bnb._score import split_scores

    rng = np.random.default_rng(seed)
    claim, level = 1.0, float(rng.uniform(0.5, 0.99))
    plus, minus = rng.uniform(level - 0.2, claim + 0.1, size=(2, k))
    got = split_scores(plus, minus, claim, level)
    want = [_score_oracle(p, m, claim, level) for p, m in zip(plus, minus)]
    for i in range(k):
        for j in range(k):
            if want[i] > want[j] * (1 + Fraction(1, 10**9)):
                assert got[i] > got[j]
    tied = split_scores(np.array([0.95, 0.9]), np.array([1.0, 1.0]), 1.0, 0.5)  # the larger child ties at 1
    assert tied[1] > tied[0]
    settled = split_scores(np.array([0.4, 0.5]), np.array([0.8, 0.8]), 1.0, 0.5)
    assert settled[0] == settled[1]  # below the level a child gains the whole gap, no more


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(8, 30), d=st.integers(1, 3))
def test_the_search_splits_on_the_row_of_best_product_score(seed, n, d):
    """``Search._branch_row`` on a random node returns a candidate whose exact product score (children's
    bounds computed in full, :func:`_score_oracle`, the gains counted from the node's bound not capped)
    is within rounding of the best candidate's; also once the node's claim is lowered below its bound
    (by the lifted bound), where gains counted from the claim would be zero for most children.  A node
    whose bound reaches the cap is split on the row whose larger child bound is smallest."""
    from relu_gating.search.bnb._growth import STRONG
    from relu_gating.search.bnb._search import Search

    obj, P, rng = _problem(seed, n, d, 0.0)
    s = Search(obj, 1.0, 1e-9, "auto", seed)
    s.best_value = float(rng.uniform(0.2, 0.8)) * P.trM
    signs = rng.choice(np.array([-1, 0, 1], dtype=np.int8), size=n, p=[0.2, 0.6, 0.2])
    free = np.flatnonzero((signs == 0) & ~s.P.zero_rows)
    if free.size < 2:
        return
    u, z, T = bound_parts(s.P, signs)
    node = s._node(signs, rng.normal(size=(1, obj.rank)), 1)
    level = (s.best_value + s.tol) / s.alpha
    eig = float(np.linalg.eigvalsh(bound_matrix(s.P, signs)[0])[-1])
    cands = free[np.argsort(-np.abs(obj.M[free] @ z))[:STRONG]]

    def score(i: int) -> Fraction:
        top_u = max(node.claim, eig)  # the bound, not capped, with the node's claim as it is now
        kids = []
        for sg in (1, -1):
            child = signs.copy()
            child[i] = sg
            kids.append(float(np.linalg.eigvalsh(bound_matrix(s.P, child)[0])[-1]))
        if top_u >= s.P.cap:  # at the cap: the larger child's bound, smallest first
            return Fraction(-max(kids)) + 10
        return _score_oracle(kids[0], kids[1], top_u, level)

    for lowered in (False, True):
        if lowered and node.claim > level:
            node.claim = level + 0.2 * (node.claim - level)
        best = max(score(int(i)) for i in cands)
        got = s._branch_row(signs.copy(), free, node)
        assert got in cands.tolist()
        assert score(got) >= best * (1 - Fraction(1, 10**6)) - Fraction(1, 10**9)
