"""The cone-constrained generalized eigenvalue problem (a Pareto eigenvalue problem)."""

from __future__ import annotations

from dataclasses import dataclass
import weakref
from typing import Any

import numpy as np

from solvers._norms import norm2

from solvers.errors import ProblemError

__all__ = ["ConeEigProblem", "memo"]

#: Per-problem results shared by the methods (the cone reduction, the verified answer), kept
#: outside the frozen problem and dropped with it.
_MEMO: "weakref.WeakKeyDictionary[ConeEigProblem, dict]" = weakref.WeakKeyDictionary()


def memo(problem: "ConeEigProblem") -> dict:
    """The memo dict of ``problem`` (created on first use; the problem itself stays immutable)."""
    d = _MEMO.get(problem)
    if d is None:
        d = _MEMO[problem] = {}
    return d

#: Relative tolerance for symmetry and positive semidefiniteness of A and B.
PSD_RTOL = 1e-9


def _matrix(value: Any, name: str, *, rows: int | None = None, cols: int | None = None) -> np.ndarray:
    try:
        M = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ProblemError(f"{name} must be a real matrix: {exc}") from exc
    if M.ndim != 2:
        raise ProblemError(f"{name} must be 2-dimensional, got shape {M.shape}")
    if rows is not None and M.shape[0] != rows:
        raise ProblemError(f"{name} must have {rows} rows, got shape {M.shape}")
    if cols is not None and M.shape[1] != cols:
        raise ProblemError(f"{name} must have {cols} columns, got shape {M.shape}")
    if not np.all(np.isfinite(M)):
        raise ProblemError(f"{name} contains NaN or inf")
    return M


def _psd(value: Any, name: str, m: int | None) -> np.ndarray:
    M = _matrix(value, name, rows=m, cols=m)
    if M.shape[0] != M.shape[1]:
        raise ProblemError(f"{name} must be square, got shape {M.shape}")
    if M.shape[0] == 0:
        raise ProblemError(f"{name} must be at least 1 x 1")
    scale = float(np.abs(M).max())
    asym = float(np.abs(M - M.T).max())
    if asym > PSD_RTOL * scale:
        raise ProblemError(f"{name} must be symmetric (max |{name} - {name}^T| = {asym:.3g})")
    M = 0.5 * (M + M.T)
    lam_min = float(np.linalg.eigvalsh(M)[0])
    if lam_min < -PSD_RTOL * scale:
        raise ProblemError(f"{name} must be positive semidefinite (smallest eigenvalue {lam_min:.3g})")
    return M


@dataclass(frozen=True, eq=False)
class ConeEigProblem:
    r"""Maximize a generalized Rayleigh quotient over a polyhedral cone.

    .. math::

        \lambda^* = \sup \Big\{ \frac{x^T A x}{x^T B x} :\; G x \ge 0,\; B x \ne 0 \Big\}

    (the largest Pareto eigenvalue of the pencil ``(A, B)`` on the cone
    ``C = {x : G x >= 0}``, Seeger 1999).

    Parameters
    ----------
    A : array_like, shape (m, m)
        Symmetric positive semidefinite numerator.
    B : array_like, shape (m, m)
        Symmetric positive semidefinite denominator, possibly singular.
    G : array_like, shape (p, m)
        Cone rows; ``p = 0`` is allowed (no constraint).
    interior : array_like, shape (m,), optional
        A point believed to satisfy ``G x > 0`` strictly (a pattern's witness,
        say).  Only a speed hint: it is checked, and ignored if not strictly
        inside; it saves the interior-point LP.

    Raises
    ------
    ProblemError
        Naming the argument: wrong shape, NaN/inf, not symmetric or not PSD
        (relative tolerance ``1e-9``).  ``A`` and ``B`` are symmetrized.

    References
    ----------
    Prop 4.3 and Rem 4.4 of the paper (bound and realizability LP); SPEC 3.2.
    """

    A: np.ndarray
    B: np.ndarray
    G: np.ndarray
    interior: np.ndarray | None = None

    def __post_init__(self) -> None:
        A = _psd(self.A, "A", None)
        m = A.shape[0]
        B = _psd(self.B, "B", m)
        G = self.G
        if np.size(G) == 0 and np.ndim(G) in (1, 2):
            G = np.zeros((0, m))
        G = _matrix(G, "G", cols=m)
        for name, M in (("A", A), ("B", B), ("G", G)):
            M.setflags(write=False)
            object.__setattr__(self, name, M)
        if self.interior is not None:
            x = np.array(self.interior, dtype=float).reshape(-1)
            if x.shape != (m,) or not np.all(np.isfinite(x)):
                raise ProblemError(f"interior must be a finite vector of length {m}, got shape {x.shape}")
            x.setflags(write=False)
            object.__setattr__(self, "interior", x)

    @property
    def m(self) -> int:
        """Dimension of ``x``."""
        return self.A.shape[0]

    @property
    def p(self) -> int:
        """Number of cone rows."""
        return self.G.shape[0]

    def quotient(self, x: Any) -> float:
        """``x^T A x / x^T B x`` recomputed with numpy (``nan`` when ``x^T B x = 0``)."""
        x = np.asarray(x, dtype=float)
        den = float(x @ self.B @ x)
        return float(x @ self.A @ x) / den if den > 0 else float("nan")

    def violation(self, x: Any) -> float:
        """Largest ``max(0, -(G x)_i / ||G_i||)`` over the rows, for ``||x|| = 1``."""
        x = np.asarray(x, dtype=float)
        if self.p == 0:
            return 0.0
        nrm = norm2(self.G, axis=1)
        nrm = np.where(nrm > 0, nrm, 1.0)
        return float(max(0.0, (-(self.G @ x) / nrm).max() / max(norm2(x), 1e-300)))
