"""Read and rewrite the arrays of a binary (.npz) certificate, for forging tests."""

from __future__ import annotations

import json

import numpy as np


def npz_arrays(path):
    """Every array of the file, with ``meta`` decoded from its JSON bytes."""
    with np.load(path, allow_pickle=False) as z:
        out = {k: z[k].copy() for k in z.files}
    out["meta"] = json.loads(out["meta"].tobytes().decode())
    return out


def npz_save(arrs, path):
    """Write ``arrs`` (``meta`` as a dict) as a certificate file; returns its path as a string."""
    arrs = dict(arrs)
    arrs["meta"] = np.frombuffer(json.dumps(arrs["meta"]).encode(), dtype=np.uint8)
    np.savez(path, **arrs)
    return str(path)
