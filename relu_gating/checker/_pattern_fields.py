"""The fields of a pattern certificate that its JSON and binary forms share, read for checking: index keys,
canonical masks' padding and exact witnesses (loaded for pattern certificates only; the JSON list is
:mod:`._read_patterns`, the binary one :mod:`._read_npz`).  Every failure is a one-line
:class:`~relu_gating.errors.CertificateError`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from relu_gating.checker._constants import MAX_INT
from relu_gating.checker._read import RATIONAL, as_int, rational
from relu_gating.errors import CertificateError

__all__ = ["index", "padding_ok", "exact_witnesses"]


def index(k: Any, what: str, hi: int = MAX_INT) -> int:
    """A key naming an index: a canonical decimal string (or a JSON integer) in ``[0, hi]``."""
    mt = RATIONAL.fullmatch(k) if isinstance(k, str) and len(k) < 20 else None
    return as_int(int(k) if mt and not mt[2] else k, what, 0, hi)


def padding_ok(packed: np.ndarray, n: int) -> bool:
    """The bits past ``n`` in the last byte of every packed mask are zero (canonical masks)."""
    pad = 8 * packed.shape[1] - n
    return pad == 0 or not np.any(packed[:, -1] & np.uint8((1 << pad) - 1))


def exact_witnesses(v: Any, N: int, m: int, digits: int) -> dict:
    """``{index: m integers}`` of the exact witnesses, each a JSON integer or a canonical decimal string."""
    if not isinstance(v, dict) or not all(isinstance(w, list) for w in v.values()):
        raise CertificateError("malformed certificate: exact_witnesses must map indices to lists of integers")
    out = {index(k, "exact witness index", N - 1): tuple(rational(x, "an exact witness", digits, True).numerator
                                                         for x in w) for k, w in v.items()}
    if any(len(w) != m for w in out.values()):
        raise CertificateError(f"malformed certificate: exact witnesses must hold m = {m} integers")
    return out
