"""Dual (DNN) evidence for one pattern: multipliers that bound its objective, found by the
search and re-checked by the verifier (private).

For a pattern with pencil ``(A, B)`` and cone rows ``G`` (``G x >= 0``), evidence is a row set
``T`` and an entrywise nonnegative ``N`` with ``u B - A - G_T^T N G_T`` positive semidefinite:
then ``u`` bounds the objective on the pattern.  Any row subset gives a valid bound; the choice
only decides tightness.
"""

from __future__ import annotations

import warnings
from typing import Iterator

import numpy as np

from relu_gating._inputs.scaling import pow2_norms, unit_rows

__all__ = ["dual_evidence", "dual_prune", "EVIDENCE_RTOL", "CLAIM_SLACK"]

#: Dual evidence within this relative gap of the exact value counts as tight.
EVIDENCE_RTOL = 1e-9

#: Dual evidence whose slack matrix has an eigenvalue below ``-EVIDENCE_SELF_RTOL * scale`` is
#: corrected (or withdrawn) before it is claimed.
EVIDENCE_SELF_RTOL = 1e-13

#: Relative slack added in turn to a claim whose check fails at the solver's value (the exact check
#: of ``claim B - A - G^T N G >= 0`` then has room for the multipliers' rounding): the search claims
#: what the verifier proves (chamber leaves of the tree, patterns of the enumeration certificate).
CLAIM_SLACK = (1e-11, 1e-10, 1e-9)

#: When the selected rows leave a gap, patterns with at most this many rows retry with all of them.
ALL_ROWS_MAX = 64


def _evidence_rows(A: np.ndarray, B: np.ndarray, G: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Rows of ``G`` for the dual multipliers: the rows tightest at ``x`` (an optimum or a
    witness) and the rows the unconstrained top eigenvector violates most.

    Any subset gives a valid bound (the cone lies in ``{G_T x >= 0}``); the
    choice only decides tightness, so thin cones whose facets a float LP
    cannot see are covered by the rows that bind at the optimum.
    """
    r = G.shape[1]
    Gn = unit_rows(G)  # rows near 2^1023 or 2^-1074: no square overflows or underflows
    slack = np.abs(Gn @ x) / max(float(pow2_norms(x)), 1e-300)
    w, V = np.linalg.eigh(B)
    keep = w > 1e-12 * max(w[-1], 1e-300)
    if not keep.any():  # B below 1e-300 (rows near 2^-537 square to nothing): the tightest rows only
        return np.unique(np.argsort(slack)[:2 * r]).astype(np.int64)
    Wh = V[:, keep] / np.sqrt(w[keep])
    top = Wh @ np.linalg.eigh(Wh.T @ A @ Wh)[1][:, -1]
    g = Gn @ top
    g = g if np.minimum(g, 0.0).sum() >= np.minimum(-g, 0.0).sum() else -g  # the sign nearer the cone
    return np.unique(np.concatenate([np.argsort(slack)[:2 * r], np.argsort(g)[:r]])).astype(np.int64)


def _facets(G: np.ndarray) -> np.ndarray:
    """The cone's facet rows (LPs / qhull: the slower, later choice of rows)."""
    import solvers

    try:
        return solvers.facet_rows(G)
    except solvers.ConeEigError:
        return np.arange(G.shape[0])


def dual_evidence(A: np.ndarray, B: np.ndarray, G: np.ndarray, rows: np.ndarray, value: float,
                   points: list[np.ndarray], facets: np.ndarray | None = None
                   ) -> tuple[float, tuple[np.ndarray, np.ndarray] | None]:
    """A checkable upper bound for a pattern: DNN multipliers on some of its rows.

    Returns ``(upper, (rows, N))``: ``upper * B - A - G_T^T N G_T`` is positive
    semidefinite on the pattern's coordinates (``T`` indexes the samples).
    The verifier re-checks that inequality itself; ``upper`` is at least the
    exact ``value`` found.  Row sets are tried until the bound is tight: the
    rows binding at each of ``points`` (the optimum, the witness), the facets with
    the former, the facets alone, then all rows if there are at most ``ALL_ROWS_MAX``.  ``facets``: the facet rows of
    ``G`` if already known (from the solver's float cone reduction of the same ``G``).
    """
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    for T in _row_sets(A, B, G, points, facets):
        got = _on_rows(A, B, G, T, warn=True)
        if got is not None and (best is None or got[0] < best[0]):
            best = (got[0], T, got[1])
        if best is not None and best[0] <= value + EVIDENCE_RTOL * max(abs(value), 1e-300):
            break
    if best is None:
        return np.inf, None
    upper, T, N = best
    return max(upper, value), _kept(rows, T, N)


def _on_rows(A: np.ndarray, B: np.ndarray, G: np.ndarray, T: np.ndarray, warn: bool = False
             ) -> tuple[float, np.ndarray] | None:
    """``(upper, N)`` from the multipliers on the rows ``T`` (self-checked), None if there are none."""
    import solvers

    try:
        dual = solvers.cone_dual(A, B, G[T])
    except (solvers.ConeEigError, np.linalg.LinAlgError) as exc:  # no evidence from these rows
        if warn:
            warnings.warn(f"dual evidence failed: {exc}", RuntimeWarning, stacklevel=3)
        return None
    upper = _self_checked(A, B, G[T], dual.N, float(dual.upper)) if np.isfinite(dual.upper) else np.inf
    return (upper, dual.N) if np.isfinite(upper) else None


def _kept(rows: np.ndarray, T: np.ndarray, N: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The evidence ``(sample rows, N)`` on the rows of ``T`` with a nonzero multiplier."""
    keep = np.flatnonzero(np.any(N != 0, axis=0))
    return rows[T[keep]].astype(np.int64), N[np.ix_(keep, keep)]


def _row_sets(A: np.ndarray, B: np.ndarray, G: np.ndarray, points: list[np.ndarray],
              facets: np.ndarray | None = None) -> Iterator[np.ndarray]:
    """Candidate row sets for the multipliers, cheapest first (computed only when reached)."""
    near = [_evidence_rows(A, B, G, points[0])]
    yield near[0]
    for x in points[1:]:
        yield _evidence_rows(A, B, G, x)
    fac = np.asarray(_facets(G) if facets is None else facets, dtype=np.int64)
    both = np.union1d(fac, near[0])
    yield both
    if fac.size < both.size:  # the facets alone: a smaller SDP, which the solver may settle where the union fails
        yield fac
    if G.shape[0] <= ALL_ROWS_MAX:
        yield np.arange(G.shape[0])


def _self_checked(A: np.ndarray, B: np.ndarray, G: np.ndarray, N: np.ndarray, upper: float) -> float:
    """The claim ``upper`` re-checked here before it is made: ``upper B - A - G^T N G`` must not be
    clearly indefinite; a small shortfall is added back over ``lambda_min(B)``, a large one on a
    (numerically) singular ``B`` withdraws the evidence (``+inf``)."""
    N = np.maximum(0.5 * (N + N.T), 0.0)
    C = upper * B - A - G.T @ N @ G
    scale = float(np.abs(A).max() + np.abs(B).max() * abs(upper) + np.abs(G.T @ N @ G).max())
    lam = float(np.linalg.eigvalsh(0.5 * (C + C.T))[0])
    if lam >= -EVIDENCE_SELF_RTOL * scale:
        return upper
    w = np.linalg.eigvalsh(B)
    if w[0] <= EVIDENCE_SELF_RTOL * max(w[-1], 1e-300):
        return np.inf
    return upper + 2.0 * (-lam) / w[0]


def dual_prune(A: np.ndarray, B: np.ndarray, G: np.ndarray, rows: np.ndarray, x: np.ndarray,
               target: float) -> tuple[float, tuple[np.ndarray, np.ndarray]] | None:
    """A pattern settled below ``target`` by evidence alone, before any exact solve, or None.

    One small SDP on the rows tightest at the strict interior point ``x`` plus the rows the
    unconstrained maximizer violates most (:func:`_evidence_rows`): ``(upper, (rows, N))``
    when its self-checked bound is at most ``target`` (the incumbent over alpha), else None
    (the pattern goes on to its exact solve).  An exact solve costs 3-5 ms at ``m = 3, 4`` and
    10 ms to seconds at ``m >= 5``, this 1-20 ms, and most candidate patterns end below the incumbent.
    """
    T = _evidence_rows(A, B, G, x)
    got = _on_rows(A, B, G, T)
    if got is None or not got[0] <= target:
        return None
    return got[0], _kept(rows, T, got[1])
