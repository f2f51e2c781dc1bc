"""The checker's work bounded by the problem, not by the file (``FORMAT.md``, "Limits").

An honest certificate of a problem needs numbers of bounded size and at most as many patterns
(or tree nodes) as the problem's arrangement can have; everything past these limits is refused
before any work, with one line naming the limit:

* :func:`number_digits`: the decimal digits of every integer, numerator and denominator, from
  ``data_bits`` (the bit length of the problem's integer data) by a Hadamard-type bound;
* :func:`cover`: Cover's count, an upper bound on the chambers of any arrangement of ``q``
  hyperplanes of rank ``r``: a complete pattern list has at most that many patterns (a longer one
  is INVALID; past twice the count it is refused unread);
* tree nodes: at most ``2 (n + 1)`` per chamber of that count: a policy, not a theorem (``FORMAT.md``
  says why: leaves with interior are at most Cover's count, but a node without interior may carry any
  subtree, which the checker does not detect; the search's trees stay far within it,
  ``tests/internals/test_tree_limit.py``).
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

import numpy as np

__all__ = ["Limits", "limits", "data_bits", "number_digits", "generic_digits", "cover"]


#: The limits of one stated problem: ``digits`` per number, ``patterns`` (twice Cover's count), tree ``nodes`` and the
#: bytes of a binary tree's JSON (``2^20 + 32 (n + 2)`` a node, room for 16 leaves of ``n^2`` exact multipliers).
Limits = namedtuple("Limits", "digits patterns nodes tree_bytes")


def limits(P: Any) -> Limits:
    """The :class:`Limits` of a :class:`~relu_gating.checker._problem.StatedProblem`."""
    n, m = P.Phi.shape
    q = 0 if P.H is None else P.H.shape[1]
    rows, r = int(np.count_nonzero(np.any(P.Phi != 0, axis=1))), P.Phi_r.shape[1]
    digits = number_digits(n, m, q, data_bits(P.Phi, P.Phi_r, P.U, P.H))
    return Limits(digits, 2 * cover(rows, r), T := 2 * (n + 1) * cover(rows, r), 2**20 + 32 * (n + 2) * T + 16 * n * n * (2 * digits + 4))


def data_bits(*arrays: np.ndarray | None) -> int:
    """Bit length of the largest integer of each array scaled to integers with one power of two
    (``to_ints``): the exponent spread of its nonzero entries plus the 53-bit significand."""
    spreads = [np.ptp(np.frexp(X[X != 0])[1]) for X in arrays if X is not None and np.any(X)]
    return 53 + int(max(spreads, default=0))


def number_digits(n: int, m: int, q: int, L: int) -> int:
    """Most decimal digits of an integer, numerator or denominator of a certificate of a problem
    with ``n`` samples, ``m`` columns of ``Phi``, ``q`` feature columns and integer data of ``L``
    bits: ``2 m^2 (q + 1) (2 L + log2 n + 2) + 1100`` bits (``FORMAT.md`` derives it)."""
    return int((2 * m * m * (q + 1) * (2 * L + math.ceil(math.log2(max(n, 2))) + 2) + 1100) * math.log10(2)) + 1


def generic_digits(n: int, m: int) -> int:
    """:func:`number_digits` for any float data of these sizes (``L`` the whole float64 range, one
    feature column): the bound used before the problem is known (a binary certificate's meta)."""
    return number_digits(n, m, 1, 2 * 1075 + 53)


def cover(q: int, r: int) -> int:
    """Cover's count ``2 sum_{k<r} C(q - 1, k)`` (``q >= 1`` hyperplanes, rank ``r``)."""
    return 2 * sum(math.comb(q - 1, k) for k in range(r)) if q >= 1 else 1
