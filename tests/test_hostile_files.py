"""Hostile certificate and input files (issue 37): every one is refused before the work (one line,
naming the limit) or verified, never a traceback; strict integers and canonical rationals; outputs
never replace inputs.  Small sizes here; the time and memory of the full-size files are measured by
``benchmarks/hostile_files.py``."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import zipfile

import numpy as np
import pytest

from relu_gating import CertificateError, best_neuron, verify
from relu_gating.certificate import save_binary
from relu_gating.cli import main

ARABIC = "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669"


def _problem(n, seed=0):
    rng = np.random.default_rng(seed)
    Phi = np.c_[rng.normal(size=(n, 2)), np.ones(n)]
    U = np.linalg.qr(rng.normal(size=(n, 3)))[0]
    return Phi, U


@pytest.fixture(scope="module")
def pat():
    Phi, U = _problem(12)
    res = best_neuron(Phi, U)
    return Phi, U, res, json.loads(json.dumps(res.to_dict()))


@pytest.fixture(scope="module")
def tree():
    Phi, U = _problem(12, seed=1)
    res = best_neuron(Phi, U, strategy="branch-and-bound")
    return Phi, U, json.loads(json.dumps(res.to_dict()))


def _big(digits, seed=0):
    """A canonical positive ``"p/q"`` (lowest terms) with ``digits``-digit parts, about 1e-9."""
    from fractions import Fraction

    rng = np.random.default_rng(seed)
    p = int("1" + "".join(map(str, rng.integers(0, 10, digits - 10))))
    q = int("1" + "".join(map(str, rng.integers(0, 10, digits - 1))))
    v = Fraction(p, q)
    return f"{v.numerator}/{v.denominator}"


def _with_evidence(d, N):
    """``N`` as the evidence of a pattern that has none (its bound proven without it)."""
    d = copy.deepcopy(d)
    k = next(i for i in range(d["n_patterns"]) if str(i) not in d["evidence"])
    d["evidence"][str(k)] = {"rows": [0, 1], "N": N}
    return d


# ---- numbers bounded by the problem ------------------------------------------------------------


@pytest.mark.parametrize("exact", [False, True])
def test_long_multipliers_refused_before_the_work(pat, exact):
    Phi, U, _, d = pat
    f = _with_evidence(d, [[_big(3000), "0"], ["0", _big(3000, 1)]])
    with pytest.raises(CertificateError, match=r"at most \d+ digits a part \(the problem's limit"):
        verify(f, Phi, U, exact=exact)


def test_multipliers_within_the_limit_are_read(pat):
    Phi, U, _, d = pat
    rep = verify(_with_evidence(d, [[_big(60), "0"], ["0", _big(60, 1)]]), Phi, U)
    assert rep.valid, rep.reasons  # evidence that proves nothing harms nothing: the bound is proven anyway


@pytest.mark.parametrize("bad", ["007/3", "2/4", "1/0", "-0", "1/-3", " 1/3", "1/3 ", "1_0/3", "+1/3",
                                 ARABIC[1] + "/" + ARABIC[3], "1/3/5", "0x10", "1e3", "", True])
def test_rationals_must_be_canonical(pat, bad):
    Phi, U, _, d = pat
    with pytest.raises(CertificateError):
        verify(_with_evidence(d, [[bad, "1/3"], ["1/3", "1/3"]]), Phi, U)


def test_canonical_rationals_accepted(pat):
    Phi, U, _, d = pat
    rep = verify(_with_evidence(d, [["0", "-1/3"], ["-1/3", "5"]]), Phi, U)
    assert rep.valid, rep.reasons


def test_binary_exact_multipliers_bounded_by_the_problem(pat, tmp_path):
    Phi, U, res, _ = pat
    src = tmp_path / "c.npz"
    save_binary(res, src)
    with np.load(src) as z:
        arrs = {k: z[k] for k in z.files}
    meta = json.loads(arrs["meta"].tobytes())
    i = int(arrs["evidence_index"][0])
    p = int(arrs["evidence_offsets"][1] - arrs["evidence_offsets"][0])
    meta["evidence_exact"] = {str(i): [[_big(3000)] * p] * p}
    arrs["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(tmp_path / "f.npz", **arrs)
    with pytest.raises(CertificateError, match="digits"):
        verify(str(tmp_path / "f.npz"), Phi, U)


def test_padded_meta_refused_unread(pat, tmp_path):
    """A meta member of deflated whitespace: its declared size exceeds what the sizes allow."""
    Phi, U, res, _ = pat
    src, dst = tmp_path / "c.npz", tmp_path / "padded.npz"
    save_binary(res, src)
    pad = 8 * 2**20
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zo:
        for info in zi.infolist():
            if info.filename != "meta.npy":
                zo.writestr(info.filename, zi.read(info))
                continue
            body = np.load(src)["meta"].tobytes()
            hdr = {"descr": "|u1", "fortran_order": False, "shape": (len(body) + pad,)}
            with zo.open("meta.npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array_header_1_0(fh, hdr)
                fh.write(body[:-1] + b" " * pad + body[-1:])
    assert os.path.getsize(dst) < 200_000
    with pytest.raises(CertificateError, match="meta member holds .* bytes, more than"):
        verify(str(dst), Phi, U)


def test_more_patterns_than_the_arrangement_allows_refused(pat):
    Phi, U, _, d = pat
    f = copy.deepcopy(d)
    f["n_patterns"] = 10**6
    with pytest.raises(CertificateError, match="Cover's count"):
        verify(f, Phi, U)


# ---- non-finite numbers where finite ones are required -----------------------------------------


@pytest.mark.parametrize("exact", [False, True])
def test_infinite_pattern_bound_malformed_in_both_modes(pat, exact):
    Phi, U, _, d = pat
    text = json.dumps(d)
    head, tail = text.split('"bounds": [', 1)
    text = head + '"bounds": [1e999, ' + tail.split(",", 1)[1]
    with pytest.raises(CertificateError, match="not finite"):
        verify(text, Phi, U, exact=exact)


def _leaf(nodes, kinds="bc"):
    return next(k for k, v in enumerate(nodes) if v[0] in kinds)


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("value", ["1e999", "-1e999", '"0.5"', "true", "1" + "0" * 400])
def test_tree_leaf_bound_must_be_finite_number_in_both_modes(tree, exact, value):
    Phi, U, d = tree
    f = copy.deepcopy(d)
    f["tree"]["nodes"][_leaf(f["tree"]["nodes"])][1] = "HERE"
    with pytest.raises(CertificateError, match="leaf bound must be a finite number"):
        verify(json.dumps(f).replace('"HERE"', value), Phi, U, exact=exact)


# ---- trees bounded by the problem ----------------------------------------------------------------


def _blind(depth):
    nodes = []

    def grow(k):
        if k == depth:
            nodes.append(["b", 1.0])
            return
        nodes.append(["s", k])
        grow(k + 1)
        grow(k + 1)
    grow(0)
    return nodes


def test_tree_larger_than_the_arrangement_allows_refused(tree):
    Phi, U, d = tree  # n = 12, rank 3: Cover's count 2 (1 + 11 + 55) = 134 chambers, 3,484 nodes allowed
    f = dict(d, tree={"nodes": _blind(12)})  # 8,191 nodes
    with pytest.raises(CertificateError, match="nodes exceed 3484"):
        verify(f, Phi, U, exact=True)


def test_blind_tree_at_the_cap_verified_alike_in_both_modes(tree):
    """2^6 ``b`` leaves claiming the cap: exact mode decides the cap once (monotone in the claim)."""
    Phi, U, d = tree
    f = dict(d, tree={"nodes": _blind(6)}, upper_bound=1.0 + 1e-6, certified=False)
    a, b = verify(f, Phi, U), verify(f, Phi, U, exact=True)
    assert a.valid and b.valid, (a.reasons, b.reasons)
    assert a.checks["tree"]["leaves"] == b.checks["tree"]["leaves"] == 64


@pytest.mark.parametrize("exact", [False, True])
def test_lifted_leaf_with_repeated_rows_proves_nothing_and_allocates_nothing(tree, exact):
    """``dec`` repeating a row, its sparse ``N`` declaring a matching huge size (7 TiB dense): the
    evidence is malformed (rows must be distinct, at most n), read as proving nothing."""
    Phi, U, d = tree
    n = len(Phi)
    dec = [0] * 1_000_000
    f = dict(d, tree={"nodes": [["d", 0.5, dec, {"p": len(dec) + 2 * n, "entries": []}, [0.0] * n]]})
    rep = verify(f, Phi, U, exact=exact)
    assert not rep.valid and any("not proven" in r for r in rep.reasons)


# ---- strict integers -----------------------------------------------------------------------------


def _exact_witness(Phi, d):
    """Pattern 0's float witness as integers (realizes the same pattern)."""
    w = np.asarray(d["patterns"]["witnesses"][0])
    t = np.round(w / np.abs(w).max() * 2.0**40).astype(np.int64)
    assert np.array_equal(Phi @ t > 0, Phi @ w > 0)
    return [int(x) for x in t]


def test_canonical_exact_witnesses_accepted(pat):
    Phi, U, _, d = pat
    t = _exact_witness(Phi, d)
    for form in ([str(x) for x in t], t):
        f = copy.deepcopy(d)
        f["patterns"]["exact_witnesses"] = {"0": form}
        rep = verify(f, Phi, U)
        assert rep.valid, rep.reasons


@pytest.mark.parametrize("how", ["space", "underscore", "arabic", "bool", "float", "integral_float", "plus",
                                 "leading_zero", "minus_zero", "key_arabic"])
def test_lenient_exact_witnesses_refused(pat, how):
    Phi, U, _, d = pat
    t = _exact_witness(Phi, d)
    s = [str(x) for x in t]
    key = "0"
    bad = {"space": " " + s[0], "underscore": s[0][:-1] + "_" + s[0][-1],
           "arabic": "".join(ARABIC[int(c)] if c.isdigit() else c for c in s[0]), "bool": True, "float": 2.9,
           "integral_float": float(t[0]), "plus": "+" + s[0].lstrip("-"), "leading_zero": "0" + s[0].lstrip("-"),
           "minus_zero": "-0"}.get(how, s[0])
    if how == "key_arabic":
        key = ARABIC[0]
    f = copy.deepcopy(d)
    f["patterns"]["exact_witnesses"] = {key: [bad] + s[1:]}
    with pytest.raises(CertificateError):
        verify(f, Phi, U)


@pytest.mark.parametrize("field", ["n", "m", "n_patterns", "rows"])
def test_integer_fields_must_be_json_integers(pat, field):
    Phi, U, _, d = pat
    f = copy.deepcopy(d)
    if field == "n_patterns":
        f["n_patterns"] = float(f["n_patterns"])
    elif field == "rows":
        k = next(iter(f["evidence"]))
        f["evidence"][k]["rows"] = [float(r) for r in f["evidence"][k]["rows"]]
    else:
        f["problem"][field] = float(f["problem"][field])
    with pytest.raises(CertificateError, match="JSON integer"):
        verify(f, Phi, U)


# ---- input files -------------------------------------------------------------------------------


def test_input_declaring_too_many_rows_refused_before_reading(tmp_path, capsys):
    from relu_gating.data.io import MAX_SAMPLES

    path = tmp_path / "rows.npz"
    np.savez_compressed(path, X=np.zeros((MAX_SAMPLES + 1, 1)))
    assert os.path.getsize(path) < 100_000
    for cmd in ("best-neuron", "report"):
        assert main([cmd, str(path)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "1,000,001 rows" in err[0] and "'X'" in err[0]


def test_features_file_declaring_too_many_rows_refused_before_reading(tmp_path, capsys):
    """``--features FILE`` gets the input files' header checks: a deflated ``H`` of more than
    ``MAX_SAMPLES`` rows is refused, one line naming the flag, before it is decompressed."""
    from relu_gating.data.io import MAX_SAMPLES

    data = tmp_path / "x.npy"
    np.save(data, np.random.default_rng(0).normal(size=(30, 2)))
    for name, save in (("H.npz", lambda p: np.savez_compressed(p, H=np.zeros((MAX_SAMPLES + 1, 1)))),
                       ("H.npy", lambda p: np.save(p, np.zeros((MAX_SAMPLES + 1, 1))))):
        path = tmp_path / name
        save(path)
        assert main(["best-neuron", str(data), "--features", str(path)]) == 2
        err = [x for x in capsys.readouterr().err.strip().splitlines() if ": warning: " not in x]
        assert len(err) == 1 and "1,000,001 rows" in err[0] and "--features" in err[0], err


# ---- outputs never replace inputs ----------------------------------------------------------------


def _sha(p):
    return hashlib.sha256(open(p, "rb").read()).hexdigest()


@pytest.fixture()
def data(tmp_path):
    path = tmp_path / "x.npz"
    np.savez(path, X=np.random.default_rng(0).normal(size=(10, 2)))
    return path


@pytest.mark.parametrize("argv, flag", [
    (["best-neuron", "{x}", "--out", "{x}"], "--out"),
    (["best-neuron", "{x}", "--out", "{link}"], "--out"),
    (["best-neuron", "{x}", "--checkpoint", "{x}"], "--checkpoint"),
    (["best-neuron", "{x}", "--out", "{tmp}/c.json", "--checkpoint", "{tmp}/c.json"], "--checkpoint"),
    (["patterns", "{x}", "--out", "{x}"], "--out"),
    (["patterns", "{x}", "--out", "{stem}"], "--out"),  # patterns writes STEM.npz: the input
    (["patterns", "{x}", "--out", "{link}"], "--out"),
])
def test_output_naming_an_input_refused(tmp_path, data, capsys, argv, flag):
    link = tmp_path / "link.json"
    os.symlink(data, link)
    before = _sha(data)
    subs = {"x": str(data), "link": str(link), "tmp": str(tmp_path), "stem": str(data)[:-4]}
    assert main([a.format(**subs) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and flag in err[0] and "outputs never replace inputs" in err[0]
    assert _sha(data) == before


def test_output_naming_a_certificate_refused(tmp_path, data, capsys):
    cert = tmp_path / "c.json"
    assert main(["best-neuron", str(data), "--out", str(cert), "--quiet"]) == 0
    capsys.readouterr()
    before = _sha(cert)
    assert main(["best-neuron", str(data), "--out", str(cert), "--features", str(cert)]) == 2
    assert "--out" in capsys.readouterr().err
    assert _sha(cert) == before


def test_input_decompressing_past_the_memory_refused_before_reading(tmp_path, capsys, monkeypatch):
    """The ZIP directory's declared sizes against half the machine's memory (here a machine of 8 MB)."""
    path = tmp_path / "wide.npz"
    np.savez_compressed(path, X=np.zeros((1000, 1000)))
    real = os.sysconf
    monkeypatch.setattr(os, "sysconf", lambda name: {"SC_PHYS_PAGES": 2048, "SC_PAGE_SIZE": 4096}.get(name) or real(name))
    assert main(["best-neuron", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "decompress to 8,000,128 bytes, more than half this machine's memory" in err[0]


def test_evidence_rows_must_be_distinct(pat):
    Phi, U, _, d = pat
    with pytest.raises(CertificateError, match="repeat a row"):
        f = copy.deepcopy(d)
        k = next(iter(f["evidence"]))
        f["evidence"][k] = {"rows": [0, 0], "N": [[0.0, 1.0], [1.0, 0.0]]}
        verify(f, Phi, U)


# ---- never a traceback -------------------------------------------------------------------------

_ODD = [1e999, -1e999, True, None, "7", " 7", "1/3", "1_0", ARABIC[:3], 2.9, 7.0, -1, 10**30, 10**400, [], {},
        [[1, 2]], "x" * 50, 0]


def _paths(obj, prefix=()):
    """Every leaf path of a JSON object (lists of numbers sampled, not walked whole)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list) and obj:
        for i in sorted({0, len(obj) - 1, len(obj) // 2}):
            yield from _paths(obj[i], prefix + (i,))
    else:
        yield prefix


def _set(obj, path, value):
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value


@pytest.mark.parametrize("kind", ["pat", "tree"])
def test_mutated_certificates_never_raise_anything_else(request, kind):
    """Seeded mutations of every kind of field to odd JSON values: verify, float and exact, returns a
    report or raises CertificateError / InputError (one line), never another exception."""
    got = request.getfixturevalue(kind)
    Phi, U, d = got[0], got[1], got[-1]
    paths = [p for p in _paths(d) if p[0] not in ("seconds", "notes", "input", "settled")]
    rng = np.random.default_rng(37)
    from relu_gating import InputError

    for t in range(24):
        f = copy.deepcopy(d)
        path = paths[int(rng.integers(len(paths)))]
        value = _ODD[int(rng.integers(len(_ODD)))]
        _set(f, path, value)
        text = json.dumps(f).replace("Infinity", "1e999")
        try:
            verify(text, Phi, U, exact=bool(t % 2))
        except (CertificateError, InputError) as exc:
            assert "\n" not in str(exc), (path, value)


def test_binary_evidence_members_bounded_before_reading(pat, tmp_path):
    """``evidence_N`` declaring more multipliers than ``n_patterns n^2`` (distinct rows): refused unread."""
    Phi, U, res, _ = pat
    src = tmp_path / "c.npz"
    save_binary(res, src)
    with np.load(src) as z:
        arrs = {k: z[k] for k in z.files}
    arrs["evidence_N"] = np.zeros(len(arrs["bounds"]) * len(Phi) ** 2 + 1)
    np.savez_compressed(tmp_path / "f.npz", **arrs)
    with pytest.raises(CertificateError, match="member 'evidence_N' declares .* entries, more than"):
        verify(str(tmp_path / "f.npz"), Phi, U)


# ---- trust III, the checker's side: exact trees, the tree member, the command line's first read ----------


def _true_claims(Phi, U, d, depth):
    """The blind tree of ``depth`` with each leaf claiming its own float node bound (true claims, most below
    the cap): exact mode decides every such leaf in integers."""
    from relu_gating.checker import state_problem, walk_tree

    nodes = _blind(depth)
    leaves, _, _ = walk_tree(nodes, state_problem(Phi, U, "bias"))
    for i, _, proven in leaves:
        nodes[i] = ["b", float(proven)]
    return dict(d, tree={"nodes": nodes}, upper_bound=max(p for _, _, p in leaves), certified=False)


def test_blind_tree_of_true_claims_verified_alike_in_both_modes(tree):
    Phi, U, d = tree
    f = _true_claims(Phi, U, d, 7)
    below = sum(1 for v in f["tree"]["nodes"] if v[0] == "b" and v[1] < 0.999)
    a, b = verify(f, Phi, U), verify(f, Phi, U, exact=True)
    assert below > 30 and a.valid and b.valid, (below, a.reasons, b.reasons)
    assert abs(a.upper_bound - b.upper_bound) <= 1e-7


def test_blind_tree_of_false_claims_invalid_in_exact_mode(tree):
    """Leaf claims 1e-3 under their node bounds: exact mode refutes them (an exact integer vector, or
    elimination), never accepts."""
    Phi, U, d = tree
    f = _true_claims(Phi, U, d, 5)
    for v in f["tree"]["nodes"]:
        if v[0] == "b" and v[1] < 0.999:
            v[1] -= 1e-3
    assert not verify(f, Phi, U, exact=True).valid


def test_dense_lifted_leaf_in_exact_mode_bounded_before_the_work(tree):
    """A ``d`` leaf whose dense ``N`` would cost more exact work than the problem allows: refused unread
    in exact mode (a one-line error), checked in floats."""
    Phi, U, d = tree
    n = Phi.shape[0]
    N = np.random.default_rng(5).random((2 * n, 2 * n)).tolist()
    f = dict(d, tree={"nodes": [["d", 0.5, [], N, [0.0] * n] for _ in range(1)]})
    many = dict(d, tree={"nodes": [["s", 0], ["d", 0.5, [], N, [0.0] * n], ["d", 0.5, [], N, [0.0] * n]]})
    assert not verify(f, Phi, U).valid
    for g in (f, many):
        try:
            assert not verify(g, Phi, U, exact=True).valid
        except CertificateError as exc:
            assert "exact work" in str(exc)


def test_padded_tree_member_refused_unread(tree, tmp_path):
    """A binary tree certificate whose ``tree.npy`` is padded with deflated whitespace: its declared size
    exceeds what the stated problem allows (refused before one byte is decompressed)."""
    Phi, U, d = tree
    res = best_neuron(Phi, U, strategy="branch-and-bound")
    src, dst = tmp_path / "t.npz", tmp_path / "padded.npz"
    save_binary(res, src)
    with zipfile.ZipFile(src) as zi:
        assert "tree.npy" in zi.namelist()
        text = np.load(src)["tree"].tobytes()
        pad = 64 * 2**20
        with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zo:
            for info in zi.infolist():
                if info.filename != "tree.npy":
                    zo.writestr(info.filename, zi.read(info))
                    continue
                hdr = {"descr": "|u1", "fortran_order": False, "shape": (len(text) + pad,)}
                with zo.open("tree.npy", "w", force_zip64=True) as fh:
                    np.lib.format.write_array_header_1_0(fh, hdr)
                    fh.write(text[:-1] + b" " * pad + text[-1:])
    assert os.path.getsize(dst) < 400_000 and verify(str(src), Phi, U).valid
    with pytest.raises(CertificateError, match="tree.npy' holds .* bytes, more than"):
        verify(str(dst), Phi, U)


@pytest.mark.parametrize("exact", [False, True])
def test_implied_node_repeating_its_farkas_rows_proves_nothing(tree, exact):
    """An implied node whose Farkas rows repeat (a small file, a long exact system): not proven, at once."""
    Phi, U, d = tree
    nodes = [["s", 0], ["s", 1], ["i", 5, 1, [0, 1] * 20_000], ["b", 1.0], ["b", 1.0], ["b", 1.0]]
    rep = verify(dict(d, tree={"nodes": nodes}, upper_bound=1.0 + 1e-6, certified=False), Phi, U, exact=exact)
    assert not rep.valid and any("implied sign of row 5" in r for r in rep.reasons), rep.reasons
