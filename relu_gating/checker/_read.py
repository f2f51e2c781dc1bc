"""Reading a certificate for checking (the checker's own reader; no writer lives here).

JSON (``relu-gating-certificate/2``) is parsed strictly: every integer field is range
checked (a literal ``1e999`` is refused, never an ``OverflowError``), masks must be canonical
(``numpy.packbits`` with zero padding bits).  The binary ``.npz`` form
(``relu-gating-certificate-npz/1``) is streamed: member headers are checked against ``n``,
``m`` and ``n_patterns`` before anything is read, and each chunk's masks are checked canonical.
Every failure is a one-line :class:`~relu_gating.errors.CertificateError`.
"""

from __future__ import annotations

import json
import math
import os
import re
import zipfile
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterator

import numpy as np

from relu_gating.checker._constants import MAX_INT, MAX_MEMBER_BYTES
from relu_gating.errors import CertificateError

__all__ = ["FORMAT", "BINARY_FORMAT", "Claim", "Patterns", "load_json", "parse_claim", "parse_patterns",
           "as_int", "int_list", "index", "exact_int", "rational", "multipliers", "exact_witnesses", "is_binary",
           "BinaryReader", "padding_ok", "DIGITS"]

FORMAT = "relu-gating-certificate/2"
BINARY_FORMAT = "relu-gating-certificate-npz/1"
SETTLEMENT_LETTERS = "UBEP"
_MAX_DEPTH = 64
_CHUNK = 1 << 15


def as_int(x: Any, what: str, lo: int = 0, hi: int = MAX_INT) -> int:
    """A certificate's integer field: a JSON integer (not a boolean, not a float) in ``[lo, hi]``, else refused."""
    if type(x) is not int:
        raise CertificateError(f"malformed certificate: {what} must be a JSON integer, got {str(x)[:40]!r}")
    if not lo <= x <= hi:
        raise CertificateError(f"malformed certificate: {what} = {str(x)[:40]} is out of range [{lo}, {hi}]")
    return x


def int_list(v: Any, what: str, hi: int) -> np.ndarray:
    """A list of integers in ``[0, hi)`` as int64."""
    if not isinstance(v, list):
        raise CertificateError(f"malformed certificate: {what} must be a list of integers")
    return np.array([as_int(x, what, 0, hi - 1) for x in v], dtype=np.int64)


#: Canonical decimal integers and rationals: ASCII digits, no sign on 0, no leading zeros, ``q >= 1``.
_INT = re.compile(r"0|-?[1-9][0-9]*")
_RATIONAL = re.compile(r"(0|-?[1-9][0-9]*)(/[1-9][0-9]*)?")
#: Digits per number before the problem is known (``FORMAT.md``: the limits are the problem's).
DIGITS = 4000


def _too_long(s: str, digits: int) -> bool:
    return any(len(t.lstrip("-")) > digits for t in s.split("/"))


def index(k: Any, what: str, hi: int = MAX_INT) -> int:
    """A key naming an index: a canonical decimal string (or a JSON integer) in ``[0, hi]``."""
    if isinstance(k, str) and _INT.fullmatch(k) and len(k) < 20:
        k = int(k)
    return as_int(k, what, 0, hi)


def exact_int(x: Any, what: str, digits: int = DIGITS) -> int:
    """An exact integer: a JSON integer or a canonical decimal string, of at most ``digits`` digits."""
    if isinstance(x, str) and _INT.fullmatch(x) and not _too_long(x, digits):
        return int(x)
    if type(x) is int and len(str(abs(x))) <= digits:
        return x
    raise CertificateError(f"malformed certificate: {what} must be an integer or a canonical decimal string of at "
                           f"most {digits} digits (the problem's limit, FORMAT.md), got {str(x)[:40]!r}")


def rational(x: Any, what: str, digits: int = DIGITS) -> Fraction:
    """An exact rational: a JSON integer or a canonical ``"p/q"`` string (lowest terms, ``q >= 1``), each part of
    at most ``digits`` digits (the problem's limit), else refused."""
    if type(x) is int and len(str(abs(x))) <= digits:
        return Fraction(x)
    if isinstance(x, str) and _RATIONAL.fullmatch(x) and not _too_long(x, digits):
        f = Fraction(x)
        if "/" not in x or f.denominator == int(x.split("/")[1]):
            return f
    raise CertificateError(f"malformed certificate: {what} must be an integer or a canonical 'p/q' string (lowest "
                           f"terms) of at most {digits} digits a part (the problem's limit, FORMAT.md), got "
                           f"{str(x)[:40]!r}")


def multipliers(v: Any, p: int, what: str, digits: int = DIGITS) -> np.ndarray:
    """Multipliers ``N`` (p x p) of dual evidence: finite floats, or, when any entry is a ``"p/q"``
    string (an exact rational, ``FORMAT.md``), an object array of Fractions."""
    try:
        flat = [x for r in v for x in r] if isinstance(v, list) and all(isinstance(r, list) for r in v) else None
        if flat is None or len(v) != p or len(flat) != p * p:
            raise ValueError(f"not a {p} x {p} list")
        if any(isinstance(x, bool) or not isinstance(x, (int, float, str)) for x in flat):
            raise ValueError("entries must be numbers or 'p/q' strings")
        if not any(isinstance(x, str) for x in flat):
            N = np.asarray(flat, dtype=float).reshape(p, p)
            if not np.all(np.isfinite(N)):
                raise ValueError("not finite")
            return N
        if not all(isinstance(x, str) or math.isfinite(float(x)) for x in flat):
            raise ValueError("entries must be finite numbers or 'p/q' strings")
        return np.array([rational(x, what, digits) if isinstance(x, str) else Fraction(float(x)) for x in flat],
                        dtype=object).reshape(p, p)
    except (TypeError, ValueError, OverflowError) as exc:
        raise CertificateError(f"{what}: N malformed ({exc})") from None


def padding_ok(packed: np.ndarray, n: int) -> bool:
    """The bits past ``n`` in the last byte of every packed mask are zero (canonical masks)."""
    pad = 8 * packed.shape[1] - n
    return pad == 0 or not np.any(packed[:, -1] & np.uint8((1 << pad) - 1))


@dataclass(frozen=True)
class Claim:
    """The claim of a certificate (pattern or tree form)."""

    d: dict
    n: int
    m: int
    theta: np.ndarray
    pattern: np.ndarray
    value: float
    upper_bound: float
    alpha: float
    certified: bool


@dataclass(frozen=True)
class Patterns:
    """The pattern list of a JSON certificate: canonical packed masks and their columns."""

    packed: np.ndarray
    witnesses: np.ndarray
    exact_witnesses: dict
    bounds: np.ndarray
    settlement: np.ndarray
    evidence: dict


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-standard JSON constant {name}")


def _depth_ok(obj: Any, depth: int = 0) -> bool:
    if depth > _MAX_DEPTH:
        return False
    if isinstance(obj, dict):
        return all(_depth_ok(v, depth + 1) for v in obj.values())
    if isinstance(obj, list):
        return all(_depth_ok(v, depth + 1) for v in obj[:4])
    return True


def load_json(source: Any) -> dict:
    """A certificate dict from a result (``to_dict``), a dict, a JSON string or a path."""
    if hasattr(source, "to_dict"):
        return source.to_dict()
    if isinstance(source, dict):
        return source
    if isinstance(source, (str, os.PathLike)) and os.path.isfile(source):
        try:
            with open(source, encoding="utf-8") as fh:
                source = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise CertificateError(f"cannot read certificate {os.fspath(source)!r}: {exc}") from exc
    try:
        d = json.loads(source, parse_constant=_reject_constant)
    except (TypeError, ValueError, RecursionError) as exc:
        raise CertificateError(f"certificate is neither a file, a dict nor strict JSON ({exc})") from exc
    if not isinstance(d, dict) or not _depth_ok(d):
        raise CertificateError("certificate JSON must be an object of bounded depth")
    return d


def _finite(x: Any, what: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError, OverflowError):
        v = float("nan")
    if isinstance(x, (bool, str)) or not np.isfinite(v):
        raise CertificateError(f"malformed certificate: {what} must be a finite number")
    return v


def parse_claim(d: dict) -> Claim:
    """The problem sizes and the claim (``theta``, ``value``, ``upper_bound``, ``alpha``, ``certified``, ``pattern``)."""
    prob = d.get("problem")
    if not isinstance(prob, dict):
        raise CertificateError("malformed certificate: no problem object")
    n, m = as_int(prob.get("n"), "problem.n", 1), as_int(prob.get("m"), "problem.m", 1)
    try:
        theta = np.array([_finite(t, "theta") for t in d["theta"]], dtype=float)
        pattern = np.frombuffer(str(d["pattern"]).encode(), dtype=np.uint8) == ord("1")
    except (KeyError, TypeError) as exc:
        raise CertificateError(f"malformed certificate: {type(exc).__name__}: {exc}") from None
    vals = [_finite(d.get(k), k) for k in ("value", "upper_bound", "alpha")]
    if theta.size != m or pattern.size != n or not isinstance(d.get("certified"), bool):
        raise CertificateError("malformed certificate: theta must hold m numbers, pattern n bits, certified a boolean")
    return Claim(d, n, m, theta, pattern, *vals, d["certified"])


def _evidence(ev: Any, n: int, digits: int) -> dict:
    """Dual evidence by pattern index (an index past the list proves nothing and harms nothing)."""
    if not isinstance(ev, dict):
        raise CertificateError("malformed certificate: evidence must be an object")
    out = {}
    for k, e in ev.items():
        i = index(k, "evidence index")
        rows = int_list(e.get("rows") if isinstance(e, dict) else None, f"evidence {k} rows", n)
        out[i] = (rows, multipliers(e.get("N"), rows.size, f"evidence of pattern {k}", digits))
    return out


def exact_witnesses(v: Any, N: int, m: int, digits: int) -> dict:
    """``{index: m integers}`` of the exact witnesses, each a JSON integer or a canonical decimal string."""
    if not isinstance(v, dict) or not all(isinstance(w, list) for w in v.values()):
        raise CertificateError("malformed certificate: exact_witnesses must map indices to lists of integers")
    out = {index(k, "exact witness index", N - 1): tuple(exact_int(x, "an exact witness", digits) for x in w)
           for k, w in v.items()}
    if any(len(w) != m for w in out.values()):
        raise CertificateError(f"malformed certificate: exact witnesses must hold m = {m} integers")
    return out


def _numbers(v: Any, depth: int) -> Any:
    """``v``, a list (of lists, ``depth`` deep) of JSON numbers, else ``TypeError``."""
    if not isinstance(v, list) or not all(_numbers(x, depth - 1) is x if depth > 1 else
                                          isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        raise TypeError("pattern columns must be lists of numbers")
    return v


def parse_patterns(d: dict, n: int, m: int, digits: int = DIGITS, most: int = MAX_INT) -> Patterns:
    """The pattern list and evidence of a JSON pattern certificate, strictly typed (``digits`` per
    exact number, at most ``most`` patterns: the problem's limits)."""
    N = as_int(d.get("n_patterns"), "n_patterns")
    if N > most:
        raise CertificateError(f"malformed certificate: n_patterns = {N} exceeds {most}, twice Cover's count of "
                               "chambers of the stated problem (no arrangement of its rows has more than the count)")
    nb = (n + 7) // 8
    try:
        p = d["patterns"]
        if not isinstance(p["masks"], list) or len(p["masks"]) != N:
            raise ValueError("masks must be a list of n_patterns hex strings")
        masks = [bytes.fromhex(h) for h in p["masks"]]
        if any(len(b) != nb for b in masks) or any(len(c) != 1 or c not in SETTLEMENT_LETTERS for c in p["settlement"]):
            raise ValueError(f"each mask must be {nb} hex bytes, each settlement one of the letters {SETTLEMENT_LETTERS}")
        packed = np.frombuffer(b"".join(masks), dtype=np.uint8).reshape(N, nb)
        W = np.asarray(_numbers(p["witnesses"], 2), dtype=float).reshape(N, m)
        bounds = np.asarray(_numbers(p["bounds"], 1), dtype=float).reshape(-1)
        settlement = np.array([SETTLEMENT_LETTERS.index(c) for c in p["settlement"]], dtype=np.int8)
        exact = exact_witnesses(p.get("exact_witnesses", {}), N, m, digits)
    except CertificateError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise CertificateError(f"malformed certificate: {type(exc).__name__}: {str(exc)[:120]}") from None
    if not (bounds.size == settlement.size == N) or not np.all(np.isfinite(W)) or not np.all(np.isfinite(bounds)):
        raise CertificateError("malformed certificate: pattern arrays disagree with n_patterns, or witnesses or "
                               "bounds not finite")
    if not padding_ok(packed, n):
        raise CertificateError("malformed certificate: a mask has nonzero padding bits (masks must be canonical)")
    return Patterns(packed, W, exact, bounds, settlement, _evidence(d.get("evidence", {}), n, digits))


def is_binary(source: Any) -> bool:
    """True for a path to a ZIP (``.npz``) file: a binary certificate, or a corrupt one."""
    if not isinstance(source, (str, os.PathLike)):
        return False
    path = os.fspath(source)
    if path.lower().endswith(".npz"):
        return True
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"PK\x03\x04"
    except OSError:
        return False


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

    def _read(self, fh: Any, dt: np.dtype, count: int, name: str) -> np.ndarray:
        nbytes = count * dt.itemsize
        try:
            buf = fh.read(nbytes)
        except (OSError, zipfile.BadZipFile, EOFError, ValueError) as exc:
            raise _corrupt(self.path, exc) from None
        if len(buf) != nbytes:
            raise _corrupt(self.path, f"member {name!r} ends early")
        return np.frombuffer(buf, dtype=dt).copy()

    def array(self, name: str, dtype: Any = None) -> np.ndarray:
        """A small member read whole (meta, evidence)."""
        fh, dt, shp = self._open(name, None if dtype is None else np.dtype(dtype), None)
        with fh:
            count = int(np.prod(shp, dtype=object))
            if count * dt.itemsize > MAX_MEMBER_BYTES:
                raise _corrupt(self.path, f"member {name!r} is larger than {MAX_MEMBER_BYTES} bytes")
            a = self._read(fh, dt, count, name).reshape(shp)
            if fh.read(1):
                raise _corrupt(self.path, f"member {name!r} has trailing bytes")
        return a

    def _meta_limit(self) -> int:
        """Most bytes of ``meta`` (``FORMAT.md``), from the other members' declared shapes: 1 MiB, 64 a sample,
        and an exact witness per pattern and an exact multiplier per evidence entry, of ``digits`` digits each
        (the problem's, else :func:`~relu_gating.checker._limits.generic_digits` of the declared sizes)."""
        from relu_gating.checker._limits import generic_digits

        shapes = {}
        for name in ("masks", "witnesses", "evidence_N"):
            fh, _, shp = self._open(name, None, None)
            fh.close()
            shapes[name] = shp
        N, n = (shapes["masks"] + (0, 0))[:2]
        m = (shapes["witnesses"] + (0, 0))[1]
        E = int(np.prod(shapes["evidence_N"], dtype=object))
        if self.digits is None:
            self.digits = generic_digits(8 * int(n), int(m))
        return 2**20 + 64 * 8 * int(n) + (int(N) * (int(m) + 1) + 2 * E) * (self.digits + 4)

    def _meta(self) -> dict:
        try:
            size, limit = self.zf.getinfo("meta.npy").file_size, self._meta_limit()
        except KeyError:
            raise _corrupt(self.path, "no member 'meta'") from None
        if size > limit:
            raise CertificateError(f"binary certificate {self.path}: its meta member holds {size} bytes, more than "
                                   f"the {limit} its sizes allow (FORMAT.md)")
        raw = self.array("meta", np.uint8)
        try:
            d = json.loads(raw.tobytes().decode("utf-8"), parse_constant=_reject_constant)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise _corrupt(self.path, f"meta is not strict JSON: {exc}") from None
        if not isinstance(d, dict):
            raise _corrupt(self.path, "meta is not a JSON object")
        if d.get("format") != BINARY_FORMAT:
            raise CertificateError(f"binary certificate format must be {BINARY_FORMAT!r}, got {d.get('format')!r}")
        return d

    def _evidence(self) -> dict:
        idx, off = self.array("evidence_index", "<i8"), self.array("evidence_offsets", "<i8")
        rows, flat = self.array("evidence_rows", "<i8"), self.array("evidence_N", "<f8")
        if idx.ndim != 1 or off.shape != (idx.size + 1,) or off[0] != 0 or np.any(np.diff(off) < 0) \
                or off[-1] != rows.size:
            raise CertificateError(f"binary certificate {self.path}: evidence offsets inconsistent")
        out, pos = {}, 0
        for k, i in enumerate(idx.tolist()):
            r = rows[off[k]:off[k + 1]]
            p = r.size
            if pos + p * p > flat.size or (p and (r.min() < 0 or r.max() >= self.n)) or not 0 <= i < self.N:
                raise CertificateError(f"evidence of pattern {i}: rows out of range or N too short")
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
