"""Masked products of complementary patterns from one GEMM (private).

The sweep lists half of the chambers and then their negations
(:attr:`relu_gating.patterns.PatternSet.n_mirrored`): pattern ``L + k`` is the
complement of pattern ``k`` on the nonzero rows ``z`` of ``Phi``.  For such a
pair, ``V^T s' = V^T z - V^T s``: the bound pass (:mod:`.bound`) computes
the GEMM for the first half of a paired chunk only and the second half by one
subtraction.

Rounding: ``t = fl(V^T z)`` and ``fl(V^T s)`` each err by at most ``err`` (a
subset sum, any order: ``Plan.err``), and the subtraction adds
``u |t - V^T s| <= u (colsum |V| + 2 err) <= err / 2 + 2 u err`` (``err`` is at
least ``(n + 2) u colsum |V|``), so the second half errs by less than
``MIRROR_ERR * err``; a paired chunk uses that allowance for all its patterns.

The pairing is checked on the masks themselves (one comparison of the bits); a
chunk that is not paired as stated gets the plain GEMM.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, TypeVar

import numpy as np

__all__ = ["MIRROR_ERR", "paired", "mirror_products", "chunk_rows", "take_rows"]

_Plan = TypeVar("_Plan", bound=Any)  # relu_gating.search._kernels.bound.Plan (a frozen dataclass)

#: The error allowance of a paired chunk's products, in units of ``Plan.err``.
MIRROR_ERR = 3.0

_SUMS: dict = {}


def _column_sums(plan, Phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(V^T z, z)`` of ``plan`` (cached for the last few plans)."""
    hit = _SUMS.get(id(plan))
    if hit is not None and hit[0] is plan:
        return hit[1], hit[2]
    nz = np.any(Phi != 0, axis=1)
    t = plan.V[nz].sum(axis=0)
    if len(_SUMS) >= 8:
        _SUMS.clear()
    _SUMS[id(plan)] = (plan, t, nz)
    return t, nz


def paired(masks: np.ndarray, packed: bool, nz: np.ndarray) -> bool:
    """Whether the second half of ``masks`` is the first half complemented on the rows ``nz``."""
    k = masks.shape[0]
    if k % 2:
        return False
    h = k // 2
    flip = np.packbits(nz) if packed else nz
    return bool(np.array_equal(masks[h:], masks[:h] ^ flip))


def mirror_products(plan: _Plan, Phi: np.ndarray, masks: np.ndarray, packed: bool,
                    products: Callable[[_Plan, np.ndarray, bool], np.ndarray]) -> tuple[np.ndarray, _Plan] | None:
    """``(P, plan')``: ``products(plan, masks, packed)`` of a paired chunk from its first half, with
    ``plan'`` carrying the wider error allowance; None if the chunk is not paired."""
    t, nz = _column_sums(plan, Phi)
    if not paired(masks, packed, nz):
        return None
    h = masks.shape[0] // 2
    first = products(plan, masks[:h], packed)
    P = np.empty((first.shape[0], 2 * h))
    P[:, :h] = first
    np.subtract(t[:, None], first, out=P[:, h:])
    return P, dataclasses.replace(plan, err=MIRROR_ERR * plan.err)


def chunk_rows(N: int, mirrored: int, chunk_size: int) -> list[tuple[np.ndarray, bool]]:
    """The bound pass's chunks of ``N`` patterns: ``(rows, paired)``.  The first ``2 mirrored``
    patterns go in pairs (``chunk_size // 2`` patterns and their complements), the rest in
    consecutive chunks of ``chunk_size``."""
    out = []
    L = int(mirrored) if 2 * int(mirrored) <= N and chunk_size >= 2 else 0
    h = max(chunk_size // 2, 1)
    for s in range(0, L, h):
        e = min(s + h, L)
        out.append((np.r_[s:e, L + s:L + e], True))
    out += [(np.arange(s, min(s + chunk_size, N)), False) for s in range(2 * L, N, chunk_size)]
    return out


def take_rows(a: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``a[rows]`` (a copy) for the chunks of :func:`chunk_rows`: one or two ascending runs are
    copied as slices (several times faster than a gather), anything else gathered."""
    k, h = rows.size, rows.size // 2
    if k and _run(rows):
        return a[rows[0]:rows[0] + k].copy()
    if k and k % 2 == 0 and _run(rows[:h]) and _run(rows[h:]):
        return np.concatenate((a[rows[0]:rows[0] + h], a[rows[h]:rows[h] + h]))
    return a[rows]


def _run(rows: np.ndarray) -> bool:
    return bool(rows[-1] - rows[0] + 1 == rows.size and np.all(np.diff(rows) == 1))
