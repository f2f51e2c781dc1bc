"""The checker's verdict: :class:`VerifyReport`, the value recomputed from ``theta`` and the one
conclusion from the checks and the proven bounds (shared by the tree check, :mod:`._verify`, and the
pattern checks, :mod:`._verify_patterns` and :mod:`._binary`).

Nothing that decides what is checked is read from the certificate: the tolerances are
:mod:`._constants`, the rank of ``Phi`` is exact, the bases and bounds are derived here from the
problem the caller states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from relu_gating.checker._constants import EPS, EXCLUDE_RTOL, PATTERN_RTOL, UK_ORTHONORMAL_TOL, VALUE_TOL
from relu_gating.checker._floats import dot_rounded, fro, gamma
from relu_gating.checker._problem import StatedProblem
from relu_gating.checker._read import Claim

__all__ = ["VerifyReport", "verdict_word", "check_value", "conclude", "refused", "problem_mismatch", "PRUNED"]

PRUNED = 3  # the settlement code of a pattern claimed to hold no admissible neuron


@dataclass(frozen=True)
class VerifyReport:
    """Outcome of :func:`verify`.

    Attributes
    ----------
    valid : bool
        The certificate is for the stated problem, its value recomputes, its pattern list (or
        tree) is complete, its bounds are proven, and a claim of certification holds.
    certified : bool
        ``value >= alpha * upper_bound - VALUE_TOL`` with the proven bound (and valid).
    value, upper_bound, alpha, alpha_proven : float
        The recomputed value, the proven upper bound, the certificate's alpha, ``value / upper_bound``.
    reasons : tuple of str
        Why it is invalid (empty when valid).
    checks : dict
        Each check's name mapped to its outcome and figures.
    """

    valid: bool
    certified: bool
    value: float
    upper_bound: float
    alpha: float
    alpha_proven: float
    reasons: tuple
    checks: dict = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.valid


def verdict_word(valid: bool, proven_alpha_ok: bool) -> str:
    """The one verdict word: ``CERTIFIED``, ``VALID-NOT-CERTIFIED`` or ``INVALID``."""
    return "INVALID" if not valid else ("CERTIFIED" if proven_alpha_ok else "VALID-NOT-CERTIFIED")


def problem_mismatch(rec: Any, P: StatedProblem) -> list[str]:
    """How the certificate's recorded problem differs from the stated one (empty if it does not)."""
    rec = rec if isinstance(rec, dict) else {}
    if rec.get("features") != P.features:
        return [f"the certificate was computed with features = {rec.get('features')!r} (objective "
                f"{rec.get('objective')!r}); state the same features to verify it (features= of verify, "
                f"--features of the CLI), not {P.features!r}"]
    stated = {"n": P.n, "m": P.Phi.shape[1], "K": P.U.shape[1], "objective": P.objective}
    out = [f"{k} = {rec.get(k)!r} in the certificate, {v!r} in the stated problem"
           for k, v in stated.items() if rec.get(k) != v]
    if P.features == "array" and rec.get("features_sha256") != P.features_sha256:
        out.append("the features array differs from the one the certificate was computed with")
    return out


#: The float value is accepted only where its proven error is below this; elsewhere it is exact.
VALUE_ACCURACY = VALUE_TOL / 10


def _float_objective(P: StatedProblem, theta: np.ndarray) -> float:
    """The float objective of ``relu(Phi theta)`` where its proven error is below
    :data:`VALUE_ACCURACY`, else ``nan`` (decide exactly).

    ``z = Phi theta`` correctly rounded per entry (error ``dz``); with features, ``r = h - Hs c`` for
    a least-squares ``c`` (for any ``c``, ``(I - Pi_H) r = (I - Pi_H) h`` exactly) and ``||Pi_H r||
    <= ||Hs^T r|| / sigma_min(Hs)``: ``r`` is within ``D`` of ``y = (I - Pi_H) h``; the value
    ``||U^T r||^2 / ||r||^2`` is within ``4 D / (||r|| - D)`` of ``||U^T y||^2 / ||y||^2 = ||M^T y||^2
    / ||y||^2``, plus its own rounding.  ``nan`` also where ``||r||`` lies outside ``2^±450`` (its square
    would leave the float range: a residual of 1e-162 squared to 0)."""
    n, m = P.Phi.shape
    K = P.U.shape[1]
    with np.errstate(all="ignore"):
        z, dz = dot_rounded(P.Phi, theta)
        if not np.isfinite(dz):
            dz = gamma(m) * fro(np.abs(P.Phi) @ np.abs(theta)) * (1 + 4 * EPS)
        h = np.maximum(z, 0.0)
        hn = fro(h)
        r, D = h, dz
        if P.QH is not None:
            if not P.sigma_H > 0 or P.Hs is None:
                return float("nan")
            c = np.linalg.lstsq(P.Hs, h, rcond=None)[0]
            r, er = dot_rounded(np.c_[P.Hs, h], np.r_[-c, 1.0])
            g, eg = dot_rounded(P.Hs.T, r)
            D = ((er + dz) * (1 + fro(P.Hs) / P.sigma_H) + (fro(g) + eg) / P.sigma_H) * (1 + 8 * EPS)
        rn = fro(r)
        if not (2.0**-450 < rn < 2.0**450 and np.isfinite(D) and rn > 4 * D and rn - D > 1.01 * EXCLUDE_RTOL * (hn + dz)):
            return float("nan")
        u, eu = dot_rounded(P.U.T, r)
        num = float(u @ u)
        value = num / (rn * rn)
    normU2 = 1.0 + K * UK_ORTHONORMAL_TOL
    err = (4 * D / (rn - D) * normU2 + (2 * math.sqrt(num) * eu + eu * eu) / (rn * rn)
           + 8 * (K + n) * EPS * max(value, 1.0)) * (1 + 1e-6)
    return value if err <= VALUE_ACCURACY and np.isfinite(value) else float("nan")


def _objective(P: StatedProblem, theta: np.ndarray, exact: bool) -> float:
    """``N_K`` or ``G_H`` of ``relu(Phi theta)``; ``nan`` for an excluded neuron, decided exactly.
    In float mode the float value is taken where its proven error is below :data:`VALUE_ACCURACY`
    (:func:`_float_objective`), else it is computed exactly too."""
    if not exact:
        value = _float_objective(P, theta)
        if not np.isnan(value):
            return value
    E = P.exact
    th = [Fraction(t) for t in theta.tolist()]
    h = [max(sum(Fraction(a) * t for a, t in zip(row, th)), Fraction(0)) for row in P.Phi.tolist()]
    A, B, ZZ = E.forms([(i, [v]) for i, v in enumerate(h) if v > 0], 1)
    if not ZZ[0][0] or B[0][0] <= Fraction(EXCLUDE_RTOL) ** 2 * ZZ[0][0]:
        return float("nan")
    return float(A[0][0] / B[0][0])


def check_value(c: Claim, P: StatedProblem, live: bool, exact: bool) -> tuple[float, list[str]]:
    """The value recomputed from ``relu(Phi theta)`` and what is wrong with the claimed value and
    pattern (``live``: some neuron is admissible, else value 0 with an excluded ``theta`` is right)."""
    reasons = []
    value = _objective(P, c.theta, exact)
    if np.isnan(value):
        if not (c.value == 0.0 and not live):
            reasons.append("theta gives an excluded neuron (relu(Phi theta) is 0 or in col(features))")
        value = 0.0
    elif abs(value - c.value) > VALUE_TOL:
        reasons.append(f"value {c.value!r} differs from the objective of relu(Phi theta) recomputed here, {value!r}")
    if not _pattern_holds(P.Phi, c.theta, c.pattern):
        reasons.append("pattern disagrees with the signs of Phi theta")
    return value, reasons


def _pattern_holds(Phi: np.ndarray, theta: np.ndarray, pattern: np.ndarray) -> bool:
    """The informative ``pattern`` agrees with the signs of ``Phi theta`` on every row above
    ``PATTERN_RTOL max |Phi theta|`` (up to the product's proven rounding error: a float refuses only
    what it proves).  ``theta`` is first brought to a largest weight of ``2^-bit_length(m)`` by a power of
    two (the signs and the ratios are those of ``Phi theta``): no product or sum overflows."""
    m, top = Phi.shape[1], float(np.abs(theta).max(initial=0.0))
    with np.errstate(under="ignore"):
        ts = np.ldexp(np.asarray(theta, dtype=np.float64), -(math.frexp(top)[1] + m.bit_length() + 1) if 0 < top < math.inf else 0)
        z = Phi @ ts  # the error: rounding, underflow and the weights the scaling lost (2^-1075 each)
        err = (gamma(m + 1) * (np.abs(Phi) @ np.abs(ts)) + (m + 1) * 2.0**-1074 + (np.abs(Phi) * 2.0**-1074).sum(axis=1)) * (1 + 4 * EPS)
    eps = PATTERN_RTOL * (np.abs(z).max(initial=0.0) + err.max(initial=0.0) + 1e-300) + err  # non-finite z: nothing
    return not np.all(np.isfinite(z)) or bool(np.all(np.where(z > eps, pattern, True) & np.where(z < -eps, ~pattern, True)))


def conclude(c: Claim, value: float, top: float, unproven: int, first: list, reasons: list,
             checks: dict) -> VerifyReport:
    """The one verdict, from the checks so far and the proven bounds (largest ``top``; ``unproven``
    claims, the ``first`` of them named)."""
    checks["bounds"] = {"ok": not unproven, "unproven": unproven, "dual_evidence": checks.pop("dual_evidence", 0)}
    if unproven:
        reasons.append(f"{unproven} bound(s) not proven, e.g. {', '.join(first[:5])}")
    upper = float(max(top, value))
    if c.upper_bound < upper - VALUE_TOL:
        reasons.append(f"upper_bound {c.upper_bound!r} is below the bound proven here, {upper!r}")
    certified = bool(value >= c.alpha * upper - VALUE_TOL) and 0 < c.alpha <= 1
    if not 0 < c.alpha <= 1:
        reasons.append(f"alpha {c.alpha!r} is not in (0, 1]")
    elif c.certified and not certified:
        reasons.append(f"certified is claimed but value {value!r} < alpha * upper_bound = {c.alpha * upper!r}")
    alpha_proven = 1.0 if upper <= 0 else max(0.0, min(1.0, value / upper))
    checks["alpha"] = {"ok": certified or not c.certified, "alpha": c.alpha, "alpha_proven": alpha_proven}
    return VerifyReport(not reasons, certified and not reasons, value, upper, c.alpha, alpha_proven,
                        tuple(reasons), checks)


def refused(c: Claim, mismatch: list[str]) -> VerifyReport:
    return VerifyReport(False, False, float("nan"), float("nan"), c.alpha, 0.0,
                        ("certificate is for another problem: " + "; ".join(mismatch),),
                        {"problem": {"ok": False, "differences": mismatch}})
