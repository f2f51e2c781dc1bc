"""Exact integer witnesses for chambers too thin for float64 (private).

Every float64 is a dyadic rational, so ``Phi`` is exactly rational and every
chamber of ``{phi_i . theta = 0}`` contains integer points.  The sweep
(:mod:`._sweep`) produces each chamber ``C`` at an extreme ray ``v`` of its
closure (an exact integer vector, zero on the hyperplanes ``Z`` through it and
strictly signed on all others) together with a local direction ``u`` (zero-free
and correctly signed on ``Z``: for a simple ray ``u`` solves
``a_Z u = |D| sigma_Z`` exactly, for a non-simple ray it is an exact witness of
the local chamber, found recursively).  Then

.. math::

    w = M v + u, \\qquad M > \\max_{i \\notin Z}
        \\frac{-\\sigma_i a_i^T u}{\\sigma_i a_i^T v}, \\quad M \\ge 1,

is strictly inside ``C`` (on ``Z``: ``a_i . w = a_i . u``; elsewhere the ``M v``
term dominates).  All of it is integer arithmetic (Python ints, arbitrary
precision); the result is divided by the gcd of its entries.

Exact witnesses are *checked*, never trusted: :meth:`IntPhi.realizes` evaluates
``phi_i . theta`` exactly with ``Phi`` scaled row-wise by powers of two to
integers (a positive scaling, so every sign is preserved).
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from relu_gating.errors import InputError
from relu_gating.patterns._exact import cross_int, det_int, float_rows_to_int

__all__ = ["solve_signs", "from_ray", "combine", "simple_prov", "concat_prov", "IntPhi", "parse_exact_witnesses"]

_DEC = re.compile(r"[+-]?[0-9]+")


def _dot(a: Sequence[int], b: Sequence[int]) -> int:
    return sum(x * y for x, y in zip(a, b))


def _primitive(w: list[int]) -> tuple[int, ...]:
    g = 0
    for x in w:
        g = math.gcd(g, x)
    return tuple(x // g for x in w) if g > 1 else tuple(w)


def solve_signs(A: Sequence[Sequence[int]], signs: Sequence[bool], c: Sequence[int]) -> list[int]:
    """Integer ``u`` with ``A u = |D| (2 signs - 1)`` and ``c . u = 0``, ``D = det([A; c]) != 0``.

    ``A`` is (d-1) x d with independent rows and ``c`` is not orthogonal to their
    common kernel (Cramer's rule on the square system ``[A; c]``).
    """
    Mx = [list(r) for r in A] + [list(c)]
    d = len(Mx)
    rhs = [1 if s else -1 for s in signs] + [0]
    D = det_int(Mx)
    if D == 0:
        raise ArithmeticError("singular ray system")
    sg = 1 if D > 0 else -1
    u = []
    for k in range(d):
        Mk = [row[:k] + [rhs[i]] + row[k + 1:] for i, row in enumerate(Mx)]
        u.append(sg * det_int(Mk))
    return u


def from_ray(rows: Sequence[Sequence[int]], sigma: np.ndarray, v: Sequence[int], u: Sequence[int],
             Z: Sequence[int]) -> tuple[int, ...]:
    """Exact interior point ``M v + u`` of the chamber with class signs ``sigma`` (see module doc).

    Raises ``ArithmeticError`` when the data do not have the stated signs (a bug).
    """
    zs = set(int(j) for j in Z)
    M = 1
    for i, a in enumerate(rows):
        s = 1 if sigma[i] else -1
        au = s * _dot(a, u)
        if i in zs:
            if au <= 0:
                raise ArithmeticError("local direction not inside the local chamber")
            continue
        av = s * _dot(a, v)
        if av <= 0:
            raise ArithmeticError("ray not strictly signed off its hyperplanes")
        if au <= 0:
            M = max(M, (-au) // av + 1)
    return _primitive([M * x + y for x, y in zip(v, u)])


class IntPhi:
    """``Phi`` scaled row-wise by powers of two to integers, for exact sign checks."""

    def __init__(self, Phi: np.ndarray) -> None:
        self.rows = float_rows_to_int(np.asarray(Phi, dtype=float))
        self.nonzero = [any(r) for r in self.rows]

    def realizes(self, mask: Sequence[bool], theta: Sequence[int]) -> bool:
        """``(2 mask_i - 1) phi_i . theta > 0`` on nonzero rows and ``mask_i`` False on zero rows."""
        for r, nz, s in zip(self.rows, self.nonzero, mask):
            if not nz:
                if s:
                    return False
                continue
            v = _dot(r, theta)
            if v == 0 or (v > 0) != bool(s):
                return False
        return True


def _as_int(x: Any, what: str) -> int:
    if isinstance(x, (bool, np.bool_)):
        raise InputError(f"{what}: expected an integer or a decimal string, got a bool")
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, str) and _DEC.fullmatch(x.strip()):
        return int(x.strip())
    raise InputError(f"{what}: expected an integer or a decimal string, got {x!r}")


def parse_exact_witnesses(exact: Any, N: int, m: int) -> dict[int, tuple[int, ...]]:
    """Validate ``exact_witnesses`` (mapping index -> m integers or decimal strings).

    Keys may be ints or decimal strings (JSON object keys); ``0 <= index < N``.
    """
    if exact is None:
        return {}
    if not isinstance(exact, Mapping):
        raise InputError(f"exact_witnesses must be a mapping index -> sequence of m = {m} integers, "
                         f"got {type(exact).__name__}")
    out: dict[int, tuple[int, ...]] = {}
    for key, val in exact.items():
        k = _as_int(key, "exact_witnesses key")
        if not 0 <= k < N:
            raise InputError(f"exact_witnesses: index {k} out of range for {N} patterns")
        if isinstance(val, (str, bytes)) or not hasattr(val, "__len__") or len(val) != m:
            raise InputError(f"exact_witnesses[{k}] must be a sequence of m = {m} integers or decimal strings")
        out[k] = tuple(_as_int(x, f"exact_witnesses[{k}]") for x in val)
    return out


def concat_prov(blocks: list, child) -> Callable:
    """Exact-witness provider of ``blocks + (-blocks) + child`` (the layout of :func:`chambers`)."""
    ends = np.cumsum([b[0].shape[0] for b in blocks], dtype=np.int64)
    L = int(ends[-1]) if len(ends) else 0

    def prov(idx):
        out = []
        for i in idx:
            i = int(i)
            if i >= 2 * L:
                out.append(child[2]([i - 2 * L])[0])
                continue
            j, sg = (i, 1) if i < L else (i - L, -1)
            k = int(np.searchsorted(ends, j, side="right"))
            w = blocks[k][2]([j - (int(ends[k - 1]) if k else 0)])[0]
            out.append(tuple(sg * x for x in w))
        return out
    return prov


def combine(y, basis) -> tuple:
    """``sum_j y_j basis_j`` in integers (a witness in basis coordinates, lifted)."""
    return tuple(sum(yj * bj[t] for yj, bj in zip(y, basis)) for t in range(len(basis[0])))


def simple_prov(rows: list, c: tuple, Ss: np.ndarray, scs: np.ndarray, P: np.ndarray) -> Callable:
    """Provider of exact witnesses for a block of simple rays (rows ``b``: generators ``Ss[b]``).

    ``v = scs[b] X(a_S)`` (oriented like the sweep's float ray), ``u`` from
    :func:`solve_signs` with the sweep functional ``c``, signs ``P[b]`` (class level).
    """
    def prov(idx):
        out = []
        for b in idx:
            S = [int(j) for j in Ss[b]]
            A = [rows[j] for j in S]
            v = [int(scs[b]) * x for x in cross_int(A)]
            u = solve_signs(A, [bool(P[b, j]) for j in S], c)
            out.append(from_ray(rows, P[b], v, u, S))
        return out
    return prov

