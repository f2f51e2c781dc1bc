"""Cone-constrained generalized eigenvalue problems with certified bounds.

Problem-agnostic numerics (this package never imports :mod:`relu_gating`):

.. math::

    \\lambda^* = \\sup \\{ x^T A x / x^T B x : G x \\ge 0,\\ B x \\ne 0 \\}

with ``A, B`` symmetric PSD (``B`` possibly singular), solved by the methods
of :func:`available_methods` through one front door, :func:`solve`; plus
LP realizability and cone utilities (:func:`realizable`,
:func:`interior_point`, :func:`facet_rows`, :func:`cone_constraints`).

Numerical limits: a cone thinner than the LP tolerances (width below about
1e-9 relative, e.g. rows dependent only to within rounding) is treated as
lower-dimensional, and a pencil whose ``B`` is singular to within rounding on
such a cone can come back INFEASIBLE or BOUNDED with ``upper = -inf`` although
the cone holds points with ``B x != 0``.  Callers that know better (a strict
interior point, a bound that does not depend on ``B``) should check the answer
against it; :mod:`relu_gating` does.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from . import auto_, dnn_, faces_, spectral_  # noqa: F401 - register the methods
from ._registry import available_methods, get_method
from .cone import Realizability, InteriorPoint, cone_constraints, facet_rows, interior_point, realizable
from .dual_ import ConeDual, cone_dual
from .errors import BackendError, ConeEigError, ProblemError, UnknownMethodError
from .problem import ConeEigProblem
from .result import ConeEigResult, Status

__all__ = [
    "ConeEigProblem", "ConeEigResult", "Status", "solve", "available_methods",
    "realizable", "Realizability", "interior_point", "InteriorPoint", "facet_rows", "cone_constraints",
    "ConeEigError", "ProblemError", "UnknownMethodError", "BackendError",
    "cone_dual", "ConeDual",
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
        Status FAILED (``upper = inf``, the error in ``certificate``) when
        every LP backend failed on a step that cannot be skipped; other
        backend failures are recorded in ``certificate["backend_failures"]``.

    Examples
    --------
    >>> import numpy as np, solvers
    >>> P = solvers.ConeEigProblem(np.diag([2.0, 1.0]), np.eye(2), [[-1.0, 0.0], [0.0, 1.0]])
    >>> r = solvers.solve(P, "faces")      # x_0 <= 0, x_1 >= 0: the top eigenvector -e_0 is inside
    >>> r.status.name, round(r.lower, 12), r.is_exact()
    ('EXACT', 2.0, True)
    """
    if not isinstance(problem, ConeEigProblem):
        raise ProblemError(f"problem must be a ConeEigProblem, got {type(problem).__name__}")
    fn = get_method(method)
    t0 = time.perf_counter()
    try:
        return fn(problem, **options)
    except BackendError as exc:
        # every LP/SDP backend failed on a step that cannot be skipped: report, do not crash
        cause = exc.__cause__ or exc.__context__
        return ConeEigResult(-np.inf, np.inf, None, Status.FAILED, method, time.perf_counter() - t0,
                             {"error": str(exc), "cause": repr(cause) if cause else None},
                             f"backend failure: {exc}")
