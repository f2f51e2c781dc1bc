"""Zero chambers: a chamber whose closed cone holds no neuron, proven by an exact positive
dependency of its signed rows (``["x", rows, y]`` leaves; ``relu_gating/search/bnb/_zero.py``).

The reference is exact rational arithmetic: a dependency is accepted only if ``sum y_k s_k phi_k``
is 0 in ``Fraction`` (computed here, not by the code under test), and a chamber with an exact
strict interior point on an active row (checked in ``Fraction``) must never get one, however close
to a dependency its rows are in floating point.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relu_gating.search.proofs._problem import exact_rank
from relu_gating.checker import state_problem, walk_tree
from relu_gating.checker._tree import walk
from relu_gating.errors import CertificateError
from relu_gating.search.bnb._search import Search
from relu_gating.search.bnb._tree_build import Node, _json
from relu_gating.search.bnb._zero import positive_dependency
from relu_gating.search.objectives import make_objective, with_rank

#: Fourteen rows of standardized iris (with the bias) and their signs in the chamber that held iris
#: greedy step 4 at alpha 0.9922: in float64 an LP finds a largest margin of 0 and every row an
#: implicit equality; in exact arithmetic the twelve active rows are zero on the closed cone.
IRIS_ROWS = [
    ["-0x1.0a5cef5df8405p+1", "-0x1.5928089583288p-1", "-0x1.e07a9b59b9dfdp-3", "-0x1.a5ea6e8e91afap-4"],
    ["-0x1.2e9f0ec15b1e8p+1", "-0x1.5e1d23134c7a2p-2", "0x1.6a193b7a2537ep-5", "-0x1.d0edfd1e62ae7p-6"],
    ["-0x1.265238d691894p+1", "-0x1.31ddb1628ba7fp-1", "0x1.75ec9d5187f47p-4", "0x1.0e276ab5ea556p-4"],
    ["-0x1.2ad57fca43f96p+1", "-0x1.1d861d526e7b7p+0", "0x1.291e0f05d13cfp-3", "0x1.b80fbcb850a79p-6"],
    ["-0x1.179810cd894cbp+1", "-0x1.e045174e6a31ap-2", "-0x1.03db1ef19e1f5p-2", "0x1.46dadefe5dd29p-5"],
    ["-0x1.1bf632f51cadfp+1", "-0x1.75150ad6d1997p-1", "-0x1.d8e7fda0a66a9p-3", "-0x1.3ddac70712c6cp-9"],
    ["-0x1.5109718fb1790p+1", "-0x1.ec4a9c2956ef0p-1", "0x1.724537ae0d54fp-3", "0x1.3ad3ca0cda3f2p-6"],
    ["-0x1.f3ac337e08e31p+0", "-0x1.4051145c8a84cp-1", "-0x1.38f9f31d9dc7ep-2", "-0x1.64db6747ca4a3p-5"],
    ["-0x1.1a997b64adf12p+1", "-0x1.a61ba2a448bc9p-3", "-0x1.cdb450ad27105p-3", "-0x1.59ec5eec30719p-3"],
    ["-0x1.36fe3341a4671p+1", "-0x1.cef0afae391a2p-1", "0x1.8bc919a4bd19fp-3", "0x1.3f1bcfd678ff3p-7"],
    ["-0x1.dbade9ce16722p+0", "-0x1.2b306b7d6ee3dp+1", "-0x1.a2458d53f4b38p-3", "-0x1.28d216515d220p-2"],
    ["-0x1.46dd9f797c9e1p+1", "-0x1.ea995f0e43f9ap-2", "0x1.391ad7492c078p-2", "0x1.10ccaf6236b6ep-4"],
    ["-0x1.08ed6196ea27ep+1", "-0x1.6c0f1a528737ap-1", "-0x1.05db47e086fb0p-4", "-0x1.1f459e8f30430p-3"],
    ["-0x1.327aec4df1f6fp+1", "-0x1.8b844cd7cf966p-2", "0x1.1da15947afd77p-3", "0x1.900deb054a96dp-5"],
]
IRIS_SIGNS = "+--+++++++++++"


def _iris_chamber():
    X = np.array([[float.fromhex(v) for v in r] for r in IRIS_ROWS])
    return np.c_[X, np.ones(len(X))], np.array([1 if c == "+" else -1 for c in IRIS_SIGNS], dtype=np.int8)


def _exact_zero(Phi, signs, rows, y) -> bool:
    """The oracle: ``sum_k y_k s_k phi_k = 0`` in Fractions, ``y > 0``, every active row listed."""
    total = [sum((Fraction(v) * int(signs[k]) * Fraction(float(Phi[k, t])) for k, v in zip(rows, y)), Fraction(0))
             for t in range(Phi.shape[1])]
    return all(t == 0 for t in total) and all(Fraction(v) > 0 for v in y) and set(np.flatnonzero(signs > 0)) <= set(rows)


def _exact_inside(Phi, signs, theta) -> bool:
    """``theta`` strictly inside the chamber on every active row and in its closed cone, in Fractions."""
    th = [Fraction(float(t)) for t in theta]
    z = [sum((Fraction(float(p)) * t for p, t in zip(row, th)), Fraction(0)) for row in Phi]
    return all(v > 0 if s > 0 else v <= 0 for v, s in zip(z, signs))


def _search(Phi, seed=0):
    rng = np.random.default_rng(seed)
    U = np.linalg.qr(rng.normal(size=(Phi.shape[0], 2)))[0]
    obj = with_rank(make_objective(Phi, U, "bias"), exact_rank(Phi))
    return Search(obj, 1.0, 1e-9, "auto", seed, True), U


def _path_tree(signs, leaf):
    """Splits on every decided row in order down to the chamber ``signs`` (its leaf ``leaf``); every
    other side a ``b`` leaf at 1.0 (the gain's own bound). Preorder: a split's + subtree first."""
    out, after = [], []
    for i in np.flatnonzero(signs != 0).tolist():
        out.append(["s", i])
        if signs[i] < 0:
            out.append(["b", 1.0])  # the + side, before the path's - side
        else:
            after.append(["b", 1.0])  # the - side, after the whole + subtree
    return out + [leaf] + after[::-1]


def test_iris_step_4_chamber_is_a_zero_chamber_the_checker_accepts():
    Phi, signs = _iris_chamber()
    search, U = _search(Phi)
    node = Node(signs.copy(), np.zeros((1, search.obj.rank)), 1.0, None)
    search.chamber(node)
    assert node.kind == "x" and search.stats["zero_chambers"] == 1
    leaf = _json(node)
    rows, y = leaf[1], leaf[2]
    assert _exact_zero(Phi, signs, rows, y)
    P = state_problem(Phi, U, "bias")
    nodes = _path_tree(signs, leaf)
    for exact in (False, True):
        leaves, reasons, _ = walk(nodes, P, exact)
        assert not reasons and dict((i, p) for i, _, p in leaves)[nodes.index(leaf)] == -np.inf


@pytest.mark.parametrize("incumbent", [0.05, 0.5, 0.99])
def test_iris_step_4_chamber_with_an_incumbent_is_settled_and_the_checker_accepts_it(incumbent):
    """With an incumbent (a finite target) the chamber, which has no strict interior point, is tried by dual
    evidence before the zero proof: settled either way (an ``"x"`` leaf, or a ``"c"`` leaf claiming at most
    the incumbent), and the checker accepts the path to it in floats and in exact arithmetic."""
    Phi, signs = _iris_chamber()
    search, U = _search(Phi)
    search.best_value = incumbent
    node = Node(signs.copy(), np.zeros((1, search.obj.rank)), 1.0, None)
    search.chamber(node)
    leaf = _json(node)
    assert node.kind == "x" or (node.kind == "c" and node.claim <= incumbent), (node.kind, node.claim)
    P = state_problem(Phi, U, "bias")
    nodes = _path_tree(signs, leaf)
    for exact in (False, True):
        leaves, reasons, _ = walk(nodes, P, exact)
        assert not reasons
        assert dict((i, p) for i, _, p in leaves)[nodes.index(leaf)] <= incumbent


def test_iris_chamber_is_thin_in_floats():
    """Why floats cannot decide it: an LP's largest margin in the cone is 0 to rounding."""
    from scipy.optimize import linprog

    Phi, signs = _iris_chamber()
    S = signs[:, None] * Phi
    res = linprog(-np.r_[np.zeros(5), 1.0], A_ub=np.c_[-S, np.ones(len(S))], b_ub=np.zeros(len(S)),
                  bounds=[(-1, 1)] * 5 + [(0, 1)], method="highs")
    assert res.status == 0 and -res.fun < 1e-9


@pytest.mark.parametrize("forge", ["drop_active", "perturb", "negative", "duplicate", "undecided", "short"])
def test_forged_zero_leaves_are_refused(forge):
    Phi, signs = _iris_chamber()
    search, U = _search(Phi)
    node = Node(signs.copy(), np.zeros((1, search.obj.rank)), 1.0, None)
    search.chamber(node)
    _, rows, y = _json(node)
    rows, y = list(rows), list(y)
    k = next(i for i, r in enumerate(rows) if signs[r] > 0)
    sg = signs.copy()
    if forge == "drop_active":
        del rows[k], y[k]
    elif forge == "perturb":
        y[k] = y[k] + "1" if "/" not in y[k] else y[k].split("/")[0] + "1/" + y[k].split("/")[1]
    elif forge == "negative":
        y[k] = "-" + y[k]
    elif forge == "duplicate":
        rows, y = rows + [rows[k]], y + [y[k]]
    elif forge == "undecided":
        sg[rows[0]] = 0  # no split on a listed row: the leaf is not a chamber
    else:
        y = y[:-1]
    _, reasons, _ = walk_tree(_path_tree(sg, ["x", rows, y]), state_problem(Phi, U, "bias"))
    assert reasons and "excluded leaf" in reasons[0], reasons


def test_a_float_multiplier_is_malformed():
    Phi, signs = _iris_chamber()
    search, U = _search(Phi)
    node = Node(signs.copy(), np.zeros((1, search.obj.rank)), 1.0, None)
    search.chamber(node)
    _, rows, y = _json(node)
    with pytest.raises(CertificateError, match="zero leaf's multiplier"):
        walk_tree(_path_tree(signs, ["x", rows, [1.5] + y[1:]]), state_problem(Phi, U, "bias"))


@settings(derandomize=True, max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(5, 12), d=st.integers(1, 3), gap=st.sampled_from([1e-3, 1e-9, 1e-13]))
def test_no_dependency_where_an_exact_interior_point_exists(seed, n, d, gap):
    """Rows within ``gap`` of a dependency that does not hold exactly: a chamber with a strict
    interior point (checked in Fractions) on its active rows never gets a zero proof."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=d + 1)
    X = rng.normal(size=(n, d))
    Phi = np.c_[X, np.ones(n)]
    z = Phi @ theta
    a = int(np.argmax(z))  # an active row; a near copy of it, tilted to the inactive side by about gap
    v = Phi[a] - (z[a] + gap * abs(z[a]) + 1e-300) * theta / (theta @ theta)
    Phi = np.r_[Phi, v[None]]
    z = Phi @ theta
    signs = np.where(z > 0, 1, -1).astype(np.int8)
    if not _exact_inside(Phi, signs, theta) or not np.any(signs > 0):
        return  # rounding moved theta off a row: not an instance of the claim
    r = np.linalg.matrix_rank(Phi)
    psi = np.linalg.svd(Phi, full_matrices=False)[0][:, :r]
    assert positive_dependency(Phi, psi, signs, np.zeros(len(Phi), bool), r) is None


@settings(derandomize=True, max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 10), d=st.integers(1, 3), k=st.integers(20, 40))
def test_exact_dependencies_among_near_duplicate_rows_are_proven(seed, n, d, k):
    """Dyadic data (sums exact): an active row ``a``, an active near copy ``b = a + 2^-k u`` and an
    inactive row ``c = a + b`` force ``a``, ``b`` to 0 on the cone whatever the other signs; rows
    within ``2^-k`` of each other in floats, the dependency exact, and the Fraction oracle confirms
    the proof."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)) * 2**10) / 2**10
    a = X[0]
    b = a + 2.0**-k * rng.integers(-3, 4, size=d)
    Phi = np.c_[np.r_[X, b[None], (a + b)[None]], np.ones(n + 2)]
    Phi[-1, -1] = 2.0  # the bias of a + b
    signs = np.r_[1, -np.ones(n - 1, dtype=np.int8), 1, -1].astype(np.int8)
    psi = np.linalg.qr(Phi)[0] if Phi.shape[0] >= Phi.shape[1] else np.linalg.svd(Phi, full_matrices=False)[0]
    r = np.linalg.matrix_rank(Phi)
    got = positive_dependency(Phi, psi[:, :r], signs, np.zeros(len(Phi), bool), r)
    assert got is not None
    rows, y = got
    assert _exact_zero(Phi, signs, list(rows), [f"{v.numerator}/{v.denominator}" for v in y])


@settings(derandomize=True, max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(4, 10), d=st.integers(1, 3), e=st.integers(-40, 40))
def test_copies_scaled_by_powers_of_two_of_opposite_sign_are_proven_zero(seed, n, d, e):
    """Each active row has an inactive copy scaled by ``2^e`` (exactly the same hyperplane): a zero
    chamber, whose proof the Fraction oracle confirms.  (A copy scaled by ``1 + 2^-50`` is not
    exactly parallel once rounded: a thin wedge, rightly refused by the test above.)"""
    rng = np.random.default_rng(seed)
    Phi = np.c_[rng.normal(size=(n, d)), np.ones(n)]
    signs = np.where(Phi @ rng.normal(size=d + 1) > 0, 1, -1).astype(np.int8)
    if not np.any(signs > 0):
        return
    act = np.flatnonzero(signs > 0)
    Phi2 = np.r_[Phi, Phi[act] * 2.0**e]
    signs2 = np.r_[signs, -np.ones(act.size, dtype=np.int8)]
    r = np.linalg.matrix_rank(Phi2)
    psi = np.linalg.svd(Phi2, full_matrices=False)[0][:, :r]
    got = positive_dependency(Phi2, psi, signs2, np.zeros(len(Phi2), bool), r)
    assert got is not None
    rows, y = got
    assert _exact_zero(Phi2, signs2, list(rows), [f"{v.numerator}/{v.denominator}" for v in y])
