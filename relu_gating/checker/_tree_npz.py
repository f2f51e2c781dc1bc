"""The binary form of a tree certificate (``FORMAT.md``): read for checking.

A binary certificate (``.npz``) whose ``meta`` says ``"kind": "tree"`` lists no patterns; its
member ``tree.npy`` (uint8, deflated) holds the tree certificate's JSON form, UTF-8, which is
checked exactly as the JSON file would be.  The member is read with its declared size bounded
(``MAX_MEMBER_BYTES``) and its header checked before any byte of it is decoded.
"""

from __future__ import annotations

import os
import zipfile
from typing import Any

import numpy as np

from relu_gating.checker._constants import MAX_MEMBER_BYTES
from relu_gating.checker._limits import limits
from relu_gating.checker._read import load_json
from relu_gating.errors import CertificateError

__all__ = ["TREE_MEMBER", "tree_certificate", "limits"]

TREE_MEMBER = "tree.npy"


def _bad(path: str, what: str) -> CertificateError:
    return CertificateError(f"binary certificate {path}: truncated or corrupt ({what})")


def tree_certificate(source: Any, most: int | None = None) -> dict | None:
    """The tree certificate (its JSON form, parsed strictly) in the binary certificate ``source``, or
    None when it holds none (a pattern certificate, or a file the binary reader will report); a member
    declaring more than ``most`` bytes (the stated problem's ``Limits.tree_bytes``, ``FORMAT.md``) is refused unread."""
    path = os.fspath(source)
    try:
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile, ValueError, EOFError):
        return None
    with zf:
        try:
            info = zf.getinfo(TREE_MEMBER)
        except KeyError:
            return None
        if info.file_size > (most := min(most or MAX_MEMBER_BYTES, MAX_MEMBER_BYTES)):
            raise CertificateError(f"binary certificate {path}: member {TREE_MEMBER!r} holds {info.file_size} bytes, more than {most}")
        try:
            with zf.open(info) as fh:
                version = np.lib.format.read_magic(fh)
                read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                        else np.lib.format.read_array_header_2_0)
                shape, fortran, dtype = read(fh)
                ok = not fortran and dtype == np.dtype(np.uint8) and len(shape) == 1 and shape[0] <= info.file_size
                body = fh.read(int(shape[0])) if ok else b""
                extra = fh.read(1) if ok else b""
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
            raise _bad(path, f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:120]}") from None
    if not ok:
        raise _bad(path, f"member {TREE_MEMBER!r} must be uint8 bytes (a vector), got {dtype} {shape}")
    if len(body) != shape[0] or extra:
        raise _bad(path, f"member {TREE_MEMBER!r} does not hold its declared {shape[0]} bytes")
    d = load_json(body)
    if d.get("kind") != "tree":
        raise CertificateError("malformed certificate: the tree member of a binary certificate holds no tree")
    return d
