"""The strong node bound: a lifted doubly nonnegative relaxation coupling the undecided rows (private).

On a node with rows ``F+`` fixed active, ``F-`` fixed inactive and ``U`` undecided, a neuron is
``h = E x`` with ``x = (v, y)``: ``h_{F+} = Q_{F+} v``, ``h_{F-} = 0``, ``h_U = y``, where
``y_i = relu(q_i^T v)``.  Every such ``x`` satisfies the linear constraints ``g^T x >= 0``

* ``s_i q_i^T v >= 0`` for decided rows ``i`` (sign ``s_i``),
* ``y_i >= 0`` and ``y_i - q_i^T v >= 0`` for ``i`` in ``U``,

and the complementarity ``y_i (y_i - q_i^T v) = 0``.  So for any symmetric ``N >= 0`` (entrywise)
on a chosen list of these constraints and any ``mu``,

.. math::  u B - A - G^T N G - \\sum_i \\mu_i C_i \\succ 0 \\ \\Longrightarrow\\
           x^T A x \\le u\\, x^T B x \\text{ on every neuron of the node,}

with ``A = E^T M M^T E``, ``B = E^T (I - \\Pi_H) E`` and ``C_i = sym(e_{y_i} (e_{y_i} - q_i)^T)``.
Multipliers are found in two ways; either way the search then recomputes the bound the multipliers
prove (never a solver's objective), adds a margin, and claims it:

* first-order (:func:`first_order`): projected subgradient steps on ``(N, mu)`` for the top
  generalized eigenvalue, with Polyak's step towards the level that settles the node; where they
  do not prove it, the same steps on the slack at that level (:func:`level_order`), which need no
  positive definite ``B`` (at greedy steps ``B`` is singular or nearly so on many nodes: a former
  feature lies in the node's lifted span).  The node
  needs only *some* multipliers below that level, not the optimal ones, and on the nodes the
  search meets the relaxation is far below it (measured: 6-11 steps, 1-50 ms at 2-32 undecided
  rows, where Clarabel takes 20-2,600 ms); the multipliers are then made sparse
  (:func:`sparsify`: small entries dropped while the bound still settles), so the evidence stays
  small in the tree;
* the dual SDP (minimize ``u``) with Clarabel, where the first-order steps do not settle the node
  and the node is small (``CLARABEL_MAX_UNDECIDED``).  The evidence
``(dec, N, mu)`` is checked by :mod:`relu_gating.search.proofs._lifted` (slack positive
definite with a rounding allowance, ``N >= 0``), which shares nothing with this module.

When to pay (``benchmarks/bnb_bound_study.py``): only for nodes with at most ``MAX_UNDECIDED``
undecided rows whose cheap bound would not already settle them.
"""

from __future__ import annotations

import functools
import time
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from relu_gating._inputs.scaling import unit_rows
from relu_gating.search.bnb._lifted_admm import admm_level

__all__ = ["lifted", "lifted_parts", "Comp", "plain", "strong_bound", "first_order", "level_order", "proven_at", "sparsify", "compact", "MAX_UNDECIDED", "N_DECIDED"]

#: The strong bound is tried only on nodes with at most this many undecided rows (PSD size r + |U|).
MAX_UNDECIDED = 128
#: Clarabel is tried (after the first-order steps) only on nodes with at most this many undecided rows:
#: measured on wine PCA 5 and clustered 100 x 5 nodes (``benchmarks/bnb_bound_study.py``), 20 ms at 6-11
#: undecided rows, 130 ms at 12-17, 350 ms at 18-23.
CLARABEL_MAX_UNDECIDED = 8
#: Clarabel's multipliers are also checked (:func:`proven_at`) at its optimum ``u`` raised by this, relative.
CLARABEL_ROOM = 1e-6
#: First-order steps at most (each one symmetric eigendecomposition of size ``r + |U|``).
FO_STEPS = 60
#: Every ``FO_CHECK`` first-order steps the gap to the level must have shrunk to ``FO_SHRINK`` of what it was,
#: else the steps stop (the level is out of reach, or too slow to reach: the node is split instead).
FO_CHECK = 12
FO_SHRINK = 0.5
#: On nodes small enough for Clarabel (``CLARABEL_MAX_UNDECIDED``), whose solve costs about 16 ms there, the
#: first-order steps may take up to about that long first: ``FO_SMALL_STEPS`` steps, the gap checked every
#: ``FO_SMALL_CHECK``.  Measured on 300 nodes of 1-8 undecided rows of clustered 1000 x 3
#: (``benchmarks/lifted_small.py``): 266 settled by the steps alone against 100 with 60/12, and 7.2 ms a try
#: against 14.5 ms, the same 292 settled in all.
FO_SMALL_STEPS, FO_SMALL_CHECK = 200, 40
#: The first-order steps aim this far (relative) below the level asked for, so that dropping small
#: multipliers (:func:`sparsify`) keeps the bound below it.
FO_AIM = 1e-3
#: :func:`level_order` stops once the top eigenvalue of its slack is this far below zero, relative to the
#: scale of ``A`` and ``level B`` (the verifier's allowance is about 1e-10 of it on nodes of 130 undecided rows).
FO_LEVEL_TARGET = 1e-5
#: Relative margins tried above the pencil's top eigenvalue by :func:`plain` (the least that its slack proves).
PLAIN_MARGINS = (1e-9, 1e-6, 1e-3)
#: The whitened multipliers that :func:`proven` does not credit with the level are proven at it
#: (:func:`proven_at`) only where ``B``'s least eigenvalue is at most this fraction of its largest: elsewhere
#: :func:`proven`'s margin (the allowance over that eigenvalue) is below 1e-6 of the bound already.
PROVEN_AT_COND = 1e-4
#: :func:`level_order` runs (after :func:`first_order`) only where ``B``'s least eigenvalue is at most this
#: fraction of its largest (singular to rounding): elsewhere the whitened steps, proven by :func:`proven_at`, do
#: as well (iris step 4: 19 of 40 sampled nodes settled at 1e-6 and at 1e-12), and a failed try costs twice
#: (clustered 1000 x 3 at 1e-6: 120-135 undecided rows, 208-281 ms a try against 122-137 ms).
LEVEL_ORDER_COND = 1e-12
#: :func:`level_order`'s steps at most.
LEVEL_STEPS = 60
#: Multipliers below these fractions of the largest are dropped, the largest fraction that still proves the level.
SPARSE_FRACTIONS = (0.3, 0.1, 0.03, 0.01, 0.0)
#: The complementarity matrices held by their factors (:class:`Comp`) in :func:`strong_bound`; False: the
#: dense stack of :func:`lifted`, as before (a switch for ``benchmarks/lifted_steps.py``).
STRUCTURED = True
#: The steps compute only the top eigenpair (:func:`_top`); False: the whole ``eigh`` (before).
TOP_ONLY = True
#: Where the first-order steps do not prove the level on a node beyond Clarabel's sizes, ADMM on the
#: relaxation's primal (:func:`relu_gating.search.bnb._lifted_admm.admm_level`) tries next (True), or not
#: (False, the default).  Measured on iris greedy step 5 (docs/branch-and-bound.md, "ADMM at the level"): it
#: settles 24 of 38 nodes of 40-80 undecided rows the first-order steps left (25 of 40 at steps 6 and 8), at
#: about 40 ms a settled try and 90 ms a failed one, but the search with it reached a lower alpha at equal CPU
#: in all 5 pairs (45-60 CPU s): not adopted; a switch for ``benchmarks/lifted_level.py`` and the tests.  Gated
#: by its own tally instead (:mod:`relu_gating.search.bnb._lifted_gate`, ``ENABLED``), it was not adopted either.
LEVEL_ADMM = False
#: Decided rows used (those nearest the node's interior points; any subset is valid).
N_DECIDED = 12
_SQRT2 = float(np.sqrt(2.0))
_USABLE = ("Solved", "AlmostSolved", "MaxIterations", "InsufficientProgress")
_EPS = float(np.finfo(float).eps)


def lifted(Q: np.ndarray, M: np.ndarray, QH: np.ndarray | None, signs: np.ndarray, zero: np.ndarray,
           dec: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(A, B, G, C, U)`` of the lifted relaxation: ``G`` rows are the decided rows ``dec``, then
    ``y_i >= 0`` and ``y_i - q_i^T v >= 0`` for the undecided rows ``U``; ``C`` (|U|, d, d)."""
    n, r = Q.shape
    A, B, U = _pencil(Q, M, QH, signs, zero)
    u = U.size
    d = r + u
    G = np.zeros((dec.size + 2 * u, d))
    G[:dec.size, :r] = signs[dec, None] * Q[dec]
    G[dec.size + np.arange(u), r + np.arange(u)] = 1.0
    G[dec.size + u + np.arange(u), r + np.arange(u)] = 1.0
    G[dec.size + u:, :r] = -Q[U]
    C = np.zeros((u, d, d))
    k = np.arange(u)
    C[k, r + k, r + k] = 1.0
    C[k, r + k, :r] -= 0.5 * Q[U]
    C[k, :r, r + k] -= 0.5 * Q[U]
    return A, B, G, C, U


class Comp:
    """The complementarity matrices ``C_i = sym(a_i b_i^T)`` of :func:`lifted` held by their factors: ``a``
    (``d x |U|``, column ``i`` is ``a_i``) and ``b``; ``C_i`` of the node are ``a_i = e_{y_i}``,
    ``b_i = e_{y_i} - (q_i, 0)``.  What the steps need of them costs ``O(d |U|)`` (:meth:`quad`) and one
    product of ``d x |U|`` by ``|U| x d`` (:meth:`weighted`), where the dense ``(|U|, d, d)`` stack cost
    ``O(|U| d^2)`` a step and ``O(|U| d^3)`` to whiten (issue 39: 110 of 192 ms a try at about 120
    undecided rows on breast cancer PCA 5).  The same matrices: ``dense()`` is the stack."""

    def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
        self.a, self.b = a, b
        self.shape = (a.shape[1], a.shape[0], a.shape[0])

    def weighted(self, mu: np.ndarray) -> np.ndarray:
        """``sum_i mu_i C_i`` (symmetric, ``d x d``)."""
        S = (self.a * mu) @ self.b.T
        return 0.5 * (S + S.T)

    def quad(self, x: np.ndarray) -> np.ndarray:
        """``x^T C_i x`` for every ``i``."""
        return (self.a.T @ x) * (self.b.T @ x)

    def whiten(self, Li: np.ndarray) -> "Comp":
        """The matrices ``Li C_i Li^T``."""
        return Comp(Li @ self.a, Li @ self.b)

    def abs_sums(self) -> np.ndarray:
        """``sum_i ||a_i||_1 ||b_i||_1``, at least ``sum |C_i|`` (entrywise) and equal to it for the node's
        factors (``1 + ||q_i||_1``): for the rounding allowance."""
        return np.abs(self.a).sum(0) * np.abs(self.b).sum(0)

    def dense(self) -> np.ndarray:
        """The ``(|U|, d, d)`` stack."""
        S = np.einsum("ki,li->ikl", self.a, self.b)
        return 0.5 * (S + S.transpose(0, 2, 1))


def _cweighted(C: Any, mu: np.ndarray) -> np.ndarray:
    return C.weighted(mu) if isinstance(C, Comp) else np.tensordot(mu, C, axes=1)


def _cquad(C: Any, x: np.ndarray) -> np.ndarray:
    return C.quad(x) if isinstance(C, Comp) else np.einsum("i,kij,j->k", x, C, x)


def _cabs(C: Any) -> np.ndarray:
    return C.abs_sums() if isinstance(C, Comp) else np.abs(C).sum((1, 2))


def lifted_parts(Q: np.ndarray, M: np.ndarray, QH: np.ndarray | None, signs: np.ndarray, zero: np.ndarray,
                 dec: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, Comp, np.ndarray]:
    """:func:`lifted` with ``C`` held by its factors (:class:`Comp`): the matrices the steps use."""
    n, r = Q.shape
    A, B, U = _pencil(Q, M, QH, signs, zero)
    u = U.size
    G = np.zeros((dec.size + 2 * u, r + u))
    G[:dec.size, :r] = signs[dec, None] * Q[dec]
    G[dec.size + np.arange(u), r + np.arange(u)] = 1.0
    G[dec.size + u + np.arange(u), r + np.arange(u)] = 1.0
    G[dec.size + u:, :r] = -Q[U]
    a = np.zeros((r + u, u))
    a[r + np.arange(u), np.arange(u)] = 1.0
    b = a.copy()
    b[:r] = -Q[U].T
    return A, B, G, Comp(a, b), U


def _pencil(Q: np.ndarray, M: np.ndarray, QH: np.ndarray | None, signs: np.ndarray,
            zero: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(A, B, U)`` of the lifted relaxation (symmetrized), ``U`` the undecided rows."""
    n, r = Q.shape
    U = np.flatnonzero((signs == 0) & ~zero)
    P = np.flatnonzero((signs > 0) & ~zero)
    E = np.zeros((n, r + U.size))
    E[P, :r] = Q[P]
    E[U, r + np.arange(U.size)] = 1.0
    ME = M.T @ E
    A = ME.T @ ME
    B = E.T @ E
    if QH is not None:
        HE = QH.T @ E
        B = B - HE.T @ HE
    return 0.5 * (A + A.T), 0.5 * (B + B.T), U


def plain(Q: np.ndarray, M: np.ndarray, QH: np.ndarray | None, signs: np.ndarray, zero: np.ndarray,
          level: float) -> tuple[float, Any] | None:
    """``(claim, (dec, N, mu))`` of the lifted relaxation without multipliers (``N = 0``, ``mu = 0``: the
    undecided coordinates free), or None.  The claim is ``level`` less ``FO_AIM`` when the slack proves
    it (:func:`proven_at`'s test), else the pencil's top eigenvalue with the least of ``PLAIN_MARGINS``
    (relative) that the slack proves.  One or two symmetric eigendecompositions of size ``r + |U|``, no
    ``G`` or ``C``: cheap enough for every node.  At greedy steps the cheap node bound stays at the cap
    (the former features leave the block complements small) while this one is often below the gain
    (iris step 4: 18 of 40 open nodes of 88-131 undecided rows)."""
    A, B, U = _pencil(Q, M, QH, signs, zero)
    u, d = U.size, A.shape[0]
    if u == 0:
        return None
    magA, magB = float(np.abs(A).sum()), float(np.abs(B).sum())

    def proves(c: float) -> bool:  # proven_at's test with N = 0, mu = 0 (no G or C built)
        return float(np.linalg.eigvalsh(c * B - A)[0]) > 4.0 * _allow(d + 2 * u, d, abs(c) * magB + magA) + 1e-12

    evidence = (np.zeros(0, dtype=np.int64), {"p": 2 * u, "entries": np.zeros((0, 3))}, np.zeros(u))
    aim = level - FO_AIM * abs(level)
    if np.isfinite(aim) and proves(aim):
        return float(aim), evidence
    try:
        Li = np.linalg.inv(np.linalg.cholesky(B))
    except np.linalg.LinAlgError:
        return None
    top = float(np.linalg.eigvalsh(Li @ A @ Li.T)[-1])
    for margin in PLAIN_MARGINS:
        c = top + margin * max(abs(top), 1.0)
        if np.isfinite(c) and proves(c):
            return c, evidence
    return None


@functools.lru_cache(maxsize=64)
def _svec(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rr, cc = np.tril_indices(d)
    return cc, rr, np.where(cc == rr, 1.0, _SQRT2)


def _solve(A: np.ndarray, B: np.ndarray, G: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Clarabel on ``min u : u B - A - G^T N G - sum mu_i C_i PSD, N >= 0``: ``(N, mu, u)`` or None."""
    import clarabel

    d, p, c = A.shape[0], G.shape[0], C.shape[0]
    I, J, w = _svec(d)
    K, L = np.triu_indices(p)
    E = G[K][:, I] * G[L][:, J] + G[L][:, I] * G[K][:, J]
    E[K == L] *= 0.5
    E *= w
    npair, nsv = K.size, I.size
    cols = [-(w * B[I, J])[:, None], E.T, (w * C[:, I, J]).T]
    top = np.hstack(cols)
    low = sp.hstack([sp.csc_matrix((npair, 1)), -sp.identity(npair, format="csc"), sp.csc_matrix((npair, c))])
    Ac = sp.vstack([sp.csc_matrix(top), low], format="csc")
    b = np.concatenate([-(w * A[I, J]), np.zeros(npair)])
    q = np.zeros(1 + npair + c)
    q[0] = 1.0
    P = sp.csc_matrix((1 + npair + c, 1 + npair + c))
    st = clarabel.DefaultSettings()
    st.verbose = False
    st.max_iter = 60
    st.tol_gap_abs = st.tol_gap_rel = st.tol_feas = 1e-9
    try:
        sol = clarabel.DefaultSolver(P, q, Ac, b, [clarabel.PSDTriangleConeT(d), clarabel.NonnegativeConeT(npair)],
                                     st).solve()
    except Exception:  # noqa: BLE001 - a solver crash: no strong bound
        return None
    x = np.asarray(sol.x, dtype=float)
    if str(sol.status).split(".")[-1] not in _USABLE or not np.all(np.isfinite(x)) or nsv == 0:
        return None
    N = np.zeros((p, p))
    N[K, L] = np.maximum(x[1:1 + npair], 0.0)
    N = N + np.triu(N, 1).T
    return N, x[1 + npair:], float(x[0])


def _allowance(A: np.ndarray, B: np.ndarray, G: np.ndarray, C: "Comp | np.ndarray", N: np.ndarray, mu: np.ndarray,
               u: float = 1.0) -> float:
    """A rounding allowance on the slack ``u B - A - G^T N G - sum mu_i C_i`` (generous: the verifier
    recomputes the pieces from ``Phi`` with its own allowance)."""
    g = np.abs(G).sum(1)  # the sum of |G|^T N |G|'s entries is g^T N g (N >= 0): p^2, not p^2 d
    mag = abs(u) * np.abs(B).sum() + np.abs(A).sum() + float(g @ N @ g) + np.abs(mu) @ _cabs(C)
    return _allow(B.shape[0] + G.shape[0], A.shape[0], float(mag))


def _allow(rows: int, d: int, mag: float) -> float:
    """The allowance of :func:`_allowance` from its parts: ``rows`` of ``B`` and ``G``, size ``d``, magnitude."""
    return 64.0 * (rows + d * d) * _EPS * mag


_WHITENED: list = []  # [(B, its eigenvalues, L^-1)]: the last B whitened (held, so `is` is safe)


def _whitener(B: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """``B``'s eigenvalues and the inverse of its Cholesky factor (None where ``B``'s least eigenvalue is at
    most ``1e-9`` of its largest), kept for the last ``B``: :func:`sparsify` proves several ``N`` on one node."""
    last = _WHITENED[0] if _WHITENED else None  # one read: another thread may replace it
    if last is not None and last[0] is B:
        return last[1], last[2]
    wB = np.linalg.eigvalsh(B)
    Li = None
    if wB[0] > 1e-9 * max(wB[-1], 1e-300):
        try:
            Li = np.linalg.inv(np.linalg.cholesky(B))
        except np.linalg.LinAlgError:
            Li = None
    _WHITENED[:1] = [(B, wB, Li)]
    return wB, Li


def proven(A: np.ndarray, B: np.ndarray, G: np.ndarray, C: "Comp | np.ndarray", N: np.ndarray, mu: np.ndarray) -> float:
    """The bound ``(N, mu)`` prove: top eigenvalue of ``(A + G^T N G + sum mu C, B)`` (B positive
    definite, else ``inf``), with a relative margin for the verifier's own rounding allowance.  The
    margin grows as B's least eigenvalue falls: see :func:`proven_at` for a claim given in advance."""
    wB, Li = _whitener(B)
    if Li is None:
        return float("inf")
    T = A + G.T @ N @ G + _cweighted(C, mu)
    lam = float(np.linalg.eigvalsh(Li @ (0.5 * (T + T.T)) @ Li.T)[-1])
    allow = _allowance(A, B, G, C, N, mu)
    return lam + 1e-9 * abs(lam) + 4.0 * allow / wB[0] + 1e-12


def proven_at(A: np.ndarray, B: np.ndarray, G: np.ndarray, C: "Comp | np.ndarray", N: np.ndarray, mu: np.ndarray,
              u: float) -> float:
    """``u`` when ``(N, mu)`` prove it, else ``inf``: the slack ``u B - A - G^T N G - sum mu_i C_i`` has
    its least eigenvalue above 4 times the rounding allowance (the verifier's test, with room).  Unlike
    :func:`proven` it needs no positive definite ``B`` and divides by none of its eigenvalues: at greedy
    steps a node's ``B`` is singular or nearly so wherever a former feature is (nearly) one of the node's
    lifted points, which made :func:`proven`'s margin exceed the gain to be proven (iris step 4: 0.0754
    proven for multipliers whose slack at 0.0737 is positive definite by 4e-5)."""
    T = A + G.T @ N @ G + _cweighted(C, mu)
    lam = float(np.linalg.eigvalsh(u * B - 0.5 * (T + T.T))[0])
    return float(u) if lam > 4.0 * _allowance(A, B, G, C, N, mu, u) + 1e-12 else float("inf")


def pick_decided(Q: np.ndarray, signs: np.ndarray, zero: np.ndarray, V: np.ndarray, k: int = N_DECIDED) -> np.ndarray:
    """The ``k`` decided rows nearest (in angle) to the node's interior points ``V`` (rows)."""
    dec = np.flatnonzero((signs != 0) & ~zero)
    if dec.size <= k:
        return dec
    Gd, Vn = unit_rows(Q[dec]), unit_rows(V)  # also rows below 2^-537 (their squares underflow)
    near = (signs[dec, None] * (Gd @ Vn.T)).min(axis=1)
    return np.sort(dec[np.argsort(near)[:k]])


def first_order(A: np.ndarray, B: np.ndarray, G: np.ndarray, C: "Comp | np.ndarray", level: float,
                steps: int | None = None, check: int = FO_CHECK) -> tuple[np.ndarray, np.ndarray] | None:
    """Multipliers ``(N, mu)`` whose top eigenvalue of ``(A + G^T N G + sum mu_i C_i, B)`` is as low as
    projected subgradient steps find (Polyak's step towards ``level``; stops there, or when a step no
    longer helps); None when ``B`` is not positive definite.  Nothing here is trusted: the caller
    recomputes what the multipliers prove (:func:`proven`)."""
    try:
        L = np.linalg.cholesky(B)
    except np.linalg.LinAlgError:
        return None
    Li = np.linalg.inv(L)
    At, Gt = Li @ A @ Li.T, G @ Li.T  # B-whitened: the pencil's top eigenvalue is At's
    Ct = C.whiten(Li) if isinstance(C, Comp) else Li @ C @ Li.T  # (|U|, d, d) by broadcasting
    return _descend(At, Gt, Ct, level, FO_STEPS if steps is None else steps, check)


def level_order(A: np.ndarray, B: np.ndarray, G: np.ndarray, C: "Comp | np.ndarray", level: float,
                steps: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Multipliers ``(N, mu)`` for which ``f = lambda_max(A + G^T N G + sum mu_i C_i - level B)`` is as low
    as projected subgradient steps find (Polyak's step towards ``-FO_LEVEL_TARGET`` times the pieces'
    scale, where it stops; or when a step no longer helps, as in :func:`first_order`).  ``f < 0`` proves
    ``level`` (:func:`proven_at`).  Needs no positive definite ``B``, unlike :func:`first_order`."""
    scale = float(np.abs(A).max() + abs(level) * np.abs(B).max()) or 1.0
    return _descend(A - level * B, G, C, -FO_LEVEL_TARGET * scale, LEVEL_STEPS if steps is None else steps)


def _descend(A: np.ndarray, G: np.ndarray, C: "Comp | np.ndarray", target: float, steps: int,
             check: int = FO_CHECK) -> tuple[np.ndarray, np.ndarray]:
    """Projected subgradient steps on ``f(N, mu) = lambda_max(A + G^T N G + sum mu_i C_i)``, ``N >= 0``, with
    Polyak's step towards ``target``: the best ``(N, mu)`` seen, once ``f <= target``, after ``steps``, or
    when the gap to ``target`` has not shrunk to ``FO_SHRINK`` of itself in ``check`` steps."""
    p, u = G.shape[0], C.shape[0]
    N, mu = np.zeros((p, p)), np.zeros(u)
    best, arg, mark = np.inf, (N, mu), np.inf
    for t in range(steps):
        T = A + G.T @ N @ G + _cweighted(C, mu)
        f, x = _top(0.5 * (T + T.T))
        if f < best:
            best, arg = f, (N.copy(), mu.copy())
        if f <= target:
            break
        if t % check == 0:  # the gap to the target must shrink by FO_SHRINK every `check` steps
            if best - target > FO_SHRINK * mark:
                break
            mark = best - target
        gx = G @ x
        dN = np.outer(gx, gx)  # d f / d N (x the top eigenvector); N only rises where it lowers f
        dN[(N <= 0.0) & (dN > 0.0)] = 0.0
        dm = _cquad(C, x)
        norm = float((dN * dN).sum() + dm @ dm)
        if norm <= 1e-300:
            break
        step = (f - target) / norm
        N = np.maximum(N - step * dN, 0.0)
        mu = mu - step * dm
    return arg


def _top(T: np.ndarray) -> tuple[float, np.ndarray]:
    """The largest eigenvalue of the symmetric ``T`` and an eigenvector: LAPACK's ``syevr`` for that one
    pair (2.9x faster than the whole ``eigh`` at size 126), the whole ``eigh`` where it fails."""
    d = T.shape[0]
    if TOP_ONLY and d > 1:
        try:
            w, V = scipy.linalg.eigh(T, subset_by_index=[d - 1, d - 1], driver="evr", check_finite=False)
            if np.all(np.isfinite(w)) and np.all(np.isfinite(V)):
                return float(w[-1]), V[:, -1]
        except (np.linalg.LinAlgError, ValueError):
            pass
    w, V = np.linalg.eigh(T)
    return float(w[-1]), V[:, -1]


def sparsify(A: np.ndarray, B: np.ndarray, G: np.ndarray, C: "Comp | np.ndarray", N: np.ndarray, mu: np.ndarray,
             level: float, at: float | None = None) -> tuple[float, np.ndarray]:
    """``(bound proven, N)`` with the entries of ``N`` below the largest fraction of ``SPARSE_FRACTIONS``
    of its largest entry dropped such that the proven bound stays at most ``level`` (the densest, all
    of ``N``, when none does).  Proven by :func:`proven`, or by :func:`proven_at` at ``at`` when given.
    When the sparsest fraction does not prove ``level``, all of ``N`` is checked next and returned at once
    when it does not either: a try that fails costs two checks, not five (issue 39: most lifted tries fail
    on clustered 100 x 5); a sparser fraction could then prove what all of ``N`` does not only by rounding."""
    top = float(N.max(initial=0.0))

    def check(Ns: np.ndarray) -> float:
        return proven(A, B, G, C, Ns, mu) if at is None else proven_at(A, B, G, C, Ns, mu, at)

    u = check(np.where(N >= SPARSE_FRACTIONS[0] * top, N, 0.0))
    if u <= level:
        return u, np.where(N >= SPARSE_FRACTIONS[0] * top, N, 0.0)
    dense = check(N)
    if dense > level:
        return dense, N
    for frac in SPARSE_FRACTIONS[1:-1]:
        Ns = np.where(N >= frac * top, N, 0.0)
        u = check(Ns)
        if u <= level:
            return u, Ns
    return dense, N


def _admm(A: np.ndarray, B: np.ndarray, G: np.ndarray, C: "Comp | np.ndarray", u: int, aim: float,
          level: float) -> tuple[float, np.ndarray, np.ndarray] | None:
    """ADMM's multipliers (:func:`relu_gating.search.bnb._lifted_admm.admm_level`) made sparse, ``(bound, N, mu)``
    when they prove ``level``, else None."""
    got = admm_level(A, B, G, u, aim, lambda N, mu: proven_at(A, B, G, C, N, mu, aim) <= level)
    if got is None:
        return None
    bound, N = sparsify(A, B, G, C, got[0], got[1], level, at=aim)
    return (bound, N, got[1]) if bound <= level else None


def strong_bound(Q: np.ndarray, M: np.ndarray, QH: np.ndarray | None, signs: np.ndarray, zero: np.ndarray,
                 V: np.ndarray, k: int = N_DECIDED, level: float = -np.inf, admm: Any = None) -> tuple[float, Any] | None:
    """``(claim, (dec, N, mu))`` of the lifted relaxation on a node, or None (solver failure, or no
    finite bound found).  ``level``: the bound that would settle the node; first-order multipliers
    (:func:`first_order`, B-whitened) are tried first and kept when they prove it (by :func:`proven`,
    or at ``level`` less ``FO_AIM`` by :func:`proven_at`), then those of :func:`level_order` (no
    whitening: ``B`` singular or ill-conditioned), else Clarabel's on small nodes
    (``CLARABEL_MAX_UNDECIDED``; the only way without a finite ``level``), else the better bound found.
    ADMM at the level (:func:`_admm`) runs after the first-order steps fail, beyond Clarabel's sizes, where
    ``admm`` (a :class:`relu_gating.search.bnb._lifted_gate.AdmmGate`: its ``pays``, told what it ``ran``)
    says so; without one, where ``LEVEL_ADMM`` says so."""
    dec = pick_decided(Q, signs, zero, V, k)
    A, B, G, C, U = (lifted_parts if STRUCTURED else lifted)(Q, M, QH, signs, zero, dec)
    found = []
    if np.isfinite(level):
        aim = level - FO_AIM * abs(level)
        small = U.size <= CLARABEL_MAX_UNDECIDED  # Clarabel comes next: steps up to about its cost first
        got = first_order(A, B, G, C, aim, *((FO_SMALL_STEPS, FO_SMALL_CHECK) if small else (None, FO_CHECK)))
        if got is not None:
            u, N = sparsify(A, B, G, C, got[0], got[1], level)
            found.append((u, N, got[1]))
            if u <= level:
                return u, (dec, compact(N), got[1])
        wB = np.linalg.eigvalsh(B)
        tries = [got] if got is not None and wB[0] <= PROVEN_AT_COND * max(wB[-1], 1e-300) else []
        if wB[0] <= LEVEL_ORDER_COND * max(wB[-1], 1e-300):  # B singular to rounding: steps at the level
            tries.append(level_order(A, B, G, C, aim))
        for mult in tries:
            u, N = sparsify(A, B, G, C, mult[0], mult[1], level, at=aim)
            if u <= level:
                return u, (dec, compact(N), mult[1])
        if U.size > CLARABEL_MAX_UNDECIDED and (LEVEL_ADMM if admm is None else admm.pays(U.size)):
            t0 = time.perf_counter()
            via = _admm(A, B, G, C, U.size, aim, level)
            if admm is not None:
                admm.ran(U.size, time.perf_counter() - t0)
            if via is not None:
                return via[0], (dec, compact(via[1]), via[2])
    if U.size <= CLARABEL_MAX_UNDECIDED:
        solved = _solve(A, B, G, C.dense() if isinstance(C, Comp) else C)
        if solved is not None:
            N, mu, u = solved
            claims = [proven(A, B, G, C, N, mu), proven_at(A, B, G, C, N, mu, u + CLARABEL_ROOM * max(abs(u), 1.0))]
            if np.isfinite(level):
                claims.append(proven_at(A, B, G, C, N, mu, level - FO_AIM * abs(level)))
            found.append((min(claims), N, mu))
    found = [f for f in found if np.isfinite(f[0])]
    if not found:
        return None
    u, N, mu = min(found, key=lambda f: f[0])
    return u, (dec, compact(N), mu)


def compact(N: np.ndarray) -> dict:
    """``N`` in the tree's sparse form: ``{"p": p, "entries": (k, l, N_kl)}`` for the nonzero entries
    with ``k <= l`` (``N_lk`` the same; ``relu_gating/certificate/FORMAT.md``)."""
    K, L = np.nonzero(np.triu(N))
    return {"p": int(N.shape[0]), "entries": np.column_stack([K, L, N[K, L]]).astype(float)}
