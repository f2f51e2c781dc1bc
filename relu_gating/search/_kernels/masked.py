"""Products over stacks of gating patterns, with rank-one updates (private).

For every pattern ``S`` of a stack we need matrices ``L^T S R = sum_{i in S}
l_i r_i^T`` (``A_S``, ``B_S`` and friends).  Neighbouring chambers differ in a
few rows, so in enumeration order each pattern's products follow from the
previous pattern's by a few rank-one changes ``+- l_i r_i^T``.  The stack is
cut into blocks; the first pattern of a block is formed directly, the others
by a segmented cumulative sum of the sparse row changes.  Blocks bound the
accumulated rounding to ``block`` updates, comparable to a direct sum over
``n`` rows.  Where patterns are not close to one another (many changed rows)
a single dense BLAS product is cheaper and is used instead.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["MaskStack"]


class MaskStack:
    """A stack of boolean masks prepared for repeated masked products.

    Parameters
    ----------
    masks : ndarray of bool, shape (N, n)
    block : int
        Patterns per block of rank-one updates.
    max_density : float
        Use updates only when consecutive masks differ, on average, in at
        most this fraction of the rows.
    """

    def __init__(self, masks: np.ndarray, *, block: int = 64, max_density: float = 0.25) -> None:
        masks = np.atleast_2d(np.asarray(masks, dtype=bool))
        self.masks = masks
        N, n = masks.shape
        self.block = block
        self._dense = None
        self._diff = None
        if N > 2 * block:
            d = np.diff(masks.view(np.int8), axis=0)
            starts = np.arange(block, N, block)
            d[starts - 1] = 0  # no updates across block boundaries
            nnz = np.count_nonzero(d)
            if nnz <= max_density * n * N:
                self._diff = sp.csr_matrix(d, dtype=np.float64)
                self._starts = np.arange(0, N, block)
                self._start_rows = masks[self._starts].astype(np.float64)
                return
        self._dense = masks.astype(np.float64)

    @property
    def uses_updates(self) -> bool:
        """True when products are formed by rank-one updates."""
        return self._diff is not None

    def __len__(self) -> int:
        return self.masks.shape[0]

    def apply(self, V: np.ndarray) -> np.ndarray:
        """``masks @ V`` for a matrix ``V`` of shape (n, c): shape (N, c)."""
        V = np.asarray(V, dtype=np.float64)
        if self._dense is not None:
            return self._dense @ V
        N, block = self.masks.shape[0], self.block
        inc = np.empty((N, V.shape[1]))
        inc[1:] = self._diff @ V
        inc[self._starts] = self._start_rows @ V
        pad = (-N) % block
        if pad:
            inc = np.vstack([inc, np.zeros((pad, V.shape[1]))])
        out = np.cumsum(inc.reshape(-1, block, V.shape[1]), axis=1).reshape(-1, V.shape[1])
        return out[:N]

    def products(self, L: np.ndarray, R: np.ndarray) -> np.ndarray:
        """Stack of ``L^T S R`` for every mask ``S``: shape (N, a, b)."""
        n, a = L.shape
        b = R.shape[1]
        outer = (L[:, :, None] * R[:, None, :]).reshape(n, a * b)
        return self.apply(outer).reshape(-1, a, b)
