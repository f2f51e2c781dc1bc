"""Lifted node evidence (``["d", u, dec, N, mu]`` leaves): valid, checked, and used by the search."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relu_gating import best_neuron, verify
from relu_gating.certificate import packed_multipliers
from relu_gating.checker._tree import _packed
from relu_gating.search.proofs._problem import exact_rank
from relu_gating.search.proofs._lifted import lifted_leaf_bound, multiplier_matrix
from relu_gating.patterns import enumerate_patterns
from relu_gating.search.bnb import _strong, branch_and_bound
from relu_gating.search.objectives import make_objective, with_rank
from relu_gating.search.state import PRUNED
from relu_gating.search._exact.tasks import solve_one

pytestmark = pytest.mark.usefixtures("lifted_now")  # the lifted bound from the first node (no delay)


def _instance(n, d, seed, clustered=False):
    rng = np.random.default_rng(seed)
    if clustered:
        X = rng.normal(scale=3.0, size=(3, d))[rng.integers(0, 3, size=n)] + 0.5 * rng.normal(size=(n, d))
    else:
        X = rng.normal(size=(n, d))
    U = np.linalg.qr(rng.normal(size=(n, 3)))[0]
    return np.c_[X, np.ones(n)], U


def _chambers(n, d, seed):
    """The objective, the chambers' masks and exact values (NaN: excluded)."""
    Phi, U = _instance(n, d, seed)
    obj = with_rank(make_objective(Phi, U, "bias"), exact_rank(Phi))
    ps = enumerate_patterns(Phi)
    masks = np.unpackbits(ps.packed, axis=1, count=n).astype(bool)
    vals = np.array([np.nan if (o := solve_one(obj, mk, "auto", w)).status == PRUNED else o.upper
                     for mk, w in zip(masks, ps.witnesses)])
    return obj, masks, vals, ps.witnesses


@pytest.fixture(scope="module")
def chambers():
    return _chambers(11, 2, 3)


def _node(obj, mask, witness, free):
    """Signs of the node around a chamber with the rows ``free`` undecided, and interior points."""
    signs = np.where(mask, 1, -1).astype(np.int8)
    signs[free] = 0
    v = (obj.to_coords @ witness)[None, :]
    return signs, v


def _true_max(masks, vals, signs):
    fixed = signs != 0
    inside = np.all(masks[:, fixed] == (signs[fixed] > 0), axis=1)
    return float(np.nanmax(vals[inside], initial=-np.inf))


@pytest.fixture(scope="module")
def evidence(chambers):
    """A node (4 undecided rows) with genuine lifted evidence strictly below its cheap bound."""
    obj, masks, vals, wits = chambers
    zero = np.zeros(obj.Phi.shape[0], dtype=bool)
    k = int(np.nanargmax(vals))
    signs, v = _node(obj, masks[k], wits[k], [0, 3, 5, 8])
    got = _strong.strong_bound(obj.Psi, obj.M, obj.Q_H, signs, zero, v)
    assert got is not None
    return obj, signs, zero, got[0], got[1], _true_max(masks, vals, signs)


def _check(obj, signs, zero, u, ev):
    return lifted_leaf_bound(obj.Psi, obj.M, obj.Q_H, signs, zero, u, *ev)


def test_genuine_evidence_is_accepted_and_tight(evidence):
    obj, signs, zero, u, ev, true = evidence
    assert _check(obj, signs, zero, u, ev) == u
    assert true - 1e-9 <= u <= true + 1e-4  # the lifted relaxation is tight here


def test_tampered_evidence_is_rejected(evidence):
    obj, signs, zero, u, (dec, Ns, mu), true = evidence
    N = multiplier_matrix(Ns, Ns["p"])  # the search writes it sparse; dense is accepted too
    assert _check(obj, signs, zero, u, (dec, N, mu)) == u
    assert np.isinf(_check(obj, signs, zero, true - 1e-3, (dec, N, mu)))  # claim below the true max
    assert np.isinf(_check(obj, signs, zero, u, (dec, -N, mu)))  # all of N negative: clamped to 0
    N2 = N.copy()
    i, j = np.unravel_index(np.argmax(N), N.shape)
    N2[i, j] = N2[j, i] = -N[i, j]
    assert np.isinf(_check(obj, signs, zero, u, (dec, N2, mu)))
    assert np.isinf(_check(obj, signs, zero, u, (dec, N * 0.5, mu)))
    assert np.isinf(_check(obj, signs, zero, u, (dec, N, mu + 0.5 * (np.abs(mu).max() + 1.0))))
    assert np.isinf(_check(obj, signs, zero, u, (dec, N, mu[:-1])))  # wrong length
    n = signs.size
    assert np.isinf(_check(obj, signs, zero, u, (np.r_[dec[:-1], n], N, mu)))  # row out of range
    assert np.isinf(_check(obj, signs, zero, u, (np.r_[dec[:-1], -1], N, mu)))
    und = int(np.flatnonzero(signs == 0)[0])
    assert np.isinf(_check(obj, signs, zero, u, (np.r_[dec[:-1], und], N, mu)))  # an undecided row
    wrong = signs.copy()
    wrong[dec[0]] = -wrong[dec[0]]  # another node: one decided sign flipped
    assert np.isinf(_check(obj, wrong, zero, u, (dec, N, mu)))
    assert np.isinf(_check(obj, signs, zero, u, (dec, np.full_like(N, np.nan), mu)))


def test_malformed_sparse_multipliers_are_rejected(evidence):
    """The sparse form of ``N`` (``{"p", "entries"}``): a pair named twice, an index off the range,
    a wrong ``p``, a missing or extra key, a bool ``p``, a non-integer index: no bound (both checkers)."""
    from relu_gating.checker._tree import _multipliers

    obj, signs, zero, u, (dec, Ns, mu), true = evidence
    E = np.asarray(Ns["entries"])
    p = Ns["p"]
    bad = [{"p": p, "entries": np.vstack([E, E[:1]])}, {"p": p, "entries": np.vstack([E, [[0, p, 1.0]]])},
           {"p": p + 1, "entries": E}, {"entries": E}, {"p": p, "entries": E, "x": 1}, {"p": True, "entries": E},
           {"p": p, "entries": np.vstack([E, [[0.5, 1, 1.0]]])}, {"p": p, "entries": np.vstack([E, [[-1, 1, 1.0]]])},
           {"p": p, "entries": np.vstack([E, [[1, 0, np.inf]]])}]
    for b in bad:
        assert np.isinf(_check(obj, signs, zero, u, (dec, b, mu))), b
        with pytest.raises((ValueError, TypeError)):
            _multipliers(b, p)
    written = [[int(k), int(l), float(v)] for k, l, v in E.tolist()]  # as the tree writes them (strict integers)
    swapped = {"p": p, "entries": [[l, k, v] for k, l, v in written]}  # (l, k) names the same pair as (k, l)
    assert _check(obj, signs, zero, u, (dec, swapped, mu)) == u
    assert np.array_equal(_multipliers({"p": p, "entries": written}, p), multiplier_matrix(Ns, p))
    with pytest.raises(ValueError):  # the indices as floats (0.0, 1.0): not JSON integers
        _multipliers({"p": p, "entries": E.tolist()}, p)


def _best_nodes(obj, masks, vals, wits, count=6):
    """Nodes at the ``count`` best chambers (rows 0, 3, 5, 8 left undecided): signs, level and true maximum."""
    for k in np.argsort(-np.nan_to_num(vals, nan=-1.0))[:count]:
        signs, v = _node(obj, masks[k], wits[k], [0, 3, 5, 8])
        yield signs, v, _true_max(masks, vals, signs)


def test_first_order_multipliers_settle_and_are_checked(chambers):
    """Given the level that settles a node (above its true maximum), the first-order multipliers prove
    a bound at most that level, never below the true maximum, accepted by both checkers; below the true
    maximum no level is ever proven."""
    obj, masks, vals, wits = chambers
    zero = np.zeros(obj.Phi.shape[0], dtype=bool)
    tried = 0
    for signs, v, true in _best_nodes(obj, masks, vals, wits):
        clar = _strong.strong_bound(obj.Psi, obj.M, obj.Q_H, signs, zero, v)
        if clar is None:
            continue
        tried += 1
        level = clar[0] + 1e-3
        got = _strong.strong_bound(obj.Psi, obj.M, obj.Q_H, signs, zero, v, level=level)
        assert got is not None and true - 1e-9 <= got[0] <= level
        assert _check(obj, signs, zero, got[0], got[1]) == got[0]
        dec = _strong.pick_decided(obj.Psi, signs, zero, v)
        A, B, G, C, _ = _strong.lifted(obj.Psi, obj.M, obj.Q_H, signs, zero, dec)
        loose = clar[0] + 0.05  # the first-order path alone reaches a level with room (its use: far-off nodes)
        N, mu = _strong.first_order(A, B, G, C, loose - 1e-4)
        assert true - 1e-9 <= _strong.proven(A, B, G, C, N, mu) <= loose
        below = _strong.strong_bound(obj.Psi, obj.M, obj.Q_H, signs, zero, v, level=true - 1e-3)
        assert below is None or below[0] >= true - 1e-9
    assert tried >= 3


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(k=st.integers(0, 10_000), free=st.sets(st.integers(0, 10), min_size=1, max_size=6))
def test_strong_bound_is_never_below_the_true_maximum(chambers, k, free):
    obj, masks, vals, wits = chambers
    k %= masks.shape[0]
    signs, v = _node(obj, masks[k], wits[k], sorted(free))
    zero = np.zeros(signs.size, dtype=bool)
    got = _strong.strong_bound(obj.Psi, obj.M, obj.Q_H, signs, zero, v)
    if got is None or not np.isfinite(got[0]):
        return  # no claim: nothing to check
    true = _true_max(masks, vals, signs)
    assert got[0] >= true - 1e-9
    assert _check(obj, signs, zero, got[0], got[1]) == got[0]


@pytest.mark.parametrize("n,d,seed,clustered", [(14, 2, 0, False), (12, 3, 2, True),
                                                pytest.param(10, 4, 4, False, marks=pytest.mark.slow)])
def test_search_with_lifted_leaves_matches_enumeration(n, d, seed, clustered):
    Phi, U = _instance(n, d, seed, clustered)
    bb = branch_and_bound(Phi, U, features="bias", lifted=True)
    en = best_neuron(Phi, U, features="bias", strategy="enumerate")
    assert bb.certified and abs(bb.value - en.value) <= 1e-9
    rep = verify(json.loads(json.dumps(bb.to_dict())), Phi, U, features="bias")
    assert rep.valid and rep.certified


def test_d_leaves_in_a_tree_verify_and_forgeries_fail():
    Phi, U = _instance(12, 3, 1)
    res = branch_and_bound(Phi, U, features="bias", lifted=True)
    d = json.loads(json.dumps(res.to_dict()))
    nodes = d["tree"]["nodes"]
    ds = [k for k, nd in enumerate(nodes) if nd[0] == "d"]
    assert ds and verify(d, Phi, U, features="bias").valid
    k = max(ds, key=lambda j: nodes[j][1])  # the largest claim: lowering it lowers the upper bound
    bad = copy.deepcopy(d)
    bad["tree"]["nodes"][k][1] *= 0.5
    assert not verify(bad, Phi, U, features="bias").valid
    bad = copy.deepcopy(d)
    bad["tree"]["nodes"][k][2] = [Phi.shape[0] + 3] + bad["tree"]["nodes"][k][2][1:]
    assert not verify(bad, Phi, U, features="bias").valid


def test_lifted_runs_on_an_executor_and_rejects_non_bool():
    """The option reaches the subtree tasks (threads here); a bad value is refused before any work."""
    from concurrent.futures import ThreadPoolExecutor

    from relu_gating.errors import InputError

    Phi, U = _instance(14, 2, 0, False)
    with ThreadPoolExecutor(2) as ex:
        bb = branch_and_bound(Phi, U, features="bias", lifted=True, executor=ex)
    en = best_neuron(Phi, U, features="bias", strategy="enumerate")
    assert bb.certified and abs(bb.value - en.value) <= 1e-9
    assert verify(json.loads(json.dumps(bb.to_dict())), Phi, U, features="bias").certified
    with pytest.raises(InputError, match="lifted"):
        branch_and_bound(Phi, U, lifted="yes")


def test_the_cheap_test_skips_bands_where_the_lifted_bound_does_not_settle():
    """``lifted_pays``: a band tries the lifted bound while it settles at least half its nodes (prior
    one in two); below that rate only every ``LIFTED_RETRY``-th node is tried; bands are separate."""
    from relu_gating.search.bnb import _budget, _node_bounds, _search  # noqa: F401

    s = _search.Search.__new__(_search.Search)
    s.stats = {f"{k}_{lo}": 0 for lo in range(0, _node_bounds.LIFTED_MAX_UNDECIDED + 1, _node_bounds.LIFTED_BAND)
               for k in ("lifted_tried", "lifted_settled")}
    s.lifted_skipped = {}
    s.lifted_costs = False  # the rate test alone (the cost test: tests/internals/test_bnb_subtree.py)
    assert s.lifted_pays(3) and s.lifted_pays(20)  # nothing tried yet: the prior
    s.stats["lifted_tried_16"] = 10  # band 16-23 settled none of 10
    tries = [s.lifted_pays(20) for _ in range(3 * _node_bounds.LIFTED_RETRY)]
    assert sum(tries) == 3 and tries[_node_bounds.LIFTED_RETRY - 1]
    assert s.lifted_pays(3) and s.lifted_pays(24)  # the other bands are not affected
    s.stats["lifted_settled_16"] = 6  # 7 / 12 >= 1/2: tried again
    assert s.lifted_pays(17)


def test_the_plain_test_stops_in_bands_where_it_neither_settles_nor_lowers():
    """``plain_pays``: a band of ``PLAIN_BAND`` undecided counts keeps trying the lifted bound without
    multipliers while it settles or lowers (by ``PLAIN_GAIN``) at least half its nodes; below that only
    every ``LIFTED_RETRY``-th node; never above ``PLAIN_MAX_UNDECIDED`` rows or ``PLAIN_SHARE`` of the time."""
    import time

    from relu_gating.search.bnb import _budget, _node_bounds, _search  # noqa: F401

    s = _search.Search.__new__(_search.Search)
    s.stats = {"t_lifted_plain": 0.0}
    s.plain_bands = {}
    s.t_start = time.perf_counter() - 100.0
    node = None
    assert s.plain_pays(node, 40) and not s.plain_pays(node, _node_bounds.PLAIN_MAX_UNDECIDED + 1)
    s.plain_bands[40 // _node_bounds.PLAIN_BAND] = [10, 0, 0]  # tried 10, won none
    tries = [s.plain_pays(node, 40) for _ in range(2 * _node_bounds.LIFTED_RETRY)]
    assert sum(tries) == 2 and tries[_node_bounds.LIFTED_RETRY - 1]
    assert s.plain_pays(node, 40 + _node_bounds.PLAIN_BAND)  # another band
    s.plain_bands[40 // _node_bounds.PLAIN_BAND] = [10, 6, 0]
    assert s.plain_pays(node, 40)
    s.stats["t_lifted_plain"] = 0.5 + 100.0 * _node_bounds.PLAIN_SHARE
    assert not s.plain_pays(node, 40)


def test_lifted_off_writes_no_lifted_leaves_and_on_settles_nodes_with_them():
    """``lifted=False`` keeps the subspace bound alone (no ``"d"`` leaf); the default settles nodes by
    the lifted bound; both certify the enumeration's value and verify."""
    Phi, U = _instance(14, 3, 5, True)
    en = best_neuron(Phi, U, features="bias", strategy="enumerate")
    for lifted in (False, True):
        bb = branch_and_bound(Phi, U, features="bias", lifted=lifted)
        kinds = {nd[0] for nd in bb.tree["nodes"]}
        assert ("d" in kinds) == lifted and (bb.tree["stats"]["lifted"] > 0) == lifted
        assert bb.certified and abs(bb.value - en.value) <= 1e-9
        assert verify(json.loads(json.dumps(bb.to_dict())), Phi, U, features="bias").certified


def test_d_leaves_are_proven_in_exact_mode_and_forgeries_fail():
    """``verify(..., exact=True)`` proves lifted evidence in rationals (in the basis of ``Phi_r``): the
    tree certifies as in floats; halving a ``"d"`` leaf's multipliers, or its claim, is refused."""
    Phi, U = _instance(12, 3, 1)
    d = json.loads(json.dumps(branch_and_bound(Phi, U, features="bias").to_dict()))
    nodes = d["tree"]["nodes"]
    ds = [k for k, nd in enumerate(nodes) if nd[0] == "d"]
    assert ds and verify(d, Phi, U, features="bias", exact=True).certified
    k = max(ds, key=lambda j: nodes[j][1])
    for tamper in ("claim", "N"):
        bad = copy.deepcopy(d)
        nd = bad["tree"]["nodes"][k]
        if tamper == "claim":
            nd[1] *= 0.5
        else:
            E = _packed(nd[3], nd[3]["p"])["entries"]  # as written: packed
            nd[3] = packed_multipliers({"p": nd[3]["p"], "entries": E * [1, 1, 0]})
            nd[4] = [0.0] * len(nd[4])
        rep = verify(bad, Phi, U, features="bias", exact=True)
        assert not rep.valid, tamper  # a claim below what is proven: refused


def test_lifted_claims_keep_room_for_the_checker():
    """A lifted claim is the settling target when the bound proven plus the checker's rounding room is
    below it, else that bound plus the room (at least ``LIFTED_HEADROOM`` relative): fuzz seeds 39 and 42
    (slow tier) failed the checker with 8e-11 and 1e-2 of room.  The room grows with the basis's
    conditioning (``basis_epsilon``)."""
    from relu_gating.search.bnb._node_bounds import LIFTED_HEADROOM, basis_epsilon, lifted_claim

    assert lifted_claim(0.5, 0.6, 1e-3) == 0.6
    assert lifted_claim(0.5999, 0.6, 1e-3) == pytest.approx(0.6009)
    assert lifted_claim(0.492210696275, 0.492210696441, 0.0) == pytest.approx(0.492210696275 + LIFTED_HEADROOM)
    assert lifted_claim(5.0, 4.0, 0.0) == pytest.approx(5.0 + 5e-6)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    well = basis_epsilon(np.c_[X, np.ones(30)], 4)
    ill = basis_epsilon(np.c_[X, X[:, 0] + 1e-9 * rng.normal(size=30)], 4)  # a nearly dependent column
    assert 0 < well < 1e-10 and ill > 1e-8
    assert basis_epsilon(np.c_[X, X[:, 0]], 4) > 1.0  # rank 3 (floats see a tiny fourth singular value)


def test_singular_B_at_a_greedy_step_is_settled_and_never_below_the_true_maximum():
    """At a greedy step, a node whose decided rows are all inactive for a former neuron has that
    neuron's feature in its lifted span: ``B`` is singular and the B-whitened steps prove nothing
    (:func:`_strong.proven` is infinite for any multipliers).  The steps at the level
    (:func:`_strong.level_order`, :func:`_strong.proven_at`) settle such nodes at levels above their
    true maximum (the exact chamber solves below), accepted by the checker, and never prove a level below it."""
    Phi, U = _instance(11, 2, 3)
    n = Phi.shape[0]
    ps = enumerate_patterns(Phi)
    masks = np.unpackbits(ps.packed, axis=1, count=n).astype(bool)
    first = ps.witnesses[int(np.argmax(masks.sum(axis=1) == 5))]  # a former neuron active on 5 rows
    H = np.c_[np.ones(n), np.maximum(Phi @ first, 0.0)]
    obj = with_rank(make_objective(Phi, U, H), exact_rank(Phi))
    vals = np.array([np.nan if (o := solve_one(obj, mk, "auto", w)).status == PRUNED else o.upper
                     for mk, w in zip(masks, ps.witnesses)])
    zero = np.zeros(n, dtype=bool)
    active = np.flatnonzero(Phi @ first > 0)
    settled = loosely = 0
    for k in range(masks.shape[0]):
        signs, v = _node(obj, masks[k], ps.witnesses[k], active)
        if masks[k][~np.isin(np.arange(n), active)].sum() < obj.rank:
            continue  # too few decided active rows: h = 0 for some x (never finite)
        true = _true_max(masks, vals, signs)
        dec = _strong.pick_decided(obj.Psi, signs, zero, v)
        A, B, G, C, _ = _strong.lifted(obj.Psi, obj.M, obj.Q_H, signs, zero, dec)
        assert np.linalg.eigvalsh(B)[0] <= 1e-9 * np.linalg.eigvalsh(B)[-1]
        assert np.isinf(_strong.proven(A, B, G, C, np.zeros((G.shape[0],) * 2), np.zeros(C.shape[0])))
        level = max(true, 0.0) + 0.05
        got = _strong.strong_bound(obj.Psi, obj.M, obj.Q_H, signs, zero, v, level=level)
        if got is not None and got[0] <= level:
            settled += 1
            assert got[0] >= true - 1e-9
            assert _check(obj, signs, zero, got[0], got[1]) == got[0]
        below = _strong.strong_bound(obj.Psi, obj.M, obj.Q_H, signs, zero, v, level=true - 1e-3)
        assert below is None or below[0] >= true - 1e-9
        loose = 0.5 * (1.0 + max(true, 0.0))  # the first-order steps at a level with room
        N, mu = _strong.level_order(A, B, G, C, loose)
        if np.isfinite(_strong.proven_at(A, B, G, C, N, mu, loose)):
            loosely += 1
            assert _check(obj, signs, zero, loose, (dec, N, mu)) == loose
        assert np.isinf(_strong.proven_at(A, B, G, C, N, mu, true - 1e-3))
    assert settled >= 3 and loosely >= 3


def _plain_leaves(tree):
    """Indices of ``"d"`` leaves without multipliers (:func:`_strong.plain`'s evidence)."""
    return [k for k, nd in enumerate(tree["nodes"]) if nd[0] == "d" and not any(
        _packed(nd[3], nd[3]["p"])["entries"][:, 2] if isinstance(nd[3], dict) else np.ravel(nd[3])) and not any(nd[4])]


@pytest.mark.parametrize("n,d,seed", [(14, 3, 2), (15, 3, 3)])
def test_plain_lifted_leaves_at_a_greedy_step_certify_the_enumeration_value_and_forgeries_fail(n, d, seed,
                                                                                              monkeypatch):
    """A greedy step (features ``[1, relu(Phi theta_1)]``, ``theta_1`` the first step's neuron): the
    search settles nodes by the lifted bound without multipliers, certifies the enumeration's value
    (the oracle), and its tree verifies, in floats and exactly; such a leaf with its claim lowered below
    the incumbent is refused.  Face leaves (whose evidence also has no multipliers on the lifted rows)
    are turned off: they settle these nodes first, and this test is of the plain lifted leaves."""
    from relu_gating.search.bnb._node_bounds import NodeBounds

    monkeypatch.setattr(NodeBounds, "try_face", lambda self, node: False)
    Phi, U = _instance(n, d, seed, True)
    first = best_neuron(Phi, U, features="bias", strategy="enumerate")
    H = np.c_[np.ones(n), np.maximum(Phi @ first.theta, 0.0)]
    en = best_neuron(Phi, U, features=H, strategy="enumerate")
    bb = branch_and_bound(Phi, U, features=H)
    assert bb.certified and abs(bb.value - en.value) <= 1e-9 * max(1.0, en.value)
    d = json.loads(json.dumps(bb.to_dict()))
    plain = _plain_leaves(d["tree"])
    assert plain and bb.tree["stats"]["lifted_plain_settled"] + bb.tree["stats"]["lifted_plain_lowered"] > 0
    assert verify(d, Phi, U, features=H).certified
    assert verify(d, Phi, U, features=H, exact=True).certified
    k = max(plain, key=lambda j: d["tree"]["nodes"][j][1])
    bad = copy.deepcopy(d)
    bad["tree"]["nodes"][k][1] = 0.5 * en.value
    assert not verify(bad, Phi, U, features=H).valid


def test_factored_complementarity_matches_the_dense_stack():
    """:class:`_strong.Comp` (the steps' ``C_i`` by their factors) is the dense stack of :func:`_strong.lifted`:
    the weighted sum, the quadratic forms, the whitened matrices; its absolute sums bound the stack's and
    equal them on the node's own factors; and :func:`_strong._top` is ``eigh``'s top pair."""
    rng = np.random.default_rng(5)
    for n, r, und in ((12, 3, 4), (30, 4, 17), (60, 6, 41)):
        Q, M = rng.standard_normal((n, r)), rng.standard_normal((n, 3))
        signs = rng.choice(np.array([-1, 1], dtype=np.int8), size=n)
        signs[rng.choice(n, und, replace=False)] = 0
        signs[np.flatnonzero(signs != 0)[:r]] = 1  # enough active rows for a positive definite B
        zero = np.zeros(n, dtype=bool)
        dec = np.flatnonzero(signs != 0)[:8]
        A, B, G, C, U = _strong.lifted(Q, M, None, signs, zero, dec)
        A2, B2, G2, F, U2 = _strong.lifted_parts(Q, M, None, signs, zero, dec)
        assert F.shape == C.shape and np.array_equal(U, U2) and np.array_equal(G, G2) and np.array_equal(A, A2)
        assert np.allclose(F.dense(), C, atol=0, rtol=0)
        mu, x = rng.standard_normal(U.size), rng.standard_normal(A.shape[0])
        assert np.allclose(F.weighted(mu), np.tensordot(mu, C, axes=1), atol=1e-13)
        assert np.allclose(F.quad(x), np.einsum("i,kij,j->k", x, C, x), atol=1e-12)
        assert np.allclose(F.abs_sums(), np.abs(C).sum((1, 2)), atol=1e-12)
        W = _strong.Comp(rng.standard_normal(F.a.shape), rng.standard_normal(F.b.shape))
        assert np.all(W.abs_sums() >= np.abs(W.dense()).sum((1, 2)) - 1e-12)  # an upper bound in general
        Li = np.linalg.inv(np.linalg.cholesky(B))
        assert np.allclose(F.whiten(Li).dense(), Li @ C @ Li.T, atol=1e-10)
        T = A + np.tensordot(mu, C, axes=1)
        f, v = _strong._top(T)
        w, V = np.linalg.eigh(T)
        assert abs(f - w[-1]) <= 1e-10 * max(1.0, abs(w[-1])) and np.linalg.norm(T @ v - f * v) <= 1e-8 * max(1.0, abs(f))


def test_factored_steps_prove_what_the_dense_steps_prove(chambers, monkeypatch):
    """The search's lifted bound with the factored ``C_i`` and the top eigenpair alone (the defaults) and with
    the dense stack and the whole ``eigh`` (before): on the same nodes and levels both settle or neither, every
    bound proven is at least the node's true maximum (the enumeration's), and the checker accepts it."""
    obj, masks, vals, wits = chambers
    zero = np.zeros(obj.Phi.shape[0], dtype=bool)
    tried = 0
    for signs, v, true in _best_nodes(obj, masks, vals, wits):
        for level in (true + 1e-3, true + 0.05, true - 1e-3):
            got = {}
            for way in (False, True):
                monkeypatch.setattr(_strong, "STRUCTURED", way)
                monkeypatch.setattr(_strong, "TOP_ONLY", way)
                got[way] = _strong.strong_bound(obj.Psi, obj.M, obj.Q_H, signs, zero, v, level=level)
            settles = [g is not None and g[0] <= level for g in got.values()]
            assert settles[0] == settles[1]
            for g in got.values():
                if g is not None:
                    tried += 1
                    assert g[0] >= true - 1e-9
                    assert _check(obj, signs, zero, g[0], g[1]) == g[0]
    assert tried >= 6
