"""Method ``auto``: ``spectral`` first, then ``faces`` for small dimension,
``dnn`` with a ``faces`` fallback above."""

from __future__ import annotations

import time
from typing import Any

from solvers._core import check_options, fallback, finish, prepare
from solvers._registry import register
from solvers.methods.dnn import solve_dnn
from solvers.methods.faces import solve_faces
from solvers.problem import ConeEigProblem
from solvers.result import ConeEigResult
from solvers.methods.spectral import solve_spectral

__all__ = ["solve_auto", "FACES_MAX_DIM"]

#: Cone dimension up to which ``faces`` is run directly.
FACES_MAX_DIM = 6


@register("auto")
def solve_auto(problem: ConeEigProblem, *, max_flats: int = 200_000, max_seconds: float | None = None,
               **options: Any) -> ConeEigResult:
    """Cheapest exact answer: ``spectral``; then ``faces`` when ``dim(span C) <= 6``;
    otherwise ``dnn``, and ``faces`` (budgets ``max_flats``, ``max_seconds``) if the DNN gap is open.

    The combined result takes the best ``lower`` and the smallest ``upper``
    of its steps (each rigorous); ``certificate["steps"]`` lists them.
    Where float64 cannot decide, the verified path (:mod:`solvers._verified.core`).
    """
    check_options("auto", options, ())
    t0 = time.perf_counter()
    ctx = prepare(problem)
    if ctx.fragile:
        return fallback(ctx, "auto", "faces", t0)
    steps = [solve_spectral(problem)]
    if not steps[-1].is_exact():
        if ctx.red.dim <= FACES_MAX_DIM:
            steps.append(solve_faces(problem, max_flats=max_flats, max_seconds=max_seconds))
        else:
            steps.append(solve_dnn(problem))
            if not steps[-1].is_exact():
                steps.append(solve_faces(problem, max_flats=max_flats, max_seconds=max_seconds))
    best = max(steps, key=lambda r: r.lower)
    upper = min(r.upper for r in steps)
    cert = dict(steps[-1].certificate)
    cert["steps"] = [{"method": r.method, "lower": r.lower, "upper": r.upper, "status": r.status.value,
                      "seconds": r.seconds} for r in steps]
    last = steps[-1]
    msgs = f"{last.method}: {last.message}" if last.message else ""
    return finish(ctx, "auto", best.lower, upper, best.x, cert, t0, msgs)
