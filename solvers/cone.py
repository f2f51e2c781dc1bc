"""Polyhedral cone utilities: LP realizability, interior points, facet rows,
and the cone as a cvxpy constraint set."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from solvers._norms import norm2

from solvers._reduction import _normalize, implicit_equalities, reduce_cone
from solvers._lp import LP_BACKENDS, solve_lp
from solvers.errors import BackendError, ProblemError
from solvers.problem import _matrix

__all__ = ["Realizability", "realizable", "InteriorPoint", "interior_point", "facet_rows", "cone_constraints"]


@dataclass(frozen=True)
class Realizability:
    """Answer of :func:`realizable`.

    ``feasible`` is decided by HiGHS (never by ECOS/SCS) and ``x`` re-checked
    with numpy: ``residual`` is its largest constraint violation.
    ``failures`` records backends that failed before the deciding one.
    """

    feasible: bool
    x: np.ndarray | None
    residual: float
    backend: str
    failures: tuple[str, ...] = ()


def realizable(A_eq: Any, b_eq: Any = None, A_in: Any = None, *, sense: str = "<=", margin: float = 0.0,
               backends: tuple[str, ...] = LP_BACKENDS) -> Realizability:
    r"""Is there ``x`` with ``A_eq x = b_eq`` and ``A_in x <= -margin`` (or ``>= margin``)?

    .. math::

        \exists x:\; A_{eq} x = b_{eq},\quad A_{in} x \le -\mu\ (\text{sense} = \text{"<="})
        \ \text{or}\ A_{in} x \ge \mu\ (\text{sense} = \text{">="}).

    Parameters
    ----------
    A_eq : array_like, shape (k, m)
        Equality rows (``k = 0`` allowed: pass ``np.zeros((0, m))``).
    b_eq : array_like, shape (k,), optional
        Right-hand side (zeros by default).
    A_in : array_like, shape (q, m), optional
        Inequality rows.
    sense : {"<=", ">="}
    margin : float
        Required slack ``mu >= 0`` of the inequalities.
    backends : tuple of str
        LP backends tried in order (default HiGHS direct, SciPy, cvxpy/Clarabel).

    Returns
    -------
    Realizability

    References
    ----------
    Rem 4.4 of the paper (realizability of an eigenvector in a cone).
    """
    A_eq = _matrix(A_eq, "A_eq")
    m = A_eq.shape[1]
    b = np.zeros(A_eq.shape[0]) if b_eq is None else np.asarray(b_eq, dtype=float).reshape(-1)
    if b.shape != (A_eq.shape[0],) or not np.all(np.isfinite(b)):
        raise ProblemError(f"b_eq must be a finite vector of length {A_eq.shape[0]}, got shape {b.shape}")
    A_in = np.zeros((0, m)) if A_in is None else _matrix(A_in, "A_in", cols=m)
    if sense not in ("<=", ">="):
        raise ProblemError(f"sense must be '<=' or '>=', got {sense!r}")
    if not (np.isfinite(margin) and margin >= 0):
        raise ProblemError(f"margin must be finite and >= 0, got {margin}")
    q = A_in.shape[0]
    A = np.vstack([A_eq, A_in])
    if sense == "<=":
        rl, ru = np.r_[b, np.full(q, -np.inf)], np.r_[b, np.full(q, -margin)]
    else:
        rl, ru = np.r_[b, np.full(q, margin)], np.r_[b, np.full(q, np.inf)]
    inf = np.full(m, np.inf)
    sol = solve_lp(np.zeros(m), A, rl, ru, -inf, inf, backends=backends)
    if sol.status == "error":
        raise BackendError("every LP backend failed: " + "; ".join(sol.failures))
    if sol.status != "optimal":
        return Realizability(False, None, np.inf, sol.backend, sol.failures)
    x = sol.x
    ax = A @ x
    res = float(np.max(np.r_[np.abs(ax[:len(b)] - b), np.maximum(rl - ax, 0)[len(b):],
                             np.maximum(ax - ru, 0)[len(b):], 0.0]))
    return Realizability(True, x, res, sol.backend, sol.failures)


@dataclass(frozen=True)
class InteriorPoint:
    """Answer of :func:`interior_point`.

    ``x`` maximizes the margin ``min_i G_i x / ||G_i||`` over ``||x||_inf <= 1``
    (a float LP: a proposal); ``relative_x`` is a relative interior point (unit
    norm) strictly inside every row except the ``implicit_equalities`` (row
    indices), and ``dim`` the cone's dimension.  Decided exactly (issue 23):
    ``implicit_equalities`` are only rows certified by an exact positive
    dependence, so ``dim`` is an upper bound on the dimension; ``certified``
    says that it is the dimension (an exact relative interior point was found;
    ``relative_x`` is its rounding).
    """

    x: np.ndarray
    margin: float
    relative_x: np.ndarray
    implicit_equalities: np.ndarray
    dim: int
    certified: bool = False


def interior_point(G: Any) -> InteriorPoint:
    r"""Max-margin point of ``{x : G x >= 0}``, and its relative interior.

    .. math::

        \max_{x, t}\ t \quad \text{s.t.}\quad G_i x / \|G_i\| \ge t,\ \|x\|_\infty \le 1,\ t \le 1.

    Parameters
    ----------
    G : array_like, shape (p, m)
    """
    G = _matrix(G, "G")
    m = G.shape[1]
    Gn, rows = _normalize(G)
    q = Gn.shape[0]
    if q == 0:
        return InteriorPoint(np.zeros(m), np.inf, np.zeros(m), np.zeros(0, dtype=int), m)
    A = np.hstack([Gn, -np.ones((q, 1))])
    c = np.r_[np.zeros(m), -1.0]
    sol = solve_lp(c, A, np.zeros(q), np.full(q, np.inf), np.r_[-np.ones(m), -np.inf], np.r_[np.ones(m), 1.0])
    if sol.status != "optimal":
        raise BackendError("margin LP failed: " + "; ".join(sol.failures or (sol.status,)))
    x = sol.x[:m]
    eq, xr, _, _ = implicit_equalities(Gn)
    from solvers._exact import fr_matrix
    from solvers._verified.cone import exact_cone

    guess = np.zeros(G.shape[0], dtype=bool)
    guess[rows[eq]] = True
    cone = exact_cone(fr_matrix(G), G, [x, xr], guess, floats=True)
    if cone.p is not None:  # an exact relative interior point: the dimension is certified
        p = np.array([float(v) for v in cone.p])
        xr = p / max(norm2(p), 1e-300)
    return InteriorPoint(x, float((Gn @ x).min()), xr, np.array(sorted(cone.eq), dtype=int), len(cone.span),
                         cone.p is not None)


def facet_rows(G: Any) -> np.ndarray:
    """Indices of the rows of ``G`` that define facets of ``{x : G x >= 0}``.

    One row per facet (duplicates and positive multiples dropped), excluding
    implicit equalities and zero rows.  Facets are the extreme rays of the
    dual cone, found with qhull (an LP per row if qhull fails).

    Parameters
    ----------
    G : array_like, shape (p, m)

    Returns
    -------
    ndarray of int
    """
    G = _matrix(G, "G")
    red = reduce_cone(G)
    return np.sort(red.rows[red.facets])


def cone_constraints(G: Any, x: Any) -> list:
    """The cone ``G x >= 0`` as a list of cvxpy constraints on the variable or expression ``x``."""
    G = _matrix(G, "G")
    return [G @ x >= 0] if G.shape[0] else []
