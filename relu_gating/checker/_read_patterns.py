"""Reading a JSON pattern certificate's list for checking (loaded for JSON pattern certificates only; the
fields both forms share are :mod:`._pattern_fields`).

Masks must be canonical (``numpy.packbits`` with zero padding bits), witnesses and bounds finite,
exact witnesses canonical decimal integers, dual evidence's rows distinct and its multipliers
within the problem's limits (:mod:`._limits`).  Every failure is a one-line
:class:`~relu_gating.errors.CertificateError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from relu_gating.checker._constants import MAX_INT
from relu_gating.checker._pattern_fields import exact_witnesses, index, padding_ok
from relu_gating.checker._read import DIGITS, as_int, multipliers
from relu_gating.errors import CertificateError

__all__ = ["SETTLEMENT_LETTERS", "Patterns", "parse_patterns", "int_list"]

SETTLEMENT_LETTERS = "UBEP"


def int_list(v: Any, what: str, hi: int) -> np.ndarray:
    """A list of integers in ``[0, hi)`` as int64."""
    if not isinstance(v, list):
        raise CertificateError(f"malformed certificate: {what} must be a list of integers")
    return np.array([as_int(x, what, 0, hi - 1) for x in v], dtype=np.int64)


@dataclass(frozen=True)
class Patterns:
    """The pattern list of a JSON certificate: canonical packed masks and their columns."""

    packed: np.ndarray
    witnesses: np.ndarray
    exact_witnesses: dict
    bounds: np.ndarray
    settlement: np.ndarray
    evidence: dict


def _evidence(ev: Any, n: int, digits: int) -> dict:
    """Dual evidence by pattern index (an index past the list proves nothing and harms nothing)."""
    if not isinstance(ev, dict):
        raise CertificateError("malformed certificate: evidence must be an object")
    out = {}
    for k, e in ev.items():
        i = index(k, "evidence index")
        rows = int_list(e.get("rows") if isinstance(e, dict) else None, f"evidence {k} rows", n)
        if np.unique(rows).size != rows.size:  # distinct rows: p <= n, the exact work bounded by the problem
            raise CertificateError(f"malformed certificate: evidence {k} rows repeat a row")
        out[i] = (rows, multipliers(e.get("N"), rows.size, f"evidence of pattern {k}", digits))
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
