"""Thin-cone fuzz suite: every method of :mod:`solvers` against an exact /
60-digit reference (``_thin_cone_reference``, which shares no code with
``solvers``).

Cases (all seeded, ``m = 2, 3``): fat integer cones squashed EXACTLY by
``2^-33`` or ``2^-43`` along a sheared direction; rows ``fl(a r0 + b r1)``
(needles of width ~1e-16, near-redundant sliver rows, thin wedges); ``B``
singular or nearly singular (``+ 2^-20 k k^T``) along the thin normal, the
cone's axis, or everything but the normal; ordinary gating cones for contrast.
Every cone has a rational point with ``G p > 0`` (checked exactly).

The promise checked, with no float tolerance (comparisons in 60-digit
arithmetic, to the reference's precision ``REF_RTOL = 1e-40`` relative):

* never INFEASIBLE (the cone has an interior point and ``B != 0``);
* ``lower <= optimum <= upper``; UNBOUNDED only when the optimum is ``+inf``,
  and then with a ray ``d`` that is exactly in the cone with ``B d = 0`` and
  ``d^T A d > 0``;
* a witness ``x`` lies exactly in the closed cone, with ``x^T B x > 0`` and
  exact quotient ``>= lower``.

The default run takes a few dozen cases (~10 s); ``-m slow`` runs 320 more.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import solvers
from solvers import ConeEigProblem, Status
from _thin_cone_reference import DPS, ZERO_RTOL, frac, in_closed_cone, make_case, matvec, quad, reference

REF_RTOL = ZERO_RTOL

METHODS = ("spectral", "faces", "dnn", "auto")
FAMILIES = ("scaled33", "scaled43", "rounded", "gating")
FAST = [(f, seed, m) for f in FAMILIES for m in (2, 3) for seed in range(3)]
SLOW = [(f, seed, m) for f in FAMILIES for m in (2, 3) for seed in range(3, 43)]


@functools.lru_cache(maxsize=None)
def _case(family: str, seed: int, m: int):
    c = make_case(family, seed, m)
    return c, reference(c.A, c.B, c.G, c.interior)


def _check_witness(c, r) -> list[str]:
    Gq, Aq, Bq = frac(c.G), frac(c.A), frac(c.B)
    x = [Fraction(float(v)) for v in r.x]
    if not in_closed_cone(Gq, x):
        return ["witness not in the closed cone (exact check)"]
    den = quad(Bq, x, x)
    if den <= 0:
        return ["witness has x^T B x = 0"]
    q = quad(Aq, x, x) / den
    if Fraction(r.lower) > q:
        return [f"lower {r.lower!r} above the witness's exact quotient {float(q)!r}"]
    return []


def _check_ray(c, r) -> list[str]:
    """The ray certificate (``ray_exact`` strings if given, else the float ``ray``) checked exactly."""
    cert = r.certificate
    d = [Fraction(v) for v in cert["ray_exact"]] if "ray_exact" in cert else \
        [Fraction(float(v)) for v in cert.get("ray", [])]
    Gq, Aq, Bq = frac(c.G), frac(c.A), frac(c.B)
    if len(d) != c.A.shape[0] or not in_closed_cone(Gq, d) or any(matvec(Bq, d)) or quad(Aq, d, d) <= 0:
        return ["UNBOUNDED without an exact ray certificate (G d >= 0, B d = 0, d^T A d > 0)"]
    return []


def violations(family: str, seed: int, m: int, method: str, hint: bool) -> list[str]:
    """Every way the result of ``method`` breaks the promise on the case (empty: kept)."""
    c, ref = _case(family, seed, m)
    P = ConeEigProblem(c.A, c.B, c.G, interior=c.hint if hint else None)
    r = solvers.solve(P, method)
    out = []
    with mpmath.workdps(DPS):
        lo, up = mpmath.mpf(r.lower), mpmath.mpf(r.upper)
        slack = REF_RTOL * abs(ref.value) if mpmath.isfinite(ref.value) else 0
        if r.status is Status.INFEASIBLE:
            out.append("INFEASIBLE although the cone has a strict interior point and B != 0")
        elif ref.status == "unbounded":
            if r.upper != np.inf:
                out.append(f"finite upper {r.upper!r} on an unbounded problem")
            if r.status is Status.UNBOUNDED:
                out += _check_ray(c, r)
        else:
            if r.status is Status.UNBOUNDED:
                out.append(f"UNBOUNDED, but the optimum is {mpmath.nstr(ref.value, 17)}")
            if not lo <= ref.value + slack:
                out.append(f"lower {r.lower!r} > optimum {mpmath.nstr(ref.value, 17)}")
            if not up >= ref.value - slack:
                out.append(f"upper {r.upper!r} < optimum {mpmath.nstr(ref.value, 17)}")
    if r.x is not None and r.status is not Status.UNBOUNDED:
        out += _check_witness(c, r)
    return [f"{method}{' (hint)' if hint else ''} on {c.name}: {v} [{r.status.name}]" for v in out]


def _run(family, seed, m):
    c, _ = _case(family, seed, m)
    bad = []
    for method in METHODS:
        bad += violations(family, seed, m, method, hint=False)
    if c.hint is not None:
        bad += violations(family, seed, m, "auto", hint=True)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("family,seed,m", FAST)
def test_thin_cones_bracket_the_truth(family, seed, m):
    _run(family, seed, m)


@pytest.mark.slow
@pytest.mark.parametrize("family,seed,m", SLOW)
def test_thin_cones_bracket_the_truth_slow(family, seed, m):
    _run(family, seed, m)


def test_reference_sanity():
    """The reference on hand-made problems: a thin wedge whose value needs the width."""
    w = 2.0 ** -40
    G = np.array([[-w, 1.0], [2 * w, -1.0]])  # w x0 <= x1 <= 2 w x0
    p = (Fraction(1), Fraction(3, 2) * Fraction(w))
    r = reference(np.eye(2), np.diag([0.0, 1.0]), G, p)  # 1 + x0^2 / x1^2: 1 + 1/w^2 at x1 = w x0
    with mpmath.workdps(DPS):
        assert r.status == "exact" and abs(r.value - (1 + mpmath.mpf(2) ** 80)) <= mpmath.mpf(10) ** -30
    r = reference(np.eye(2), np.diag([1.0, 0.0]), G, p)  # 1 + x1^2 / x0^2: 1 + 4 w^2
    with mpmath.workdps(DPS):
        assert r.status == "exact" and abs(r.value - (1 + mpmath.mpf(2) ** -78)) <= mpmath.mpf(10) ** -50
    r = reference(np.eye(2), np.diag([1.0, 0.0]), np.array([[0.0, 1.0]]), p)  # ray e1 in ker B
    assert r.status == "unbounded"
