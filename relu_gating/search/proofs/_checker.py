"""The checker's proofs offered to the search: :func:`prove_bounds`, so that the search claims no
more than the checker proves (all checking lives in :mod:`relu_gating.checker`, which
:func:`relu_gating.verify` is).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from relu_gating.certificate import packed_multipliers
from relu_gating.checker import BOUND_SLACK, CHUNK, EXCLUDE_RTOL, VALUE_TOL

__all__ = ["prove_bounds", "checker_lifted", "checker_excluded", "checker_eta", "VALUE_TOL", "BOUND_SLACK", "EXCLUDE_RTOL", "CHUNK"]


_STATED: dict = {}


def _checker_problem(S: Any) -> Any:
    """The checker's statement of a problem stated by :mod:`relu_gating.search.proofs._problem`
    (features ``"array"`` through their orthonormal basis), cached per object."""
    got = _STATED.get(id(S))
    if got is None or got[0] is not S:  # by identity first (called per pattern), then by content
        features = {"none": None, "bias": "bias"}.get(S.features, S.QH)
        got = _STATED[id(S)] = (S, _stated(S.Phi, S.U, features))
        if len(_STATED) > 8:
            _STATED.pop(next(iter(_STATED)))
    return got[1]


def _prove(S: Any, masks: np.ndarray, claims: np.ndarray, evidence: dict, pruned: np.ndarray) -> np.ndarray:
    """The checker's proven bound per pattern (:func:`relu_gating.checker._bounds.prove`)."""
    from relu_gating.checker import prove

    return prove(_checker_problem(S), np.asarray(masks, dtype=bool), np.asarray(claims, dtype=float), evidence,
                 np.asarray(pruned, dtype=bool))


def checker_lifted(S: Any, signs: np.ndarray, claim: float, dec: np.ndarray, N: dict, mu: np.ndarray) -> bool:
    """Does the checker's float test of a ``"d"`` leaf (:func:`relu_gating.checker.lifted.lifted_leaf`,
    what ``verify`` runs) prove ``claim`` from the lifted evidence ``(dec, N sparse, mu)`` on the node
    with these signs?  (Its basis allowance is wider than the search's copy of the test.)"""
    from relu_gating.checker.lifted import lifted_leaf as lifted_bound

    P = _checker_problem(S)
    zero = ~np.any(np.asarray(P.Phi) != 0, axis=1)
    Nj = packed_multipliers(N)  # as the tree certificate writes it
    got = lifted_bound(P, np.asarray(signs), zero, float(claim), [int(j) for j in dec], Nj, [float(x) for x in mu])
    return bool(np.isfinite(got))


def checker_excluded(S: Any, mask: np.ndarray) -> bool:
    """The checker's exact exclusion decision (:func:`relu_gating.checker._exact_claims.excluded`)."""
    from relu_gating.checker import excluded

    return excluded(_checker_problem(S), np.asarray(mask, dtype=bool))


def prove_bounds(Phi: Any, U_K: Any, features: Any, masks: np.ndarray, claims: np.ndarray,
                 evidence: dict) -> np.ndarray:
    """What the checker proves for some patterns' claimed bounds (``evidence`` keyed by row of
    ``masks``): the search calls it to claim no less than the checker will accept."""
    from relu_gating.checker import prove

    return prove(_stated(Phi, U_K, features), np.asarray(masks, dtype=bool), np.asarray(claims, dtype=float),
                 evidence, np.zeros(len(claims), dtype=bool))


_BY_CONTENT: dict = {}


def _stated(Phi: Any, U_K: Any, features: Any) -> Any:
    """The checker's statement of ``(Phi, U_K, features)``, cached by content (SHA-256 of the
    arrays): the branch and bound asks :func:`prove_bounds` once per chamber, and stating the
    problem decides ``Phi``'s pivot columns in exact rationals (half of a search's time at
    n = 1000, d = 2 before the cache)."""
    from relu_gating.checker import array_sha256
    from relu_gating.checker import state_problem

    feat = features if features is None or isinstance(features, str) else array_sha256(np.asarray(features))
    key = (array_sha256(np.asarray(Phi)), array_sha256(np.asarray(U_K)), feat)
    got = _BY_CONTENT.get(key)
    if got is None:
        got = _BY_CONTENT[key] = state_problem(Phi, U_K, features)
        if len(_BY_CONTENT) > 4:
            _BY_CONTENT.pop(next(iter(_BY_CONTENT)))
    return got


def checker_eta(Phi: Any, U_K: Any, features: Any) -> float:
    """The checker's proven ``||QH QH^T - Pi_H||_2`` for the query (0 without features; ``inf`` where it
    proves none): how much its float proofs of node bounds widen on nearly dependent features."""
    if features is None or (isinstance(features, str) and features == "none"):
        return 0.0
    return float(_stated(Phi, U_K, features).eta_H)
