"""Reading a binary certificate (``relu-gating-certificate-npz/1``) for checking, streamed (loaded for
binary certificates only; the JSON reader is :mod:`._read`).

Member headers are checked against ``n``, ``m`` and ``n_patterns`` before anything is read, the
``meta`` member's declared size against what the other members' declared sizes allow
(``FORMAT.md``, "Limits") before it is decompressed, and each chunk's masks are checked canonical.
Every failure is a one-line :class:`~relu_gating.errors.CertificateError`.
"""

from __future__ import annotations

import json
import os
import zipfile
from typing import Any, Iterator

import numpy as np

from relu_gating.checker._constants import MAX_INT, MAX_MEMBER_BYTES
from relu_gating.checker._read import BINARY_FORMAT, as_int, multipliers, parse_claim, reject_constant
from relu_gating.checker._pattern_fields import exact_witnesses, index, padding_ok
from relu_gating.errors import CertificateError

__all__ = ["BinaryReader"]

_CHUNK = 1 << 15


def _corrupt(path: str, exc: BaseException | str) -> CertificateError:
    what = exc if isinstance(exc, str) else f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:120]}"
    return CertificateError(f"binary certificate {path}: truncated or corrupt ({what})")


class BinaryReader:
    """A binary certificate opened for streaming: ``meta``, the evidence and aligned column chunks."""

    def __init__(self, path: Any, digits: int | None = None) -> None:
        self.path, self.digits = os.fspath(path), digits
        try:
            self.zf = zipfile.ZipFile(self.path)
        except (OSError, zipfile.BadZipFile, ValueError, EOFError) as exc:
            raise _corrupt(self.path, exc) from None
        try:
            self.meta = self._meta()
            self.claim = parse_claim(self.meta)
            self.n, self.m = self.claim.n, self.claim.m
            self.N = as_int(self.meta.get("n_patterns"), "n_patterns")
            self.cols = {"masks": (np.dtype(np.uint8), ((self.n + 7) // 8,)), "witnesses": (np.dtype("<f8"), (self.m,)),
                         "bounds": (np.dtype("<f8"), ()), "settlement": (np.dtype(np.uint8), ())}
            for name, (dt, tail) in self.cols.items():  # declared shapes and stored sizes, before any read
                self._open(name, dt, (self.N,) + tail)[0].close()
            digits = self.digits
            self.exact = exact_witnesses(self.meta.get("exact_witnesses", {}), self.N, self.m, digits)
            self.evidence = self._evidence()
            for k, v in self.meta.get("evidence_exact", {}).items():  # exact multipliers replace their rounding
                i = index(k, "evidence index")
                if i not in self.evidence:
                    raise CertificateError(f"binary certificate {self.path}: exact multipliers of pattern {i} "
                                           "without its evidence")
                rows = self.evidence[i][0]
                self.evidence[i] = (rows, multipliers(v, rows.size, f"evidence of pattern {i}", digits))
        except CertificateError:
            self.zf.close()
            raise
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            self.zf.close()
            raise CertificateError(f"binary certificate {self.path}: malformed meta ({type(exc).__name__})") from None

    def __enter__(self) -> "BinaryReader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.zf.close()

    def _open(self, name: str, dtype: np.dtype | None, shape: tuple | None) -> tuple[Any, np.dtype, tuple]:
        try:
            info = self.zf.getinfo(f"{name}.npy")
            fh = self.zf.open(info)
            version = np.lib.format.read_magic(fh)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shp, fortran, dt = read(fh)
        except KeyError:
            raise _corrupt(self.path, f"no member {name!r}") from None
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
            raise _corrupt(self.path, exc) from None
        if fortran or dt.hasobject or (dtype is not None and dt != dtype) or (shape is not None and shp != shape) \
                or int(np.prod(shp, dtype=object)) * dt.itemsize > info.file_size:
            fh.close()
            raise _corrupt(self.path, f"member {name!r} has dtype {dt} shape {shp}, expected {dtype} {shape} "
                                      f"within its {info.file_size} stored bytes")
        return fh, dt, shp

    def _bytes(self, fh: Any, nbytes: int, name: str) -> bytes:
        try:
            return fh.read(nbytes)
        except (OSError, zipfile.BadZipFile, EOFError, ValueError) as exc:
            raise _corrupt(self.path, exc) from None

    def _read(self, fh: Any, dt: np.dtype, count: int, name: str) -> np.ndarray:
        nbytes = count * dt.itemsize
        buf = self._bytes(fh, nbytes, name)
        if len(buf) != nbytes:
            raise _corrupt(self.path, f"member {name!r} ends early")
        return np.frombuffer(buf, dtype=dt).copy()

    def array(self, name: str, dtype: Any = None, most: int | None = None) -> np.ndarray:
        """A small member read whole (the evidence), of at most ``most`` entries (declared, checked unread)."""
        fh, dt, shp = self._open(name, None if dtype is None else np.dtype(dtype), None)
        with fh:
            count = int(np.prod(shp, dtype=object))
            if count * dt.itemsize > MAX_MEMBER_BYTES or most is not None and count > most:
                raise _corrupt(self.path, f"member {name!r} declares {count} entries, more than "
                                          f"{min(most or MAX_INT, MAX_MEMBER_BYTES // dt.itemsize)} (FORMAT.md)")
            a = self._read(fh, dt, count, name).reshape(shp)
            if fh.read(1):
                raise _corrupt(self.path, f"member {name!r} has trailing bytes")
        return a

    def _meta_limit(self) -> int:
        """Most bytes of ``meta`` (``FORMAT.md``), from the other members' declared shapes: 1 MiB, 64 a sample,
        and an exact witness per pattern and an exact multiplier per evidence entry, of ``digits`` digits each
        (the problem's, given or from a stated problem, else :func:`~relu_gating.checker._limits.generic_digits`
        of the declared sizes)."""
        from relu_gating.checker._limits import generic_digits, limits

        shapes = []
        for name in ("masks", "witnesses", "evidence_N"):
            fh, _, shp = self._open(name, None, None)
            fh.close()
            shapes.append([int(v) for v in shp] + [0, 0])
        (N, nb), m, E = shapes[0][:2], shapes[1][1], shapes[2][0]
        self.digits = limits(self.digits).digits if hasattr(self.digits, "Phi") else self.digits or generic_digits(8 * nb, m)
        return 2**20 + 512 * nb + (N * (m + 1) + 2 * E) * (self.digits + 4)

    def _meta(self) -> dict:
        try:
            size, limit = self.zf.getinfo("meta.npy").file_size, min(self._meta_limit(), MAX_MEMBER_BYTES)
        except KeyError:
            raise _corrupt(self.path, "no member 'meta'") from None
        if size > limit:
            raise CertificateError(f"binary certificate {self.path}: its meta member holds {size} bytes, more than "
                                   f"the {limit} its sizes allow (FORMAT.md)")
        fh, _, shp = self._open("meta", np.dtype(np.uint8), None)
        with fh:  # bytes, then text, never both with an array copy (a meta near its limit in little memory)
            count = int(np.prod(shp, dtype=object))
            raw = self._bytes(fh, count + 1, "meta")
        if len(raw) != count:
            raise _corrupt(self.path, f"member 'meta' {'ends early' if len(raw) < count else 'has trailing bytes'}")
        try:
            text = raw.decode("utf-8")
            del raw
            d = json.loads(text, parse_constant=reject_constant)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise _corrupt(self.path, f"meta is not strict JSON: {exc}") from None
        if not isinstance(d, dict):
            raise _corrupt(self.path, "meta is not a JSON object")
        if d.get("format") != BINARY_FORMAT:
            raise CertificateError(f"binary certificate format must be {BINARY_FORMAT!r}, got {d.get('format')!r}")
        return d

    def _evidence(self) -> dict:
        N, n = self.N, self.n  # distinct rows: at most n a pattern, n^2 multipliers
        idx, off = self.array("evidence_index", "<i8", N), self.array("evidence_offsets", "<i8", N + 1)
        rows, flat = self.array("evidence_rows", "<i8", N * n), self.array("evidence_N", "<f8", N * n * n)
        if idx.ndim != 1 or off.shape != (idx.size + 1,) or off[0] != 0 or np.any(np.diff(off) < 0) \
                or off[-1] != rows.size:
            raise CertificateError(f"binary certificate {self.path}: evidence offsets inconsistent")
        out, pos = {}, 0
        for k, i in enumerate(idx.tolist()):
            r = rows[off[k]:off[k + 1]]
            p = r.size
            if pos + p * p > flat.size or (p and (r.min() < 0 or r.max() >= self.n)) or not 0 <= i < self.N \
                    or np.unique(r).size != p:
                raise CertificateError(f"evidence of pattern {i}: rows out of range or repeated, or N too short")
            N = flat[pos:pos + p * p].reshape(p, p)
            if not np.all(np.isfinite(N)):
                raise CertificateError(f"evidence of pattern {i}: N not finite")
            out[int(i)] = (r, N)
            pos += p * p
        if pos != flat.size:
            raise CertificateError(f"binary certificate {self.path}: evidence N has {flat.size - pos} extra entries")
        return out

    def chunks(self, size: int = _CHUNK) -> Iterator[tuple[int, dict]]:
        """``(start, {column: rows})`` for consecutive chunks (checked: finite witnesses and bounds,
        settlement codes 0..3, canonical masks); every member is read whole, so its CRC is checked."""
        handles = {name: self._open(name, dt, (self.N,) + tail) for name, (dt, tail) in self.cols.items()}
        try:
            for s in range(0, self.N, size):
                k = min(size, self.N - s)
                out = {name: self._read(fh, dt, k * int(np.prod(shp[1:], dtype=np.int64)), name).reshape((k,) + shp[1:])
                       for name, (fh, dt, shp) in handles.items()}
                if not (np.all(np.isfinite(out["witnesses"])) and np.all(np.isfinite(out["bounds"]))):
                    raise CertificateError(f"binary certificate {self.path}: witnesses and bounds must be finite "
                                           f"(chunk from pattern {s})")
                if np.any(out["settlement"] > 3):
                    raise CertificateError(f"binary certificate {self.path}: settlement codes must be 0..3")
                if not padding_ok(out["masks"], self.n):
                    raise CertificateError(f"binary certificate {self.path}: a mask has nonzero padding bits "
                                           f"(chunk from pattern {s}; masks must be canonical)")
                yield s, out
            for name, (fh, _, _) in handles.items():
                if fh.read(1):
                    raise _corrupt(self.path, f"member {name!r} has trailing bytes")
        except (OSError, zipfile.BadZipFile, EOFError) as exc:
            raise _corrupt(self.path, exc) from None
        finally:
            for fh, _, _ in handles.values():
                fh.close()
