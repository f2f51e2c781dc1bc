"""Method ``spectral``: the cone-free top generalized eigenvalue, exact when a
top eigenvector (any point of the top eigenspace plus ``ker B``) is realizable
in the cone."""

from __future__ import annotations

from typing import Any

import numpy as np

from solvers._core import (guarded, EXACT_RTOL, certified_upper, check_flat, check_options, finish,
                    interior_lower)
from solvers._registry import register
from solvers.problem import ConeEigProblem
from solvers.result import ConeEigResult

__all__ = ["solve_spectral"]


@register("spectral")
def solve_spectral(problem: ConeEigProblem, **options: Any) -> ConeEigResult:
    r"""Upper bound by dropping the cone; exact when the bound is attained.

    .. math::

        \lambda^* \le \lambda_{\max}(A, B) \text{ on } \operatorname{span}(C),

    attained iff some ``x = E y + N n`` (``E`` the top eigenspace, ``N``
    spanning ``ker B``, ``y != 0``) satisfies ``G x >= 0``: a numpy check for
    a simple eigenvalue, else an LP.  Otherwise the result is BOUNDED, with
    the quotient at a relative interior point as ``lower``.  No options.

    Where float64 cannot decide (see :mod:`solvers._core`), the same bound
    comes from the verified path: certified by an exact LDL^T test of
    ``u B - A >= 0`` on the certified span of the cone (``+inf`` when ``A``
    does not vanish on ``ker B`` there).

    References
    ----------
    Prop 4.3 (the bound) and Rem 4.4 (realizability LP) of the paper.
    """
    check_options("spectral", options, ())
    return guarded(problem, "spectral", "root", _spectral)


def _spectral(ctx, t0: float) -> ConeEigResult:
    """The float path: the top eigenspace of the whole span, realized in the cone or not."""
    fc = check_flat(ctx, np.eye(ctx.red.dim))
    cert = {"face": [], "eigenvalue": fc.value, "realized": fc.realized}
    upper = fc.upper
    if np.isfinite(upper) and upper - fc.value > EXACT_RTOL * max(abs(fc.value), ctx.vscale) / 10:
        u = certified_upper(ctx, fc.value)  # the a priori allowance is loose: try an exact certificate
        if np.isfinite(u) and u < upper:
            upper, cert["exact_psd_certificate"] = u, True
    if fc.realized:
        return finish(ctx, "spectral", fc.lower, upper, fc.x, cert, t0)
    lo, x = interior_lower(ctx)
    if fc.x is not None and fc.lower > lo:
        lo, x = fc.lower, fc.x
    msg = "top eigenspace not realizable in the cone" if np.isfinite(fc.value) else \
        "A does not vanish on ker B within span(C): no finite cone-free bound"
    return finish(ctx, "spectral", lo, upper, x, cert, t0, msg)
