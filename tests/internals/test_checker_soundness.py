"""Regression tests of the trust issue's attacks on the checker (each fails on the old verifier).

Every reference value here is computed in exact rationals (``fractions.Fraction``): the float
inputs are exact dyadic rationals, so the objective of a neuron is an exact rational number.
"""

from __future__ import annotations

import copy
import io
import json
import zipfile
from fractions import Fraction

import numpy as np
import pytest

from relu_gating import CertificateError, best_neuron, verify
from relu_gating.cli import main


def exact_objective(Phi, U, H, theta) -> Fraction:
    """``N_K`` (``H`` None) or ``G_H`` of ``relu(Phi theta)`` in exact rationals."""
    n = Phi.shape[0]
    th = [Fraction(t) for t in theta]
    h = [max(sum(Fraction(a) * t for a, t in zip(row, th)), Fraction(0)) for row in Phi.tolist()]
    Uf = [[Fraction(x) for x in row] for row in U.tolist()]
    if H is None:
        y, M = h, Uf
    else:
        # Pi_H by Gram-Schmidt in rationals
        basis = []
        for col in np.asarray(H, dtype=float).T.tolist():
            v = [Fraction(x) for x in col]
            for b in basis:
                c = sum(p * q for p, q in zip(v, b)) / sum(q * q for q in b)
                v = [p - c * q for p, q in zip(v, b)]
            if any(v):
                basis.append(v)

        def proj_out(w):
            for b in basis:
                c = sum(p * q for p, q in zip(w, b)) / sum(q * q for q in b)
                w = [p - c * q for p, q in zip(w, b)]
            return w
        y = proj_out(h)
        M = list(zip(*[proj_out(list(col)) for col in zip(*Uf)]))
    yy = sum(t * t for t in y)
    return sum(sum(M[i][k] * y[i] for i in range(n)) ** 2 for k in range(U.shape[1])) / yy


def _near_duplicate(g: float):
    """The issue's instance: x = [-2, -1, -0.3, 0.4, 1 - g, 1], Phi = [x, 1], U_K the centred
    direction of e_6 + 0.5 e_5; theta* = (1, x_6 - 2 x_5) lies in chamber 000011."""
    x = np.array([-2, -1, -0.3, 0.4, 1 - g, 1])
    Phi = np.c_[x, np.ones(6)]
    v = np.zeros(6)
    v[5], v[4] = 1.0, 0.5
    v -= v.mean()
    U = (v / np.linalg.norm(v))[:, None]
    return Phi, U, np.array([1.0, x[5] - 2 * x[4]])


@pytest.mark.parametrize("g", [1e-12, 1e-13])
@pytest.mark.parametrize("strategy", ["enumerate", "branch-and-bound"])
def test_near_duplicate_samples_no_false_certificate(g, strategy):
    """(a) The certificate of either strategy never proves a bound below an exact interior point."""
    Phi, U, ts = _near_duplicate(g)
    assert np.all((Phi @ ts > 0) == [0, 0, 0, 0, 1, 1])
    best = exact_objective(Phi, U, np.ones((6, 1)), ts)
    assert abs(best - 1) < Fraction(1, 10**12)  # computed with fractions (U_K rounded to floats)
    res = best_neuron(Phi, U, strategy=strategy)
    rep = verify(json.loads(json.dumps(res.to_dict())), Phi, U, "bias")
    if rep.valid:
        assert rep.upper_bound >= float(best) - 1e-9
    assert not (rep.certified and rep.value < float(best) - 1e-9)


def _forge_low_chamber(d: dict, claim: float) -> dict:
    f = copy.deepcopy(d)
    p = f["patterns"]
    masks = [np.unpackbits(np.frombuffer(bytes.fromhex(h), np.uint8), count=6) for h in p["masks"]]
    k = next(i for i, mk in enumerate(masks) if mk.tolist() == [0, 0, 0, 0, 1, 1])
    p["bounds"][k] = claim
    f["upper_bound"] = max(claim, f["value"], max(b for j, b in enumerate(p["bounds"]) if j != k))
    return f, k


@pytest.mark.parametrize("g", [1e-12, 1e-13])
def test_lowered_thin_chamber_bound_refused(g):
    """(a) The old dual-bound check dropped B_S's small eigen-direction as a kernel and accepted
    0.857142857 for chamber 000011, whose interior neuron theta* has exact objective 1."""
    Phi, U, _ = _near_duplicate(g)
    d = json.loads(json.dumps(best_neuron(Phi, U).to_dict()))
    f, k = _forge_low_chamber(d, 0.857142857)
    if str(k) not in f["evidence"]:  # the old search's evidence for it: its dual optimum (any N)
        f["evidence"][str(k)] = {"rows": [], "N": []}
        f["patterns"]["settlement"] = f["patterns"]["settlement"][:k] + "E" + f["patterns"]["settlement"][k + 1:]
    rep = verify(f, Phi, U, "bias")
    assert not rep.valid and "not proven" in " ".join(rep.reasons)
    rep = verify(f, Phi, U, "bias", exact=True)
    assert not rep.valid


def _exclusion_case(g: float = 1e-13):
    """Features H = [1, e_5 + e_6]: chamber 000011's large singular direction lies in col(H), its
    small one (the gap g) does not, so its neurons are NOT excluded (theta* has a positive gain)."""
    Phi, U, ts = _near_duplicate(g)
    H = np.c_[np.ones(6), np.r_[0, 0, 0, 0, 1.0, 1.0]]
    h = np.r_[0, 0, 0, 0, 1.0, 2.0]  # the direction of relu(Phi theta*)
    Qh = np.linalg.qr(H)[0]
    v = h - Qh @ (Qh.T @ h)
    return Phi, (v / np.linalg.norm(v))[:, None], H, ts


def test_forged_exclusion_of_a_live_chamber_refused():
    """(b) Marking chamber 000011 'P' (no admissible neuron) with bound 0 is refused: the old
    exclusion test dropped singular directions of S Q below 1e-12 and accepted it."""
    Phi, U, H, ts = _exclusion_case()
    gain = exact_objective(Phi, U, H, ts)
    assert gain > Fraction(99, 100)
    d = json.loads(json.dumps(best_neuron(Phi, U, features=H).to_dict()))
    f, k = _forge_low_chamber(d, 0.0)
    f["patterns"]["settlement"] = f["patterns"]["settlement"][:k] + "P" + f["patterns"]["settlement"][k + 1:]
    f["evidence"].pop(str(k), None)
    rep = verify(f, Phi, U, H)
    assert not rep.valid and "not proven" in " ".join(rep.reasons)


def test_exclusion_decided_exactly():
    """(b) The checker's exclusion decision (shared by 'P' patterns and tree leaves ['x']) against
    an exact oracle: a genuinely excluded pattern (its only active sample spans a feature) is
    excluded; the near-degenerate live chamber is not."""
    from relu_gating.checker._exact_claims import excluded
    from relu_gating.checker._problem import state_problem

    Phi, U, H, _ = _exclusion_case()
    P = state_problem(Phi, U, H)
    assert not excluded(P, np.array([0, 0, 0, 0, 1, 1], bool))
    H2 = np.c_[np.ones(6), np.eye(6)[5]]
    P2 = state_problem(Phi, U, H2)
    assert excluded(P2, np.array([0, 0, 0, 0, 0, 1], bool))
    assert not excluded(P2, np.array([0, 0, 0, 0, 1, 1], bool))
    assert excluded(P2, np.zeros(6, bool))


def test_forged_excluded_tree_leaf_refused():
    """(b) A tree certificate whose chamber leaf for 000011 is replaced by ['x'] is refused."""
    Phi, U, H, ts = _exclusion_case()
    d = json.loads(json.dumps(best_neuron(Phi, U, features=H, strategy="branch-and-bound").to_dict()))
    nodes = d["tree"]["nodes"]
    chambers = [k for k, nd in enumerate(nodes) if nd[0] in ("c", "b")]
    refused = 0
    for k in chambers:
        f = copy.deepcopy(d)
        f["tree"]["nodes"][k] = ["x"]
        rep = verify(f, Phi, U, H)
        refused += not rep.valid
        assert not (rep.valid and rep.upper_bound < float(exact_objective(Phi, U, H, ts)) - 1e-9)
    assert refused == len(chambers)  # no leaf of this tree is a chamber of excluded neurons only


# ---------------------------------------------------------------- (c) canonical masks


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(21)
    Phi = np.c_[rng.normal(size=(13, 2)), np.ones(13)]
    U = np.linalg.qr(rng.normal(size=(13, 2)))[0]
    return Phi, U, best_neuron(Phi, U)


def test_json_mask_padding_bits_refused(small):
    Phi, U, res = small
    d = json.loads(json.dumps(res.to_dict()))
    raw = bytearray(bytes.fromhex(d["patterns"]["masks"][3]))
    raw[-1] |= 1  # n = 13: three padding bits in the last byte
    d["patterns"]["masks"][3] = raw.hex()
    with pytest.raises(CertificateError, match="padding"):
        verify(d, Phi, U, "bias")


def _npz_members(path) -> dict:
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def _write_npz(members: dict, path) -> str:
    np.savez(path, **members)
    return str(path)


def test_binary_copies_differing_in_padding_refused(small, tmp_path):
    """(c) Chambers replaced by copies of another that differ only in padding bits: the old hash
    called them distinct and the certificate verified with a lower upper bound."""
    from relu_gating.certificate import save_binary

    Phi, U, res = small
    path = tmp_path / "c.npz"
    save_binary(res, path)
    a = _npz_members(path)
    top = int(np.argmax(a["bounds"]))
    src = (top + 1) % a["bounds"].size
    a["masks"][top] = a["masks"][src] | np.r_[np.zeros(a["masks"].shape[1] - 1, np.uint8), np.uint8(1)]
    a["witnesses"][top] = a["witnesses"][src]
    a["bounds"][top] = a["bounds"][src]
    with pytest.raises(CertificateError, match="padding"):
        verify(_write_npz(a, tmp_path / "forged.npz"), Phi, U, "bias")


# ---------------------------------------------------------------- (d) integers, shapes


@pytest.mark.parametrize("where", ["problem.n", "n_patterns", "evidence_rows", "tree_split"])
def test_huge_integer_literal_is_one_line_error(small, tmp_path, capsys, where):
    Phi, U, res = small
    if where == "tree_split":
        d = best_neuron(Phi, U, strategy="branch-and-bound").to_dict()
        k = next(i for i, nd in enumerate(d["tree"]["nodes"]) if nd[0] == "s")
        d["tree"]["nodes"][k][1] = 123456789
        text = json.dumps(d).replace('["s", 123456789]', '["s", 1e999]')
    else:
        d = res.to_dict()
        if where == "problem.n":
            d["problem"]["n"] = 123456789
        elif where == "n_patterns":
            d["n_patterns"] = 123456789
        else:
            k = next(k for k, e in d["evidence"].items() if e["rows"])
            d["evidence"][k]["rows"][0] = 123456789
        text = json.dumps(d).replace("123456789", "1e999")
    assert "1e999" in text
    with pytest.raises(CertificateError) as err:
        verify(text, Phi, U, "bias")
    assert "\n" not in str(err.value)
    cert, inp = tmp_path / "c.json", tmp_path / "x.npz"
    cert.write_text(text)
    np.savez(inp, Phi=Phi, U_K=U)
    assert main(["verify", str(cert), str(inp), "--features", "bias"]) == 2
    out = capsys.readouterr()
    assert "Traceback" not in out.err and len(out.err.strip().splitlines()) == 1


def test_absurd_declared_shape_in_binary_certificate_refused(small, tmp_path):
    """(d) A member declaring (10^12, ...) rows is refused from its header, nothing allocated."""
    from relu_gating.certificate import save_binary

    Phi, U, res = small
    path = tmp_path / "c.npz"
    save_binary(res, path)
    out = tmp_path / "huge.npz"
    N = 10**12
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "meta.npy":
                meta = json.loads(np.load(io.BytesIO(data)).tobytes())
                meta["n_patterns"] = N
                buf = io.BytesIO()
                np.save(buf, np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
                data = buf.getvalue()
            elif info.filename in ("masks.npy", "witnesses.npy", "bounds.npy", "settlement.npy"):
                arr = np.load(io.BytesIO(data))
                buf = io.BytesIO()
                hdr = {"descr": np.lib.format.dtype_to_descr(arr.dtype), "fortran_order": False,
                       "shape": (N,) + arr.shape[1:]}
                np.lib.format.write_array_header_1_0(buf, hdr)
                data = buf.getvalue() + arr.tobytes()
            zout.writestr(info.filename, data)
    with pytest.raises(CertificateError) as err:
        verify(str(out), Phi, U, "bias")
    assert "\n" not in str(err.value) and "stored bytes" in str(err.value)


# ---------------------------------------------------------------- near-duplicate samples


def _near_duplicates(seed: int):
    """7 points in 3-d, each duplicated with 1e-13 jitter; kNN graph, K = 4; bias features (the
    issue's family: the old verifier accepted a bound beaten by an exact witness on seeds 7 and 10)."""
    import relu_gating as rg

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(7, 3))
    X = np.r_[X, X + 1e-13 * rng.normal(size=(7, 3))]
    U = rg.low_frequency_basis(rg.laplacian(rg.sample_graph(X, kind="knn", n_neighbors=4)), 4).U_K
    return rg.layer_input(X), U


@pytest.mark.parametrize("seed", [0] + [pytest.param(s, marks=pytest.mark.slow) for s in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)])
def test_near_duplicates_no_accepted_bound_beaten_by_an_exact_interior_point(seed):
    """Every pattern bound the checker accepts is at least the exact objective of that pattern's
    strict witness (an interior point; the old verifier accepted a bound of 8.4e-13 on a chamber
    whose witness has exact objective 0.194), and a certified answer is at least every witness."""
    from relu_gating.checker._bounds import prove
    from relu_gating.checker._problem import state_problem
    from relu_gating.checker._read_patterns import parse_patterns

    Phi, U = _near_duplicates(seed)
    d = json.loads(json.dumps(best_neuron(Phi, U).to_dict()))
    rep = verify(d, Phi, U, "bias")
    P = state_problem(Phi, U, "bias")
    p = parse_patterns(d, *Phi.shape)
    masks = np.unpackbits(p.packed, axis=1, count=Phi.shape[0]).astype(bool)
    proven = prove(P, masks, p.bounds, p.evidence, p.settlement == 3)
    H = np.ones((Phi.shape[0], 1))
    for k, w in enumerate(p.witnesses):
        h = np.maximum(Phi @ w, 0)
        if not h.any() or np.ptp(h[h > 0]) == 0 and h.all():
            continue  # an excluded neuron (0, or constant): no objective
        q = exact_objective(Phi, U, H, w)
        assert q <= Fraction(float(proven[k])) + Fraction(1, 10**12), (k, float(q), proven[k], p.bounds[k])
        if rep.certified:
            assert float(q) <= rep.value / rep.alpha + 1e-9
