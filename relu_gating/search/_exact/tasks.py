"""Pure per-chunk work of the search (private): bounds and exact solves.

Both functions take an :class:`~relu_gating.objectives.Objective` and a slice
of the pattern set and return a :class:`~relu_gating._search_state.PatternOutcome`.
They touch no global state, so they can be shipped to worker processes or a
Dask cluster (send chunks of hundreds of patterns: a Dask task costs ~5 ms).
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np

from relu_gating.search._kernels import bound as kernel
from relu_gating.search._exact.polish import polish_theta
from relu_gating.search._exact.coords import gram_problem, pattern_problem as _pattern_problem
from relu_gating.coverage.metrics import orthonormal_basis
from relu_gating.search._kernels.wedge import wedge_settle
from relu_gating.search._exact.evidence import EVIDENCE_RTOL, dual_evidence as _dual_evidence, dual_prune
from relu_gating.search.state import BOUND, EXACT, PRUNED, UNSETTLED, PatternOutcome
from relu_gating.search.objectives import (EXCLUDE_RTOL, Objective, neuron_values, support_bounds,
                                           vector_values)

__all__ = ["chunk_bounds", "solve_chunk", "solve_one", "dual_settle", "prune_target", "FALLBACK_METHODS"]

#: Exact methods tried in turn when the requested one fails on a pattern.
FALLBACK_METHODS = ("faces", "dnn")
#: The solver methods that take a time budget (``max_seconds``).
TIMED_METHODS = ("auto", "faces")

#: Singular values of the active rows ``S Psi`` below this (relative) span ``null(S Psi)``.
ACTIVE_RANK_RTOL = 1e-12

#: Chunks with at most this many (pattern, sample) pairs check every pattern for an attained
#: bound (Rem 4.4), not only those reaching the chunk's best incumbent.
ALL_ATTAINED_WORK = 1 << 18

#: From this many columns of ``Phi`` on, a candidate pattern first tries to fall below the incumbent
#: (over alpha) by dual evidence alone (one small SDP, :func:`~relu_gating.search._exact.evidence.dual_prune`)
#: before its exact solve (``benchmarks/dual_first.py``: the exact phase 3x faster at m = 3 and 4,
#: up to 10x at m >= 7, where an exact solve costs 10 ms to seconds and the SDP 2-20 ms).
DUAL_FIRST_MIN_M = 3

#: The bound pass certifies ``lambda_max <= incumbent - CUT_BELOW`` directly where it can (such a
#: pattern can never matter: below the ``2e-9`` slack of the attained check), see
#: :func:`relu_gating.search._kernels.bound.pencil_bounds`.
CUT_BELOW = 4e-9

#: A solver's upper bound below a pattern's strict witness value by more than this is rejected.
WITNESS_RTOL = 1e-9


def chunk_bounds(obj: Objective, index: np.ndarray, masks: np.ndarray, witnesses: np.ndarray, tol: float,
                 incumbent: float = -np.inf, mirrored: bool = False) -> PatternOutcome:
    """Cheap upper bounds, witness values and attained bounds for a chunk.

    ``masks`` is either bool (k, n) or ``np.packbits(masks, axis=1)`` (uint8,
    k x ceil(n / 8)); see :func:`relu_gating.search._kernels.bound.unpacked`.

    The bound of a pattern is the smallest of the global cap (``1`` or
    ``s_K(H)^2``), the Prop 4.1 leverage bound (``N_K``; its analogue
    :func:`~relu_gating.objectives.support_bounds` for ``G_H`` where ``B_S`` is
    ill-conditioned) and a rigorous upper bound on the unconstrained top
    generalized eigenvalue of ``(A_S, B_S)`` (Prop 4.3), computed by
    :mod:`relu_gating.search._kernels.bound` (one GEMM, closed-form estimates,
    acceptance by a verified Cholesky factorization).  The patterns whose bound
    reaches the chunk's best incumbent (all of them in a chunk of at most
    ``ALL_ATTAINED_WORK`` pattern-samples) get a tight bound and a top eigenvector;
    where it lies in the closed cone ``C_S`` the bound is attained (Rem 4.4) and
    the pattern is settled exactly on the spot.  The others can never be opened
    (the best value only grows), so their screening bound suffices.  ``incumbent``
    (an attained value known beforehand, :mod:`relu_gating.search._exact.pilot`) raises
    that threshold: near the optimum, only a few percent are tightened, and every pattern
    whose pencil provably stays below ``incumbent - CUT_BELOW`` is given that bound by one
    verified Cholesky factorization, without an estimate of its own (a valid bound, not
    that pattern's tightest: such a pattern can never matter).  ``mirrored``: the second half of
    the chunk is the first half's complement (:func:`relu_gating.search._kernels.mirror.chunk_rows`; checked
    on the masks): the masked products of both from one GEMM.
    """
    k = index.size
    masks, packed = kernel.unpacked(masks, obj.n)
    cut = float(incumbent) - CUT_BELOW if np.isfinite(incumbent) and not _tightens_all(obj, k) else -np.inf
    pb = kernel.pencil_bounds(obj, kernel.make_plan(obj), masks, packed, cut, mirrored)
    upper = np.minimum(np.minimum(pb.leverage, pb.upper), obj.cap + 1e-12)
    if obj.Q_H is not None and not np.all(pb.reliable):  # B_S ill-conditioned: bound by the support
        bad = np.flatnonzero(~pb.reliable)
        upper[bad] = np.minimum(upper[bad], support_bounds(obj, kernel.rows_bool(masks, packed, obj.n, bad)))
    # incumbents: witnesses lie inside their cones, so the pencil gives their value
    lower = np.where(pb.reliable, kernel.quotients(pb.A, pb.B, obj.to_coords @ witnesses.T), np.nan)
    thetas = witnesses.copy()
    status = np.full(k, UNSETTLED, dtype=np.int8)
    methods = [""] * k
    threshold = max(_verified_best(obj, lower, thetas), float(incumbent))
    if obj.rank:
        _attained(obj, pb, masks, packed, upper, lower, thetas, status, methods, threshold, tol)
    _drop_excluded(obj, lower, thetas, status, methods)
    # the all-inactive pattern holds only h = 0: excluded, nothing to bound
    dead = pb.active == 0
    upper = np.where(dead, 0.0, upper)
    status[dead] = PRUNED
    for r in np.flatnonzero(dead).tolist():
        methods[r] = "dead"
    return PatternOutcome(index=index, upper=upper, lower=lower, thetas=thetas, status=status, method=tuple(methods))


def _tightens_all(obj: Objective, k: int) -> bool:
    """A chunk of ``k`` patterns small enough that every pattern is tightened (as cheap as deciding
    which): no threshold, and no cut."""
    return k * obj.n <= ALL_ATTAINED_WORK


def _verified_best(obj: Objective, lower: np.ndarray, thetas: np.ndarray) -> float:
    """The chunk's best incumbent value, recomputed from ``relu(Phi theta)`` (in place: the
    recomputed values replace the pencil values of the incumbents checked)."""
    checked = np.zeros(lower.size, dtype=bool)
    while True:
        vals = np.where(np.isnan(lower), -np.inf, lower)
        if vals.size == 0 or not np.isfinite(vals.max()):
            return -np.inf
        top = int(np.argmax(vals))
        if checked[top]:
            return float(vals[top])
        cand = np.argpartition(-vals, 7)[:8] if vals.size > 8 else np.arange(vals.size)  # the top 8, any order
        cand = cand[np.isfinite(vals[cand]) & ~checked[cand]]
        lower[cand] = neuron_values(obj, thetas[cand])
        checked[cand] = True


def _attained(obj: Objective, pb: Any, masks: np.ndarray, packed: bool, upper: np.ndarray, lower: np.ndarray,
              thetas: np.ndarray, status: np.ndarray, methods: list[str], threshold: float, tol: float) -> None:
    """The patterns whose bound reaches ``threshold`` (in place): a tight bound, and Rem 4.4: a
    top eigenvector (either sign) inside the closed cone is a value, with a tight bound it
    settles the pattern."""
    if _tightens_all(obj, upper.size):
        threshold = -np.inf
    rows = np.flatnonzero(pb.reliable & pb.chol_ok & (upper >= threshold - 2e-9))
    if rows.size == 0:
        return
    tight, x, vals = kernel.tighten(pb, rows)
    upper[rows] = np.minimum(upper[rows], tight)
    slow = np.flatnonzero((upper[rows] >= threshold - 2e-9) & ~(upper[rows] - vals <= 0.5 * tol))
    if slow.size:  # the power steps had not converged (small gap): more, for a bound tight to ~1e-4
        tight, x[:, slow], vals[slow] = kernel.tighten(pb, rows[slow], kernel.MID_SQUARINGS)
        upper[rows[slow]] = np.minimum(upper[rows[slow]], tight)
    sign, near = np.zeros(rows.size), np.zeros(rows.size, dtype=bool)
    live = np.flatnonzero(upper[rows] >= threshold - 2e-9)  # the others fell below: nothing to settle
    sign[live], near[live] = _cone_sign(obj, x[:, live], masks, packed, rows[live])
    slow = np.flatnonzero(near & (upper[rows] >= threshold - 2e-9) & ~(upper[rows] - vals <= 0.5 * tol))
    if slow.size:  # near the cone but not tight yet: many more, then look again
        tight, x[:, slow], vals[slow] = kernel.tighten(pb, rows[slow], kernel.REFINE_SQUARINGS)
        upper[rows[slow]] = np.minimum(upper[rows[slow]], tight)
        sign[slow], _ = _cone_sign(obj, x[:, slow], masks, packed, rows[slow])
    inside = np.flatnonzero((sign != 0) & np.isfinite(vals))
    at = rows[inside]
    better = vals[inside] > np.nan_to_num(lower[at], nan=-np.inf)
    lower[at[better]] = vals[inside][better]
    thetas[at[better]] = sign[inside][better, None] * (x[:, inside[better]].T @ obj.to_theta.T)
    done = at[upper[at] - vals[inside] <= 0.5 * tol]  # else leave it to an exact solve
    status[done] = EXACT
    for r in done.tolist():
        methods[r] = "spectral"


def _cone_sign(obj: Objective, x: np.ndarray, masks: np.ndarray, packed: bool,
               rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pattern ``rows``: +1 / -1 where ``x`` / ``-x`` lies in the closed cone (to ``1e-12``
    relative), else 0; and whether one of them is within ``1e-3`` relative of it."""
    lo, hi, scale = kernel.cone_sides(obj.Psi, x, masks, packed, rows)
    sign = np.where(lo >= -1e-12 * scale, 1.0, np.where(hi <= 1e-12 * scale, -1.0, 0.0))
    return sign, (lo >= -1e-3 * scale) | (hi <= 1e-3 * scale)


def _drop_excluded(obj: Objective, lower: np.ndarray, thetas: np.ndarray, status: np.ndarray,
                   methods: list[str]) -> None:
    """A value read off a pencil counts only if the neuron itself is admissible (not ``h`` in
    ``col(H)``): checked, in place, for the values that are used, the patterns settled on the
    spot and the chunk's best incumbent (the only one a merge keeps)."""
    checked = np.zeros(lower.size, dtype=bool)
    while True:
        cand = np.flatnonzero((status == EXACT) & ~checked & ~np.isnan(lower))
        vals = np.where(np.isnan(lower) | checked, -np.inf, lower)
        top = int(np.argmax(vals)) if vals.size else -1
        if top >= 0 and np.isfinite(vals[top]):
            cand = np.union1d(cand, [top])
        if cand.size == 0:
            return
        checked[cand] = True
        bad = cand[np.isnan(neuron_values(obj, thetas[cand]))]
        lower[bad] = np.nan
        for r in bad[status[bad] == EXACT].tolist():
            status[r], methods[r] = UNSETTLED, ""
        if bad.size == 0 or top not in bad:
            return


def _single_class_value(obj: Objective, mask: np.ndarray) -> float | None:
    """Closed form when all active rows are identical: ``h`` is then a multiple of ``1_A``.

    Returns the (constant) objective over the cone, ``nan`` if excluded, or
    None when the active rows differ.
    """
    rows = obj.Phi[mask]
    if rows.shape[0] == 0 or not np.all(rows == rows[0]):
        return None
    return float(vector_values(obj, mask.astype(float)[:, None])[0])


def _all_excluded(obj: Objective, mask: np.ndarray) -> bool:
    """Every neuron of the pattern lies in ``col(H)`` (to ``EXCLUDE_RTOL``): nothing admissible.

    Decided on an orthonormal basis ``Q`` of ``col(S Phi)``: all are excluded
    iff ``||(I - Pi_H) Q||_2 <= EXCLUDE_RTOL``.  (Without features only
    ``h = 0`` is excluded, which a realized pattern with an active row never
    forces.)
    """
    if obj.Q_H is None:
        return False
    Q = orthonormal_basis(obj.Psi * mask[:, None], name="S Phi")
    if Q.shape[1] == 0:
        return True
    return bool(np.linalg.norm(Q - obj.Q_H @ (obj.Q_H.T @ Q), 2) <= EXCLUDE_RTOL)


class _Solved(NamedTuple):
    """One pattern's exact solve: its bound, best neuron, settlement and evidence."""

    upper: float
    lower: float
    theta: np.ndarray
    status: int
    method: str
    note: str = ""
    evidence: tuple[np.ndarray, np.ndarray] | None = None


def _below_witness(got: tuple[float, Any] | None, w_val: float) -> bool:
    """Dual evidence ``got = (upper, (rows, N))`` whose bound lies below the value of the pattern's own
    strict witness: refuted by that neuron (a float SDP's multipliers at the ends of the float range,
    seed 51 of ``benchmarks/float_range_sweep.py``: 0.0059 claimed, the witness 0.31), so not taken as
    settling the pattern; it is solved instead, where its neuron may be found."""
    return got is not None and bool(w_val > got[0] + WITNESS_RTOL)


def _by_evidence(got: tuple[float, tuple[np.ndarray, np.ndarray]], w_val: float, theta0: np.ndarray) -> _Solved:
    """A pattern settled by dual evidence ``got = (upper, (rows, N))`` before any exact solve; its
    value is its witness's."""
    return _Solved(got[0], w_val, theta0, BOUND, "dual-first", "", got[1])


def _settle_exact(obj: Objective, mask: np.ndarray, value: float, theta: np.ndarray, method: str,
                  witness: np.ndarray, prob: tuple | None = None, facets: np.ndarray | None = None) -> _Solved:
    """An exact per-pattern value turned into a claim the verifier can check (dual evidence)."""
    A, B, G, T, Ti = _pattern_problem(obj, mask) if prob is None else prob
    rows = np.flatnonzero(np.any(obj.Phi != 0, axis=1))
    upper, evidence = _dual_evidence(A, B, G, rows, value, [Ti @ (obj.to_coords @ t) for t in (theta, witness)],
                                     facets)
    if not upper <= value + EVIDENCE_RTOL * max(abs(value), 1e-300):  # also the Gram pencil: keep the tighter
        Ag, Bg, Gg, Tg = gram_problem(obj, mask)
        ug, eg = _dual_evidence(Ag, Bg, Gg, rows, value, [Tg.T @ (obj.to_coords @ t) for t in (theta, witness)])
        upper, evidence = (ug, eg) if eg is not None and ug < upper else (upper, evidence)
    return _Solved(upper, value, theta, EXACT, method, "", evidence)


def _try_method(obj: Objective, problem: Any, mth: str, w_val: float,
                max_seconds: float | None = None) -> tuple[Any, str]:
    """One solver run checked against what is known independently: (result, why it was rejected).
    ``max_seconds``: the time budget of the methods that take one (``TIMED_METHODS``)."""
    import solvers

    opts = {"max_seconds": max_seconds} if max_seconds is not None and mth in TIMED_METHODS else {}
    try:
        res = solvers.solve(problem, method=mth, **opts)
    except (solvers.ConeEigError, np.linalg.LinAlgError, ValueError, ArithmeticError) as exc:
        return None, f"{mth}: {type(exc).__name__}: {exc}"
    if res.status == solvers.Status.INFEASIBLE:
        return None, f"{mth}: claimed infeasible, but B_S does not vanish on this full-dimensional cone"
    if res.status not in (solvers.Status.EXACT, solvers.Status.BOUNDED) or res.x is None \
            or not np.isfinite(res.upper):
        return None, f"{mth}: status {res.status.value} ({res.message})"
    if not np.isnan(w_val) and w_val > res.upper + WITNESS_RTOL:
        return None, f"{mth}: upper bound {res.upper!r} below the witness value {w_val!r}"
    if res.status != solvers.Status.EXACT:
        return None, f"{mth}: bounded only (gap {res.upper - res.lower:.2e})"
    return res, ""


def solve_one(obj: Objective, mask: np.ndarray, method: str, witness: np.ndarray | None = None,
               target: float = np.inf, two_row: bool = True, max_seconds: float | None = None,
               near: np.ndarray | None = None) -> _Solved:
    """Exact solve of one pattern with fallbacks, or (with a strict ``witness``, ``m >=
    DUAL_FIRST_MIN_M``) its settlement by dual evidence at most ``target`` before any solve:
    two-row evidence (:mod:`relu_gating.search._kernels.wedge`; unless ``two_row`` is False, the
    caller having tried it for a batch), then one small SDP.

    A solver's answer is checked against what is known independently: the
    cone of a realized pattern is full-dimensional, so "infeasible" (the cone
    lies in ``ker B_S``) would mean ``B_S = 0``, which is decided here first
    (:func:`_all_excluded`), never taken from a solver; and the value
    of the pattern's strict witness must not exceed the reported upper bound.
    An inconsistent answer counts as a failure and the next method is tried.
    An exact value is returned with dual evidence (:func:`_dual_evidence`).

    ``near`` (a neuron, without a strict ``witness`` only): a point on or near the pattern's cone (the
    float LP's deepest point of a sliver, :meth:`relu_gating.search.bnb._chamber.Chambers._near`) whose
    tightest rows choose the rows of that evidence; it is not a witness (it may lie just outside the
    cone), so nothing is compared with its value.  Any rows give a valid bound.

    ``max_seconds`` bounds the solver methods' time (the face enumeration stops between levels; a
    method is not started past it): the pattern then falls back to its dual bound with evidence
    (:func:`_dual_fallback`, valid but weaker), or to its cheap bound.  Not bounded: the verified
    path the solvers take where float64 cannot decide, and the dual fallback itself.
    """
    import solvers

    m = obj.Phi.shape[1]
    theta0 = np.zeros(m) if witness is None else np.asarray(witness, dtype=float)
    if not np.any(mask):
        return _Solved(0.0, np.nan, np.zeros(m), PRUNED, "dead")
    const = _single_class_value(obj, mask)
    if const is not None:
        if np.isnan(const):
            return _Solved(0.0, np.nan, theta0, PRUNED, "closed-form")
        got = _settle_exact(obj, mask, const, theta0, "closed-form", theta0)
        if witness is not None and np.isnan(neuron_values(obj, theta0[None, :])[0]):  # a witness flushed to a
            return got._replace(lower=np.nan, status=BOUND)  # dead neuron (columns at the ends of the float range)
        return got
    if _all_excluded(obj, mask):
        return _Solved(0.0, np.nan, theta0, PRUNED, "excluded")
    A, B, G, T, Ti = _pattern_problem(obj, mask)
    w_val = np.nan if witness is None else float(neuron_values(obj, theta0[None, :])[0])
    x0 = _coords(obj, Ti, witness)
    # the witness, in basis coordinates, is a strict interior point: it saves an LP
    # (the solver checks it and ignores it if it is not)
    xr = x0 if x0 is not None else _coords(obj, Ti, near)  # where the evidence's rows are chosen
    if xr is not None and m >= DUAL_FIRST_MIN_M and target < np.inf:
        early = _dual_first(obj, mask, (A, B, G), xr, target, w_val, theta0, two_row)
        if early is not None:
            return early
    problem = solvers.ConeEigProblem(A, B, G, interior=x0)
    tried = []
    end = None if max_seconds is None else time.perf_counter() + max_seconds
    for mth in (method,) + tuple(x for x in FALLBACK_METHODS if x != method):
        left = None if end is None else end - time.perf_counter()
        if left is not None and left <= 0:
            tried.append(f"{mth}: not started, the time budget max_seconds={max_seconds} is spent")
            break
        res, why = _try_method(obj, problem, mth, w_val, left)
        if res is None:
            tried.append(why)
            continue
        theta = polish_theta(obj, obj.to_theta @ (T @ np.asarray(res.x, dtype=float)))  # walls: off rounding
        val = float(neuron_values(obj, theta[None, :])[0])
        lost = bool(np.isnan(val))
        if np.isnan(val) or (not np.isnan(w_val) and w_val > val):
            val, theta = w_val, theta0
        got = _settle_exact(obj, mask, val, theta, mth, theta0, (A, B, G, T, Ti), _solver_facets(res))
        return _with_local(obj, mask, method, got, w_val, B, lost, None if end is None else end - time.perf_counter())
    got = _dual_fallback(obj, A, B, G, Ti, theta0, w_val, tried)
    return _with_local(obj, mask, method, got, w_val, B, True, None if end is None else end - time.perf_counter())


def _dual_first(obj: Objective, mask: np.ndarray, prob: tuple, xr: np.ndarray, target: float, w_val: float,
                theta0: np.ndarray, two_row: bool = True) -> _Solved | None:
    """The pattern settled by dual evidence at most ``target`` (two-row evidence, then one small SDP with
    its rows chosen at ``xr``, basis coordinates), or None; evidence below the strict witness's value
    ``w_val`` is not taken (:func:`_below_witness`)."""
    two = wedge_settle(obj, mask[None, :], target) if two_row else {}
    if two and not _below_witness(two[0], w_val):
        return _by_evidence(two[0], w_val, theta0)
    A, B, G = prob
    pruned = dual_prune(A, B, G, np.flatnonzero(np.any(obj.Phi != 0, axis=1)), xr, target)
    if pruned is not None and not _below_witness(pruned, w_val):
        return _by_evidence(pruned, w_val, theta0)
    return None


def dual_settle(obj: Objective, mask: np.ndarray, near: np.ndarray, target: float) -> _Solved | None:
    """:func:`solve_one`'s dual evidence alone, for a pattern without a strict witness: its rows chosen at
    ``near`` (a point on or near the cone, no witness), nothing solved; None when no evidence at most
    ``target`` is found (or none is tried: ``target`` infinite, fewer than ``DUAL_FIRST_MIN_M`` columns, an
    empty mask, ``near`` not finite in the pattern's coordinates; a pattern :func:`solve_one` decides in
    closed form or as excluded).  Any rows give a valid bound; the caller proves it as any other."""
    m = obj.Phi.shape[1]
    if not np.any(mask) or not target < np.inf or m < DUAL_FIRST_MIN_M:
        return None
    if _single_class_value(obj, mask) is not None or _all_excluded(obj, mask):
        return None
    A, B, G, T, Ti = _pattern_problem(obj, mask)
    xr = _coords(obj, Ti, near)
    if xr is None:
        return None
    return _dual_first(obj, mask, (A, B, G), xr, target, np.nan, np.zeros(m))


def _coords(obj: Objective, Ti: np.ndarray, theta: np.ndarray | None) -> np.ndarray | None:
    """A neuron in the pattern problem's basis coordinates, or None (none given, or not finite: columns
    at the ends of the float range may overflow them)."""
    if theta is None:
        return None
    with np.errstate(all="ignore"):
        x = Ti @ (obj.to_coords @ np.asarray(theta, dtype=float))
    return x if np.all(np.isfinite(x)) else None


def _with_local(obj: Objective, mask: np.ndarray, method: str, got: _Solved, w_val: float, B: np.ndarray,
                lost: bool, max_seconds: float | None) -> _Solved:
    """``got`` improved by the chamber's own coordinates (:mod:`relu_gating.search._exact.chamber_coords`)
    where the global basis loses part of its pencil (``B``: the global pattern problem's) or the solver's
    neuron fell outside the chamber (``lost``): a better neuron strictly inside (decided exactly) and
    tighter dual evidence are taken; the claim is then proven like any other.  ``max_seconds``: what is
    left of the pattern's time budget (none left: ``got`` as it is)."""
    from relu_gating.search._exact.chamber_coords import needs_local

    k_global = int(round(float(np.trace(B))))
    if (max_seconds is not None and max_seconds <= 0) or not (lost or needs_local(obj, mask, k_global)):
        return got
    local = _local_solve(obj, mask, method, w_val, max_seconds)
    if local is None:
        return got
    theta, val, upper, evidence, mth = local
    out = got
    if not np.isnan(val) and (np.isnan(got.lower) or val > got.lower):
        out = out._replace(lower=val, theta=theta)
    if evidence is not None and (upper < got.upper or got.upper < out.lower):  # tighter, or the global claim refuted
        out = out._replace(upper=upper, evidence=evidence, method=mth)
    if out.upper <= out.lower + EVIDENCE_RTOL * max(abs(out.lower), 1e-300) and out.evidence is not None:
        out = out._replace(status=EXACT, method=mth)
    return out


def _local_solve(obj: Objective, mask: np.ndarray, method: str, w_val: float, max_seconds: float | None,
                 complete: bool = False) -> tuple[np.ndarray, float, float, Any, str] | None:
    """The pattern solved in its own coordinates: ``(theta, value, upper, evidence, method)`` with a
    float ``theta`` strictly inside the chamber (exactly) and evidence on the rows of ``Phi C``."""
    import solvers
    from relu_gating.search._exact.chamber_coords import evidence_to_rows, local_basis, local_objective, theta_of
    from relu_gating.search._exact.float_point import float_points

    lb = local_basis(obj, mask, complete)
    if lb is None:
        return None
    lobj = local_objective(obj, lb)
    with np.errstate(all="ignore"):
        A, B, G, T, _ = _pattern_problem(lobj, mask)
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B)) and np.all(np.isfinite(G))):
        return None
    problem = solvers.ConeEigProblem(A, B, G)
    end = None if max_seconds is None else time.perf_counter() + max_seconds
    for mth in (method,) + tuple(x for x in FALLBACK_METHODS if x != method):
        left = None if end is None else end - time.perf_counter()
        if left is not None and left <= 0:  # the pattern's time budget (max_seconds) is spent
            return None
        res, _ = _try_method(lobj, problem, mth, w_val, left)
        if res is not None:
            break
    else:
        return None
    x = np.asarray(res.x, dtype=float)
    cands = float_points(obj.Phi, mask, theta_of(lb, T @ x))
    from relu_gating.search._value import reported_value  # thin chambers: float products cancel

    vals = np.array([reported_value(obj, t)[0] for t in cands])
    found = vals.size > 0 and not np.all(np.isnan(vals))  # else a supremum on the boundary: evidence only
    j = int(np.nanargmax(vals)) if found else -1
    rows = np.flatnonzero(np.any(obj.Phi != 0, axis=1))
    upper, ev = _dual_evidence(A, B, G, rows, float(vals[j]) if found else float(res.upper), [x], _solver_facets(res))
    ev = None if ev is None else evidence_to_rows(ev, lb.scale_exp)
    if not found and ev is None:
        return None
    theta = cands[j] if found else np.zeros(obj.Phi.shape[1])
    return theta, float(vals[j]) if found else np.nan, (upper if ev is not None else np.inf), ev, mth + "-local"


def local_evidence(obj: Objective, mask: np.ndarray, method: str = "auto", max_seconds: float | None = None
                   ) -> tuple[float, tuple[np.ndarray, np.ndarray] | None, np.ndarray, float] | None:
    """``(upper, (rows, N) or None, theta, value)``: dual evidence for the pattern solved in its own
    coordinates (:func:`_local_solve`), for a claim no other evidence proves (the caller proves it
    exactly), and the neuron found there (a float ``theta`` strictly inside the chamber, decided exactly,
    its value proven to 1e-10 or exact; ``value`` nan where none was found).  None: nothing found."""
    from relu_gating.search._exact.chamber_coords import MAX_LOCAL_WORK

    n, m = obj.Phi.shape
    if n * m * m > MAX_LOCAL_WORK:
        return None
    got = _local_solve(obj, mask, method, np.nan, max_seconds, complete=True)  # fewer than m active rows too
    return None if got is None else (float(got[2]), got[3], got[0], float(got[1]))


def _solver_facets(res: Any) -> np.ndarray | None:
    """The facet rows of the problem's ``G`` from the solver's float cone reduction (None on the
    verified path, whose cone data is exact but was not the float choice of rows)."""
    rows = res.certificate.get("facet_rows")
    if rows is None or res.certificate.get("verified"):
        return None
    return np.asarray(rows, dtype=np.int64)


def _dual_fallback(obj: Objective, A: np.ndarray, B: np.ndarray, G: np.ndarray, Ti: np.ndarray,
                   theta0: np.ndarray, w_val: float, tried: list[str]) -> _Solved:
    """No exact value: settle the pattern by its dual (DNN) bound with evidence, if there is one."""
    rows = np.flatnonzero(np.any(obj.Phi != 0, axis=1))
    floor = w_val if np.isfinite(w_val) else -np.inf
    upper, evidence = _dual_evidence(A, B, G, rows, floor, [Ti @ (obj.to_coords @ theta0)])
    if evidence is None or not np.isfinite(upper):
        return _Solved(np.inf, w_val, theta0, BOUND, "",
                       "pattern not solved exactly, its cheap bound stands: " + "; ".join(tried))
    return _Solved(upper, w_val, theta0, BOUND, "dual", "", evidence)


def prune_target(best_value: float, alpha: float) -> float:
    """The bound below which a candidate is settled by dual evidence alone: the incumbent over alpha."""
    return best_value / alpha if np.isfinite(best_value) else np.inf


def solve_chunk(obj: Objective, index: np.ndarray, masks: np.ndarray, method: str,
                witnesses: np.ndarray | None = None, target: float = np.inf) -> PatternOutcome:
    """Exact per-pattern solves (cone-constrained generalized eigenproblems).

    ``witnesses`` (optional, shape (k, m)) are strict interior points of the
    patterns' cones, passed on to the solver as hints.  ``target`` (the incumbent
    over alpha when the chunk was made): a pattern whose dual evidence proves a bound at most
    ``target`` is settled by it without an exact solve (:func:`solve_one`).
    """
    k = index.size
    m = obj.Phi.shape[1]
    upper = np.empty(k)
    lower = np.empty(k)
    thetas = np.zeros((k, m))
    status = np.empty(k, dtype=np.int8)
    methods, notes, evidence = [], [], {}
    masks = kernel.rows_bool(*kernel.unpacked(masks, obj.n), obj.n)
    wedged = {}
    if witnesses is not None and m >= DUAL_FIRST_MIN_M and target < np.inf:  # the batch's cheapest evidence first
        wedged = wedge_settle(obj, masks, target)
    for j in range(k):
        w_val = np.nan
        if j in wedged:
            assert witnesses is not None  # only patterns with a witness are offered the two-row step
            w = np.array(witnesses[j], dtype=float)
            w_val = float(neuron_values(obj, w[None, :])[0])
        if j in wedged and not _below_witness(wedged[j], w_val):
            out = _by_evidence(wedged[j], w_val, w)
        else:
            out = solve_one(obj, masks[j], method, None if witnesses is None else witnesses[j], target, two_row=False)
        upper[j], lower[j], thetas[j], status[j] = out.upper, out.lower, out.theta, out.status
        methods.append(out.method)
        if out.note:
            notes.append(f"pattern {int(index[j])}: {out.note}")
        if out.evidence is not None:
            evidence[int(index[j])] = out.evidence
    return PatternOutcome(index=index, upper=upper, lower=lower, thetas=thetas, status=status,
                          method=tuple(methods), notes=tuple(notes), evidence=evidence)
