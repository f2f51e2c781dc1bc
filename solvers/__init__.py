"""Cone-constrained generalized eigenvalue problems with certified bounds.

Problem-agnostic numerics (this package never imports :mod:`relu_gating`):

.. math::

    \\lambda^* = \\sup \\{ x^T A x / x^T B x : G x \\ge 0,\\ B x \\ne 0 \\}

with ``A, B`` symmetric PSD (``B`` possibly singular), solved by the methods
of :func:`available_methods` through one front door, :func:`solve`; plus
LP realizability and cone utilities (:func:`realizable`,
:func:`interior_point`, :func:`facet_rows`, :func:`cone_constraints`).

Soundness: a bound is a promise for the input floats read as exact rationals.
No method returns INFEASIBLE for a cone with an interior point, UNBOUNDED
without an exact ray, or an upper bound below the optimum.  Inputs are
equilibrated (unit rows of ``G``, ``A`` and ``B`` scaled by powers of two, an
orthonormal basis of the cone's span); where float64 cannot decide (thin or
lower-dimensional cones, ambiguous face lattices, ``B`` singular along
directions the cone sees), every method falls back on exact arithmetic
(:mod:`solvers._verified.core`: certified implicit equalities, exact LDL^T
certificates of every bound, exact witnesses) and says so in
``certificate["fragile"]``; what cannot be certified is reported loosely
(BOUNDED, or FAILED with ``upper = inf``), never wrongly.  A float may accept
(with a rigorous error bound), never decide: implicit equalities, kernels of
``B`` and realizability behind an EXACT status are decided exactly (see
docs/solvers.md).  There is no kernel convention: a ``B`` that is singular only
to rounding is not singular (read as exact rationals it may even be indefinite,
and then the honest answer is ``upper = inf``).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

import solvers.methods  # noqa: F401 - registers the methods
from solvers._registry import available_methods, get_method
from solvers._exact import matmul2, nullspace as exact_nullspace, solve_exact as exact_solve
from solvers._lp import quiet_highs
from solvers.cone import Realizability, InteriorPoint, cone_constraints, facet_rows, interior_point, realizable
from solvers.dual import ConeDual, cone_dual
from solvers.batched import BatchedEig, sym_eigmax_small, top_generalized_eig
from solvers.errors import BackendError, ConeEigError, ProblemError, UnknownMethodError
from solvers.problem import ConeEigProblem
from solvers.result import ConeEigResult, Status

__all__ = [
    "ConeEigProblem", "ConeEigResult", "Status", "solve", "available_methods",
    "realizable", "Realizability", "interior_point", "InteriorPoint", "facet_rows", "cone_constraints",
    "ConeEigError", "ProblemError", "UnknownMethodError", "BackendError",
    "cone_dual", "ConeDual", "top_generalized_eig", "BatchedEig", "sym_eigmax_small",
    "exact_nullspace",
    "exact_solve", "matmul2", "quiet_highs",
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
