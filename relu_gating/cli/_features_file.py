"""Reading the features of ``--features FILE`` (private; loaded when the option names a file)."""

from __future__ import annotations

import os

import numpy as np

from relu_gating.errors import InputError

__all__ = ["read_features"]


def read_features(spec: str) -> np.ndarray:
    """``H`` from the file of ``--features FILE``: key ``H`` of a ``.npz``, a ``.npy`` array or a ``.csv``."""
    ext = os.path.splitext(spec)[1].lower()
    if ext in (".npz", ".npy"):  # declared sizes checked before anything is decompressed or allocated
        import zipfile

        from relu_gating.data.io import check_headers

        try:
            check_headers(spec, ext)
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            raise InputError(f"--features file {spec!r}: cannot read ({type(exc).__name__}: {exc})") from exc
    if ext == ".npz":
        with np.load(spec, allow_pickle=False) as z:
            if "H" not in z.files:
                raise InputError(f"--features file {spec!r} has no key 'H'")
            H = z["H"]
    elif ext == ".npy":
        H = np.load(spec, allow_pickle=False)
    elif ext == ".csv":
        H = np.loadtxt(spec, delimiter=",", ndmin=2)
    else:
        raise InputError(f"--features file {spec!r}: unsupported extension {ext!r} (use .npy, .csv or .npz)")
    return H
