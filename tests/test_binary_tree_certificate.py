"""A tree certificate in the binary form (issue 38): ``--out CERT.npz`` no longer changes the strategy.

The ``.npz`` holds the tree's JSON form, deflated (certificate/FORMAT.md, "A tree in the binary
form"); the checker reads it with its own reader and checks it as the JSON file.  A tampered tree
is refused as the JSON one would be; a malformed member is a one-line ``CertificateError``.
"""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

import relu_gating as rg
from relu_gating.certificate import save_binary
from relu_gating.errors import CertificateError


@pytest.fixture(scope="module")
def tree_result():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(24, 2))
    Phi, U = rg.layer_input(X), np.linalg.qr(rng.normal(size=(24, 3)))[0]
    res = rg.best_neuron(Phi, U, strategy="branch-and-bound")
    assert res.certified and res.tree is not None
    return Phi, U, res


def _rewrite(src, dst, member: str, data: bytes | None = None, array=None) -> None:
    """A copy of the zip ``src`` with ``member`` replaced (raw ``.npy`` bytes, or an array saved as ``.npy``)."""
    import io

    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            body = zin.read(info.filename)
            if info.filename == member:
                if array is not None:
                    buf = io.BytesIO()
                    np.save(buf, array)
                    body = buf.getvalue()
                else:
                    body = data
            zout.writestr(info.filename, body)


def test_the_binary_tree_is_the_json_tree_and_verifies(tree_result, tmp_path):
    Phi, U, res = tree_result
    path = tmp_path / "c.npz"
    save_binary(res, path, {"input": {"note": "x"}})
    with np.load(path) as z:  # a standard .npz: the tree's JSON, bytes
        doc = json.loads(z["tree"].tobytes().decode())
        meta = json.loads(z["meta"].tobytes().decode())
    want = dict(res.to_dict(), input={"note": "x"})
    assert doc == json.loads(json.dumps(want)) and meta["kind"] == "tree" and meta["n_patterns"] == 0
    from_npz, from_json = rg.verify(str(path), Phi, U), rg.verify(want, Phi, U)
    assert from_npz.certified and from_npz.valid
    assert (from_npz.value, from_npz.upper_bound) == (from_json.value, from_json.upper_bound)


def test_a_tampered_tree_is_refused(tree_result, tmp_path):
    """A leaf's claim lowered far below what it proves, inside the binary form: not valid."""
    Phi, U, res = tree_result
    path, bad = tmp_path / "c.npz", tmp_path / "bad.npz"
    save_binary(res, path)
    with np.load(path) as z:
        doc = json.loads(z["tree"].tobytes().decode())
    leaves = [nd for nd in doc["tree"]["nodes"] if nd[0] == "b"]
    assert leaves
    leaves[0][1] = 0.0  # claims 0 on a leaf whose neurons reach more
    doc["upper_bound"] = max(doc["value"], 0.0)
    _rewrite(path, bad, "tree.npy", array=np.frombuffer(json.dumps(doc).encode(), dtype=np.uint8))
    rep = rg.verify(str(bad), Phi, U)
    assert not (rep.valid and rep.certified and rep.upper_bound <= res.value + 1e-12)


@pytest.mark.parametrize("array, match", [
    (np.zeros(4, dtype=np.float64), "uint8"),  # not bytes
    (np.zeros((2, 2), dtype=np.uint8), "uint8"),  # not a vector
    (np.frombuffer(b"[1, 2]", dtype=np.uint8), "object|tree"),  # JSON, but no certificate
    (np.frombuffer(b'{"format": "relu-gating-certificate/2", "kind": "patterns"}', dtype=np.uint8), "no tree"),
])
def test_a_malformed_tree_member_is_one_line(tree_result, tmp_path, array, match):
    Phi, U, res = tree_result
    path, bad = tmp_path / "c.npz", tmp_path / "bad.npz"
    save_binary(res, path)
    _rewrite(path, bad, "tree.npy", array=array)
    with pytest.raises(CertificateError, match=match) as info:
        rg.verify(str(bad), Phi, U)
    assert "\n" not in str(info.value)


def test_a_truncated_tree_member_is_refused(tree_result, tmp_path):
    Phi, U, res = tree_result
    path, bad = tmp_path / "c.npz", tmp_path / "bad.npz"
    save_binary(res, path)
    with zipfile.ZipFile(path) as z:
        raw = z.read("tree.npy")
    _rewrite(path, bad, "tree.npy", data=raw[:-10])  # the header declares 10 more bytes
    with pytest.raises(CertificateError, match="declared"):
        rg.verify(str(bad), Phi, U)
