"""The verified path: every method falls back on it where float64 cannot
decide (thin or lower-dimensional cones, ambiguous face lattices, a pencil
singular along directions the cone sees, suspected infeasibility or
unboundedness).

Everything a status or a bound rests on is exact (:mod:`solvers._exact`):

* the span is the null space of the *certified* implicit equalities
  (:mod:`solvers._verified.cone`), a superset of the true span; the rows
  enumerated may be a subset of ``G`` (float facet guesses, duplicates
  dropped): both only enlarge the cone, so upper bounds stay valid;
* INFEASIBLE iff ``B`` vanishes on that span, exactly; UNBOUNDED only with an
  exact ray (``G d >= 0``, ``B d = 0``, ``d^T A d > 0``); when neither
  unboundedness nor its absence can be certified, ``upper = +inf``;
* faces are enumerated top-down over flats ``null(H_J)`` with exact rational
  bases; a flat's bound ``u`` is certified by an exact LDL^T test of
  ``u B_F - A_F >= 0`` (a float eigenvalue proposes ``u``, bisection if it
  fails); a flat is pruned when ``lower * B_F - A_F >= 0`` exactly;
* a flat stops the descent (its bound counts) unless its top eigenvector,
  refined by exact Rayleigh quotient iteration, is outside the cone by more
  than a rigorous bound on its distance to the true eigenvector (so ``+-v``
  both violate a row); witnesses are checked exactly against every row of
  ``G`` and their quotient rounded down.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from solvers._norms import norm2

from solvers._exact import Vec, combine, compress, dot, float_down, fr_matrix, nonneg, pow2, quad, quotient_lower
from solvers._verified.cone import ExactCone, exact_cone, exact_unbounded
from solvers._verified.flats import Flat, children, evaluate
from solvers._verified.realize import realize
from solvers.problem import memo
from solvers.result import ConeEigResult, Status

__all__ = ["verified_solve", "VERIFIED_MAX_FLATS", "ALL_ROWS"]

#: Budget of flats; past it the unexplored flats' bounds stand.
VERIFIED_MAX_FLATS = 3000
#: Up to this many rows every row is enumerated; above, the float facet guesses (a superset cone).
ALL_ROWS = 24
#: Relative gap under which the result is EXACT (as the float methods).
EXACT_RTOL = 1e-9
#: Lifts ``t`` (relative) toward the interior point tried to put a float witness exactly in the cone.
LIFTS = tuple(2.0 ** -k for k in (52, 50, 46, 42, 38, 34, 30, 26, 20, 14, 8))


@dataclass
class _Data:
    """The problem in exact form: ``y`` coordinates on the certified span."""

    A: np.ndarray
    B: np.ndarray
    G: np.ndarray
    cone: ExactCone
    Aq: list
    Bq: list
    Ay: list
    By: list
    H: list
    Hf: np.ndarray
    hrows: list[int]
    pf: np.ndarray | None


def _unit(Mf: np.ndarray) -> np.ndarray:
    nrm = norm2(Mf, axis=1)
    return Mf / np.where(nrm > 0, nrm, 1.0)[:, None]


def _positive_multiple(g: list, h: list) -> bool:
    """``h = c g`` with ``c > 0``, exactly."""
    j = next(i for i, v in enumerate(g) if v)
    c = h[j] / g[j]
    return c > 0 and all(b == c * a for a, b in zip(g, h))


def _select_rows(G: np.ndarray, Gq, rows: list[int], red) -> list[int]:
    """Rows to enumerate: all (up to ``ALL_ROWS``), else the float facets and uncertain rows;
    exact positive multiples dropped.  Any subset only enlarges the cone (the caller checks
    that it stays bounded)."""
    if len(rows) > ALL_ROWS and red is not None:
        keep = set(red.rows[red.facets].tolist()) | set(red.rows[red.eq].tolist())
        if red.x_int is not None and np.all(np.isfinite(red.x_int)):
            vals = _unit(G[rows]) @ red.x_int
            keep |= {rows[i] for i in np.flatnonzero(vals <= 1e-6)}
        rows = [i for i in rows if i in keep] or rows
    key = np.round(_unit(G[rows]), 12)
    out: list[int] = []
    for a, i in enumerate(rows):
        if not any(np.array_equal(key[a], key[rows.index(j)]) and _positive_multiple(Gq[j], Gq[i]) for j in out):
            out.append(i)
    return out


def _setup(problem, red) -> _Data:
    """Exact data, certified span and rows to enumerate (``red``: float guesses or None)."""
    A, B, G = problem.A, problem.B, problem.G
    Gq = fr_matrix(G) if G.shape[0] else []
    guess = np.zeros(G.shape[0], dtype=bool)
    if red is not None and red.eq.any():
        guess[red.rows[red.eq]] = True
    hints = [problem.interior, None if red is None else red.x_int]
    cone = exact_cone(Gq, G, hints, guess, floats=True)
    Aq, Bq = fr_matrix(A), fr_matrix(B)
    Ay, By = (Aq, Bq) if cone.full else (compress(Aq, cone.span), compress(Bq, cone.span))
    rows = _select_rows(G, Gq, cone.rows, red) if cone.rows else []
    return _with_rows(_Data(A, B, G, cone, Aq, Bq, Ay, By, [], np.zeros((0, len(cone.span))), [], None), Gq, rows)


def _with_rows(data: _Data, Gq, rows: list[int]) -> _Data:
    """``data`` enumerating the rows ``rows`` of ``G``."""
    cone, G = data.cone, data.G
    H = [Gq[i] if cone.full else [dot(Gq[i], z) for z in cone.span] for i in rows]
    Hf = _unit(np.array([[float(v) for v in h] for h in H]).reshape(len(H), len(cone.span)))
    pf = None
    if cone.full and cone.p is not None:
        x = np.array([float(v) for v in cone.p])
        pf = x / norm2(x) if nonneg(G, x, strict=True) else None
    return _Data(data.A, data.B, G, cone, data.Aq, data.Bq, data.Ay, data.By, H, Hf, rows, pf)


def _witness(data: _Data, xq: Vec) -> tuple[float, np.ndarray] | None:
    """``(lower, x)`` for the exact cone point ``xq`` (x coordinates): on an unreduced span a
    float ``x`` exactly in the cone (lifted toward the interior point until an exact check
    passes), else ``x = fl(xq)`` and the exact point's quotient rounded down."""
    xf = np.array([float(v) for v in xq])
    s = float(np.abs(xf).max()) if xf.size else 0.0
    if not s > 0:
        return None
    xf = xf / pow2(s)
    if data.cone.full:
        for xt in _lifted(data, xf):
            if nonneg(data.G, xt):
                q = quotient_lower(data.A, data.B, xt)
                return (q, xt) if np.isfinite(q) else None
        return None
    den = quad(data.Bq, xq)
    return (float_down(quad(data.Aq, xq) / den), xf) if den > 0 else None


def _lifted(data: _Data, xf: np.ndarray):
    """``xf``, then ``xf`` lifted by ``t |xf|`` (``t`` in LIFTS) along the sum of the unit rows
    nearly active at it (a local direction: the quotient barely moves), then toward the
    interior point."""
    yield xf
    nx = float(norm2(xf))
    nrm = norm2(data.G, axis=1)
    Gu = data.G / np.where(nrm > 0, nrm, 1.0)[:, None]
    act = (Gu @ xf) <= 1e-9 * nx
    dirs = []
    if act.any():
        u = Gu[act].sum(axis=0)
        if norm2(u) > 0:
            dirs.append(u / norm2(u))
    if data.pf is not None:
        dirs.append(data.pf)
    for u in dirs:
        for t in LIFTS:
            yield xf + t * nx * u


def _exact_witness(data: _Data, xq: Vec, stats: dict) -> None:
    """Record the best exact (rational) witness and its quotient rounded down: on a thin cone
    a float witness can lose up to ``eps / width`` (relative) of the value."""
    den = quad(data.Bq, xq)
    if den > 0:
        q = float_down(quad(data.Aq, xq) / den)
        if q > stats.get("exact_witness_lower", -np.inf):
            stats["exact_witness_lower"] = q
            stats["exact_witness"] = [f"{v.numerator}/{v.denominator}" for v in xq]


def _initial_lower(data: _Data, red) -> tuple[float, np.ndarray | None]:
    """The best quotient among the exact interior point and the float extreme rays."""
    best, xb = -np.inf, None
    w = _witness(data, data.cone.p) if data.cone.p is not None else None
    if w is not None:
        best, xb = w
    rays = [] if red is None or red.rays is None or not data.cone.full else list(red.rays)
    for r in rays:
        if nonneg(data.G, r):
            q = quotient_lower(data.A, data.B, r)
            if np.isfinite(q) and q > best:
                best, xb = q, np.asarray(r, dtype=float)
    return best, xb


def _to_x(data: _Data, y: Vec) -> Vec:
    return y if data.cone.full else combine(data.cone.span, y)


def _level(data: _Data, level: list[Flat], lower: float, xb, stats: dict):
    """Evaluate one level: ``(lower, x, expand, terminal_max, evals)``."""
    evs = [evaluate(data.Ay, data.By, f, lower) for f in level]
    order = sorted(range(len(level)), key=lambda j: -(evs[j].lam if evs[j].kind == "finite" else
                                                       (np.inf if evs[j].kind == "inf" else -np.inf)))
    expand, terminal = [], -np.inf
    for j in order:
        ev, fl = evs[j], level[j]
        if ev.kind in ("empty", "pruned") or (ev.kind == "finite" and ev.up <= lower):
            continue
        if ev.kind == "inf":
            expand.append(j)
            continue
        st, z = realize(data.H, data.Hf, fl, ev)
        stats[st] = stats.get(st, 0) + 1
        w = None if z is None else _witness(data, _to_x(data, z))
        if w is not None and w[0] > lower:
            lower, xb = w
        if z is not None:
            _exact_witness(data, _to_x(data, z), stats)
        if st == "not":
            expand.append(j)
        else:
            terminal = max(terminal, ev.up)
    return lower, xb, expand, terminal, evs


def _enumerate(data: _Data, depth: str, lower: float, xb, budget: int):
    """Top-down enumeration of flats: ``(lower, upper, x, stats)``; ``depth="root"`` stops
    after the whole span (the cone-free bound, exact if attained)."""
    d = len(data.cone.span)
    level = [Flat([[Fraction(int(i == j)) for j in range(d)] for i in range(d)], frozenset())]
    seen = {level[0].key}
    stats: dict = {"flats": 0}
    upper = -np.inf
    while level:
        stats["flats"] += len(level)
        lower, xb, expand, terminal, evs = _level(data, level, lower, xb, stats)
        upper = max(upper, terminal)
        if depth == "root":
            ev = evs[0]
            upper = ev.up if ev.kind == "finite" else (np.inf if ev.kind == "inf" else upper)
            stats.update(face=[], eigenvalue=ev.lam if ev.kind == "finite" else max(upper, lower),
                         realized=stats.get("realized", 0) > 0 or ev.kind == "pruned")
            break
        if not expand:
            break
        nxt = children(data.H, data.Hf, [level[j] for j in expand], seen)
        if stats["flats"] + len(nxt) > budget:
            upper = max([upper] + [evs[j].up if evs[j].kind == "finite" else np.inf for j in expand])
            stats["budget_exhausted"] = True
            break
        level = nxt
    return lower, max(upper, lower), xb, stats


def _ray_certificate(data: _Data, y: Vec) -> dict:
    """The ray as floats (exact when its integer scaling fits in 53 bits) and as exact strings."""
    x = _to_x(data, y)
    den = math.lcm(*(v.denominator for v in x))
    ints = [int(v * den) for v in x]
    big = max(abs(v) for v in ints)
    exact = big < 2**53
    ray = np.array([float(v) for v in ints]) / pow2(float(big)) if exact else np.array([float(v) for v in x])
    if not exact:
        ray = ray / norm2(ray)
    return {"ray": ray, "ray_exact": [f"{v.numerator}/{v.denominator}" for v in x], "ray_is_exact_float": exact}


def verified_solve(problem, red, method: str, depth: str, reason: str, t0: float) -> ConeEigResult:
    """The verified answer for ``problem`` (cached per depth); ``red`` is the float
    reduction (only its guesses are used) or None; ``reason`` why float64 was not trusted."""
    key = ("verified", depth)
    cached = memo(problem).get(key)
    if cached is None:
        cached = memo(problem)[key] = _solve(problem, red, depth, reason)
    lower, upper, x, status, cert, msg = cached
    return ConeEigResult(lower, upper, None if x is None else x.copy(), status, method,
                         time.perf_counter() - t0, dict(cert), msg)


def _solve(problem, red, depth: str, reason: str):
    """``(lower, upper, x, status, certificate, message)``: INFEASIBLE and UNBOUNDED decided
    exactly, else the enumeration (``depth`` "root" or "faces")."""
    data = _setup(problem, red)
    d = len(data.cone.span)
    cert = {"verified": True, "fragile": reason, "span_dim": d, "implicit_equalities": data.cone.eq,
            "facet_rows": data.hrows, "exact_interior_point": data.cone.p is not None}
    if d == 0 or not any(any(r) for r in data.By):
        return -np.inf, -np.inf, None, Status.INFEASIBLE, cert, "B vanishes on the span of the cone (exact)"
    full = _with_rows(data, fr_matrix(problem.G), data.cone.rows) if data.hrows != data.cone.rows else data
    unb, ray = exact_unbounded(data.Ay, data.By, full.H, d)
    cert["unbounded"] = unb
    if unb == "yes":
        cert.update(_ray_certificate(data, ray))
        return np.inf, np.inf, None, Status.UNBOUNDED, cert, \
            "a ray d of the cone has B d = 0 and A d != 0 (exact): the supremum is +inf"
    if full is not data and exact_unbounded(data.Ay, data.By, data.H, d)[0] != "no":
        data = full  # the enumerated superset cone must be bounded too
    cert["facet_rows"] = data.hrows
    lower, xb = _initial_lower(data, red)
    lower, upper, xb, stats = _enumerate(data, depth, lower, xb, VERIFIED_MAX_FLATS)
    cert.update(stats)
    msg = ""
    if unb == "unknown":
        upper, msg = np.inf, "unboundedness could not be decided exactly: upper = +inf"
    vscale = max(float(np.abs(problem.A).max()), 1e-300) / max(float(np.abs(problem.B).max()), 1e-300)
    cert["value_scale"] = vscale
    if xb is not None and np.isfinite(upper) and upper - lower <= EXACT_RTOL * max(abs(upper), vscale):
        status = Status.EXACT
    else:  # as the float methods: FAILED when no finite upper bound was established
        status = Status.FAILED if upper == np.inf else Status.BOUNDED
    return float(lower), float(upper), xb, status, cert, msg or f"verified path ({reason})"
