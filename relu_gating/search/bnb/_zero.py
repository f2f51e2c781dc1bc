"""Chambers whose closed cone holds no neuron: a positive dependency of their signed rows (private).

A chamber is the closed cone ``C = {theta : s_k phi_k theta >= 0 for every row k}``.  If
``sum_k y_k s_k phi_k = 0`` with every ``y_k >= 0``, then on ``C`` each term ``y_k s_k phi_k
theta`` is nonnegative and they sum to 0, so ``phi_k theta = 0`` wherever ``y_k > 0``.  When
that holds for every active row, ``relu(Phi theta) = 0`` on ``C``: the chamber has no admissible
neuron (the leaf ``["x", rows, y]`` of the tree certificate).

Such a chamber is thinner than floats can resolve (an LP finds a largest margin of 0 and every row
an implicit equality), so no solver settles it: iris greedy step 4 had one, whose pencil claimed
0.0743 above the gain 0.0737 and held the run at alpha 0.9922 whatever its budget.  The dependency
is found by an LP in the unit rows of ``Psi``, a well-conditioned basis (``Phi = Psi C``: the same
dependencies, rescaled by the row norms), then made exact: the rows outside a basis keep their
float multipliers (exact dyadic rationals), the basis rows' multipliers are solved in rationals
from ``Phi`` itself, and the dependency stands only if none comes out negative and every active row
keeps a positive one.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from relu_gating._inputs.scaling import pow2_norms
from solvers import exact_solve

__all__ = ["positive_dependency"]

#: Multipliers of inactive rows below this fraction of the largest are set to 0 before the exact repair.
DROP_BELOW = 1e-9


def _lp(Gs: np.ndarray, active: np.ndarray) -> np.ndarray | None:
    """Float multipliers ``w >= 0``, ``w >= 1`` on ``active``, with ``Gs^T w = 0``; None if the LP
    finds none."""
    from scipy.optimize import linprog

    lo = np.where(active, 1.0, 0.0)
    res = linprog(np.ones(Gs.shape[0]), A_eq=Gs.T, b_eq=np.zeros(Gs.shape[1]),
                  bounds=list(zip(lo, [None] * lo.size)), method="highs")
    return res.x if res.status == 0 else None


def _basis(F: list[list[Fraction]], w: np.ndarray, rank: int) -> tuple[list[int], list[int]]:
    """``rank`` rows independent in exact arithmetic, those of the dependency first (largest
    multipliers first), and pivot columns on which they are: the rows whose multipliers the exact
    repair solves for, and the equations it solves.  Near-parallel rows of the dependency (apart by
    1e-9 on near-duplicate data) must both be eligible, and exactly parallel ones never (a float rank
    of computed coordinates tells neither apart)."""
    out: list[int] = []
    echelon: list[tuple[int, list[Fraction]]] = []  # (pivot column, reduced row)
    for k in np.lexsort((-w, w == 0)).tolist():
        v = F[k][:]
        for c, e in echelon:
            if v[c] != 0:
                f = v[c] / e[c]
                v = [x - f * y for x, y in zip(v, e)]
        piv = next((c for c, x in enumerate(v) if x != 0), None)
        if piv is not None:
            echelon.append((piv, v))
            out.append(k)
        if len(out) == rank:
            break
    return out, [c for c, _ in echelon]


def positive_dependency(Phi: np.ndarray, Psi: np.ndarray, signs: np.ndarray, zero: np.ndarray,
                        rank: int) -> tuple[np.ndarray, list[Fraction]] | None:
    """``(rows, y)``: exact ``y > 0`` with ``sum_k y_k signs_k Phi_k = 0`` over ``rows``, every active
    row (``signs > 0``, not ``zero``) among them; None when the LP or the exact repair finds none.
    ``Psi``: an orthonormal basis of ``col(Phi)`` (``Phi = Psi C``), where the LP is solved."""
    rows = np.flatnonzero(~zero & (signs != 0))
    norms = pow2_norms(Psi[rows], axis=1)  # a nonzero row below 2^-537 is not zero
    if np.any(norms == 0):
        return None
    Gs = signs[rows, None] * Psi[rows] / norms[:, None]
    active = signs[rows] > 0
    w = _lp(Gs, active)
    if w is None:
        return None
    w = np.where(active | (w > DROP_BELOW * w.max(initial=0.0)), w, 0.0)
    F = [[Fraction(float(x)) * int(signs[k]) for x in Phi[k]] for k in rows.tolist()]
    B, cols = _basis(F, w, rank)
    if len(B) < rank:
        return None
    y = [Fraction(float(v)) for v in w / norms]  # a dependency of the unit rows, in the rows of Psi (and Phi)
    basis = set(B)
    rest = [i for i in range(rows.size) if i not in basis]
    b = [-sum((y[i] * F[i][t] for i in rest if y[i]), Fraction(0)) for t in cols]
    yB = exact_solve([[F[i][t] for i in B] for t in cols], b)
    if yB is None or any(v < 0 or (v == 0 and active[i]) for i, v in zip(B, yB)):
        return None  # (a basis row outside the dependency comes out 0: left out below)
    for i, v in zip(B, yB):
        y[i] = v
    if any(sum(y[i] * F[i][t] for i in range(rows.size) if y[i]) != 0 for t in range(Phi.shape[1])):
        return None  # the columns off the pivots: the same dependency there, exactly, or none
    keep = [i for i in range(rows.size) if y[i] > 0]
    return rows[keep], [y[i] for i in keep]
