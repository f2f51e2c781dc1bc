"""Exception tree of :mod:`relu_gating`.

Every error the library raises on purpose derives from :class:`ReluGatingError`,
so a caller can catch the whole family with one ``except`` clause.  Input
errors also derive from :class:`ValueError` and solver failures from
:class:`RuntimeError`, so code written against the standard library still works.
"""

from __future__ import annotations

__all__ = [
    "ReluGatingError",
    "InputError",
    "CheckpointError",
    "ProblemTooLargeError",
    "SolverFailure",
    "CertificateError",
]


class ReluGatingError(Exception):
    """Root of every error raised by :mod:`relu_gating`."""


class InputError(ReluGatingError, ValueError):
    """An argument has the wrong shape, type, value or contents.

    The message always names the offending argument.
    """


class CheckpointError(InputError):
    """A checkpoint file cannot be used: unreadable, or written for another query.

    The message names the file and the reason; the file is left untouched.
    """


class ProblemTooLargeError(ReluGatingError, ValueError):
    """A job would exceed a limit the caller set (for example a pattern budget)."""


class SolverFailure(ReluGatingError, RuntimeError):
    """Every numerical back end failed on a sub-problem."""


class CertificateError(ReluGatingError, ValueError):
    """A certificate is malformed (not merely invalid: see :func:`relu_gating.verify`)."""
