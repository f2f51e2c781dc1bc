"""Binary (.npz) certificates: written and verified as a stream; forgeries and damage rejected.

The same kinds of forgery as ``tests/test_certificate.py`` for JSON: a tampered
mask, bound, witness, settlement, evidence or claim, a missing or duplicated
pattern, a certificate of another problem -- each rejected with a reason; a
truncated or corrupt file is a one-line CertificateError (CLI exit 2).  The
reference for "valid" is the JSON verifier on the same result.
"""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np
from _binary_files import npz_arrays, npz_save
import pytest

from relu_gating import CertificateError, best_neuron, verify
from relu_gating.certificate import BINARY_FORMAT, save_binary
from relu_gating.checker import BinaryReader
from relu_gating.cli import main


def _inst(seed=3, n=30, d=2, K=4):
    rng = np.random.default_rng(seed)
    Phi = np.c_[rng.normal(size=(n, d)), np.ones(n)]
    U_K = np.linalg.qr(rng.normal(size=(n, K)))[0]
    return Phi, U_K


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    Phi, U_K = _inst()
    res = best_neuron(Phi, U_K, features="bias")
    assert res.certified and res.evidence  # the forgeries below need dual evidence
    path = tmp_path_factory.mktemp("bin") / "cert.npz"
    save_binary(res, path)
    return Phi, U_K, res, str(path)


_arrays, _save = npz_arrays, npz_save


def test_valid_binary_certificate_verifies_like_json(case):
    Phi, U_K, res, path = case
    rep, ref = verify(path, Phi, U_K, "bias"), verify(res, Phi, U_K, "bias")
    assert rep.valid and rep.certified, rep.reasons
    assert rep.value == ref.value and rep.upper_bound == pytest.approx(ref.upper_bound, abs=1e-15)
    assert rep.checks["completeness"] == ref.checks["completeness"]
    assert rep.checks["bounds"] == ref.checks["bounds"]


def test_size_per_pattern_within_the_limit_and_numpy_reads_it(case):
    Phi, _, res, path = case
    n, m = Phi.shape
    with zipfile.ZipFile(path) as zf:
        sizes = {i.filename: i.compress_size for i in zf.infolist()}
    columns = sum(sizes[f"{c}.npy"] for c in ("masks", "witnesses", "bounds", "settlement"))
    assert columns <= res.n_patterns * (n / 8 + 8 * m + 16) + 4 * 128  # + the four .npy headers
    rest = sum(v for k, v in sizes.items() if k.startswith(("meta", "evidence")))
    assert os.path.getsize(path) <= columns + rest + 200 * len(sizes)  # ZIP directory entries
    a = _arrays(path)
    assert a["meta"]["format"] == BINARY_FORMAT and a["masks"].shape == (res.n_patterns, (n + 7) // 8)
    np.testing.assert_array_equal(np.unpackbits(a["masks"], axis=1, count=n).astype(bool), res.masks)
    np.testing.assert_array_equal(a["bounds"], res.bounds)
    with BinaryReader(path) as rd:  # the checker's reader
        assert rd.meta["n_patterns"] == res.n_patterns


def _best_rows(res):
    """The patterns holding the optimum (their bound decides the certificate)."""
    return np.argsort(-np.asarray(res.bounds))[:3]


@pytest.mark.parametrize(("how", "why"), [
    ("mask", "do not realize"), ("bound", "not proven"), ("witness", "do not realize"),
    ("settlement", "not proven"), ("evidence", "not proven"), ("drop", "the arrangement has"),
    ("duplicate", "duplicate patterns"), ("upper_bound", "below the bound proven"), ("value", "differs")])
def test_tampered_binary_certificate_rejected(case, tmp_path, how, why):
    Phi, U_K, res, path = case
    a = _arrays(path)
    top = int(_best_rows(res)[0])
    if how == "mask":
        a["masks"][top, 0] ^= 0x80  # another (unrealized or duplicate) pattern
    elif how == "bound":
        a["bounds"][top] = 0.5 * a["bounds"][top]
    elif how == "witness":
        a["witnesses"][top] = a["witnesses"][(top + 1) % res.n_patterns]
    elif how == "settlement":
        a["settlement"][top], a["bounds"][top] = 3, 0.0  # "no admissible neuron"
    elif how == "evidence":
        k = int(a["evidence_index"][0])
        a["evidence_N"][:] *= 0.0
        a["bounds"][k] = 0.5 * a["bounds"][k]
    elif how == "drop":
        for name in ("masks", "witnesses", "bounds", "settlement"):
            a[name] = a[name][:-1]
        a["meta"]["n_patterns"] -= 1
    elif how == "duplicate":
        a["masks"][1] = a["masks"][0]
        a["witnesses"][1] = a["witnesses"][0]
    elif how == "upper_bound":
        a["meta"]["upper_bound"] = 0.5 * a["meta"]["upper_bound"]
    elif how == "value":
        a["meta"]["value"] = a["meta"]["value"] + 1e-3
    rep = verify(_save(a, tmp_path / "forged.npz"), Phi, U_K, "bias")
    assert not rep.valid and why in " ".join(rep.reasons), rep.reasons
    assert not verify(res, Phi, U_K, "bias").reasons  # the untampered original is valid


def test_certificate_of_another_problem_rejected(case):
    Phi, U_K, _, path = case
    rep = verify(path, Phi, U_K[:, :3], "bias")
    assert not rep.valid and "another problem" in rep.reasons[0] and "K = 4" in rep.reasons[0]
    rep = verify(path, Phi, U_K, None)
    assert not rep.valid and "objective" in rep.reasons[0]


@pytest.mark.parametrize(("damage", "why"), [("truncate", "not a zip"), ("crc", "Bad CRC"),
                                              ("garbage", "not a zip"), ("member", "no member 'bounds'")])
def test_truncated_or_corrupt_file_is_one_line_error(case, tmp_path, capsys, damage, why):
    Phi, U_K, res, path = case
    raw = open(path, "rb").read()
    bad = tmp_path / "bad.npz"
    if damage == "truncate":
        bad.write_bytes(raw[: len(raw) // 2])
    elif damage == "crc":  # one bit of a witness flipped: the ZIP checksum fails
        z = bytearray(raw)
        pos = raw.index(b"witnesses.npy") + 400
        z[pos] ^= 0x01
        bad.write_bytes(bytes(z))
    elif damage == "garbage":
        bad.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    else:
        a = _arrays(path)
        del a["bounds"]
        _save(a, bad)
    with pytest.raises(CertificateError) as err:
        verify(str(bad), Phi, U_K, "bias")
    msg = str(err.value)
    assert "\n" not in msg and "bad.npz" in msg and why in msg, msg
    data = tmp_path / "d.npz"
    np.savez(data, Phi=Phi, U_K=U_K)
    assert main(["verify", str(bad), str(data), "--features", "bias"]) == 2
    err_line = capsys.readouterr().err.strip()
    assert err_line and len(err_line.splitlines()) == 1


def test_cli_writes_and_verifies_binary(tmp_path, capsys):
    rng = np.random.default_rng(11)
    inp = tmp_path / "x.npz"
    np.savez(inp, X=rng.normal(size=(24, 2)))
    out = tmp_path / "c.npz"
    assert main(["best-neuron", str(inp), "--K", "3", "--quiet", "--json", "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["certified"] and summary["certificate"].endswith("c.npz")
    assert main(["verify", str(out), str(inp), "--K", "3"]) == 0
    assert capsys.readouterr().out.startswith("CERTIFIED")
    assert main(["verify", str(out), str(inp), "--K", "2"]) == 1  # another problem
    assert "another problem" in capsys.readouterr().out


def test_thin_chambers_exact_witnesses_streamed_and_binary(tmp_path):
    # rows dependent only to within rounding: chambers too thin for float64 get exact witnesses
    rng = np.random.default_rng(6)
    n = 12
    t = rng.normal(size=n)
    X = np.where((np.arange(n) % 2)[:, None] == 0, np.c_[t, 2 * t + 1], np.c_[t, -t])
    Phi = np.c_[X, np.ones(n)]
    U = np.linalg.qr(rng.normal(size=(n, 3)))[0]
    ref = best_neuron(Phi, U)
    st = best_neuron(Phi, U, memory="1G")
    assert st.exact_witnesses and st.exact_witnesses == ref.exact_witnesses
    assert st.value == ref.value and st.certified
    path = tmp_path / "thin.npz"
    save_binary(st, path)
    assert verify(str(path), Phi, U, "bias").valid
    a = _arrays(path)
    k = next(iter(a["meta"]["exact_witnesses"]))
    a["meta"]["exact_witnesses"][k] = [str(-int(x)) for x in a["meta"]["exact_witnesses"][k]]
    rep = verify(_save(a, tmp_path / "forged.npz"), Phi, U, "bias")
    assert not rep.valid and "exact witness" in " ".join(rep.reasons)
