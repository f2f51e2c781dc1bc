"""Row-space reduction of ``Phi`` for pattern enumeration (private).

The chambers of ``{theta : phi_i^T theta = 0}`` only depend on the distinct
hyperplanes.  Rows are merged exactly:

* zero rows are always inactive;
* positively parallel rows (``phi_i = c phi_j``, ``c > 0``) always share a sign;
* antiparallel rows (``c < 0``) always have opposite signs (both strictly nonzero
  inside a chamber).

Each nonzero row ``i`` is ``orient[i] * (positive multiple of) reps[cls[i]]``.
Parallelism is decided exactly: every row is scaled by a power of two to an
integer vector and divided by the gcd of its entries (a canonical primitive
vector, sign-normalised so its first nonzero entry is positive).

The rank ``r`` is decided exactly (fraction-free elimination) and the
arrangement is moved to ``R^r`` by keeping ``r`` linearly independent columns
``C`` of ``Phi``: since every column of ``Phi`` is a combination of the columns
``C``, ``Phi = Phi[:, C] T`` with ``T[:, C] = I``, so ``sign(Phi theta)`` over
``theta in R^m`` equals ``sign(Phi[:, C] y)`` over ``y in R^r``, and a witness
``y`` lifts to ``theta`` with ``theta[C] = y`` and zeros elsewhere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from relu_gating.patterns._exact import float_rows_to_int, primitive, rank_int

__all__ = ["Reduction", "reduce_rows", "merge_int_rows"]


@dataclass(frozen=True)
class Reduction:
    """Merged hyperplane classes of ``Phi`` in its row space.

    Attributes
    ----------
    n, m : int
        Shape of ``Phi``.
    cls : ndarray of int, shape (n,)
        Class of each row (-1 for zero rows).
    orient : ndarray of int8, shape (n,)
        +1 / -1 orientation of each row relative to its class (0 for zero rows).
    reps : list of tuple of int, length q
        Primitive integer normal of each class in ``R^m``.
    rank : int
        Exact rank r of ``Phi``.
    cols : list of int
        r independent columns of ``Phi``.
    red : list of tuple of int, length q
        Class normals restricted to ``cols`` (vectors in ``Z^r``).
    """

    n: int
    m: int
    cls: np.ndarray
    orient: np.ndarray
    reps: list
    rank: int
    cols: list
    red: list

    @property
    def q(self) -> int:
        return len(self.reps)

    def class_masks_to_rows(self, P: np.ndarray) -> np.ndarray:
        """Map class-level positive masks (N, q) to row masks (N, n), bool."""
        N = P.shape[0]
        if self.q == self.n and np.array_equal(self.cls, np.arange(self.n)) and np.all(self.orient > 0):
            return P
        out = np.zeros((N, self.n), dtype=bool)
        nz = self.cls >= 0
        if nz.any():
            cols = P[:, self.cls[nz]]
            flip = self.orient[nz] < 0
            out[:, nz] = cols ^ flip[None, :]
        return out

    def lift_witnesses(self, Y: np.ndarray) -> np.ndarray:
        """Lift witnesses (N, r) in the reduced space to (N, m)."""
        W = np.zeros((Y.shape[0], self.m))
        if self.rank:
            W[:, self.cols] = Y
        return W


def merge_int_rows(rows: list) -> tuple[list, np.ndarray, np.ndarray]:
    """Merge integer rows into classes of distinct lines.

    Returns ``(reps, cls, orient)``: primitive representatives (oriented like the
    first row of their class),
    the class of each row (-1 for a zero row) and its orientation (+1/-1, 0 for zero).
    """
    reps: list = []
    first: list = []
    index: dict = {}
    cls = np.full(len(rows), -1, dtype=np.int64)
    orient = np.zeros(len(rows), dtype=np.int8)
    for i, r in enumerate(rows):
        p, s = primitive(r)
        if s == 0:
            continue
        j = index.get(p)
        if j is None:  # the representative keeps the orientation of the first row
            j = index[p] = len(reps)
            reps.append(p if s > 0 else tuple(-x for x in p))
            first.append(s)
        cls[i] = j
        orient[i] = s * first[j]
    return reps, cls, orient


def reduce_rows(Phi: np.ndarray) -> Reduction:
    """Exact merge of parallel rows, exact rank and column selection (see module doc)."""
    n, m = Phi.shape
    ints = float_rows_to_int(Phi)
    reps, cls, orient = merge_int_rows(ints)
    r, piv = rank_int(reps) if reps else (0, [])
    red = []
    for p in reps:
        sub = [p[c] for c in piv]
        g = 0
        for x in sub:
            g = math.gcd(g, x)
        red.append(tuple(x // g for x in sub))
    return Reduction(n=n, m=m, cls=cls, orient=orient, reps=reps, rank=r, cols=list(piv), red=red)
