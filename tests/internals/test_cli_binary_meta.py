"""The command line states the problem before it reads a binary certificate's meta, so the problem's
digit limit (``FORMAT.md``, "Limits") bounds that first read (issue 37)."""

from __future__ import annotations

import json
import zipfile

import numpy as np

from relu_gating import best_neuron
from relu_gating.certificate import save_binary
from relu_gating.checker import BinaryReader
from relu_gating.checker._limits import limits
from relu_gating.checker._problem import state_problem
from relu_gating.cli import main


def test_cli_reads_a_binary_meta_within_the_problems_limit(tmp_path, capsys):
    """The command line states the problem before it reads a binary meta: a meta padded past the problem's
    limit (but under the limit of the whole float64 range) is refused by its first read, one line, exit 2."""
    rng = np.random.default_rng(0)
    Phi = np.c_[rng.normal(size=(12, 2)), np.ones(12)]
    U = np.linalg.qr(rng.normal(size=(12, 3)))[0]
    res = best_neuron(Phi, U)
    assert json.loads(json.dumps(res.to_dict())).get("kind") != "tree"
    data = tmp_path / "in.npz"
    np.savez(data, Phi=Phi, U_K=U)
    src, dst = tmp_path / "c.npz", tmp_path / "padded.npz"
    save_binary(res, src)
    with BinaryReader(str(src), limits(state_problem(Phi, U, "bias")).digits) as rd:
        pad = rd._meta_limit() + 2**20  # past the problem's limit
    with BinaryReader(str(src)) as rd:
        assert pad < rd._meta_limit()  # under the generic one
    body = np.load(src)["meta"].tobytes()
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zo:
        for info in zi.infolist():
            if info.filename != "meta.npy":
                zo.writestr(info.filename, zi.read(info))
                continue
            hdr = {"descr": "|u1", "fortran_order": False, "shape": (len(body) + pad,)}
            with zo.open("meta.npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array_header_1_0(fh, hdr)
                fh.write(body[:-1] + b" " * pad + body[-1:])
    assert main(["verify", str(src), str(data)]) == 0
    capsys.readouterr()
    assert main(["verify", str(dst), str(data)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "meta member holds" in err[0], err
