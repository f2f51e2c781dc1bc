"""An attacker's tests of the checker (issue 23): forged certificates and swapped problems.

Every reference value is exact (``fractions.Fraction``; the float inputs are the exact dyadic
rationals they are).  Attacks the checker refuses are ordinary tests (regression tests of the
checker, beyond ``test_checker_*.py`` and ``test_near_degenerate.py``); attacks it accepts are
``xfail(strict=True)`` so that the hole stays visible and the suite stays green.
"""

from __future__ import annotations

import copy
import json
import warnings
from fractions import Fraction

import numpy as np
import pytest
from _exact_reference import chamber_max_2d, exact_features, exact_objective
from _fuzz_instances import near_degenerate

from relu_gating import CertificateError, best_neuron, verify

BOUND_SLACK = 1e-7
LOWER = 3 * BOUND_SLACK  # a forged bound this far below the exact maximum must not be proven


def _run(Phi, U, features="bias", strategy="enumerate"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return best_neuron(Phi, U, features=features, strategy=strategy)


@pytest.fixture(scope="module")
def small():
    """13 samples in the plane (dyadic), bias features, K = 2: both certificates, as JSON dicts."""
    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(13, 2)) * 16) / 16
    Phi = np.c_[X, np.ones(13)]
    U = np.linalg.qr(rng.normal(size=(13, 2)))[0]
    pat = json.loads(json.dumps(_run(Phi, U).to_dict()))
    tree = json.loads(json.dumps(_run(Phi, U, strategy="branch-and-bound").to_dict()))
    assert verify(pat, Phi, U).certified and verify(tree, Phi, U).certified
    return Phi, U, pat, tree


def _letters(p: dict) -> list:
    return list(p["settlement"])


def _set_letters(p: dict, letters: list) -> None:
    p["settlement"] = "".join(letters) if isinstance(p["settlement"], str) else letters


# ---------------------------------------------------------------- chambers dropped, duplicated, re-encoded


def _replace_top_by_copy(d: dict, encode=lambda h: h, scale: float = 1.0) -> dict:
    """The chamber of the largest bound replaced by a copy of another (same count, top dropped)."""
    d = copy.deepcopy(d)
    p = d["patterns"]
    top = int(np.argmax(p["bounds"]))
    src = (top + 1) % len(p["bounds"])
    p["masks"][top] = encode(p["masks"][src])
    p["witnesses"][top] = [scale * w for w in p["witnesses"][src]]
    p["bounds"][top] = p["bounds"][src]
    letters = _letters(p)
    letters[top] = letters[src]
    _set_letters(p, letters)
    d["evidence"] = {k: v for k, v in d.get("evidence", {}).items() if int(k) != top}
    d["upper_bound"] = max(b for i, b in enumerate(p["bounds"]) if i != top)
    return d


@pytest.mark.parametrize("encode,scale", [(lambda h: h, 1.0), (lambda h: h, 3.0), (str.upper, 1.0),
                                          (lambda h: " ".join(h[k:k + 2] for k in range(0, len(h), 2)), 2.0)],
                         ids=["same", "scaled-witness", "upper-hex", "spaced-hex"])
def test_dropped_chamber_replaced_by_a_re_encoded_duplicate_refused(small, encode, scale):
    """The top chamber dropped and the count kept by a duplicate of another chamber, written with
    another hex encoding and another witness: the masks are compared as bytes, so it is refused."""
    Phi, U, pat, _ = small
    rep = verify(_replace_top_by_copy(pat, encode, scale), Phi, U)
    assert not rep.valid and "duplicate" in " ".join(rep.reasons)


def test_dropped_chamber_refused_by_the_count(small):
    Phi, U, pat, _ = small
    d = copy.deepcopy(pat)
    p = d["patterns"]
    top = int(np.argmax(p["bounds"]))
    for k in ("masks", "witnesses", "bounds"):
        del p[k][top]
    letters = _letters(p)
    del letters[top]
    _set_letters(p, letters)
    d["n_patterns"] -= 1
    d["evidence"] = {}
    rep = verify(d, Phi, U)
    assert not rep.valid and "the arrangement has" in " ".join(rep.reasons)


# ---------------------------------------------------------------- the problem changed, the certificate kept


def _swaps(Phi, U):
    rng = np.random.default_rng(11)
    n = Phi.shape[0]
    perm = np.r_[1, 0, np.arange(2, n)]
    R = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    return {"Phi R": (Phi @ R, U, "bias"), "two rows swapped": (Phi[perm], U[perm], "bias"),
            "other U_K": (Phi, np.linalg.qr(rng.normal(size=U.shape))[0], "bias"),
            "U_K one column": (Phi, U[:, :1], "bias"),
            "ones as an array": (Phi, U, np.ones((n, 1))), "no features": (Phi, U, None)}


@pytest.mark.parametrize("kind", ["pattern", "tree"])
@pytest.mark.parametrize("swap", ["Phi R", "two rows swapped", "other U_K", "U_K one column", "ones as an array",
                                  "no features"])
def test_certificate_for_another_problem_refused(small, kind, swap):
    Phi, U, pat, tree = small
    P2, U2, f2 = _swaps(Phi, U)[swap]
    rep = verify(pat if kind == "pattern" else tree, P2, U2, f2)
    assert not rep.valid


def test_rotated_U_K_is_the_same_problem(small):
    """``N_K`` and ``G_H`` are invariant under ``U_K -> U_K R``: the certificate stays valid."""
    Phi, U, pat, tree = small
    t = np.pi / 5
    R = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    assert verify(pat, Phi, U @ R).certified and verify(tree, Phi, U @ R).certified


# ---------------------------------------------------------------- lowered bounds against exact maxima


def _lowered_pattern_cases():
    return [("near_duplicates", 0), ("tiny_gaps", 1)]


@pytest.mark.parametrize("family,seed", _lowered_pattern_cases())
@pytest.mark.parametrize("keep_evidence", [False, True])
def test_every_pattern_bound_below_its_exact_maximum_refused(family, seed, keep_evidence):
    """One feature (``m = 2``): every live chamber's bound lowered to its exact supremum (closed
    cone, rationals) less 3e-7, with or without the search's dual evidence: each one is unproven."""
    inst = near_degenerate(seed, family, 1)
    res = _run(inst.Phi, inst.U, inst.features)
    basis = exact_features(inst.features, inst.n)
    d = res.to_dict()
    forged = 0
    for i, mask in enumerate(res.masks):
        top = chamber_max_2d(inst.Phi, inst.U, basis, mask) if mask.any() else 0.0
        if top > 1e-6:
            d["patterns"]["bounds"][i] = top - LOWER
            forged += 1
    if not keep_evidence:
        d["evidence"] = {}
    rep = verify(d, inst.Phi, inst.U, inst.features)
    assert forged > 10 and not rep.valid
    assert rep.checks["bounds"]["unproven"] >= forged


def _leaves(nodes: list, zero: np.ndarray) -> list:
    """``(index, signs)`` of every leaf of a tree certificate (preorder walk)."""
    signs, out, pos = np.where(zero, -1, 0), [], [0]

    def visit():
        node, idx = nodes[pos[0]], pos[0]
        pos[0] += 1
        if node[0] == "s":
            for s in (1, -1):
                signs[node[1]] = s
                visit()
            signs[node[1]] = 0
        elif node[0] == "i":
            signs[node[1]] = node[2]
            visit()
            signs[node[1]] = 0
        else:
            out.append((idx, signs.copy()))
    visit()
    return out


def test_every_tree_leaf_below_an_exact_interior_point_refused():
    """Every leaf's bound lowered to 3e-7 below the exact objective of a chamber witness inside
    the leaf's node (decided exactly): each leaf is unproven."""
    inst = near_degenerate(0, "near_duplicates", 1)
    en = _run(inst.Phi, inst.U)
    d = _run(inst.Phi, inst.U, strategy="branch-and-bound").to_dict()
    basis = exact_features("bias", inst.n)
    vals = [exact_objective(inst.Phi, inst.U, basis, w) for w in en.witnesses]
    nodes, forged = d["tree"]["nodes"], 0
    for idx, sg in _leaves(nodes, ~np.any(inst.Phi != 0, axis=1)):
        inside = [v for m, v in zip(en.masks, vals) if v is not None and np.all((sg == 0) | ((sg > 0) == m))]
        top = float(max(inside, default=Fraction(0)))
        if nodes[idx][0] != "x" and top > 1e-6:
            nodes[idx][1] = top - LOWER
            forged += 1
    rep = verify(d, inst.Phi, inst.U)
    assert forged > 10 and not rep.valid
    assert rep.checks["bounds"]["unproven"] >= forged


# ---------------------------------------------------------------- tree structure


def _tree_with(tree: dict, k: int, node: list) -> dict:
    d = copy.deepcopy(tree)
    d["tree"]["nodes"][k] = node
    return d


@pytest.mark.parametrize("row", [13, -1, True, 2.5, "3", None])
def test_split_row_out_of_range_or_not_an_integer_refused(small, row):
    Phi, U, _, tree = small
    k = next(i for i, nd in enumerate(tree["tree"]["nodes"]) if nd[0] == "s")
    with pytest.raises(CertificateError):
        verify(_tree_with(tree, k, ["s", row]), Phi, U)


def test_overlapping_children_refused(small):
    """A split on a row its node has already decided (the subtree would hold a child twice)."""
    Phi, U, _, tree = small
    nodes = tree["tree"]["nodes"]
    assert nodes[0][0] == "s" and nodes[1][0] == "s"
    rep = verify(_tree_with(tree, 1, ["s", nodes[0][1]]), Phi, U)
    assert not rep.valid and "not an undecided row" in " ".join(rep.reasons)


def test_missing_and_extra_children_refused(small):
    Phi, U, _, tree = small
    short = copy.deepcopy(tree)
    short["tree"]["nodes"].pop()
    assert not verify(short, Phi, U).valid
    long = copy.deepcopy(tree)
    long["tree"]["nodes"].append(["b", 1.0])
    assert not verify(long, Phi, U).valid


def test_implied_sign_flipped_refused(small):
    """An implied node whose sign is reversed: its Farkas rows prove the other sign."""
    Phi, U, _, tree = small
    k = next(i for i, nd in enumerate(tree["tree"]["nodes"]) if nd[0] == "i")
    nd = tree["tree"]["nodes"][k]
    rep = verify(_tree_with(tree, k, ["i", nd[1], -nd[2], nd[3]]), Phi, U)
    assert not rep.valid and "implied sign" in " ".join(rep.reasons)


def test_implied_node_replacing_a_split_refused(small):
    """A split turned into an implied sign (dropping its '-' subtree) with made-up Farkas rows."""
    Phi, U, _, tree = small
    nodes = tree["tree"]["nodes"]
    d = _tree_with(tree, 1, ["i", nodes[1][1], 1, [nodes[0][1]]])
    rep = verify(d, Phi, U)
    assert not rep.valid


def test_excluded_leaf_on_an_undecided_node_refused(small):
    Phi, U, _, tree = small
    k = next(i for i, nd in enumerate(tree["tree"]["nodes"]) if nd[0] == "b")
    rep = verify(_tree_with(tree, k, ["x"]), Phi, U)
    assert not rep.valid and "excluded leaf" in " ".join(rep.reasons)


# ---------------------------------------------------------------- binary form


def _npz(path) -> dict:
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


@pytest.fixture(scope="module")
def binary(small, tmp_path_factory):
    from relu_gating.certificate import save_binary

    Phi, U, _, _ = small
    res = _run(Phi, U)
    path = tmp_path_factory.mktemp("adv") / "c.npz"
    save_binary(res, path)
    return Phi, U, path


def test_binary_exact_duplicate_replacing_the_top_chamber_refused(binary, tmp_path):
    """Identical masks share a hash: the second pass compares them byte for byte."""
    Phi, U, path = binary
    a = _npz(path)
    top = int(np.argmax(a["bounds"]))
    src = (top + 1) % a["bounds"].size
    for k in ("masks", "witnesses", "bounds", "settlement"):
        a[k][top] = a[k][src]
    a["evidence_index"], a["evidence_offsets"] = np.zeros(0, np.int64), np.zeros(1, np.int64)
    a["evidence_rows"], a["evidence_N"] = np.zeros(0, np.int64), np.zeros(0)
    meta = json.loads(a["meta"].tobytes())
    meta["evidence_exact"] = {}  # the exact multipliers go with the evidence (else refused for that)
    a["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(tmp_path / "f.npz", **a)
    rep = verify(str(tmp_path / "f.npz"), Phi, U)
    assert not rep.valid and "duplicate" in " ".join(rep.reasons)


@pytest.mark.parametrize("code", [4, 255])
def test_binary_unknown_settlement_code_refused(binary, tmp_path, code):
    Phi, U, path = binary
    a = _npz(path)
    a["settlement"][0] = code
    np.savez(tmp_path / "f.npz", **a)
    with pytest.raises(CertificateError, match="settlement"):
        verify(str(tmp_path / "f.npz"), Phi, U)


def test_binary_live_top_chamber_marked_pruned_refused(binary, tmp_path):
    """Settlement code 3 (no admissible neuron) on the live top chamber, its bound lowered to 0."""
    Phi, U, path = binary
    a = _npz(path)
    top = int(np.argmax(a["bounds"]))
    a["settlement"][top] = 3
    a["bounds"][top] = 0.0
    np.savez(tmp_path / "f.npz", **a)
    assert not verify(str(tmp_path / "f.npz"), Phi, U).valid


# ---------------------------------------------------------------- accepted: false or malformed claims


def test_settlement_P_on_live_chambers_refused(small):
    """The letter ``P`` claims a chamber holds no admissible neuron.  On every chamber of this
    problem (all of them hold neurons with objective > 0, the witnesses themselves) the claim is
    false, yet the certificate verifies as CERTIFIED: the letter is only checked when the bound is
    not otherwise proven.  The verdict itself stays right (the bounds are proven)."""
    Phi, U, pat, _ = small
    d = copy.deepcopy(pat)
    _set_letters(d["patterns"], ["P"] * len(d["patterns"]["bounds"]))
    assert not verify(d, Phi, U).valid


@pytest.mark.parametrize("tamper", ["misaligned-hex", "multi-letter", "string-numbers"])
def test_malformed_pattern_columns_refused(small, tamper):
    """Each column must hold one well-formed entry per pattern.  Accepted today:
    masks ``["0102...", ""]`` (joined, then reshaped), a settlement entry ``"UB"`` (read as ``U``
    by ``"UBEP".index``), bounds and theta written as JSON strings (``np.asarray(.., float)``)."""
    Phi, U, pat, _ = small
    d = copy.deepcopy(pat)
    p = d["patterns"]
    if tamper == "misaligned-hex":
        p["masks"][0], p["masks"][1] = p["masks"][0] + p["masks"][1][:2], p["masks"][1][2:]
    elif tamper == "multi-letter":
        p["settlement"] = ["UB"] + _letters(p)[1:]
    else:
        p["bounds"] = [repr(b) for b in p["bounds"]]
        d["theta"] = [repr(t) for t in d["theta"]]
    with pytest.raises(CertificateError):
        verify(d, Phi, U)


# ---------------------------------------------------------------- a false certificate through underflow

#: Rows 0 and 2 and their sum (row 1): no neuron has the signs (+, -, +) on them.  The other rows
#: are off the common line ``d = phi_0 x phi_2 = (-4, 2, -2)`` of the three hyperplanes.
_SUM_ROWS = np.array([[1, 3, 1], [4, 10, 2], [3, 7, 1], [-2, 1, 3], [1, -4, 2], [-3, -1, 1], [2, 1, -1],
                      [-1, 2, -2]], dtype=float)
_TINY = 2.0**-1000  # Phi = _SUM_ROWS * 2^-1000: normal floats, whose products with a witness underflow


def _to_top_exponent(v) -> list:
    """``v`` times a power of two (exact, same chamber and objective) so that ``Phi v`` does not underflow."""
    v = np.asarray(v, dtype=float)
    return np.ldexp(v, 1020 - np.frexp(np.abs(v).max())[1]).tolist()


def _underflow_forgery():
    """The forged certificate of :func:`test_witness_realizing_its_mask_only_by_underflow_refused`
    ``(d, Phi, U, exact optimum)``, or None where this BLAS rounds the subnormal products otherwise."""
    from _exact_reference import exact_objective

    U = np.linalg.qr(np.random.default_rng(7).normal(size=(8, 2)))[0]
    Phi = _SUM_ROWS * _TINY
    res = _run(_SUM_ROWS, U, None)
    s = np.array([7.586064499091102, -3.75, 3.6048006398422725]) + 64 * np.cross(_SUM_ROWS[0], _SUM_ROWS[2])
    w = s * 2.0**-74
    V = (w[None] @ np.ascontiguousarray(Phi.T))[0]
    if not (V[0] > 0 and V[1] < 0 and V[2] > 0 and np.all(V != 0)):
        return None
    d = json.loads(json.dumps(res.to_dict()))
    p = d["patterns"]
    top, sec = np.argsort(res.bounds)[-1], np.argsort(res.bounds)[-2]
    p["witnesses"] = [_to_top_exponent(x) for x in p["witnesses"]]
    p["masks"][top], p["witnesses"][top], p["bounds"][top] = np.packbits(V > 0).tobytes().hex(), w.tolist(), \
        float(res.bounds[sec])
    d["evidence"] = {k: v for k, v in d.get("evidence", {}).items() if int(k) != top}
    d["theta"], d["pattern"] = p["witnesses"][sec], "".join("1" if b else "0" for b in res.masks[sec])
    value = float(exact_objective(_SUM_ROWS, U, None, res.witnesses[sec]))
    d["value"], d["upper_bound"], d["certified"] = value, float(res.bounds[sec]), True
    d["alpha"] = float(np.floor(value / res.bounds[sec] * 1e6) / 1e6)
    optimum = float(exact_objective(_SUM_ROWS, U, None, res.theta))
    assert optimum > res.bounds[sec] + 1e-4
    return d, Phi, U, optimum


def test_witness_realizing_its_mask_only_by_underflow_refused():
    """``Phi = R 2^-1000`` (``R`` small integers, ``N_K``, no features): the certificate of ``R``
    with ``theta`` and witnesses scaled by powers of two verifies.  Forgery: the top chamber is
    replaced by the non-realizable mask ``(+, -, +, ...)`` on rows 0, 1 = 0 + 2, 2, with the witness
    ``w = (s + 64 d) 2^-74`` (``s = (7.586.., -3.75, 3.604..)``): every product ``phi_j w_k`` is
    subnormal and rounds to a multiple of ``2^-1074``; the float row values are ``(1, -1, 1)
    2^-1074`` while the exact ones are ``(-0.059, 0.054, 0.113) 2^-1074``.  The float bound
    ``gamma_{m+1} max|w| ||phi_j||_1 + 2^-1000 ||phi_j||_1`` (relative) does not cover the absolute
    underflow error ``m 2^-1075``, so the witness is accepted, the count still matches, and the
    certificate verifies as CERTIFIED with upper bound 0.591820 (the second chamber's), while
    ``theta*`` of the honest search has exact objective 0.592711."""
    got = _underflow_forgery()
    if got is None:
        pytest.skip("this BLAS rounds the subnormal products otherwise")
    d, Phi, U, optimum = got
    rep = verify(d, Phi, U, None)
    assert not (rep.valid and rep.upper_bound < optimum - 1e-9)


def test_underflow_witness_refused_in_exact_mode():
    """The same forgery, checked with ``exact=True``: the witness is decided in rationals."""
    got = _underflow_forgery()
    if got is None:
        pytest.skip("this BLAS rounds the subnormal products otherwise")
    d, Phi, U, _ = got
    rep = verify(d, Phi, U, None, exact=True)
    assert not rep.valid and "do not realize" in " ".join(rep.reasons)


# ---------------------------------------------------------------- the search on a rescaled Phi


def _dup_rows():
    """8 samples with small integer coordinates (two exact duplicate pairs), bias, ``K = 2``: at
    scale 1 (and at every power-of-two scale) both strategies certify 0.535602628608."""
    rng = np.random.default_rng(1)
    X = rng.integers(-3, 4, size=(8, 2)).astype(float)
    return np.c_[X, np.ones(8)], np.linalg.qr(rng.normal(size=(8, 2)))[0]


@pytest.mark.filterwarnings("error::RuntimeWarning")  # the ends of the float range (issue 37)
@pytest.mark.parametrize("scale", [2.0**-500, 2.0**-1000])
def test_power_of_two_rescaling_keeps_the_certificate(scale):
    Phi, U = _dup_rows()
    res = _run(Phi * scale, U)
    rep = verify(res, Phi * scale, U)
    assert res.certified and rep.certified and abs(res.value - 0.5356026286079687) < 1e-12


@pytest.mark.filterwarnings("error::RuntimeWarning")  # the ends of the float range (issue 37)
def test_bnb_certified_agrees_with_verify_on_phi_times_1e150():
    """Issue 23 asks that the search's and the verifier's *certified* agree.  ``Phi * 1e-150``
    (the same problem up to one rounding per entry): the search reports upper bound 0.76284, not
    certified; ``verify`` proves 0.535602628609 from the same certificate and says certified."""
    Phi, U = _dup_rows()
    res = _run(Phi * 1e-150, U, strategy="branch-and-bound")
    assert res.certified == verify(res, Phi * 1e-150, U).certified


@pytest.mark.filterwarnings("error::RuntimeWarning")  # the ends of the float range (issue 37)
def test_enumeration_certifies_phi_times_1e150():
    """Not a false claim, a lost one: the objective does not depend on the scale of ``Phi``, and at
    scale 1 (or ``2^-500``) the enumeration certifies 0.53560; at ``1e-150`` its upper bound is 0.76284."""
    Phi, U = _dup_rows()
    assert _run(Phi * 1e-150, U, strategy="enumerate").certified


@pytest.mark.filterwarnings("error::RuntimeWarning")  # the ends of the float range (issue 37)
def test_bnb_on_phi_times_1e300_answers_or_refuses():
    """It raised LinAlgError (the polish step's least squares on rows near the float range's edge);
    now it answers, and what it says is what ``verify`` says of its certificate."""
    from relu_gating.errors import InputError

    Phi, U = _dup_rows()
    try:
        res = _run(Phi * 1e-300, U, strategy="branch-and-bound")
    except InputError:
        return
    rep = verify(res, Phi * 1e-300, U)
    assert rep.valid and rep.certified == res.certified, rep.reasons


@pytest.mark.filterwarnings("error::RuntimeWarning")  # the ends of the float range (issue 37)
def test_verify_on_subnormal_phi_answers_or_refuses():
    """``state_problem`` scales each column by ``2^-frexp(max)``: for a column whose largest entry
    is subnormal the scale is ``inf`` and the zero entries become NaN (``ValueError`` in ``to_ints``)."""
    from relu_gating.errors import InputError

    Phi, U = _dup_rows()
    res = _run(Phi, U)
    try:
        verify(res, Phi * 2.0**-1040, U)
    except InputError:
        pass


# ---------------------------------------------------------------- the value of a nearly excluded neuron

#: near_features seed 0, one feature: ``relu(Phi theta)`` lies within about 1e-9 of ``col(H)``
#: (not excluded), so ``(I - Pi_H) h`` loses half its digits in floats.
_NEAR_THETA = [-0.009858938489975367, 0.4412005947154901]


def _near_value_certificate():
    from _exact_reference import exact_features, exact_objective

    inst = near_degenerate(0, "near_features", 1)
    res = _run(inst.Phi, inst.U, inst.features)
    exact = float(exact_objective(inst.Phi, inst.U, exact_features(inst.features, inst.n), _NEAR_THETA))
    h = inst.Phi @ np.array(_NEAR_THETA)
    d = res.to_dict()
    d["theta"], d["pattern"] = list(_NEAR_THETA), "".join("1" if v > 0 else "0" for v in h)
    d["certified"], d["alpha"] = False, 0.01
    return inst, d, exact


def _float_value(inst) -> float:
    """The objective of ``_NEAR_THETA`` recomputed in plain floats (the checker's former value check)."""
    from relu_gating.checker._problem import state_problem

    P = state_problem(inst.Phi, inst.U, inst.features)
    h = np.maximum(P.Phi @ np.array(_NEAR_THETA), 0.0)
    y = h - P.QH @ (P.QH.T @ h)
    return float(np.sum((P.M.T @ y) ** 2) / (y @ y))


def test_value_of_a_nearly_excluded_neuron_is_exact_to_value_tol():
    """``theta = (-0.00985.., 0.44120..)`` on near_features seed 0 (``m = 2``): the exact objective is
    0.0883632139, the checker's float recomputation 0.0883632334 (``||(I - Pi_H) h|| ~ 1e-9 ||h||``:
    cancellation).  A certificate claiming the float value verifies, and ``rep.value`` is 1.95e-8
    from the truth, 20 times ``VALUE_TOL``, which is the claim's definition of *certified*."""
    inst, d, exact = _near_value_certificate()
    d["value"] = _float_value(inst)
    rep = verify(d, inst.Phi, inst.U, inst.features)
    assert not rep.valid or abs(rep.value - exact) <= 1e-9


def test_value_of_a_nearly_excluded_neuron_refused_in_exact_mode():
    """The same claim in exact mode: the value is recomputed in rationals and the claim refused."""
    inst, d, exact = _near_value_certificate()
    d["value"] = _float_value(inst)
    assert abs(d["value"] - exact) > 1e-8
    rep = verify(d, inst.Phi, inst.U, inst.features, exact=True)
    assert not rep.valid and any(r.startswith("value") for r in rep.reasons)


# ---------------------------------------------------------------- huge finite numbers in the evidence


@pytest.mark.parametrize("kind", ["pattern", "tree"])
def test_huge_dual_evidence_is_refused_or_unproven(small, kind):
    """``N`` of a pattern's evidence (or of a chamber leaf ``["c", u, rows, N]``) filled with 1e308:
    ``G^T N G`` overflows to inf/NaN and ``numpy.linalg.eigvalsh`` raises."""
    Phi, U, pat, tree = small
    if kind == "pattern":
        d = copy.deepcopy(pat)
        k = next(k for k, e in d["evidence"].items() if e["rows"])
        d["patterns"]["bounds"][int(k)] = 0.0
        rows = d["evidence"][k]["rows"]
        d["evidence"][k]["N"] = [[1e308] * len(rows) for _ in rows]
    else:
        d = copy.deepcopy(tree)
        k = next(i for i, nd in enumerate(d["tree"]["nodes"]) if nd[0] == "c" and nd[2])
        rows = d["tree"]["nodes"][k][2]
        d["tree"]["nodes"][k] = ["c", 0.0, rows, [[1e308] * len(rows) for _ in rows]]
    try:
        assert not verify(d, Phi, U).valid
    except CertificateError:
        pass


def test_tree_leaf_claiming_a_huge_bound_proves_only_what_the_checker_proves(small):
    """A ``b`` leaf claiming 1e308 is a true (weak) claim: the verdict uses the bound proven here."""
    Phi, U, _, tree = small
    d = copy.deepcopy(tree)
    k = next(i for i, nd in enumerate(d["tree"]["nodes"]) if nd[0] == "b")
    d["tree"]["nodes"][k][1] = 1e308
    rep = verify(d, Phi, U)
    assert rep.upper_bound <= 1.0 + 1e-9


# ---------------------------------------------------------------- thin chambers: a lost certificate


def _thin_pairs():
    """8 samples on a line (multiples of 1/64), sample 1 at ``x_0 + 2^-40`` and sample 3 at
    ``x_2 - 2^-45`` (two chambers of width ``2^-40`` and ``2^-45``), bias, kNN ``U_K`` (``K = 3``)."""
    from _fuzz_instances import make_basis

    rng = np.random.default_rng([0, 99])
    X = np.round(rng.normal(size=(8, 1)) * 64) / 64
    X[1], X[3] = X[0] + 2.0**-40, X[2] - 2.0**-45
    return np.c_[X, np.ones(8)], make_basis("knn", X, 3, rng)


@pytest.mark.parametrize("strategy", ["enumerate", "branch-and-bound"])
def test_thin_chambers_certified(strategy):
    """Two thin chambers (2^-40, 2^-45): the exact supremum of every chamber's closed cone
    (``chamber_max_2d``, rationals and 80-digit roots) is at most 0.9216539, which the search
    attains, and it certifies (the claims singular to rounding get evidence in exactly rescaled
    coordinates, ``search/_exact/near_kernel.py``; before, the bound stayed at 0.97072)."""
    Phi, U = _thin_pairs()
    res = _run(Phi, U, strategy=strategy)
    en = res if strategy == "enumerate" else _run(Phi, U)
    basis = exact_features("bias", 8)
    top = max(chamber_max_2d(Phi, U, basis, m) for m in en.masks if m.any())
    assert res.value > top - 1e-9 and res.upper_bound >= top - 1e-9  # sound either way
    assert res.certified
