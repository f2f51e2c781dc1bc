"""The independent verifier of best-neuron certificates (private; see :func:`verify`).

It takes the problem from its caller, owns every tolerance (the constants
below), and checks the certificate's evidence with short numpy code of its
own (:mod:`._proofs`); it imports no solver and no pencil routine of the
search.  Completeness is checked by :func:`relu_gating.patterns.check_completeness`
(witnesses verified with a rigorous rounding bound or exact rationals,
distinctness, and an independent exact chamber count).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from relu_gating._alloc import warm_allocator
from relu_gating._gc import paused_gc
from relu_gating.certificate._format import FORMAT, Certificate, load_certificate, parse_certificate
from relu_gating.certificate._problem import StatedProblem, pow2_scales, state_problem
from relu_gating.certificate._proofs import cap_bound, dual_bound, exact_slack_pd, pattern_pencils, pencil_bounds, support_bounds

__all__ = ["VerifyReport", "verify", "prove_bounds", "VALUE_TOL", "BOUND_SLACK", "EXCLUDE_RTOL", "CHUNK"]

#: Absolute tolerance on objective values (all in [0, 1]): the recomputed
#: value must match the claim, and ``value >= alpha * upper - VALUE_TOL``.
VALUE_TOL = 1e-9
#: A pattern's claimed bound may fall short of what the verifier proves by at most this.
BOUND_SLACK = 1e-7
#: A neuron with ``||(I - Pi_H) h|| <= EXCLUDE_RTOL ||h||`` is excluded (the objective's definition).
EXCLUDE_RTOL = 1e-9
#: A dual-evidence bound proven in floats more than this above its claim is re-proven exactly.
EXACT_TRIGGER = 1e-10
#: At most this many claims without evidence are re-proven exactly (a few ms each) when floats fall short.
EXACT_PENCIL_LIMIT = 20_000
#: Patterns per batch of the bound proofs (bounded memory).
CHUNK = 4096
_BOUND, _EXACT, _PRUNED = 1, 2, 3


@dataclass(frozen=True)
class VerifyReport:
    """Outcome of :func:`verify`.

    Attributes
    ----------
    valid : bool
        The certificate is for the stated problem, its value recomputes, its
        pattern list is complete, its bounds are proven, and a claim of
        certification holds.
    certified : bool
        ``value >= alpha * upper_bound - VALUE_TOL`` with the proven bound.
    value : float
        Objective of ``relu(Phi theta)`` recomputed here.
    upper_bound : float
        The upper bound over all neurons proven here.
    alpha : float
        The certificate's alpha.
    alpha_proven : float
        ``value / upper_bound``: the optimality factor actually proven.
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


def _problem_mismatch(c: Certificate, P: StatedProblem) -> list[str]:
    """How the certificate's recorded problem differs from the stated one (empty if it does not)."""
    rec = c.d["problem"]
    if rec.get("features") != P.features:  # one reason: the objective follows from the features
        return [f"the certificate was computed with features = {rec.get('features')!r} (objective "
                f"{rec.get('objective')!r}); state the same features to verify it (features= of verify, "
                f"--features of the CLI), not {P.features!r}"]
    stated = {"n": P.n, "m": P.Phi.shape[1], "K": P.U.shape[1], "objective": P.objective}
    out = [f"{k} = {rec.get(k)!r} in the certificate, {v!r} in the stated problem"
           for k, v in stated.items() if rec.get(k) != v]
    if P.features == "array" and rec.get("features") == "array" and rec.get("features_sha256") != P.features_sha256:
        out.append("the features array differs from the one the certificate was computed with")
    return out


def _objective(P: StatedProblem, theta: np.ndarray) -> float:
    """``N_K`` or ``G_H`` of ``relu(Phi theta)``; ``nan`` for an excluded neuron."""
    h = np.maximum(P.Phi @ theta, 0.0)
    y = h if P.QH is None else h - P.QH @ (P.QH.T @ h)
    hh, yy = float(h @ h), float(y @ y)
    if not (hh > 0 and yy > EXCLUDE_RTOL**2 * hh):
        return float("nan")
    M = P.U if P.QH is None else P.M
    return float(np.sum((M.T @ y) ** 2) / yy)


def check_value(c: Any, P: StatedProblem, live: bool) -> tuple[float, list[str]]:
    """The value recomputed from ``relu(Phi theta)`` and what is wrong with the claim; ``live``: some
    pattern has an admissible neuron (else value 0 with an excluded ``theta`` is the right answer)."""
    reasons = []
    z = P.Phi @ c.theta
    value = _objective(P, c.theta)
    if np.isnan(value):
        if not (c.value == 0.0 and not live):
            reasons.append("theta gives an excluded neuron (relu(Phi theta) is 0 or in col(features))")
        value = 0.0
    elif abs(value - c.value) > VALUE_TOL:
        reasons.append(f"value {c.value!r} differs from the objective of relu(Phi theta) recomputed here, {value!r}")
    eps = 1e-12 * (np.abs(z).max() + 1e-300)
    if not np.all(np.where(z > eps, c.pattern, True) & np.where(z < -eps, ~c.pattern, True)):
        reasons.append("pattern disagrees with the signs of Phi theta")
    return value, reasons


def _check_complete(c: Certificate, P: StatedProblem) -> tuple[dict, list[str]]:
    from relu_gating.patterns import check_completeness

    # columns scaled by exact powers of two (theta -> theta / d): the same chambers, well-scaled floats
    d = pow2_scales(P.Phi)
    e = -np.frexp(d)[1] + 1  # d = 2^-e
    exact = {k: tuple(int(t) << int(ej - e.min()) for t, ej in zip(v, e)) for k, v in c.exact_witnesses.items()}
    W = c.witnesses / d  # exact: powers of two
    W = W * pow2_scales(W, axis=1)  # a power of two per row: exact, same signs
    rep = check_completeness(P.Phi * d, c.masks, W, exact_witnesses=exact or None)
    info = {"ok": bool(rep.ok), "method": rep.method, "expected": rep.expected, "found": rep.found}
    return info, ([] if rep.ok else [f"pattern set is not a complete list of realized patterns: {rep.reason}"])


def _excluded(P: StatedProblem, mask: np.ndarray) -> bool:
    """Every neuron of the pattern is excluded (``h = 0`` or ``h`` in ``col(H)``), to rounding."""
    if not mask.any():
        return True
    if P.QH is None:
        return False
    SQ = P.Q * mask[:, None]
    u, s, _ = np.linalg.svd(SQ, full_matrices=False)
    u = u[:, s > 1e-12 * max(s[0], 1e-300)]
    y = u - P.QH @ (P.QH.T @ u)
    return bool(np.linalg.norm(y, 2) <= EXCLUDE_RTOL)


def _proven_bounds(c: Certificate, P: StatedProblem) -> np.ndarray:
    """The bound proven for every pattern of a certificate."""
    return _prove(P, c.masks, c.bounds, c.evidence, c.settlement == _PRUNED)


def _prove(P: StatedProblem, masks: np.ndarray, claims: np.ndarray, evidence: dict,
           pruned: np.ndarray) -> np.ndarray:
    """The bound proven per pattern: min of the pencil inequality (with the claim), the support
    bound, the cap and the dual evidence; ``-inf`` where no neuron is admissible."""
    out = np.empty(claims.size)
    cap = cap_bound(P.M, P.QH is not None)
    for s in range(0, claims.size, CHUNK):
        mk = masks[s:s + CHUNK].astype(float)
        A, B = pattern_pencils(mk, P.Q, P.M, P.QH)
        claim = claims[s:s + CHUNK]
        pen = np.minimum(pencil_bounds(A, B, claim, P.n), cap)
        weak = np.flatnonzero(pen > claim)  # the support bound may prove these
        if weak.size:
            pen[weak] = np.minimum(pen[weak], support_bounds(mk[weak], P.U, P.M, P.QH))
        out[s:s + CHUNK] = pen
    for i, (rows, N) in evidence.items():
        if 0 <= i < out.size:
            out[i] = min(out[i], _dual_proof(P, masks[i], claims[i], rows, N))
    # claims the float allowance is too coarse for (ill-conditioned B_S): an exact rational proof
    # that claim B_S - A_S is positive definite (the pencil bound, no evidence needed)
    coarse = np.flatnonzero((out > claims + BOUND_SLACK) & np.isfinite(claims) & ~pruned)
    for i in coarse[:EXACT_PENCIL_LIMIT]:
        if int(i) not in evidence and _exact_pencil(P, masks[i], claims[i]):
            out[i] = claims[i]
    # a pattern with no admissible neuron needs no bound, whatever it was settled as
    for i in np.flatnonzero(pruned | (out > claims + BOUND_SLACK)):
        if _excluded(P, masks[i]):
            out[i] = -np.inf
    return out


def _exact_pencil(P: StatedProblem, mask: np.ndarray, claim: float) -> bool:
    """``claim B_S - A_S`` positive definite in exact rationals (the verifier's basis taken as exact)."""
    empty = np.zeros((0, P.Q.shape[1]))
    return exact_slack_pd(claim, P.Q, P.M, P.QH, mask, empty, np.zeros((0, 0)))


def _dual_proof(P: StatedProblem, mask: np.ndarray, claim: float, rows: np.ndarray, N: np.ndarray) -> float:
    """The bound proven by dual evidence: floats first, then, where their allowance is too coarse,
    an exact rational proof of the claim."""
    A, B = pattern_pencils(mask.astype(float)[None], P.Q, P.M, P.QH)
    G = np.where(mask[rows], 1.0, -1.0)[:, None] * P.Q[rows]
    Nc = np.maximum(0.5 * (N + N.T), 0.0)
    proven = dual_bound(A[0], B[0], G.T @ Nc @ G, P.n)
    if proven > claim + EXACT_TRIGGER and exact_slack_pd(claim, P.Q, P.M, P.QH, mask, G, Nc):
        proven = claim
    return proven


def prove_bounds(Phi: Any, U_K: Any, features: Any, masks: np.ndarray, claims: np.ndarray,
                 evidence: dict) -> np.ndarray:
    """What this verifier proves for some patterns' claimed bounds (``evidence`` keyed by row of
    ``masks``): the search calls it to claim no less than the checker will accept."""
    P = state_problem(Phi, U_K, features)
    return _prove(P, np.asarray(masks, dtype=bool), np.asarray(claims, dtype=float), evidence,
                  np.zeros(len(claims), dtype=bool))


def verify(certificate: Any, Phi: Any, U_K: Any, features: Any = "bias") -> VerifyReport:
    """Re-check a best-neuron certificate against the problem stated by the caller.

    Parameters
    ----------
    certificate : NeuronResult, dict, JSON string, path to a JSON file or to a binary ``.npz`` one
    Phi : array_like, shape (n, m)
    U_K : array_like, shape (n, K)
    features : "bias" (default), None, "none" or array_like, shape (n, q)
        The features of the query, stated by the caller (as in
        :func:`relu_gating.best_neuron`, with the same default).  A
        certificate computed for other features, another ``K`` or other
        sizes is rejected, saying how.

    Returns
    -------
    VerifyReport
        Malformed certificates raise :class:`~relu_gating.errors.CertificateError`;
        unusable inputs :class:`~relu_gating.errors.InputError`.

    Notes
    -----
    Nothing that decides what is checked is read from the certificate: the
    tolerances are this module's constants (``VALUE_TOL``, ``BOUND_SLACK``,
    ``EXCLUDE_RTOL``), the rank of ``Phi`` is computed exactly, the basis and
    every bound are derived here.  Each claimed pattern bound must be proven
    (to ``BOUND_SLACK``) by the pencil inequality, the support bound, the
    global cap, or its dual evidence; certification is judged with the
    proven bounds.
    """
    from relu_gating.certificate._binary import is_binary

    warm_allocator()  # chunks of temporaries stay in the heap (relu_gating._alloc)
    if is_binary(certificate):  # the .npz form, verified as a stream (._binary_verify)
        from relu_gating.certificate._binary_verify import verify_binary

        return verify_binary(certificate, Phi, U_K, features)
    with paused_gc():  # a large JSON certificate is millions of small lists, no cycles
        return _verify_json(certificate, Phi, U_K, features)


def _verify_json(certificate: Any, Phi: Any, U_K: Any, features: Any) -> VerifyReport:
    d = load_certificate(certificate)
    if d.get("kind") == "tree":  # the branch and bound's tree certificate (._tree)
        from relu_gating.certificate._tree import verify_tree

        if d.get("format") != FORMAT:
            from relu_gating.errors import CertificateError

            raise CertificateError(f"certificate format must be {FORMAT!r}, got {d.get('format')!r}")
        return verify_tree(d, state_problem(Phi, U_K, features))
    c = parse_certificate(d)
    P = state_problem(Phi, U_K, features)
    mismatch = _problem_mismatch(c, P)
    if mismatch:
        reason = "certificate is for another problem: " + "; ".join(mismatch)
        return VerifyReport(False, False, float("nan"), float("nan"), c.alpha, 0.0, (reason,),
                            {"problem": {"ok": False, "differences": mismatch}})
    checks: dict[str, Any] = {"problem": {"ok": True}}
    value, reasons = check_value(c, P, bool(np.any(c.masks[c.settlement != _PRUNED])))
    checks["value"] = {"ok": not reasons, "recomputed": value}
    info, why = _check_complete(c, P)
    checks["completeness"] = info
    reasons += why
    proven = _proven_bounds(c, P)
    unproven = np.flatnonzero(proven > c.bounds + BOUND_SLACK)
    return conclude(c, value, float(proven.max(initial=-np.inf)), int(unproven.size), unproven[:5].tolist(),
                    len(c.evidence), reasons, checks)


def conclude(c: Any, value: float, top: float, unproven: int, first: list, n_evidence: int, reasons: list,
             checks: dict) -> VerifyReport:
    """The verdict from the checks so far and the proven bounds (largest ``top``; ``unproven`` claims)."""
    checks["bounds"] = {"ok": unproven == 0, "unproven": unproven, "dual_evidence": n_evidence}
    if unproven:
        reasons.append(f"{unproven} pattern bound(s) not proven, e.g. pattern {first}")
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
