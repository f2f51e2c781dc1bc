"""Exception tree of :mod:`solvers`.

:mod:`solvers` is problem-agnostic and has its own errors (it never imports
:mod:`relu_gating`).  Every error raised on purpose derives from
:class:`ConeEigError`; bad input also derives from :class:`ValueError` and
backend failures from :class:`RuntimeError`, so code written against the
standard library still works.  Backend exceptions are re-raised ``from`` the
original so the traceback keeps the cause.
"""

from __future__ import annotations

__all__ = ["ConeEigError", "ProblemError", "UnknownMethodError", "BackendError", "LPNumericsError"]


class ConeEigError(Exception):
    """Root of every error raised by :mod:`solvers`."""


class ProblemError(ConeEigError, ValueError):
    """An argument has the wrong shape, type or contents; the message names it."""


class UnknownMethodError(ConeEigError, ValueError):
    """A method or backend name is not registered; the message lists the available ones."""


class BackendError(ConeEigError, RuntimeError):
    """Every backend failed on a subproblem (LP or SDP) that could not be skipped."""


class LPNumericsError(BackendError):
    """An LP backend answered with an impossible status (``unbounded`` or ``infeasible`` for
    an LP that is bounded and feasible): float64 cannot decide this cone.  The methods fall
    back on exact arithmetic (:mod:`solvers._verified.core`)."""
