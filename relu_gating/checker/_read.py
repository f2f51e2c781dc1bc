"""Reading a certificate for checking (the checker's own reader; no writer lives here).

JSON (``relu-gating-certificate/3``, or ``/2``: the same but for ``"d"`` leaves' packed multipliers) is parsed strictly: every integer field is range
checked (a literal ``1e999`` is refused, never an ``OverflowError``), numbers within the problem's
limits (:mod:`._limits`).  A pattern certificate's list (canonical masks, witnesses, evidence) is
read by :mod:`._read_patterns`, the binary ``.npz`` form by :mod:`._read_npz`: each loaded for
those certificates only (a tree certificate needs neither).  Every failure is a one-line :class:`~relu_gating.errors.CertificateError`.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from relu_gating.checker._constants import MAX_INT
from relu_gating.errors import CertificateError

__all__ = ["FORMAT", "FORMATS", "BINARY_FORMAT", "Claim", "load_json", "parse_claim", "as_int", "rational", "multipliers",
           "is_binary", "DIGITS", "RATIONAL", "reject_constant"]

FORMAT, FORMATS = "relu-gating-certificate/3", ("relu-gating-certificate/3", "relu-gating-certificate/2")  # (2: read)
BINARY_FORMAT = "relu-gating-certificate-npz/1"
_MAX_DEPTH = 64


def as_int(x: Any, what: str, lo: int = 0, hi: int = MAX_INT) -> int:
    """A certificate's integer field: a JSON integer (not a boolean, not a float) in ``[lo, hi]``, else refused."""
    if type(x) is not int:
        raise CertificateError(f"malformed certificate: {what} must be a JSON integer, got {str(x)[:40]!r}")
    if not lo <= x <= hi:
        raise CertificateError(f"malformed certificate: {what} = {str(x)[:40]} is out of range [{lo}, {hi}]")
    return x


#: Canonical decimal integers and rationals: ASCII digits, no sign on 0, no leading zeros, ``q >= 1``.
RATIONAL = re.compile(r"(0|-?[1-9][0-9]*)(?:/([1-9][0-9]*))?")
#: Digits per number before the problem is known (``FORMAT.md``: the limits are the problem's).
DIGITS = 4000


def rational(x: Any, what: str, digits: int = DIGITS, integer: bool = False) -> Fraction:
    """An exact rational (``integer``: an integer): a JSON integer or a canonical ``"p/q"`` (``"p"``) string in
    lowest terms, each part of at most ``digits`` digits (the problem's limit), else refused."""
    mt = RATIONAL.fullmatch(str(x) if type(x) is int else x if isinstance(x, str) else "")
    if mt and len(mt[1].lstrip("-")) <= digits and len(mt[2] or "") <= digits and not (integer and mt[2]):
        f = Fraction(int(mt[1]), int(mt[2] or 1))
        if f.denominator == int(mt[2] or 1):
            return f
    raise CertificateError(f"malformed certificate: {what} must be a JSON integer or a canonical "
                           f"{'decimal' if integer else 'p/q'} string (lowest terms) of at most {digits} digits a "
                           f"part (the problem's limit, FORMAT.md), got {str(x)[:40]!r}")


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


def reject_constant(name: str) -> float:
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
        d = json.loads(source, parse_constant=reject_constant)
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
