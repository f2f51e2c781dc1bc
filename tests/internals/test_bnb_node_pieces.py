"""Pieces of a branch-and-bound expansion (``relu_gating.search.bnb``): the hit-and-run interior
points and the strong-branching scores.

Oracles: a direct check of every point against the node's rows (no code shared with the walk's
carried slacks), and the node bound of each child computed in full
(``relu_gating.search.proofs._node.bound_matrix``, which the rank-one scores must reproduce).
"""

from __future__ import annotations

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
