"""Near-degenerate data never yields a false claim of the search (issue 23, its search half).

The reference is exact (:mod:`_exact_reference`): the objective at exact interior points of every
chamber, and for one feature (``m = 2``) the exact supremum over every chamber's closed cone.  On
every instance, for both strategies:

* no claimed pattern bound is beaten by the reference (the enumeration's per-pattern claims);
* a certified answer is truly optimal (its upper bound is at least every chamber's reference);
* the search's ``certified`` is the one :func:`relu_gating.verify` gives for its certificate.

The default tier runs a handful of instances; the sweeps are in the slow tier.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest
from _exact_reference import chamber_max_2d, exact_features, exact_objective, interior, pattern_violations
from _fuzz_instances import NEAR_DEGENERATE, near_degenerate

from relu_gating import best_neuron, verify

STRATEGIES = ("enumerate", "branch-and-bound")
TOL = 1e-9
#: false certificates of verify seen on the way (reported by the sweep; the checker helper's)
VERIFY_FALSE: list = []
#: instances verify certifies and the search does not (verify accepting an unproven bound)
PERMISSIVE: list = []


def six_samples(g: float) -> tuple[np.ndarray, np.ndarray]:
    """``x = [-2, -1, -0.3, 0.4, 1 - g, 1]``, ``U_K`` the centred direction of ``e_6 + 0.5 e_5``."""
    x = np.array([-2, -1, -0.3, 0.4, 1 - g, 1])
    u = np.zeros(6)
    u[5], u[4] = 1.0, 0.5
    u -= u.mean()
    return np.c_[x, np.ones(6)], (u / np.linalg.norm(u))[:, None]


def _run(Phi, U, features, strategy):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return best_neuron(Phi, U, features=features, strategy=strategy)


def _check(Phi, U, features, strategy, rng, masks=None, witnesses=None, top=None) -> list[str]:
    """What is wrong with the search's answer on this instance (empty: nothing)."""
    res = _run(Phi, U, features, strategy)
    bad = []
    rep = verify(res, Phi, U, features)
    # the search may be more cautious than verify where verify accepts a bound that no exact check
    # proves (a float kernel decision: the checker helper's; see the xfail test below), never the
    # other way round; those cases are counted in PERMISSIVE
    if res.certified and not rep.certified:
        bad.append(f"{strategy}: the search says certified, verify does not")
    elif rep.certified and not res.certified:
        PERMISSIVE.append(f"{strategy}: verify certifies, the search does not")
    if top is not None and rep.certified and rep.upper_bound < top - TOL:
        VERIFY_FALSE.append(f"{strategy}: verify certifies an upper bound {rep.upper_bound!r} below the exact "
                            f"optimum {top!r}")
    if res.certified and not rep.valid:
        bad.append(f"{strategy}: certified but the certificate does not verify: {rep.reasons}")
    if strategy == "enumerate":
        bad += pattern_violations(Phi, U, features, res.masks, res.witnesses, res.bounds, rng)
    if top is not None and res.certified and res.upper_bound < top - TOL:
        bad.append(f"{strategy}: certified upper bound {res.upper_bound!r} below the exact optimum {top!r}")
    if top is not None and res.certified and res.value < top - TOL:
        bad.append(f"{strategy}: certified value {res.value!r} below the exact optimum {top!r}")
    return bad


def _exact_top(Phi, U, features, masks, witnesses, rng) -> float:
    """The best exact objective over the chambers: their suprema for ``m = 2``, else the best at
    exact interior points (a lower bound on the optimum)."""
    from _exact_reference import interior_points

    basis = exact_features(features, Phi.shape[0])
    best = 0.0
    for mask, w in zip(masks, witnesses):
        if not mask.any():
            continue
        if Phi.shape[1] == 2:
            best = max(best, chamber_max_2d(Phi, U, basis, mask))
            continue
        for p in interior_points(Phi, mask, w, rng, count=3):
            v = exact_objective(Phi, U, basis, p)
            best = max(best, float(v) if v is not None else 0.0)
    return best


# ---------------------------------------------------------------- the six-sample gap (issue 23, first item)


def test_reference_sees_the_optimum_of_the_six_samples():
    """The reference itself: theta = (1, x_6 - 2 x_5) lies strictly in chamber 000011 and has
    marginal gain exactly 1 (a false 0.857142857 was certified there)."""
    g = 1e-13
    Phi, U = six_samples(g)
    x = Phi[:, 0]
    theta = [Fraction(1), Fraction(float(x[5])) - 2 * Fraction(float(x[4]))]
    mask = np.array([0, 0, 0, 0, 1, 1], dtype=bool)
    assert interior(Phi, mask, theta)
    val = exact_objective(Phi, U, exact_features("bias", 6), theta)
    assert abs(float(val) - 1.0) < 1e-12
    assert chamber_max_2d(Phi, U, exact_features("bias", 6), mask) > 1.0 - 1e-12


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("g", [1e-13, pytest.param(1e-12, marks=pytest.mark.slow),
                               pytest.param(1e-15, marks=pytest.mark.slow)])
def test_six_samples_gap_no_false_certificate(g, strategy):
    Phi, U = six_samples(g)
    res = _run(Phi, U, "bias", strategy)
    assert res.value >= 1.0 - 1e-9 or not res.certified, (res.value, res.upper_bound)
    assert res.upper_bound >= 1.0 - 1e-9 or not res.certified
    rep = verify(res, Phi, U, "bias")
    assert rep.certified == res.certified
    if strategy == "enumerate":
        assert pattern_violations(Phi, U, "bias", res.masks, res.witnesses, res.bounds,
                                  np.random.default_rng(0)) == []


def test_six_samples_gap_streamed():
    """The streamed enumeration (``memory=``) claims through the same function."""
    Phi, U = six_samples(1e-13)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = best_neuron(Phi, U, memory="1G")
    assert not res.certified or res.value >= 1.0 - 1e-9
    assert verify(res, Phi, U, "bias").certified == res.certified
    assert pattern_violations(Phi, U, "bias", np.asarray(res.masks), np.asarray(res.witnesses),
                              np.asarray(res.bounds), np.random.default_rng(0)) == []


# ---------------------------------------------------------------- the families


def _family_case(family: str, seed: int, d: int, strategy: str) -> list[str]:
    inst = near_degenerate(seed, family, d)
    rng = np.random.default_rng([seed, 7])
    enum = _run(inst.Phi, inst.U, inst.features, "enumerate")
    top = _exact_top(inst.Phi, inst.U, inst.features, enum.masks, enum.witnesses, rng)
    return [f"{family} seed {seed} d {d}: {b}" for b in _check(inst.Phi, inst.U, inst.features, strategy, rng,
                                                               top=top)]


FAST_CASES = [("near_duplicates", 0, 1, "enumerate"), ("tiny_gaps", 4, 1, "branch-and-bound"),
              ("near_features", 1, 1, "enumerate"), ("near_features", 1, 1, "branch-and-bound"),
              ("near_features", 9, 1, "enumerate"), ("near_features", 4, 1, "enumerate")]  # 4: value exact


@pytest.mark.parametrize("family,seed,d,strategy", FAST_CASES)
def test_near_degenerate_family(family, seed, d, strategy):
    assert _family_case(family, seed, d, strategy) == []


@pytest.mark.slow
def test_near_duplicates_false_chamber_bounds():
    """Seed 8, two features: the old search claimed 0.378 on chambers with exact interior points
    of objective 0.578 and 0.658 (accepted by verify)."""
    assert _family_case("near_duplicates", 8, 2, "enumerate") == []


@pytest.mark.parametrize("seed,forged,exact", [(0, 0.0873, 0.0883)])
def test_verify_rejects_a_chamber_bound_below_its_exact_maximum(seed, forged, exact):
    """H within 1e-9 of col(Phi): the all-active chamber holds neurons whose gain is exactly
    ``exact`` (seed 0: 0.08836, some with ``||(I - Pi_H) h|| = 3.7e-8 ||h||``, admissible even by
    verify's ``EXCLUDE_RTOL``); a claim of ``forged`` there must not verify."""
    inst = near_degenerate(seed, "near_features", 1)
    res = _run(inst.Phi, inst.U, inst.features, "enumerate")
    full = int(np.flatnonzero(res.masks.all(axis=1))[0])
    top = chamber_max_2d(inst.Phi, inst.U, exact_features(inst.features, inst.n), res.masks[full])
    assert top > exact
    d = res.to_dict()
    d["patterns"]["bounds"][full] = forged
    d["evidence"] = {k: v for k, v in d.get("evidence", {}).items() if int(k) != full}
    d["evidence"][str(full)] = {"rows": [], "N": []}
    rep = verify(d, inst.Phi, inst.U, inst.features)
    assert not rep.valid


@pytest.mark.slow
@pytest.mark.parametrize("family", NEAR_DEGENERATE)
@pytest.mark.parametrize("d", [1, 2])
def test_near_degenerate_sweep(family, d):
    bad = []
    VERIFY_FALSE.clear()
    PERMISSIVE.clear()
    for seed in range(12 if d == 1 else 4):  # two features: about 30 s per query on degenerate data
        for strategy in STRATEGIES:
            bad += _family_case(family, seed, d, strategy)
    assert bad == []
    assert VERIFY_FALSE == []  # verify never certifies a false optimum on these either
    print(f"{family}, d = {d}: verify certifies where the search does not on {len(PERMISSIVE)} run(s)")


# ---------------------------------------------------------------- the exact decisions themselves


def test_exact_psd_decides_exactly():
    from relu_gating.search.proofs._pattern import exact_psd

    F = Fraction
    assert exact_psd([[F(1), F(1)], [F(1), F(1)]])  # singular PSD: a zero pivot with a zero row
    assert not exact_psd([[F(1), F(2)], [F(2), F(1)]])
    assert not exact_psd([[F(0), F(1)], [F(1), F(0)]])  # zero diagonal, nonzero row
    assert exact_psd([[F(0), F(0)], [F(0), F(0)]])
    eps = F(1, 2**80)  # below any float threshold, still decided
    assert not exact_psd([[F(1), F(1)], [F(1), F(1) - eps]])
    assert exact_psd([[F(1), F(1)], [F(1), F(1) + eps]])


def test_exact_claim_refutes_the_false_six_sample_bound():
    """The pencil inequality at 0.857142857 is false in chamber 000011 (its exact maximum is 1);
    the float check cannot see it, the exact one does; a claim of 1 + 1e-12 is proven."""
    from relu_gating.search.proofs._pattern import exact_claim, exact_feature_basis

    Phi, U = six_samples(1e-13)
    mask = np.array([0, 0, 0, 0, 1, 1], dtype=bool)
    basis = exact_feature_basis(np.ones((6, 1)))
    none = (np.zeros(0, dtype=np.int64), np.zeros((0, 0)))
    assert not exact_claim(0.8571428572, Phi, U, basis, mask, *none)
    assert not exact_claim(0.999, Phi, U, basis, mask, *none)
    assert exact_claim(1.0 + 1e-12, Phi, U, basis, mask, *none)


def test_search_claims_what_the_checker_proves():
    """A claim above what the checker proves (a solver's value plus the 1e-9 claim slack, as in
    the "certified NO, gap 1.41e-9" report) is lowered to the proven value, and the search's
    ``certified`` is verify's on a query whose optimum is a one-sample neuron."""
    from relu_gating.search.proofs import prove_bounds
    from relu_gating.search._claims import settle_claims
    from relu_gating.search.objectives import make_objective

    rng = np.random.default_rng(5)
    Phi = np.c_[rng.normal(size=(12, 2)), np.ones(12)]
    Z = 0.3 * rng.normal(size=(12, 1))
    Z[int(np.argmax(Phi[:, 0])), 0] += 2.0
    U = np.linalg.qr(Z)[0]
    res = _run(Phi, U, None, "enumerate")
    rep = verify(res, Phi, U, None)
    assert res.certified == rep.certified and rep.valid
    assert res.upper_bound <= rep.upper_bound + 1e-12
    obj = make_objective(Phi, U, None)
    idx = sorted(res.evidence)
    assert idx
    claims = res.bounds[idx]
    inflated = claims * (1 + 1e-9) + 1e-9
    ev = [res.evidence[i] for i in idx]
    got = settle_claims(obj, res.masks[idx], inflated, ev)
    checker = prove_bounds(Phi, U, None, res.masks[idx], inflated, dict(enumerate(ev)))
    # the checker first tries to prove a claim as stated, so it never needs more than the inflated claims
    assert np.all(checker <= inflated + 1e-12)
    assert np.all(got.bounds <= np.maximum(checker, claims)), (got.bounds - checker)
    assert np.all(got.bounds >= claims - 1e-12) and not got.fallback.any()


def test_false_exclusion_is_re_decided_exactly():
    """A pattern settled as having no admissible neuron is re-decided exactly: one with an
    admissible neuron gets a valid bound (and is BOUND); a truly excluded one stays PRUNED."""
    from relu_gating.search._claims import checked_exclusions
    from relu_gating.search.objectives import make_objective
    from relu_gating.search.state import BOUND, PRUNED

    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 3.0])
    Phi = np.c_[x, np.ones(6)]
    H = np.c_[np.ones(6), (x == 3.0).astype(float)]  # the ones column and the indicator of sample 6
    U = np.linalg.qr(np.random.default_rng(0).normal(size=(6, 2)))[0]
    obj = make_objective(Phi, U, H)
    masks = np.array([[0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 1, 1]], dtype=bool)
    bounds, status = np.zeros(2), np.full(2, PRUNED, dtype=np.int8)
    notes = checked_exclusions(obj, masks, bounds, status)
    assert status.tolist() == [PRUNED, BOUND] and bounds[1] > 0 and notes


# ---------------------------------------------------------------- forged tree certificates (through verify)


def _leaf_masks(nodes: list, n: int) -> dict:
    """The chamber mask of every ``"c"`` leaf of a tree certificate, by walking it as the format
    says (a split visits the +1 side, then the -1 side; an implied node its one side)."""
    signs = np.zeros(n, dtype=np.int8)
    out, pos = {}, 0
    stack: list = [("visit",)]
    while stack:
        task = stack.pop()
        if task[0] == "set":
            signs[task[1]] = task[2]
            continue
        node, idx = nodes[pos], pos
        pos += 1
        if node[0] == "s":
            i = int(node[1])
            stack += [("set", i, 0), ("visit",), ("set", i, -1), ("visit",), ("set", i, 1)]
        elif node[0] == "i":
            i, s = int(node[1]), int(node[2])
            stack += [("set", i, 0), ("visit",), ("set", i, s)]
        elif node[0] == "c":
            out[idx] = signs > 0
    return out


def _tree(seed: int):
    import json

    from _fuzz_instances import instance

    inst = instance(seed)
    res = _run(inst.Phi, inst.U, inst.features, "branch-and-bound")
    return inst, res, json.loads(json.dumps(res.to_dict()))


@pytest.mark.slow
def test_forged_lowered_chamber_leaf_is_rejected():
    """The leaf holding the optimum (on thin, nearly collinear data) claims half the value: verify
    rejects the tree (its exact chamber holds theta, of objective ``value``)."""
    inst, res, d = _tree(4)
    assert inst.kind == "thin"
    z = inst.Phi @ res.theta
    nodes = d["tree"]["nodes"]
    hits = [i for i, m in _leaf_masks(nodes, inst.n).items()
            if np.all(np.where(z > 0, m, True) & np.where(z < 0, ~m, True))]
    assert hits
    for i in hits:
        forged = {**d, "tree": {**d["tree"], "nodes": [list(nd) for nd in nodes]}}
        forged["tree"]["nodes"][i][1] = 0.5 * res.value
        assert not verify(forged, inst.Phi, inst.U, inst.features).valid


@pytest.mark.slow
@pytest.mark.parametrize("seed", [4, 1, 3])
def test_forged_chamber_leaves_below_their_exact_maximum_are_rejected(seed):
    """Every ``"c"`` leaf of a tree, its claim forged to 0.99 of its chamber's exact maximum (3-d
    face enumeration, exact rationals): verify must reject each forgery."""
    from _exact_reference import chamber_max

    inst, res, d = _tree(seed)
    basis = exact_features(inst.features, inst.n)
    nodes = d["tree"]["nodes"]
    accepted = []
    for i, m in _leaf_masks(nodes, inst.n).items():
        top = chamber_max(inst.Phi, inst.U, basis, m)
        if not top > 1e-6:
            continue
        forged = {**d, "tree": {**d["tree"], "nodes": [list(nd) for nd in nodes]}}
        forged["tree"]["nodes"][i][1] = 0.99 * top
        if verify(forged, inst.Phi, inst.U, inst.features).valid:
            accepted.append((i, top))
    assert accepted == []


@pytest.mark.slow
def test_search_and_verify_agree_on_the_fuzz(capsys):
    """On the verify fuzz (seeds 0..199), the search's ``certified`` is verify's, except where the
    search says a solved bound is not proven (then it does not certify; the count is printed)."""
    import json

    from _fuzz_instances import instance

    bad, cautious = [], 0
    for seed in range(200):
        inst = instance(seed)
        res = _run(inst.Phi, inst.U, inst.features, "enumerate")
        rep = verify(json.loads(json.dumps(res.to_dict(), allow_nan=False)), inst.Phi, inst.U, inst.features)
        if res.certified == rep.certified:
            continue
        if not res.certified and any("not proven" in s for s in res.notes):
            cautious += 1
        else:
            bad.append((inst.recipe(), res.certified, rep.certified))
    with capsys.disabled():
        print(f"\nsearch vs verify on 200 fuzz instances: {len(bad)} disagreements, {cautious} where the "
              f"search does not certify an unproven solved bound that verify accepts")
    assert bad == []
