"""The stated problem in exact integers and fractions (exact-only code: loaded on first use of
:attr:`relu_gating.checker._problem.StatedProblem.exact`); every float input is the exact rational it is."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from relu_gating.checker._rational import pivot_columns, solve, to_ints

__all__ = ["ExactProblem"]


class ExactProblem:
    """The stated problem in integers and fractions: ``Y`` the rows of ``Phi_r`` (common scale),
    ``U`` and ``H`` (its independent columns) as integers, ``(H^T H)^{-1}`` and ``H^T U``."""

    def __init__(self, P: Any) -> None:
        self.Y, _ = to_ints(P.Phi_r)
        self.Ui, self.su = to_ints(P.U)
        self.K = P.U.shape[1]
        self.Hi = None
        if P.H is not None:
            Hp = P.H[:, pivot_columns(P.H)]
            self.Hi, _ = to_ints(Hp)
            q = Hp.shape[1]
            G = [[sum(h[a] * h[b] for h in self.Hi) for b in range(q)] for a in range(q)]
            cols = [solve(G, [int(a == b) for a in range(q)]) for b in range(q)]
            self.Ginv = [[cols[b][a] for b in range(q)] for a in range(q)]
            HU = [[sum(h[a] * u[k] for h, u in zip(self.Hi, self.Ui)) for k in range(self.K)] for a in range(q)]
            self.GinvHU = [[sum(self.Ginv[a][b] * HU[b][k] for b in range(q)) for k in range(self.K)]
                           for a in range(q)]

    def forms(self, zrows: list, p: int) -> tuple[list, list, list]:
        """``(A, B, ZZ)`` (fractions, p x p) for the subspace ``col(Z)``, ``Z`` given by its nonzero
        rows ``[(i, z_i), ...]``: ``A = Z^T M M^T Z``, ``B = Z^T (I - Pi_H) Z``, ``ZZ = Z^T Z``."""
        ZZ = [[sum(z[a] * z[b] for _, z in zrows) for b in range(p)] for a in range(p)]
        UZ = [[sum(self.Ui[i][k] * z[b] for i, z in zrows) for b in range(p)] for k in range(self.K)]
        B = [row[:] for row in ZZ]
        if self.Hi is not None:
            q = len(self.Ginv)
            HZ = [[sum(self.Hi[i][a] * z[b] for i, z in zrows) for b in range(p)] for a in range(q)]
            GHZ = [[sum(self.Ginv[a][c] * HZ[c][b] for c in range(q)) for b in range(p)] for a in range(q)]
            B = [[ZZ[a][b] - sum(HZ[c][a] * GHZ[c][b] for c in range(q)) for b in range(p)] for a in range(p)]
            UZ = [[UZ[k][b] - sum(self.GinvHU[c][k] * HZ[c][b] for c in range(q)) for b in range(p)]
                  for k in range(self.K)]
        scale = Fraction(1, 1 << (2 * self.su))
        A = [[sum(UZ[k][a] * UZ[k][b] for k in range(self.K)) * scale for b in range(p)] for a in range(p)]
        return A, B, ZZ

    def pattern(self, mask: np.ndarray) -> list:
        """The nonzero rows of ``Z = S Phi_r`` for a mask ``S``."""
        return [(int(i), self.Y[int(i)]) for i in np.flatnonzero(mask)]
