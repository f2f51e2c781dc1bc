r"""The master LP of the variation norm's column generation, kept warm between rounds (private).

``min 1'(a+ + a-) + M 1'(r+ + r-)  s.t.  D (a+ - a-) + (r+ - r-) = v,  all >= 0``: one reused
``highspy.Highs`` model (threads 1, silent) to which the rounds only *add* columns (the atoms the
pricing found) or change the penalty ``M``; HiGHS restarts the simplex from the last basis, so a
round costs a few pivots instead of a solve from scratch over every column.

Columns long out of the basis can be dropped (:meth:`MasterLP.prune`): the LP tracks, per atom, how
many solves ago either of its columns was last basic; a pruned atom is nonbasic, so the basis stays
valid and the next solve starts from it.  Any subset of atoms is a valid restricted master.

Nothing here is trusted: the caller turns any ``a`` into a feasible decomposition (its residual
written in spanning atoms) and any ``y`` into a certified lower end (exact pricing), so an
inaccurate LP answer can only loosen the interval, never make it wrong.
"""

from __future__ import annotations

import numpy as np

from relu_gating.errors import SolverFailure
from solvers import quiet_highs

__all__ = ["MasterLP"]


class MasterLP:
    """The master LP for the target ``v`` (columns 0..2n-1: the residual ``r+``, ``r-``; then ``a+_j, a-_j``)."""

    def __init__(self, v: np.ndarray, M: float) -> None:
        import highspy

        n = v.size
        self.n, self.J, self.h = n, 0, quiet_highs()
        self.age = np.zeros(0, dtype=np.int64)  # per atom: solves since either of its columns was basic
        self.tag = np.zeros(0, dtype=np.int64)  # per atom: the caller's label (-1: none), kept through pruning
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = 2 * n, n
        lp.col_cost_ = np.full(2 * n, float(M))
        lp.col_lower_ = np.zeros(2 * n)
        lp.col_upper_ = np.full(2 * n, highspy.kHighsInf)
        lp.row_lower_ = lp.row_upper_ = np.asarray(v, dtype=float)
        A = lp.a_matrix_
        A.format_ = highspy.MatrixFormat.kColwise
        A.start_ = np.arange(2 * n + 1, dtype=np.int32)
        A.index_ = np.tile(np.arange(n, dtype=np.int32), 2)
        A.value_ = np.r_[np.ones(n), -np.ones(n)]
        A.num_col_, A.num_row_ = 2 * n, n
        self.h.passModel(lp)

    def add(self, D: np.ndarray, tag: np.ndarray | None = None) -> None:
        """Append the atoms ``D`` (``n x k``, columns ``d_j``) as the column pairs ``d_j``, ``-d_j`` (nonzeros only),
        labelled ``tag`` (``k`` integers; -1 when None)."""
        import highspy

        k = D.shape[1]
        if k == 0:
            return
        self.age = np.r_[self.age, np.zeros(k, dtype=np.int64)]
        self.tag = np.r_[self.tag, np.full(k, -1, dtype=np.int64) if tag is None else np.asarray(tag, dtype=np.int64)]
        cols = np.repeat(D, 2, axis=1) * np.tile([1.0, -1.0], k)
        nz = cols != 0
        idx = np.nonzero(nz.T)
        starts = np.r_[0, np.cumsum(nz.sum(axis=0))[:-1]].astype(np.int32)
        self.h.addCols(2 * k, np.ones(2 * k), np.zeros(2 * k), np.full(2 * k, highspy.kHighsInf),
                       int(nz.sum()), starts, idx[1].astype(np.int32), cols.T[nz.T])
        self.J += k

    def set_target(self, v: np.ndarray) -> None:
        """A new right-hand side ``v`` (the columns and costs stay: the last basis stays dual feasible, so
        the next solve is a warm dual simplex; the next norm of a bracket reuses every atom found)."""
        idx = np.arange(self.n, dtype=np.int32)
        vv = np.asarray(v, dtype=float)
        self.h.changeRowsBounds(self.n, idx, vv, vv)

    def set_penalty(self, M: float) -> None:
        """The residual's cost ``M``."""
        idx = np.arange(2 * self.n, dtype=np.int32)
        self.h.changeColsCost(idx.size, idx, np.full(idx.size, float(M)))

    def solve(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(a, r, y)``: the signed coefficients of the atoms added, the residual, the equality duals."""
        import highspy

        self.h.run()
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            raise SolverFailure(f"variation-norm master LP failed: {self.h.modelStatusToString(self.h.getModelStatus())}")
        basic = self._basic()
        self.age = np.where(basic, 0, self.age + 1)
        sol = self.h.getSolution()
        x = np.asarray(sol.col_value, dtype=float)
        n = self.n
        return x[2 * n::2] - x[2 * n + 1::2], x[:n] - x[n:2 * n], np.asarray(sol.row_dual, dtype=float)

    def _basic(self) -> np.ndarray:
        """Which atoms have a column (``d_j`` or ``-d_j``) in the current basis."""
        import highspy

        basis = self.h.getBasis()
        if not basis.valid:
            return np.zeros(self.J, dtype=bool)
        st = basis.col_status[2 * self.n:]
        b = np.fromiter((s == highspy.HighsBasisStatus.kBasic for s in st), dtype=bool, count=2 * self.J)
        return b[0::2] | b[1::2]

    def prune(self, max_age: int) -> np.ndarray:
        """Delete the atoms out of the basis for more than ``max_age`` solves; return which atoms stay (mask
        over the atoms before).  Only nonbasic columns go (the basis stays valid, the next solve warm)."""
        return self.drop(self.age > max_age)

    def drop(self, gone: np.ndarray) -> np.ndarray:
        """Delete the atoms where ``gone`` (a mask over the atoms) is True and which are out of the basis;
        return which atoms stay.  The basis stays valid: the next solve starts from it."""
        keep = ~np.asarray(gone, dtype=bool) | self._basic()
        out = np.flatnonzero(~keep)
        if out.size:
            cols = (2 * self.n + np.c_[2 * out, 2 * out + 1].ravel()).astype(np.int32)
            self.h.deleteCols(cols.size, cols)
            self.age, self.tag, self.J = self.age[keep], self.tag[keep], int(keep.sum())
        return keep
