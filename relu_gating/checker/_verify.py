"""The checker's entry point: :func:`verify` and its one verdict for pattern and tree certificates.

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

from relu_gating.checker._bounds import prove
from relu_gating.checker._constants import BOUND_SLACK, EPS, EXCLUDE_RTOL, PATTERN_RTOL, UK_ORTHONORMAL_TOL, VALUE_TOL
from relu_gating.checker._floats import dot_rounded, fro, gamma
from relu_gating.checker._limits import limits
from relu_gating.checker._problem import StatedProblem, state_problem
from relu_gating.checker._read import (FORMAT, Claim, is_binary, load_json, parse_claim,
                                       parse_patterns)
from relu_gating.errors import CertificateError

__all__ = ["VerifyReport", "verify", "verdict_word"]

_PRUNED = 3


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


def _mismatch(rec: Any, P: StatedProblem) -> list[str]:
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
    / ||y||^2``, plus its own rounding."""
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
        if not (np.isfinite(D) and np.isfinite(rn) and rn > 4 * D and rn - D > 1.01 * EXCLUDE_RTOL * (hn + dz)):
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
    z = P.Phi @ c.theta
    eps = PATTERN_RTOL * (np.abs(z).max() + 1e-300)
    if not np.all(np.where(z > eps, c.pattern, True) & np.where(z < -eps, ~c.pattern, True)):
        reasons.append("pattern disagrees with the signs of Phi theta")
    return value, reasons


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


def _refused(c: Claim, mismatch: list[str]) -> VerifyReport:
    return VerifyReport(False, False, float("nan"), float("nan"), c.alpha, 0.0,
                        ("certificate is for another problem: " + "; ".join(mismatch),),
                        {"problem": {"ok": False, "differences": mismatch}})


def _count(P: StatedProblem, N: int) -> tuple[int, str]:
    from relu_gating.checker._complete import chamber_count, cover_count, hyperplanes  # pattern certificates only

    normals, r = hyperplanes(P)
    cover = cover_count(len(normals), r)
    return (cover, "cover") if N == cover else (chamber_count(normals, r), "deletion-restriction")


def _completeness(P: StatedProblem, N: int, bad: list, dup: bool, exact_w: dict) -> tuple[dict, list[str]]:
    expected, method = _count(P, N)
    bad_x = [i for i in bad if i in exact_w]
    why = (f"{len(bad_x)} exact witness(es) do not realize their pattern (first: #{bad_x[0]})" if bad_x else
           f"{len(bad)} witness(es) do not realize their pattern (first: #{bad[0]})" if bad else
           "duplicate patterns" if dup else
           f"found {N} distinct realized patterns, the arrangement has {expected}" if N != expected else "")
    info = {"ok": not why, "method": method, "expected": expected, "found": N}
    return info, ([f"pattern set is not a complete list of realized patterns: {why}"] if why else [])


def _verify_patterns(d: dict, P: StatedProblem, exact: bool) -> VerifyReport:
    from relu_gating.checker._complete import bad_witnesses, duplicates  # not loaded for a tree certificate

    c = parse_claim(d)
    mismatch = _mismatch(d.get("problem"), P)
    if mismatch:
        return _refused(c, mismatch)
    lim = limits(P)
    p = parse_patterns(d, c.n, c.m, lim.digits, lim.patterns)
    checks: dict[str, Any] = {"problem": {"ok": True}}
    value, reasons = check_value(c, P, bool(np.any(p.packed[p.settlement != _PRUNED])), exact)
    checks["value"] = {"ok": not reasons, "recomputed": value}
    bad = bad_witnesses(P, 0, p.packed, p.witnesses, p.exact_witnesses, exact)
    info, why = _completeness(P, len(p.bounds), bad, duplicates(p.packed), p.exact_witnesses)
    checks["completeness"] = info
    reasons += why
    masks = np.unpackbits(p.packed, axis=1, count=c.n).astype(bool)
    proven = prove(P, masks, p.bounds, p.evidence, p.settlement == _PRUNED, exact)
    bad_b = np.flatnonzero(proven > p.bounds + BOUND_SLACK)
    checks["dual_evidence"] = len(p.evidence)
    return conclude(c, value, float(proven.max(initial=-np.inf)), int(bad_b.size),
                    [f"pattern {i}" for i in bad_b[:5].tolist()], reasons, checks)


def _verify_tree(d: dict, P: StatedProblem, exact: bool) -> VerifyReport:
    from relu_gating.checker._tree import walk

    c = parse_claim(d)
    mismatch = _mismatch(d.get("problem"), P)
    if mismatch:
        return _refused(c, mismatch)
    tree = d.get("tree")
    leaves, why, counts = walk(tree.get("nodes") if isinstance(tree, dict) else None, P, exact)
    live = any(np.isfinite(p) or p > 0 for _, _, p in leaves) or not leaves
    value, reasons = check_value(c, P, live, exact)
    checks: dict[str, Any] = {"problem": {"ok": True}, "value": {"ok": not reasons, "recomputed": value},
                              "tree": dict(counts, ok=not why)}
    reasons += why
    unproven = [f"node {i}" for i, cl, p in leaves if p > cl + BOUND_SLACK]
    return conclude(c, value, max((p for _, _, p in leaves), default=-np.inf), len(unproven), unproven[:5],
                    reasons, checks)


def _verify_binary(path: Any, P: StatedProblem, exact: bool) -> VerifyReport:
    from relu_gating.checker._binary import stream
    from relu_gating.checker._read_npz import BinaryReader  # binary certificates only: loaded then

    lim = limits(P)
    with BinaryReader(path, lim.digits) as rd:
        c = rd.claim
        mismatch = _mismatch(rd.meta.get("problem"), P)
        if mismatch:
            return _refused(c, mismatch)
        if rd.N > lim.patterns:
            raise CertificateError(f"binary certificate {rd.path}: n_patterns = {rd.N} exceeds {lim.patterns}, twice "
                                   "Cover's count of chambers of the stated problem (no arrangement has more than the count)")
        bad, dup, top, unproven, first, live = stream(rd, P, exact)
    checks: dict[str, Any] = {"problem": {"ok": True}}
    value, reasons = check_value(c, P, live, exact)
    checks["value"] = {"ok": not reasons, "recomputed": value}
    info, why = _completeness(P, rd.N, bad, dup, rd.exact)
    checks["completeness"] = info
    reasons += why
    checks["dual_evidence"] = len(rd.evidence)
    return conclude(c, value, top, unproven, first, reasons, checks)


def _holds_tree(path: Any) -> bool:
    """Whether a binary certificate holds a tree (the member ``tree.npy``; ``_tree_npz`` reads it)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            return "tree.npy" in zf.namelist()
    except (OSError, zipfile.BadZipFile, ValueError, EOFError):
        return False  # the binary reader reports it


def verify(certificate: Any, Phi: Any, U_K: Any, features: Any = "bias", exact: bool = False) -> VerifyReport:
    """Re-check a best-neuron certificate against the problem stated by the caller.

    Parameters
    ----------
    certificate : NeuronResult, dict, JSON string, path to a JSON file or to a binary ``.npz`` one
    Phi : array_like, shape (n, m)
    U_K : array_like, shape (n, K)
    features : "bias" (default), None, "none" or array_like, shape (n, q)
        The features of the query, stated by the caller.  A certificate computed for other
        features, another ``K`` or other sizes is rejected, saying how.
    exact : bool, default False
        Decide every claim in exact rational arithmetic (the value, the witnesses, every bound,
        exclusion and implied sign): slow, for small ``n``; the oracle of the float path.

    Returns
    -------
    VerifyReport
        Malformed certificates raise :class:`~relu_gating.errors.CertificateError`; unusable
        inputs :class:`~relu_gating.errors.InputError`.
    """
    from relu_gating._runtime.alloc import warm_allocator
    from relu_gating._runtime.collector import paused_gc

    warm_allocator()  # performance only (a large certificate is millions of small lists): see the modules
    with paused_gc():
        return _verify(certificate, Phi, U_K, features, exact)


def _verify(certificate: Any, Phi: Any, U_K: Any, features: Any, exact: bool) -> VerifyReport:
    P = state_problem(Phi, U_K, features)
    if is_binary(certificate):
        if not _holds_tree(certificate):
            return _verify_binary(certificate, P, exact)
        from relu_gating.checker._tree_npz import tree_certificate

        certificate = tree_certificate(certificate, P)  # a tree in the binary form: checked as its JSON form
    d = load_json(certificate)
    if d.get("format") != FORMAT:
        raise CertificateError(f"certificate format must be {FORMAT!r}, got {d.get('format')!r}")
    if d.get("kind") == "tree":
        return _verify_tree(d, P, exact)
    return _verify_patterns(d, P, exact)
