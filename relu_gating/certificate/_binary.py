"""The binary certificate (``.npz``, format ``relu-gating-certificate-npz/1``): streamed writing.

A standard numpy ``.npz`` (a ZIP archive of ``.npy`` members, stored
uncompressed) with the same content as the JSON form (``FORMAT.md``), but the
per-pattern columns as arrays: ``masks`` (uint8, ``ceil(n / 8)`` bytes per
pattern: ``numpy.packbits``), ``witnesses`` (float64, ``m``), ``bounds``
(float64) and ``settlement`` (uint8 codes 0..3 for U, B, E, P): at most
``n / 8 + 8 m + 10`` bytes per pattern.  Dual evidence is stored flat
(``evidence_index``, ``evidence_offsets``, ``evidence_rows``,
``evidence_N``), the rest (problem, claim, counts, notes, exact witnesses,
methods) as UTF-8 JSON in ``meta`` (uint8).  ``numpy.load`` opens it.

The writer streams: it copies the columns chunk by chunk (from memory maps
without touching their mapping), so it never holds more than a chunk of them.
The checker reads it with its own streamed reader (``relu_gating.checker.BinaryReader``).
"""

from __future__ import annotations

import json
import os
import zipfile
from typing import Any

import numpy as np

from relu_gating.checker import BINARY_FORMAT  # the one definition: the reader's

__all__ = ["BINARY_FORMAT", "canonical_masks", "write_binary", "write_binary_tree", "TREE_MEMBER", "save_binary",
           "binary_meta", "COLUMNS"]

#: Patterns per chunk when writing and reading.
CHUNK = 1 << 15


def _columns(n: int, m: int) -> dict:
    return {"masks": (np.dtype(np.uint8), ((n + 7) // 8,)), "witnesses": (np.dtype("<f8"), (m,)),
            "bounds": (np.dtype("<f8"), ()), "settlement": (np.dtype(np.uint8), ())}


COLUMNS = ("masks", "witnesses", "bounds", "settlement")


def _rows(a: Any, start: int, stop: int) -> np.ndarray:
    """Rows of an array or, through plain file reads (its mapping untouched), of a memory map."""
    fname = getattr(a, "filename", None)
    if isinstance(a, np.memmap) and isinstance(fname, str) and os.path.exists(fname):
        width = int(np.prod(a.shape[1:], dtype=np.int64))
        stop = min(stop, a.shape[0])
        count = max(0, stop - start)
        with open(fname, "rb") as fh:
            fh.seek(a.offset + start * width * a.dtype.itemsize)
            return np.fromfile(fh, dtype=a.dtype, count=count * width).reshape((count,) + a.shape[1:])
    return np.asarray(a[start:stop])


def binary_meta(res: Any, extra: dict | None = None) -> dict:
    """The ``meta`` member: the JSON certificate's keys without the per-pattern columns."""
    from relu_gating.certificate._codes import mask_str as _mask_str
    from relu_gating.certificate._format import multipliers_json

    meta = {
        "format": BINARY_FORMAT,
        "problem": {"n": int(res.pattern.size), "m": int(res.theta.size), "K": int(res.K),
                    "objective": res.objective, "features": res.features,
                    "features_sha256": getattr(res, "features_sha256", None)},
        "value": float(res.value), "upper_bound": float(res.upper_bound), "alpha": float(res.alpha),
        "certified": bool(res.certified), "theta": [float(t) for t in res.theta], "pattern": _mask_str(res.pattern),
        "n_patterns": int(res.n_patterns),
        "settled": {"exact": int(res.n_exact), "bound": int(res.n_bound), "pruned": int(res.n_pruned)},
        "seconds": {k: round(float(v), 6) for k, v in res.seconds.items()},
        "notes": list(res.notes),
        "exact_witnesses": {str(k): [str(int(x)) for x in v] for k, v in sorted(res.exact_witnesses.items())},
        "methods": {str(k): v for k, v in sorted(res.methods.items())},
        # exact rational multipliers (``"p/q"``), which ``evidence_N`` holds only rounded
        "evidence_exact": {str(k): multipliers_json(N) for k, (_, N) in sorted(res.evidence.items())
                           if np.asarray(N).dtype == object},
    }
    meta.update(extra or {})
    return meta


def _write_member(zf: zipfile.ZipFile, name: str, arr: Any, dtype: np.dtype, shape: tuple, convert=None) -> None:
    with zf.open(f"{name}.npy", "w", force_zip64=True) as out:
        np.lib.format.write_array_header_2_0(
            out, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape})
        for s in range(0, shape[0] if shape else 1, CHUNK):
            part = _rows(arr, s, s + CHUNK) if shape else np.asarray(arr)
            part = convert(part) if convert is not None else part
            out.write(np.ascontiguousarray(part, dtype=dtype).tobytes())


def _evidence_arrays(evidence: dict) -> dict[str, np.ndarray]:
    idx = sorted(evidence)
    sizes = np.array([np.asarray(evidence[i][0]).size for i in idx], dtype=np.int64)
    return {
        "evidence_index": np.array(idx, dtype=np.int64),
        "evidence_offsets": np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        "evidence_rows": np.concatenate([np.asarray(evidence[i][0]).ravel() for i in idx] or [np.zeros(0)])
        .astype(np.int64),
        "evidence_N": np.concatenate([np.asarray(evidence[i][1]).astype(float).ravel() for i in idx] or [np.zeros(0)]),
    }


def canonical_masks(packed: np.ndarray, n: int) -> np.ndarray:
    """Packed masks (rows of ``numpy.packbits``) with their padding bits, past bit ``n``, zeroed."""
    packed = np.asarray(packed, dtype=np.uint8)
    if n % 8 == 0 or packed.shape[-1] == 0:
        return packed
    out = packed.copy()
    out[..., -1] &= np.uint8((0xFF << (8 - n % 8)) & 0xFF)
    return out


def write_binary(res: Any, fh: Any, extra: dict | None = None) -> None:
    """Write the binary certificate of a NeuronResult to the binary file object ``fh`` (streamed)."""
    N, n, m = int(res.n_patterns), int(res.pattern.size), int(res.theta.size)
    cols = _columns(n, m)
    meta = np.frombuffer(json.dumps(binary_meta(res, extra), allow_nan=False).encode(), dtype=np.uint8)
    packed = getattr(res, "packed", None)
    if packed is None:
        packed = np.packbits(res.masks, axis=1)
    sources = {"masks": packed, "witnesses": res.witnesses, "bounds": res.bounds, "settlement": res.settlement}
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        _write_member(zf, "meta", meta, np.dtype(np.uint8), meta.shape)
        for name in COLUMNS:
            dt, tail = cols[name]
            _write_member(zf, name, sources[name], dt, (N,) + tail,
                          convert=(lambda part: canonical_masks(part, n)) if name == "masks" else None)
        for name, arr in _evidence_arrays(res.evidence).items():
            _write_member(zf, name, arr, arr.dtype, arr.shape)


def save_binary(res: Any, path: Any, extra: dict | None = None) -> None:
    """Write the binary certificate of ``res`` to ``path`` atomically (temporary file, then rename)."""
    from relu_gating._runtime.files import atomic_write
    from relu_gating.errors import InputError

    if getattr(res, "tree", None) is not None:  # a tree: its JSON form, deflated, in the binary container
        atomic_write(path, lambda fh: write_binary_tree(res, fh, extra), binary=True)
        return
    if getattr(res, "strategy", "enumerate") != "enumerate":
        raise InputError(f"{os.fspath(path)}: a {res.strategy} result without its tree cannot be written")
    atomic_write(path, lambda fh: write_binary(res, fh, extra), binary=True)


#: The member of a binary tree certificate holding the tree certificate's JSON form (UTF-8 bytes,
#: deflated); the checker verifies it as it verifies the JSON file.
TREE_MEMBER = "tree"


def write_binary_tree(res: Any, fh: Any, extra: dict | None = None) -> None:
    """The binary form of a tree certificate (``FORMAT.md``): a binary certificate with no patterns
    (``meta`` says ``"kind": "tree"``) and the member ``tree.npy``, the JSON certificate as UTF-8
    bytes (uint8), deflated.  A reader that does not know the member finds no patterns: refused."""
    n, m = int(res.pattern.size), int(res.theta.size)
    cert = res.to_dict()
    cert.update(extra or {})
    meta_d = dict(binary_meta(res, extra), kind="tree", n_patterns=0)
    meta = np.frombuffer(json.dumps(meta_d, allow_nan=False).encode(), dtype=np.uint8)
    body = np.frombuffer(json.dumps(cert, allow_nan=False).encode(), dtype=np.uint8)
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        _write_member(zf, "meta", meta, np.dtype(np.uint8), meta.shape)
        for name in COLUMNS:
            dt, tail = _columns(n, m)[name]
            _write_member(zf, name, np.zeros((0,) + tail, dtype=dt), dt, (0,) + tail)
        for name, arr in _evidence_arrays({}).items():
            _write_member(zf, name, arr, arr.dtype, arr.shape)
        zf.compression, zf.compresslevel = zipfile.ZIP_DEFLATED, 6
        _write_member(zf, TREE_MEMBER, body, np.dtype(np.uint8), body.shape)

