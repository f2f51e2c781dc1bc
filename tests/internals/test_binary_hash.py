"""The binary checker's duplicate detection does not trust its row hash (relu_gating.checker._binary).

With every hash forced equal, distinct masks are still told apart (compared exactly), and a real
duplicate is still refused.
"""

from __future__ import annotations


import numpy as np
from _binary_files import npz_arrays, npz_save

import relu_gating.checker._binary as bv
from relu_gating import best_neuron, verify
from relu_gating.certificate import save_binary


_arrays, _save = npz_arrays, npz_save


def test_hash_collisions_are_settled_exactly(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    Phi = np.c_[rng.normal(size=(30, 2)), np.ones(30)]
    U_K = np.linalg.qr(rng.normal(size=(30, 4)))[0]
    path = tmp_path / "cert.npz"
    save_binary(best_neuron(Phi, U_K, features="bias"), path)
    monkeypatch.setattr(bv, "_row_hash", lambda packed: np.zeros(packed.shape[0], dtype=np.uint64))
    assert verify(str(path), Phi, U_K, "bias").valid  # every hash equal, the masks still distinct
    a = _arrays(path)
    a["masks"][2], a["witnesses"][2] = a["masks"][1], a["witnesses"][1]
    rep = verify(_save(a, tmp_path / "dup.npz"), Phi, U_K, "bias")
    assert not rep.valid and "duplicate" in " ".join(rep.reasons)
