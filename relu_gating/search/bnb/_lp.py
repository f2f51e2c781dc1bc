"""The LP oracle of the branch and bound (private): a strict witness of a cone, or the rows of a
Farkas certificate that it has no interior.

One reused ``highspy.Highs`` object (threads 1, silent).  For unit rows ``g_j`` the LP is
``max t  s.t.  g_j v >= t,  -1 <= v <= 1,  t <= 1``: ``t > 0`` gives a strict witness ``v``;
``t = 0`` means no interior, and the rows with positive duals carry the Farkas combination
(checked exactly by the caller before it is claimed).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from relu_gating._inputs.scaling import unit_rows
from solvers import quiet_highs

__all__ = ["ConeLP", "LPAnswer", "WITNESS_MARGIN"]

#: An LP margin ``t`` above this counts as a strict witness (rows are unit vectors, ``|v| <= 1``).
WITNESS_MARGIN = 1e-9


class LPAnswer(NamedTuple):
    """``margin > WITNESS_MARGIN``: ``v`` is a strict witness; else ``duals`` (one per row)."""

    margin: float
    v: np.ndarray | None
    duals: np.ndarray | None


class ConeLP:
    """Strict witnesses of cones ``{v : G v >= 0}`` (rows of ``G`` normalized here)."""

    def __init__(self) -> None:
        self.h = quiet_highs()
        self.calls = 0

    def begin(self, G: np.ndarray, C: np.ndarray) -> None:
        """Load the cone ``G v >= 0`` with the candidate rows ``C`` (each sign) switched off."""
        import highspy

        Gn, Cn = unit_rows(G), unit_rows(C)  # also rows below 2^-537 or above 2^511
        self.G, self.C = Gn, Cn
        f, c, r = Gn.shape[0], Cn.shape[0], Gn.shape[1] if Gn.size else Cn.shape[1]
        rows = np.vstack([Gn, Cn, -Cn])
        k = rows.shape[0]
        inf = highspy.kHighsInf
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = r + 1, k
        lp.col_cost_ = np.r_[np.zeros(r), -1.0]
        lp.col_lower_ = np.r_[-np.ones(r), -inf]
        lp.col_upper_ = np.ones(r + 1)
        lp.row_lower_ = np.r_[np.zeros(f), np.full(2 * c, -inf)]
        lp.row_upper_ = np.full(k, inf)
        A = lp.a_matrix_
        A.format_ = highspy.MatrixFormat.kRowwise
        A.start_ = np.arange(0, k * (r + 1) + 1, r + 1, dtype=np.int32)
        A.index_ = np.tile(np.arange(r + 1, dtype=np.int32), k)
        A.value_ = np.c_[rows, -np.ones(k)].ravel()
        A.num_col_, A.num_row_ = r + 1, k
        self.h.passModel(lp)
        self.f, self.c, self.r = f, c, r

    def test(self, k: int, s: int) -> LPAnswer:
        """Largest margin of the loaded cone cut by ``s c_k v >= 0``; duals: decided rows, then that row."""
        import highspy

        self.calls += 1
        row = self.f + k + (0 if s > 0 else self.c)
        inf = highspy.kHighsInf
        self.h.changeRowBounds(row, 0.0, inf)
        try:
            self.h.run()
            ok = self.h.getModelStatus() == highspy.HighsModelStatus.kOptimal
            sol = self.h.getSolution() if ok else None
        finally:
            self.h.changeRowBounds(row, -inf, inf)
        if sol is None:
            return LPAnswer(0.0, None, None)
        x = np.asarray(sol.col_value, dtype=float)
        v = x[:self.r]
        g = s * self.C[k]
        exact_t = min(float((self.G @ v).min(initial=np.inf)), float(g @ v))
        if min(float(x[self.r]), exact_t) > WITNESS_MARGIN:
            return LPAnswer(exact_t, v, None)
        duals = np.abs(np.asarray(sol.row_dual, dtype=float))
        return LPAnswer(min(float(x[self.r]), exact_t), None, np.r_[duals[:self.f], duals[row]])

    def deepest(self) -> np.ndarray | None:
        """The LP's point of the loaded cone with no candidate row switched on, whatever its margin
        (a sliver thinner than floats resolve has margin 0: the point then lies on or near it), or
        None when the LP ends without an optimum."""
        import highspy

        self.calls += 1
        self.h.run()
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        return np.asarray(self.h.getSolution().col_value, dtype=float)[:self.r]

    def interior(self) -> np.ndarray | None:
        """A strict witness of the loaded cone with no candidate row switched on (its slacks
        recomputed: each above ``WITNESS_MARGIN``), or None."""
        v = self.deepest()
        return v if v is not None and float((self.G @ v).min(initial=np.inf)) > WITNESS_MARGIN else None
