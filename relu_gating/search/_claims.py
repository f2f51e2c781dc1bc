"""What the search claims per pattern: only what is proven, and all the checker proves (private).

One function, :func:`settle_claims`, shared by the enumeration (in memory and streamed) and the
branch and bound's chamber leaves.  For each pattern with a solver's claim ``u`` and its dual
evidence ``(rows, N)``:

1. **accept** ``u`` (or ``u`` plus a little of :data:`CLAIM_SLACK`) when it is proven: by the
   float pencil check with its rigorous rounding allowance (``u B - A - D`` clearly positive
   definite, :func:`relu_gating.search.proofs._pattern.pencil_bounds`), else by the same inequality
   decided in exact rationals on the caller's own inputs
   (:func:`relu_gating.search.proofs._pattern.exact_claim`: ``Phi``, ``U_K``, ``H`` as the rationals
   they are; no rounded basis, no threshold deciding a kernel);
2. otherwise claim the least bound that is proven: the float bound with its allowance, the
   support bound or the cap, tightened by bisection with the exact test (:func:`pencil_bound`);
   before that, a pattern whose pencil has an exact kernel gets multipliers on combinations of rows
   that annihilate it, exact rationals (:mod:`relu_gating.search._exact.kernel_evidence`);
   evidence that proves nothing is dropped, and a pattern whose claim had to rise is reported as
   not settled; then (2b) a claim just above a face's value (a one-sample neuron of its active set,
   or the incumbent's value ``near``) is proven there, if it can be, by exact multipliers built at
   the face (:mod:`relu_gating.search._exact.faces`: a supremum on the chamber's boundary, which a
   solver's float multipliers leave open by their own error);
3. **the checker's view**: the verifier's own proof of each claim
   (:func:`relu_gating.certificate.prove_bounds`) raises a claim it cannot confirm, and lowers one
   it proves tighter, when that lower value is itself proven here (step 1): the search's
   ``certified`` is then the verifier's.

A float never decides here: it only accepts, with its error bound; the exact check decides the
rest, and what neither proves is not claimed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Claims", "settle_claims", "checked_exclusions", "CLAIM_SLACK", "EXACT_CLAIMS_LIMIT", "proven_claim",
           "pencil_bound", "exactly_excluded", "stated", "local_claim"]

#: Relative slack tried in turn on a claim the checks reject at the solver's value (the multipliers'
#: rounding): ``u (1 + rel) + rel``.
CLAIM_SLACK = (1e-11, 1e-10, 1e-9)

#: At most this many claims per query are decided in exact rationals (a few ms each); beyond it,
#: the unconfirmed ones fall back to their claim-free bound.
EXACT_CLAIMS_LIMIT = 2000


@dataclass
class Claims:
    """Outcome of :func:`settle_claims` for the patterns it was given (aligned arrays)."""

    bounds: np.ndarray  # the claims to write (float)
    keep_evidence: np.ndarray  # bool: the evidence proves the claim (else drop it)
    fallback: np.ndarray  # bool: no proof of the solver's claim; a claim-free bound instead (not settled)
    replaced: dict  # position -> new evidence (rows, exact N) that proves the claim (exact-kernel patterns)
    # position -> (theta, value): a neuron the rescue found strictly inside the chamber (its own coordinates,
    # :func:`local_claim`), its value proven to 1e-10 or exact; the caller offers it to its incumbent
    neurons: dict = field(default_factory=dict)


class _Budget:
    def __init__(self, limit: int) -> None:
        self.left = limit
        self.local_left = LOCAL_RESCUES  # solves in the chamber's own coordinates (local_claim)


def _features(obj: Any) -> Any:
    return {"none": None, "bias": "bias"}.get(obj.features, obj.H)


def _exact_H(obj: Any) -> Any:
    """The exact orthogonal basis of ``col(H)`` of a query (cached on the objective)."""
    from relu_gating.search.proofs import exact_feature_basis

    cache = obj.__dict__.setdefault("_exact_H_cache", {}) if hasattr(obj, "__dict__") else {}
    if "basis" not in cache:
        cache["basis"] = exact_feature_basis(obj.feature_matrix)
    return cache["basis"]


def _float_bounds(S: Any, masks: np.ndarray, claims: np.ndarray, ev: list) -> np.ndarray:
    """What the float pencil check proves for each claim, with its rigorous rounding allowance: the
    claim itself when ``u B - A - D`` is clearly positive definite, else the claim plus the shortfall
    over a proven lower bound of ``lambda_min(B)``, else ``inf`` (never a decision by a threshold)."""
    from relu_gating.search.proofs import gross_scale, pattern_pencils, pencil_bounds

    A, B = pattern_pencils(masks.astype(float), S.Q, S.M, S.QH)
    D = np.zeros_like(A)
    for k, (rows, N) in enumerate(ev):
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        if rows.size:
            G = np.where(masks[k, rows], 1.0, -1.0)[:, None] * S.Q[rows]
            N = np.asarray(N, dtype=float).reshape(rows.size, rows.size)
            D[k] = G.T @ np.maximum(0.5 * (N + N.T), 0.0) @ G
    return pencil_bounds(A, B, claims, S.n, D, None if S.QH is None else gross_scale(masks.astype(float), S.Q),
                         S.allowances())


def proven_claim(obj: Any, S: Any, mask: np.ndarray, claim: float, rows: np.ndarray, N: np.ndarray,
                 budget: _Budget | None = None) -> float:
    """The smallest proven bound among ``claim`` and ``claim (1 + rel) + rel`` (``rel`` in
    :data:`CLAIM_SLACK`): the float pencil check (accepting, or bounding the shortfall rigorously),
    else the same inequality decided in exact rationals; ``inf`` when nothing is proven."""
    from relu_gating.search.proofs import exact_claim

    if not np.isfinite(claim):
        return np.inf
    tries = np.array([claim] + [claim * (1 + rel) + rel for rel in CLAIM_SLACK])
    fb = _float_bounds(S, np.repeat(mask[None], tries.size, axis=0), tries, [(rows, N)] * tries.size)
    if fb[0] <= claim:
        return claim
    best = float(fb.min())  # every one of them is proven: the least, unless an exact check proves less
    for c in tries.tolist():
        if c >= best:
            break
        if budget is not None:
            if budget.left <= 0:
                break
            budget.left -= 1
        if exact_claim(c, obj.Phi, obj.U_K, _exact_H(obj), mask, rows, N):
            return c
    return best


def _fallback(S: Any, masks: np.ndarray) -> np.ndarray:
    """Claim-free bounds valid whatever a solver said: the support bound and the cap."""
    from relu_gating.search.proofs import cap_bound, support_bounds

    cap = cap_bound(S.M, S.QH is not None, S.d_M)
    if masks.shape[0] == 0:
        return np.zeros(0)
    return np.minimum(support_bounds(masks.astype(float), S.U, S.M, S.QH, (S.eta_H, S.d_M)), cap)


#: Relative width at which :func:`pencil_bound` stops bisecting.
BISECT_RTOL = 1e-10


def pencil_bound(obj: Any, mask: np.ndarray, lo: float, hi: float, budget: _Budget | None = None,
                 rows: Any = None, N: Any = None) -> float:
    """A bound of the pattern's objective proven in exact rationals by its evidence ``(rows, N)``
    (none: the pencil ``(A_S, B_S)`` over all of ``theta``), between ``lo`` (a refuted claim) and
    ``hi`` (a proven bound, returned when nothing lower is proven): bisection on ``u``, each step
    the exact test ``u B - A - G_T^T N G_T`` PSD."""
    from fractions import Fraction

    from relu_gating.search.proofs import exact_below, exact_gram, exact_parts

    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        return hi
    rows = np.zeros(0, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    N = np.zeros((0, 0)) if N is None else np.asarray(N, dtype=float)
    AD, B = exact_parts(obj.Phi, obj.U_K, _exact_H(obj), mask, rows, N)
    ZZ = None if obj.features == "none" else exact_gram(obj.Phi, mask)
    best = hi
    while best - lo > BISECT_RTOL * max(abs(best), 1e-300) + 1e-15:
        if budget is not None:
            if budget.left <= 0:
                break
            budget.left -= 1
        mid = 0.5 * (lo + best)
        if exact_below(Fraction(mid), AD, B, ZZ):
            best = mid
        else:
            lo = mid
    return best


def exactly_excluded(obj: Any, mask: np.ndarray) -> bool:
    """Every neuron of the pattern is excluded (``h = 0`` or ``h`` in ``col(H)``), decided exactly."""
    from relu_gating.search.proofs import exact_excluded

    return exact_excluded(obj.Phi, _exact_H(obj), mask)


def stated(obj: Any) -> Any:
    """The verifier's statement of the query (built once per objective)."""
    from relu_gating.search.proofs import state_problem

    cache = obj.__dict__.setdefault("_exact_H_cache", {}) if hasattr(obj, "__dict__") else {}
    if "stated" not in cache:
        cache["stated"] = state_problem(obj.Phi, obj.U_K, _features(obj))
    return cache["stated"]


def settle_claims(obj: Any, masks: np.ndarray, claims: np.ndarray, evidence: list,
                  limit: int = EXACT_CLAIMS_LIMIT, rational: bool = True, near: float | None = None) -> Claims:
    """Proven claims for some patterns (bool ``masks`` (k, n), solver ``claims`` (k,), one
    ``(rows, N)`` per pattern; empty rows: the pencil alone).  See the module docstring.
    ``rational``: where the solver's evidence fails on an exact kernel, evidence with exact rational
    multipliers may prove the claim instead (returned in ``replaced``, by position); so may exact
    multipliers at a supremum on the chamber's boundary, for claims just above a one-sample value or
    ``near`` (the incumbent's value, when the caller knows it)."""
    from relu_gating.search.proofs import prove_bounds

    k = len(claims)
    evidence = list(evidence)
    claims = np.asarray(claims, dtype=float)
    out = claims.copy()
    keep = np.ones(k, dtype=bool)
    fell = np.zeros(k, dtype=bool)
    replaced: dict = {}
    neurons: dict = {}
    if k == 0:
        return Claims(out, keep, fell, replaced, neurons)
    S = stated(obj)
    budget = _Budget(limit)
    fast = _float_bounds(S, masks, claims, evidence)
    for i in range(k):
        rows, N = evidence[i]
        out[i] = claims[i] if fast[i] <= claims[i] else proven_claim(obj, S, masks[i], float(claims[i]), rows, N, budget)
    loose = claims * (1 + CLAIM_SLACK[-1]) + CLAIM_SLACK[-1]
    bad = np.flatnonzero(~(out <= loose) & np.isfinite(claims))
    if bad.size:  # no proof of the solver's claim: the least bound its evidence proves, exactly
        fb = _fallback(S, masks[bad])
        rescue = _Budget(limit)  # the new evidence's own exact checks: step 1 spent the budget on its refutations
        for k, i in enumerate(bad.tolist()):
            hi = float(min(out[i], fb[k]))
            rows, N = evidence[i]
            got = kernel_claim(obj, masks[i], float(claims[i]), rows, rescue) if rational else None
            got = got if got is not None or not rational else local_claim(obj, S, masks[i], hi, rescue, neurons, i)
            if got is not None and got[0] < hi:  # multipliers on combinations that annihilate the exact kernel
                out[i], replaced[i], keep[i] = got[0], got[1], True
                evidence[i] = got[1]
                continue
            out[i] = pencil_bound(obj, masks[i], float(claims[i]), hi, budget, rows, N)
            keep[i] = out[i] < hi or (hi == out[i] and np.isfinite(out[i]) and out[i] < fb[k])
        fell[bad] = out[bad] > loose[bad]
    if rational:
        _faces(obj, masks, out, keep, fell, loose, evidence, replaced, limit, near)
        top = max((v for _, v in neurons.values()), default=None)
        if top is not None and (near is None or top > near):  # the rescue's neuron may be the incumbent now
            _faces(obj, masks, out, keep, fell, loose, evidence, replaced, limit, top)
    ev = {i: evidence[i] for i in np.flatnonzero(keep).tolist()}
    checker = prove_bounds(obj.Phi, obj.U_K, _features(obj), masks, out, ev)
    up = np.flatnonzero(np.isfinite(checker) & (checker > out))
    for i in up.tolist():  # what the checker cannot confirm is raised: to the least claim both prove
        out[i] = _confirmed(obj, masks[i], float(out[i]), float(checker[i]), evidence[i] if keep[i] else None, budget)
    down = np.flatnonzero(np.isfinite(checker) & (checker < out) & keep)
    for i in down.tolist():  # the checker proves more: claim it too, if it is proven here as well
        rows, N = evidence[i]
        d = proven_claim(obj, S, masks[i], float(checker[i]), rows, N, budget)
        if d <= checker[i]:
            out[i] = d
    return Claims(out, keep, fell, replaced, neurons)


def _faces(obj: Any, masks: np.ndarray, out: np.ndarray, keep: np.ndarray, fell: np.ndarray,
           loose: np.ndarray, evidence: list, replaced: dict, limit: int, near: float | None) -> None:
    """Step 2b (in place): a claim left just above the best one-sample value of its active set or
    ``near`` (a supremum on the chamber's boundary, which a solver's float multipliers cannot close)
    is proven at the value of a face by exact multipliers on the active rows
    (:func:`relu_gating.search._exact.faces.face_claim`), when they prove less than the claim."""
    from relu_gating.search._exact.faces import face_candidates, face_claim, polished_claim

    budget = _Budget(limit)
    cands = face_candidates(obj, masks, out, near)
    if near is not None and np.isfinite(near):  # a refuted claim above the incumbent: its orthant may be below it
        sc = 2.0**-39 * max(1.0, abs(float(near)))
        cands = sorted(set(cands) | set(np.flatnonzero(fell & (out > near + sc)).tolist()))
    for i in cands:
        got = face_claim(obj, _exact_H(obj), masks[i], float(out[i]), budget, near)
        if got is None and keep[i]:  # a face beyond the orthant's: the solver's evidence polished there
            rows, N = evidence[i]
            got = polished_claim(obj, _exact_H(obj), masks[i], float(out[i]), rows, N, budget)
        if got is not None and got[0] < out[i]:
            out[i], keep[i], evidence[i], replaced[i] = got[0], True, got[1], got[1]
            fell[i] = out[i] > loose[i]


def _confirmed(obj: Any, mask: np.ndarray, claim: float, checker: float, ev: Any, budget: _Budget) -> float:
    """A claim the checker did not confirm at ``claim`` (its float test is coarser: a basis allowance
    for an ill-conditioned ``Phi``, and its exact ladder steps from the claim by 2^-40 and then by
    ``BOUND_SLACK``): the least of ``claim (1 + rel) + rel`` (``rel`` in :data:`CLAIM_SLACK`) that
    the exact check here proves and the checker confirms, else the checker's bound."""
    from relu_gating.search.proofs import exact_claim, prove_bounds

    rows, N = ev if ev is not None else (np.zeros(0, dtype=np.int64), np.zeros((0, 0)))
    for c in [claim * (1 + rel) + rel for rel in CLAIM_SLACK]:
        if c >= checker or budget.left <= 0:
            break
        budget.left -= 1
        if exact_claim(c, obj.Phi, obj.U_K, _exact_H(obj), mask, rows, N):
            again = prove_bounds(obj.Phi, obj.U_K, _features(obj), mask[None], np.array([c]),
                                 {0: ev} if ev is not None else {})
            if again[0] <= c:
                return c
    return checker


def kernel_claim(obj: Any, mask: np.ndarray, claim: float, rows: Any, budget: _Budget | None) -> tuple | None:
    """``(bound, (rows, exact N))`` proven for a pattern whose pencil has an exact kernel, by
    multipliers on row combinations that annihilate it
    (:func:`relu_gating.search._exact.kernel_evidence.kernel_evidence`), or for one whose pencil is
    singular to rounding only, by multipliers solved in exactly rescaled coordinates
    (:func:`relu_gating.search._exact.near_kernel.near_kernel_evidence`); None otherwise."""
    from relu_gating.search._exact.kernel_evidence import kernel_evidence

    if not np.isfinite(claim):
        return None
    tries = [claim] + [claim * (1 + rel) + rel for rel in CLAIM_SLACK]
    got = kernel_evidence(obj, _exact_H(obj), mask, tries, np.asarray(rows, dtype=np.int64).reshape(-1), budget)
    if got is None:  # singular to rounding only: the pencil solved again in well-scaled coordinates
        from relu_gating.search._exact.near_kernel import near_kernel_evidence

        got = near_kernel_evidence(obj, _exact_H(obj), mask, tries, budget)
    return got


def local_claim(obj: Any, S: Any, mask: np.ndarray, hi: float, budget: _Budget, neurons: dict | None = None,
                key: int = 0) -> tuple | None:
    """``(bound, (rows, N))`` proven (:func:`proven_claim`) by evidence from the pattern solved in its
    own coordinates (:func:`relu_gating.search._exact.tasks.local_evidence`: chambers the global basis
    of ``col(Phi)`` scales badly, at the ends of the float range), where it proves less than ``hi``.
    The neuron found there (strictly inside the chamber, decided exactly; its value proven) is put in
    ``neurons[key]`` as ``(theta, value)``: the solve whose claim failed had missed it (seeds 7 and 51 of
    ``benchmarks/float_range_sweep.py``: a solver's claim 0.69 refuted, the chamber's optimum 0.96)."""
    from relu_gating.search._exact.tasks import local_evidence

    if budget.left <= 0 or budget.local_left <= 0:
        return None
    budget.local_left -= 1
    got = local_evidence(obj, mask, max_seconds=LOCAL_SECONDS)
    if got is not None and neurons is not None and np.isfinite(got[3]):
        neurons[key] = (np.asarray(got[2], dtype=float), float(got[3]))
    if got is None or got[1] is None or not got[0] < hi:
        return None
    rows, N = got[1]
    bound = proven_claim(obj, S, mask, got[0], rows, N, budget)
    return (bound, (rows, N)) if bound < hi else None


#: The time budget of one pattern's solve in its own coordinates as a rescue (:func:`local_claim`), and
#: how many patterns one call of :func:`settle_claims` rescues so at most.
LOCAL_SECONDS = 5.0
LOCAL_RESCUES = 16


def checked_exclusions(obj: Any, masks: Any, bounds: np.ndarray, status: np.ndarray,
                       limit: int = EXACT_CLAIMS_LIMIT, index: np.ndarray | None = None) -> list[str]:
    """Patterns settled as having no admissible neuron, re-decided exactly (in place): one that has
    an admissible neuron after all (or that is beyond ``limit`` exact checks) claims its claim-free
    bound and is ``BOUND``.  Returns notes, naming a pattern by ``index[position]`` (default: its
    position; given when the arrays are a subset of the patterns)."""
    from relu_gating.search.state import BOUND, PRUNED

    idx = np.flatnonzero(status == PRUNED)
    if idx.size == 0:
        return []
    mk = np.asarray(masks[idx], dtype=bool)
    live = idx[mk.any(axis=1)]  # the all-inactive pattern is excluded by definition
    if live.size == 0 or obj.features == "none":
        return []
    wrong = [int(i) for k, i in enumerate(live.tolist())
             if k >= limit or not exactly_excluded(obj, np.asarray(masks[i], dtype=bool))]
    if not wrong:
        return []
    w = np.array(wrong, dtype=np.int64)
    bounds[w] = _fallback(stated(obj), np.asarray(masks[w], dtype=bool))
    status[w] = BOUND
    return [f"{w.size} pattern(s) first found to have no admissible neuron have one in exact arithmetic: "
            f"they claim a claim-free bound (first: {int(w[0] if index is None else index[w[0]])})"]
