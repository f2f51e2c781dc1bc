"""The packed form of a ``"d"`` leaf's multipliers (``FORMAT.md``, format 3): the same verdict as the list
form it replaces (format 2, still read), and a one-line refusal (exit 2) for packed arrays that are malformed,
oversized or truncated."""

from __future__ import annotations

import base64
import copy
import json

import numpy as np
import pytest

from relu_gating import CertificateError, verify
from relu_gating.certificate import FORMAT, packed_multipliers
from relu_gating.cli import main
from relu_gating.search.bnb import branch_and_bound


@pytest.fixture(scope="module")
def lifted():
    """A branch-and-bound tree with lifted ``"d"`` leaves (as written), its problem, and the index of its
    ``"d"`` leaf of the largest claim."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 3))
    Phi, U = np.c_[X, np.ones(12)], np.linalg.qr(rng.normal(size=(12, 3)))[0]
    d = json.loads(json.dumps(branch_and_bound(Phi, U, features="bias", lifted=True).to_dict()))
    nodes = d["tree"]["nodes"]
    ds = [k for k, nd in enumerate(nodes) if nd[0] == "d"]
    assert ds and d["format"] == FORMAT == "relu-gating-certificate/3"
    return Phi, U, d, max(ds, key=lambda k: nodes[k][1])


def _unpacked(N):
    """The packed form decoded here (numpy's own reading of the bytes), as format 2's list of ``[k, l, v]``."""
    kl = np.frombuffer(base64.b64decode(N["kl"]), dtype="<u4").reshape(-1, 2)
    v = np.frombuffer(base64.b64decode(N["v"]), dtype="<f8")
    return {"p": N["p"], "entries": [[int(k), int(l), float(x)] for (k, l), x in zip(kl.tolist(), v.tolist())]}


def test_packed_leaves_verify_as_their_lists(lifted):
    """Every ``"d"`` leaf written packed; the certificate with those leaves as format 2's lists (decoded
    independently) gets the same report, bound for bound, in floats and in exact mode."""
    Phi, U, d, _ = lifted
    old = copy.deepcopy(d)
    old["format"] = "relu-gating-certificate/2"
    for nd in old["tree"]["nodes"]:
        if nd[0] == "d":
            assert sorted(nd[3]) == ["kl", "p", "v"] and len(nd[3]["kl"]) == len(nd[3]["v"])
            packed, nd[3] = nd[3], _unpacked(nd[3])
            assert packed_multipliers(nd[3]) == packed  # bit for bit
    for exact in (False, True):
        a, b = verify(d, Phi, U, "bias", exact=exact), verify(old, Phi, U, "bias", exact=exact)
        assert a.valid and a.certified and b.valid and b.certified, (a.reasons, b.reasons)
        assert a.alpha_proven == b.alpha_proven and a.checks["tree"] == b.checks["tree"]


def test_packed_values_are_evidence_not_trusted(lifted):
    """Packed multipliers that do not prove the leaf's claim (every value negated, claim lowered): not valid."""
    Phi, U, d, k = lifted
    bad = copy.deepcopy(d)
    nd = bad["tree"]["nodes"][k]
    E = _unpacked(nd[3])
    nd[3] = packed_multipliers({"p": E["p"], "entries": [[a, b, -v] for a, b, v in E["entries"]]})
    nd[1] *= 0.9
    for exact in (False, True):
        assert not verify(bad, Phi, U, "bias", exact=exact).valid


def _forged(N):
    """Packed multipliers that do not decode, or decode to no entries of ``p``: (name, N, words of the error)."""
    kl, v, p = N["kl"], N["v"], N["p"]
    most = 4 * -(-8 * (p * (p + 1) // 2) // 3)
    big = base64.b64encode(bytes(8 * (p * (p + 1) // 2 + 1))).decode()
    return [("not base64", dict(N, kl="!" * len(kl)), "packed multipliers"),
            ("lengths differ", dict(N, v=v[:-4]), "not 2 strings"),
            ("truncated", dict(N, kl=kl[:-4], v=v[:-4]), "packed multipliers"),
            ("half an entry", dict(N, kl=kl[:-12] + "AAAAAAAA", v=v[:-12] + "AAAAAAAA"), "packed multipliers"),
            ("oversized", dict(N, kl=big, v=big), f"<= {most}"),
            ("a list", dict(N, kl=list(kl)), "not 2 strings"),
            ("p differs", dict(N, p=p + 1), "not 2 strings"),
            ("p a float", dict(N, p=float(p)), "not 2 strings")]


def test_malformed_packed_multipliers_are_refused_in_one_line(lifted, tmp_path, capsys):
    """Not base64, of unequal lengths, truncated, not whole entries, beyond ``p (p + 1) / 2`` pairs (refused
    before decoding), not strings, another ``p``: CertificateError in both modes, and ``relu-gating verify``
    exits 2 with one line."""
    Phi, U, d, k = lifted
    data = tmp_path / "in.npz"
    np.savez(data, Phi=Phi, U_K=U)
    for name, N, words in _forged(d["tree"]["nodes"][k][3]):
        bad = copy.deepcopy(d)
        bad["tree"]["nodes"][k][3] = N
        for exact in (False, True):
            with pytest.raises(CertificateError, match="multipliers") as got:
                verify(bad, Phi, U, "bias", exact=exact)
            assert words in str(got.value) and "\n" not in str(got.value), (name, str(got.value))
        cert = tmp_path / f"{name}.json"
        cert.write_text(json.dumps(bad))
        assert main(["verify", str(cert), str(data), "--features", "bias"]) == 2, name
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "multipliers" in err[0], (name, err)


def test_packed_pairs_are_checked_as_entries(lifted):
    """Packed entries that decode but name a pair twice or an index off the range prove nothing (as the list
    form's): the leaf falls to its node bound, which does not prove the lowered claim."""
    Phi, U, d, k = lifted
    E = _unpacked(d["tree"]["nodes"][k][3])
    p, ent = E["p"], E["entries"]
    for forged in (ent + ent[:1], ent + [[0, p, 1e-3]], ent + [[p, 0, 1e-3]]):
        bad = copy.deepcopy(d)
        nd = bad["tree"]["nodes"][k]
        nd[3] = {"p": p, "kl": base64.b64encode(np.array([e[:2] for e in forged], dtype="<u4").tobytes()).decode(),
                 "v": base64.b64encode(np.array([e[2] for e in forged], dtype="<f8").tobytes()).decode()}
        nd[1] *= 0.5
        assert not verify(bad, Phi, U, "bias").valid


def test_writer_refuses_indices_it_cannot_pack():
    """The writer packs integral indices in ``[0, p)`` only."""
    for ent in ([[0, 3, 1.0]], [[0.5, 1, 1.0]], [[-1, 1, 1.0]]):
        with pytest.raises(ValueError, match="indices"):
            packed_multipliers({"p": 3, "entries": ent})
    assert packed_multipliers({"p": 2, "entries": []}) == {"p": 2, "kl": "", "v": ""}
