"""The certificate's JSON form (version 2): writing and strict reading (private).

A certificate states which problem it answers (``problem``: sizes, objective,
features, input hashes), the claim (``theta``, ``value``, ``upper_bound``,
``alpha``, ``certified``), every realized pattern with its strict witness,
its claimed bound and settlement, and the evidence of the bounds that the
verifier cannot recompute cheaply (``evidence``: dual multipliers of
exactly solved patterns).  It holds no tolerance, rank or other quantity
that decides what is checked: the verifier derives those itself.
The layout is documented in ``FORMAT.md`` beside this module.
"""

from __future__ import annotations

import json
import os
import re
from fractions import Fraction
from dataclasses import dataclass
from typing import Any

import numpy as np

from relu_gating.certificate._codes import FORMAT, SETTLEMENT_LETTERS
from relu_gating.certificate._codes import mask_str as _mask_str
from relu_gating.errors import CertificateError

__all__ = ["FORMAT", "result_to_dict", "load_certificate", "parse_certificate", "Certificate"]

_MAX_DEPTH = 64


def _sha(a: Any) -> str | None:
    from relu_gating.certificate._problem import array_sha256

    return None if a is None else array_sha256(a)


def result_to_dict(res: Any) -> dict:
    """JSON-ready certificate of a :class:`~relu_gating.search.NeuronResult`."""
    if getattr(res, "tree", None) is not None:  # branch and bound: the tree certificate (._tree)
        from relu_gating.certificate._tree import tree_to_dict

        return tree_to_dict(res)
    n = res.pattern.size
    packed = np.asarray(res.packed) if hasattr(res, "packed") else np.packbits(res.masks, axis=1)
    return {
        "format": FORMAT,
        "problem": {"n": int(n), "m": int(res.theta.size), "K": int(res.K), "objective": res.objective,
                    "features": res.features, "features_sha256": getattr(res, "features_sha256", None)},
        "value": float(res.value),
        "upper_bound": float(res.upper_bound),
        "alpha": float(res.alpha),
        "certified": bool(res.certified),
        "theta": [float(t) for t in res.theta],
        "pattern": _mask_str(res.pattern),
        "n_patterns": int(res.n_patterns),
        "settled": {"exact": int(res.n_exact), "bound": int(res.n_bound), "pruned": int(res.n_pruned)},
        "seconds": {k: round(float(v), 6) for k, v in res.seconds.items()},
        "notes": list(res.notes),
        "patterns": {
            "masks": [row.tobytes().hex() for row in packed],
            "witnesses": res.witnesses.tolist(),
            "exact_witnesses": {str(k): [str(int(x)) for x in v] for k, v in sorted(res.exact_witnesses.items())},
            "bounds": [float(b) for b in res.bounds],
            "settlement": "".join(SETTLEMENT_LETTERS[int(s)] for s in res.settlement),
            "methods": {str(k): v for k, v in sorted(res.methods.items())},
        },
        "evidence": {str(k): {"rows": [int(i) for i in rows], "N": multipliers_json(N)}
                     for k, (rows, N) in sorted(res.evidence.items())},
    }


def multipliers_json(N: Any) -> list:
    """Multipliers ``N`` as JSON: numbers, and ``"p/q"`` strings for exact rationals that are not
    floats (evidence of :mod:`relu_gating.search._exact.kernel_evidence`)."""
    N = np.asarray(N)
    if N.dtype != object:
        return N.astype(float).tolist()
    return [[float(v) if Fraction(float(v)) == v else f"{Fraction(v).numerator}/{Fraction(v).denominator}"
             for v in row] for row in N.tolist()]


def multipliers(v: Any, p: int) -> np.ndarray:
    """Parsed multipliers (p x p): floats, or an object array of Fractions when any entry is a
    ``"p/q"`` string; ``ValueError`` if malformed."""
    if not isinstance(v, list) or len(v) != p or not all(isinstance(r, list) and len(r) == p for r in v):
        raise ValueError(f"N must be a {p} x {p} list")
    flat = [x for r in v for x in r]
    if not any(isinstance(x, str) for x in flat):
        return np.asarray(v, dtype=float).reshape(p, p)
    out = np.empty(p * p, dtype=object)
    for k, x in enumerate(flat):
        if isinstance(x, str) and not _RATIONAL.fullmatch(x):
            raise ValueError("N entries must be numbers or 'p/q' strings")
        out[k] = Fraction(x) if isinstance(x, str) else Fraction(float(x))
    return out.reshape(p, p)


_RATIONAL = re.compile(r"-?[0-9]{1,4000}(/[1-9][0-9]{0,3999})?")


def _depth_ok(obj: Any, depth: int = 0) -> bool:
    if depth > _MAX_DEPTH:
        return False
    if isinstance(obj, dict):
        return all(_depth_ok(v, depth + 1) for v in obj.values())
    if isinstance(obj, list):
        return all(_depth_ok(v, depth + 1) for v in obj[:4])
    return True


def load_certificate(source: Any) -> dict:
    """A certificate dict from a NeuronResult, a dict, a JSON string or a path."""
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


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-standard JSON constant {name}")


@dataclass(frozen=True)
class Certificate:
    """A parsed certificate: the claim, the patterns and the evidence as arrays."""

    d: dict
    n: int
    m: int
    masks: np.ndarray
    witnesses: np.ndarray
    exact_witnesses: dict
    bounds: np.ndarray
    settlement: np.ndarray
    theta: np.ndarray
    pattern: np.ndarray
    evidence: dict
    value: float
    upper_bound: float
    alpha: float
    certified: bool


def _masks(hexes: list, n: int) -> np.ndarray:
    nbytes = (n + 7) // 8
    raw = np.array([np.frombuffer(bytes.fromhex(h), dtype=np.uint8) for h in hexes], dtype=np.uint8)
    raw = raw.reshape(-1, nbytes)
    return np.unpackbits(raw, axis=1, count=n).astype(bool)


def _evidence(ev: dict, n: int) -> dict:
    out = {}
    for k, e in ev.items():
        rows = np.asarray(e["rows"], dtype=np.int64).reshape(-1)
        N = multipliers(e["N"], rows.size)
        if rows.size and (rows.min() < 0 or rows.max() >= n) or not np.all(np.isfinite(N.astype(float))):
            raise CertificateError(f"evidence of pattern {k}: rows out of range or N not finite")
        out[int(k)] = (rows, N)
    return out


def parse_certificate(d: dict) -> Certificate:
    """Strictly typed arrays of a certificate dict; :class:`CertificateError` if malformed."""
    if d.get("format") != FORMAT:
        raise CertificateError(f"certificate format must be {FORMAT!r}, got {d.get('format')!r}")
    try:
        prob, p = d["problem"], d["patterns"]
        n, m = int(prob["n"]), int(prob["m"])
        masks = _masks(p["masks"], n)
        N = masks.shape[0]
        witnesses = np.asarray(p["witnesses"], dtype=float).reshape(N, m)
        bounds = np.asarray(p["bounds"], dtype=float).reshape(-1)
        settlement = np.array([SETTLEMENT_LETTERS.index(c) for c in p["settlement"]], dtype=np.int8)
        exact = {int(k): tuple(int(x) for x in v) for k, v in p.get("exact_witnesses", {}).items()}
        theta = np.asarray(d["theta"], dtype=float).reshape(m)
        pattern = np.frombuffer(str(d["pattern"]).encode(), dtype=np.uint8) == ord("1")
        evidence = _evidence(d.get("evidence", {}), n)
        claim = (float(d["value"]), float(d["upper_bound"]), float(d["alpha"]), d["certified"])
    except CertificateError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CertificateError(f"malformed certificate: {type(exc).__name__}: {exc}") from exc
    if not (bounds.size == settlement.size == N == int(d.get("n_patterns", -1))) or pattern.size != n:
        raise CertificateError("certificate arrays disagree in length with n_patterns or n")
    if not isinstance(claim[3], bool) or not all(np.isfinite(claim[:3])) or not np.all(np.isfinite(witnesses)):
        raise CertificateError("certificate value, upper_bound, alpha and witnesses must be finite numbers, "
                               "certified a boolean")
    return Certificate(d, n, m, masks, witnesses, exact, bounds, settlement, theta, pattern, evidence, *claim)
