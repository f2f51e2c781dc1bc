"""Cone-constrained generalized eigenvalue problems with certified bounds.

Problem-agnostic numerics (this package never imports :mod:`relu_gating`):

.. math::

    \\lambda^* = \\sup \\{ x^T A x / x^T B x : G x \\ge 0,\\ B x \\ne 0 \\}

with ``A, B`` symmetric PSD (``B`` possibly singular), solved by the methods
of :func:`available_methods` through one front door, :func:`solve`; plus
LP realizability and cone utilities (:func:`realizable`,
:func:`interior_point`, :func:`facet_rows`, :func:`cone_constraints`).
"""

from __future__ import annotations

import time
from typing import Any

from . import auto_, dnn_, faces_, spectral_  # noqa: F401 - register the methods
from ._registry import available_methods, get_method
from .cone import Realizability, InteriorPoint, cone_constraints, facet_rows, interior_point, realizable
from .errors import BackendError, ConeEigError, ProblemError, UnknownMethodError
from .problem import ConeEigProblem
from .result import ConeEigResult, Status

__all__ = [
    "ConeEigProblem", "ConeEigResult", "Status", "solve", "available_methods",
    "realizable", "Realizability", "interior_point", "InteriorPoint", "facet_rows", "cone_constraints",
    "ConeEigError", "ProblemError", "UnknownMethodError", "BackendError",
]


def solve(problem: ConeEigProblem, method: str = "auto", **options: Any) -> ConeEigResult:
    """Solve a :class:`ConeEigProblem` with the named method.

    Parameters
    ----------
    problem : ConeEigProblem
    method : str
        One of :func:`available_methods` (``"auto"``, ``"dnn"``, ``"faces"``,
        ``"spectral"``); an unknown name raises :class:`UnknownMethodError`
        listing them.
    **options
        Method options (for instance ``max_flats`` for ``faces``,
        ``solver`` for ``dnn``); unknown options raise :class:`ProblemError`.

    Returns
    -------
    ConeEigResult
    """
    if not isinstance(problem, ConeEigProblem):
        raise ProblemError(f"problem must be a ConeEigProblem, got {type(problem).__name__}")
    fn = get_method(method)
    t0 = time.perf_counter()
    res = fn(problem, **options)
    return res
