r"""The ReLU variation norm of Def 5.8, computed as a closing interval, and the representability constant.

For a layer input ``Phi`` the normalized neurons are
:math:`\mathcal A_\Phi = \{\sigma(\Phi\theta)/\|\sigma(\Phi\theta)\| : \sigma(\Phi\theta)\ne0\}` and

.. math::  \|v\|_{\mathcal A} = \inf\{\textstyle\sum_j |a_j| : v = \sum_j a_j d_j,\ d_j\in\mathcal A_\Phi\}

(the atoms are unsigned neurons, the coefficients signed: the gauge of the convex hull of
:math:`\pm\mathcal A_\Phi`).  :func:`variation_norm` solves it by column generation:

* master: the LP ``min sum |a_j| (+ M ||r||_1)  s.t.  D a + r = v`` over the atoms found so
  far (HiGHS); its optimal dual ``y`` satisfies ``|<y, d_j>| <= 1`` on those atoms;
* pricing: ``max_d |<y, d>| = ||y|| sqrt(max_theta N_1(relu(Phi theta)))`` with the rank-one
  basis ``y / ||y||`` -- a best-neuron query, answered and *certified* by
  :func:`relu_gating.best_neuron` (``features=None``); cheap candidates (one witness neuron
  per gating pattern) are tried first, the certified search only when they find nothing;
* bounds: weak duality gives ``||v||_A >= <y, v> / max_d |<y, d>|`` for *every* ``y``
  (a certified lower bound, the certified pricing bound in the denominator); the primal
  gives a decomposition, made exactly feasible by expressing the LP's residual in a basis of
  atoms spanning ``V_P`` (Thm 5.1 b), so ``upper`` is a feasible ``sum |a_j|``.

The interval ``[lower, upper]`` closes to ``tol``.  :func:`representability_constant` bounds
:math:`\kappa(U) = \max\{\|u\|_{\mathcal A} : u\in\mathrm{col}(U), \|u\| = 1\}`, the smallest
``kappa`` for which ``U`` is ``(kappa, 0)``-representable (Def 5.8; with ``U`` the cluster
indicators ``chi`` it is the ``kappa`` of Example 5.12, with ``epsilon = ||(I - Pi_chi) U_K||``).

References
----------
Def 5.8, Lemma 5.9, Thm 5.10, Example 5.12 of the paper.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from relu_gating._inputs.validate import as_matrix, as_vector
from relu_gating.errors import InputError, SolverFailure

__all__ = ["VariationNorm", "variation_norm", "Representability", "representability_constant", "normalized_neurons"]

#: Default relative width at which the interval counts as closed.
DEFAULT_TOL = 1e-4
#: Cheap candidate atoms added to the master per round.
ATOMS_PER_ROUND = 8
#: Weight of the best dual so far in the dual the cone pricing prices (Wentges smoothing).
SMOOTHING = 0.5
#: Atoms kept in the master LP between rounds of the cone pricing.
_MASTER_ATOMS = 400
#: Master LPs at most in choosing the seed pool's columns (:func:`_seed_master`).
_SEED_LPS = 80
#: Most violated witnesses added per LP of the seed phase ...
_SEED_ADD = 400
#: ... or this many per row of ``Phi`` when more (:func:`_seed_add`), ...
_SEED_ADD_PER_ROW = 2.5
#: ... chosen among this many times as many of the most violated, ...
_SEED_POOL = 10
#: ... no two with neurons of ``|cos|`` above this (:func:`_distinct`).
_SEED_DISTINCT = 0.98
#: Witnesses out of the seed master's basis that its dual prices below this leave it (once each).
_SEED_DROP = 0.5
#: Columns a priced round adds to the master at most.
_ROUND_COLUMNS = 256
#: Master rounds between certified pricing calls while cheap candidates still violate.
CERTIFY_EVERY = 8
#: Early pricing with a carry: before the next norm, atoms out of the master's basis for more than this many
#: solves are dropped (None: never) ...
_PRUNE_AGE: int | None = 10
#: ... once the master holds more than this many atoms per row of ``Phi`` (the basis has at most one per row).
_PRUNE_ABOVE = 4


@dataclass(frozen=True, eq=False)
class VariationNorm:
    """``||v||_A`` as a certified interval with a decomposition attaining ``upper``.

    Attributes
    ----------
    lower, upper : float
        ``lower <= ||v||_A <= upper`` (``inf`` for both when ``v`` is not in ``V_P``).
    thetas : ndarray, shape (J, m)
        Weights of the atoms used (nonzero coefficients only).
    weights : ndarray, shape (J,)
        Signed coefficients: ``v = sum_j weights[j] relu(Phi thetas[j]) / ||relu(Phi thetas[j])||``
        (to ``residual``), ``sum |weights| = upper``.
    dual : ndarray, shape (n,)
        The ``y`` proving ``lower``: ``max_d |<y, d>| <= 1`` (certified), so ``||w||_A >= <y, w>``
        for every ``w``, and ``lower = <y, v>``.
    residual : float
        ``||v - sum_j weights[j] d_j||`` (rounding only).
    iterations, certified_calls : int
        Master LPs solved; certified best-neuron queries made.
    certified : bool
        ``upper - lower <= tol * upper``.
    tol, seconds : float
    """

    lower: float
    upper: float
    thetas: np.ndarray
    weights: np.ndarray
    dual: np.ndarray
    residual: float
    iterations: int
    certified_calls: int
    certified: bool
    tol: float
    seconds: float

    @property
    def remarks(self) -> tuple[str, ...]:
        """The shared name of the remarks (none are kept: an empty tuple)."""
        return ()

    @property
    def timings(self) -> dict[str, float]:
        """The shared name of the timings: ``{"total": seconds}``."""
        return {"total": float(self.seconds)}


def normalized_neurons(Phi: np.ndarray, thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Columns ``relu(Phi theta)/||relu(Phi theta)||`` of the nonzero neurons, and which thetas they are."""
    T = np.atleast_2d(thetas)
    H = np.maximum(Phi @ T.T, 0.0)
    nrm = np.linalg.norm(H, axis=0)
    keep = nrm > 1e-12 * np.linalg.norm(Phi, 2) * np.linalg.norm(T, axis=1)  # per neuron: scales vary widely
    return H[:, keep] / nrm[keep], np.flatnonzero(keep)


def _spanning_thetas(Phi: np.ndarray) -> np.ndarray | None:
    """Weights of neurons spanning ``V_P`` (Thm 5.1 b, both orientations), or None without a bias in col(Phi)."""
    from relu_gating.layers.networks import class_spanning_neurons

    n = Phi.shape[0]
    c, *_ = np.linalg.lstsq(Phi, np.ones(n), rcond=None)
    if np.linalg.norm(Phi @ c - 1.0) > 1e-9 * np.sqrt(n):
        return None
    out = []
    for sign in (1.0, -1.0):
        Th = class_spanning_neurons(sign * Phi)
        out.append((sign * Th[:-1] + np.outer(c, Th[-1])).T)
    return np.vstack(out)


def _bias_theta(Phi: np.ndarray) -> np.ndarray | None:
    """The weights ``c`` with ``Phi c = 1`` exactly (the constant neuron), or None.

    Its atom is ``1 / sqrt(n)``: a constant ``v`` (the first low-frequency vector of a connected graph's
    Laplacian, every kappa bracket's first norm) is one atom, ``||v||_A = ||v||``.  Without it in the
    master the column generation approached that value through the other atoms (moons, n = 400: 90
    master rounds; clusters d = 3, n = 100: not closed in 50).
    """
    ones = np.ones(Phi.shape[0])
    for j in range(Phi.shape[1]):
        if np.array_equal(Phi[:, j], ones):  # the bias column of layer_input: exact
            return np.eye(Phi.shape[1])[j]
    c, *_ = np.linalg.lstsq(Phi, ones, rcond=None)
    return c if np.array_equal(Phi @ c, ones) else None


def _norm_bounds(v: np.ndarray) -> tuple[float, float]:
    """Floats ``lo <= ||v|| <= hi`` (exact sum of squares in rationals, the root rounded each way).

    Every atom is a unit vector, so ``||v||_A >= ||v||`` (the triangle inequality): a certified lower end
    before any pricing, attained when ``v`` is a multiple of one atom; its dual is ``v / ||v||``.
    """
    from fractions import Fraction

    q = sum((Fraction(x) ** 2 for x in v.tolist()), Fraction(0))
    from relu_gating.layers._cone_pricing import _sqrt_up

    lo = math.sqrt(float(q))
    while lo > 0 and Fraction(lo) ** 2 > q:
        lo = math.nextafter(lo, 0.0)
    return lo, _sqrt_up(q)


def _trivial_dual(v: np.ndarray) -> tuple[float, np.ndarray]:
    """``(lower, y)``: ``lower <= ||v|| <= ||v||_A`` and ``y`` along ``v`` with ``||y|| <= 1``, so ``|<y, d>| <= 1``
    on every atom (each quotient ``v_i / D`` rounds up by at most ``2^-53`` relative; ``D`` covers it)."""
    lo, hi = _norm_bounds(v)
    if hi == 0.0:
        return 0.0, np.zeros_like(v)
    return lo, v / math.nextafter(hi * (1 + 2.0**-52), math.inf)


def _cone_projection(Phi: np.ndarray, mask: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``theta`` maximizing ``<y, d>`` over the normalized neurons of one pattern (approximately).

    The maximum is ``||p||`` for ``p`` the projection of ``y`` onto the cone
    ``{S Phi theta : (2S - I) Phi theta >= 0}``; found by SLSQP from the witness ``w``.  Used only
    to propose atoms (any theta is a valid atom): the certified search decides optimality.
    """
    from scipy.optimize import minimize

    G, ys = Phi[mask], y[mask]
    A = np.where(mask, 1.0, -1.0)[:, None] * Phi
    sc = 1.0 / max(float(np.linalg.norm(Phi @ w)), 1e-300)
    res = minimize(lambda t: 0.5 * float(np.sum((G @ t - ys) ** 2)), w * sc, jac=lambda t: G.T @ (G @ t - ys),
                   constraints=[{"type": "ineq", "fun": lambda t: A @ t, "jac": lambda t: A}], method="SLSQP",
                   options={"maxiter": 100, "ftol": 1e-14})
    return res.x if np.all(np.isfinite(res.x)) else w


def _master(D: np.ndarray, v: np.ndarray, M: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Solve ``min 1'(a+ + a-) + M 1'(r+ + r-)  s.t.  D(a+ - a-) + (r+ - r-) = v``; return a, r, y."""
    from scipy.optimize import linprog

    (n, J), eye = D.shape, np.eye(D.shape[0])
    A = np.hstack([D, -D, eye, -eye])
    cost = np.r_[np.ones(2 * J), np.full(2 * n, M)]
    res = linprog(cost, A_eq=A, b_eq=v, bounds=(0, None), method="highs")
    if res.status != 0:
        raise SolverFailure(f"variation-norm master LP failed: {res.message}")
    x = res.x
    return x[:J] - x[J:2 * J], x[2 * J:2 * J + n] - x[2 * J + n:], np.asarray(res.eqlin.marginals, float)


def _upper(D: np.ndarray, a: np.ndarray, v: np.ndarray, B: np.ndarray | None) -> tuple[float, np.ndarray, float]:
    """A feasible ``sum |coef|``: the LP's ``a`` plus its residual written in the spanning atoms ``B``."""
    r = v - D @ a
    if B is None:
        res = float(np.linalg.norm(r))
        return (float(np.abs(a).sum()) if res <= 1e-9 else np.inf), np.zeros(0), res
    c, *_ = np.linalg.lstsq(B, r, rcond=None)
    res = float(np.linalg.norm(r - B @ c))
    return float(np.abs(a).sum() + np.abs(c).sum()), c, res


def _in_vp(Phi: np.ndarray, v: np.ndarray) -> bool:
    """``v`` is constant on the classes of identical rows of ``Phi`` (Thm 5.1: ``||v||_A < inf``)."""
    from relu_gating.coverage.bounds import row_partition

    lab = row_partition(Phi, name="Phi")
    means = np.bincount(lab, weights=v) / np.bincount(lab)
    return bool(np.linalg.norm(v - means[lab]) <= 1e-9 * np.linalg.norm(v))


def _check_options(tol: Any, max_iter: Any) -> None:
    if not (isinstance(tol, (int, float, np.floating)) and 0 < tol < 1):
        raise InputError(f"tol must be a number in (0, 1), got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise InputError(f"max_iter must be a positive integer, got {max_iter!r}")


class _Pricer:
    """Pricing of one layer: uncertified candidates first, the certified best-neuron search to decide.

    Candidates are the exact best neurons (cone projections) of the "hot" patterns -- those the
    last certified search found violating -- and of the patterns whose witness scores highest.
    """

    def __init__(self, Phi: np.ndarray, patterns: Any, max_patterns: int | None) -> None:
        from relu_gating.patterns import enumerate_patterns

        if patterns is None:
            patterns = enumerate_patterns(Phi, max_patterns=max_patterns)
        else:
            patterns.check_belongs_to(Phi)
        self.Phi, self.patterns = Phi, patterns
        self.W = patterns.witnesses  # the masks unpacked only for the search pricing (N x n bools: 1 GB at n = 1,000)
        self._wd: tuple[np.ndarray, np.ndarray] | None = None
        self._masks: np.ndarray | None = None
        self.hot = np.zeros(0, dtype=np.int64)
        self.calls = 0

    @property
    def masks(self) -> np.ndarray:
        """The patterns' masks (``N x n`` bools: unpacked on first use only)."""
        if self._masks is None:
            self._masks = self.patterns.masks
        return self._masks

    @property
    def Wd(self) -> np.ndarray:
        """The witnesses' normalized neurons (``n x N`` dense: computed on first use only)."""
        if self._wd is None:
            self._wd = normalized_neurons(self.Phi, self.W)
        return self._wd[0]

    @property
    def idx(self) -> np.ndarray:
        """Which witnesses :attr:`Wd` holds (the nonzero neurons)."""
        if self._wd is None:
            self._wd = normalized_neurons(self.Phi, self.W)
        return self._wd[1]

    def _best_in(self, k: int, y: np.ndarray) -> np.ndarray:
        return _cone_projection(self.Phi, self.masks[k], y, self.W[k])

    def cheap(self, y: np.ndarray, limit: float) -> np.ndarray:
        """Uncertified candidates ``theta`` with ``|<y, d>| > limit``, most violated first."""
        sc = y @ self.Wd
        top = self.idx[np.argsort(-np.abs(sc))[:ATOMS_PER_ROUND]]
        cand, vals = [], []
        for k in dict.fromkeys([*self.hot.tolist(), *top.tolist()]):
            for sign in (1.0, -1.0):
                theta = self._best_in(k, sign * y)
                d, ok = normalized_neurons(self.Phi, theta[None, :])
                if ok.size and abs(float(y @ d[:, 0])) > limit:
                    cand.append(theta)
                    vals.append(abs(float(y @ d[:, 0])))
        order = np.argsort(-np.array(vals))[:2 * ATOMS_PER_ROUND]
        return np.array(cand)[order].reshape(order.size, self.Phi.shape[1])

    def certified(self, y: np.ndarray, limit: float) -> tuple[float, np.ndarray]:
        """``(bound on max_d |<y, d>|, best theta)`` by :func:`relu_gating.best_neuron` (rank one)."""
        from relu_gating.search.front import best_neuron
        from relu_gating.search.options import EnumerateOptions

        ny = float(np.linalg.norm(y))
        res = best_neuron(self.Phi, (y / ny)[:, None], features=None, strategy="enumerate",
                          options=EnumerateOptions(patterns=self.patterns))
        self.calls += 1
        low = np.nan_to_num(res.lowers, nan=-np.inf)
        hot = np.argsort(-low)[:4 * ATOMS_PER_ROUND]
        self.hot = hot[ny * np.sqrt(np.maximum(low[hot], 0.0)) > limit]
        return ny * float(np.sqrt(max(res.upper_bound, res.value, 0.0))), res.theta


def variation_norm(v: Any, Phi: Any, *, tol: float = DEFAULT_TOL, max_iter: int = 200, patterns: Any = None,
                   initial: Any = None, max_patterns: int | None = None, pricing: str = "auto",
                   on_round: Any = None, carry: dict | None = None) -> VariationNorm:
    """``||v||_A`` (Def 5.8) as a certified interval that closes to ``tol``, with a decomposition.

    Parameters
    ----------
    v : array_like, shape (n,)
    Phi : array_like, shape (n, m)
        Layer input ``[H_{l-1}, 1]`` (samples as rows).
    tol : float
        Stop when ``upper - lower <= tol * upper``.
    max_iter : int
        Master LPs at most (then ``certified`` is False and the interval is what was proved).
    patterns : PatternSet, optional
        ``enumerate_patterns(Phi)``, to reuse across calls.
    initial : array_like, shape (J, m), optional
        Atom weights to start from (for example the ``thetas`` of an earlier call).
    max_patterns : int, optional
        Refuse larger pattern sets (:class:`~relu_gating.errors.ProblemTooLargeError`).
    pricing : {"auto", "cone", "batched", "early", "search"}
        How each round's dual is priced.  ``"cone"``: every chamber bounded exactly by its cone's
        dual (:mod:`relu_gating.layers._cone_pricing`; needs a dyadic ``Phi`` with at most 4
        columns and 1,024 rows, as on the experiments' grid): a certified lower end every round,
        and the best neuron of each violating chamber as new columns.  ``"batched"``: the same bound
        with each chamber's multipliers chosen by a vectorized active-set method over 1,024 chambers
        at once (NNLS kept for each batch's largest bound).  ``"early"``: as ``"batched"``, with the
        seed pool of every witness priced in chunks (no dense matrix of all of them: the choice for
        large ``n``; :func:`_seed_master_chunked`) and the
        certified bound only when a round's uncertified pricing (witnesses and unconstrained
        chamber optima, :meth:`~relu_gating.layers._cone_pricing.ConePricer.columns`) finds no
        violating column, and every ``CERTIFY_EVERY`` rounds (the lower end).  The interval is as
        certified as with ``"cone"`` for every choice.  ``"search"``: cheap
        candidates, and the certified best-neuron search when they find nothing (the earlier
        method).  ``"auto"``: ``"cone"`` where it applies, else ``"search"``.
    on_round : callable, optional
        Called as ``on_round(round, lower, upper)`` after each priced round of the cone pricings
        (the interval so far, in the units of ``v``): progress reports and benchmarks.
    carry : dict, optional
        State handed from one call to the next on the same ``Phi`` and ``patterns`` (pass an empty
        dict first, then the same dict): the cone pricer (integer Gram matrices, adjugates, each
        chamber's multipliers) and, with ``pricing="early"``, the master LP with every atom it holds,
        its right-hand side replaced by the new ``v`` (the simplex restarts from the last basis).
        Only where the search starts changes: the bounds are certified as without.

    Examples
    --------
    >>> import numpy as np; from relu_gating.layers.variation import variation_norm
    >>> x = np.linspace(-1, 1, 7); Phi = np.c_[x, np.ones(7)]
    >>> r = variation_norm(np.maximum(x, 0), Phi)   # one neuron: norm ||relu(x)||
    >>> bool(r.certified and abs(r.upper - np.linalg.norm(np.maximum(x, 0))) < 1e-6)
    True
    """
    t0 = time.perf_counter()
    _check_options(tol, max_iter)
    if pricing not in ("auto", "cone", "early", "batched", "search"):
        raise InputError(f"pricing must be 'auto', 'cone', 'early' or 'search', got {pricing!r}")
    if carry is not None and not isinstance(carry, dict):
        raise InputError(f"carry must be a dict (empty on the first call), got {type(carry).__name__}")
    P = as_matrix(Phi, "Phi")
    vv = as_vector(v, "v", size=P.shape[0])
    scale = float(np.linalg.norm(vv))
    m = P.shape[1]
    if scale == 0.0:
        return VariationNorm(0.0, 0.0, np.zeros((0, m)), np.zeros(0), np.zeros_like(vv), 0.0, 0, 0, True,
                             float(tol), time.perf_counter() - t0)
    if not _in_vp(P, vv):  # not constant on classes of identical rows: no finite decomposition
        return VariationNorm(np.inf, np.inf, np.zeros((0, m)), np.zeros(0), np.zeros_like(vv), np.inf, 0, 0, True,
                             float(tol), time.perf_counter() - t0)
    pricer = _Pricer(P, patterns, max_patterns)
    cone = _carried_pricer(P, pricer.patterns, pricing, carry)
    if pricing in ("cone", "early", "batched") and cone is None:
        raise InputError("pricing='cone' needs a dyadic Phi (entries times 2^e integers below 2^20), "
                         "at most 4 columns and 1,024 rows")
    span = _spanning_thetas(P)
    bias = _bias_theta(P)
    u = vv / scale
    early = pricing == "early" and cone is not None
    seeds = pricer.W if early else pricer.W[pricer.idx]  # early: every witness, priced in chunks
    pool = [seeds, *([] if span is None else [span]), *([] if bias is None else [bias[None, :]]),
            *([] if initial is None else [as_matrix(initial, "initial", cols=m) if np.size(initial) else
                                          np.zeros((0, m))])]
    thetas = np.vstack(pool)
    B = None if span is None else normalized_neurons(P, span)[0]
    st = (_solve(P, u, thetas, B, pricer, tol, max_iter) if cone is None else
          _solve_cone(P, u, vv, thetas, B, cone, tol, max_iter, n_seed=seeds.shape[0], early=early,
                      on_round=on_round, carry=carry))
    D, keep = normalized_neurons(P, st["thetas"])
    nz = np.abs(st["a"]) > 0
    th = np.vstack([st["thetas"][keep][nz], *([] if span is None else [span[normalized_neurons(P, span)[1]]])])
    w = np.r_[st["a"][nz], st["c"]] if span is not None else st["a"][nz]
    keepw = w != 0
    return VariationNorm(
        lower=st.get("lower_v", st["lower"] * scale), upper=st["upper"] * scale, thetas=th[keepw], weights=w[keepw] * scale,
        dual=st["y"], residual=st["residual"] * scale, iterations=st["it"],
        certified_calls=pricer.calls, certified=bool(st["upper"] - st["lower"] <= tol * st["upper"]),
        tol=float(tol), seconds=time.perf_counter() - t0)


def _solve(P: np.ndarray, u: np.ndarray, thetas: np.ndarray, B: np.ndarray | None, pricer: _Pricer, tol: float,
           max_iter: int) -> dict:
    """Column generation for the unit vector ``u``; the dual ``y`` returned is the one proving ``lower``."""
    lower, best_y, M = 0.0, np.zeros_like(u), 1e3
    out: dict = {}
    for it in range(1, max_iter + 1):
        D, keep = normalized_neurons(P, thetas)
        thetas = thetas[keep]
        a, r, y = _master(D, u, M)
        upper, c, residual = _upper(D, a, u, B)
        out = {"thetas": thetas, "a": a, "c": c, "upper": upper, "residual": residual, "it": it}
        if upper - lower <= tol * upper:
            break
        new = pricer.cheap(y, 1.0 + tol / 4)
        if new.size == 0 or it % CERTIFY_EVERY == 0:  # the certified search: when nothing cheap violates, and
            # periodically (the tail of column generation is slow; its lower bound may already close the gap)
            g, theta = pricer.certified(y, 1.0 + tol / 4)
            if g > 0 and float(y @ u) / g > lower:
                lower, best_y = float(y @ u) / g, y / g
            if upper - lower <= tol * upper:
                break
            if g <= 1.0 + tol / 4:  # dual feasible yet the primal uses the residual: the penalty is too small
                M *= 10.0
                continue
            d, ok = normalized_neurons(P, theta[None, :])
            if new.size == 0 and (not ok.size or abs(float(y @ d[:, 0])) <= 1.0 + tol / 4):
                break  # the search's bound is not attained by any neuron it found: no progress possible
            new = np.vstack([new, theta[None, :]])
        thetas = np.vstack([thetas, new])
    out.update(lower=lower, y=best_y)
    return out


def _carried_pricer(P: np.ndarray, patterns: Any, pricing: str, carry: dict | None) -> Any:
    """The cone pricer for ``pricing`` (None for ``"search"`` or where it does not apply), from ``carry`` if
    it holds one for the same ``Phi``, ``patterns`` and pricing; a ``carry`` of another problem is refused."""
    if pricing not in ("auto", "cone", "early", "batched"):
        return None
    if carry:
        same = carry.get("patterns") is patterns or np.array_equal(carry["patterns"].packed, patterns.packed)
        if carry.get("pricing") != pricing or not same or not np.array_equal(carry.get("Phi"), P):
            raise InputError("carry holds the state of another Phi, pattern set or pricing: pass a new dict")
        return carry["cone"]
    cone = _cone_pricer(P, patterns, batched=pricing in ("early", "batched"))
    if carry is not None:
        carry.update(Phi=P.copy(), patterns=patterns, pricing=pricing, cone=cone)
    return cone


def _cone_pricer(P: np.ndarray, patterns: Any, batched: bool = False) -> Any:
    """The exact chamber-by-chamber pricer of ``P``, or None where it does not apply."""
    from relu_gating.layers._cone_pricing import ConePricer

    try:
        return ConePricer(P, patterns, batched=batched)
    except ValueError:
        return None


def _lower_exact(yq: np.ndarray, v: np.ndarray, bound: float) -> float:
    """A float at most ``<yq, v> / bound`` (exact rationals; rounded down)."""
    from fractions import Fraction

    q = sum((Fraction(a) * Fraction(b) for a, b in zip(yq.tolist(), v.tolist())), Fraction(0)) / Fraction(bound)
    f = float(q)
    return math.nextafter(f, -math.inf) if Fraction(f) > q else f


#: Witnesses per chunk times rows of ``Phi`` in the explicit pricing of every witness (16 MB of floats).
_CHUNK = 2**21


def _witness_scores(P: np.ndarray, W: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``|<y, d_w>|`` for every witness's normalized neuron ``d_w`` (0 for a zero neuron), in chunks: no
    dense matrix of all of them (``n x N``: 512 MB at ``n = 400``)."""
    step = max(1, _CHUNK // max(P.shape[0], 1))
    out = np.zeros(W.shape[0])
    for lo in range(0, W.shape[0], step):
        H = np.maximum(W[lo:lo + step] @ P.T, 0.0)
        nh = np.linalg.norm(H, axis=1)
        out[lo:lo + step] = np.abs(H @ y) / np.where(nh > 0, nh, np.inf)
    return out


def _top_witnesses(P: np.ndarray, W: np.ndarray, u: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` witnesses whose neurons are most aligned with ``u`` (``|<u, d>|``; in chunks, no dense matrix)."""
    s = _witness_scores(P, W, u)
    top = np.argsort(-s, kind="stable")[:k]
    return W[top[s[top] > 0]]


def _seed_master_chunked(P: np.ndarray, u: np.ndarray, thetas: np.ndarray, n_seed: int, tol: float,
                         M: float, carry: dict | None = None) -> tuple[Any, np.ndarray, np.ndarray, int]:
    """:func:`_seed_master` for a seed block of every chamber's witness, priced in chunks (the early pricing).

    The first ``n_seed`` rows of ``thetas`` are the witnesses ``W`` (``O(n^2)`` at ``d = 2``: 160,000
    at ``n = 400``), the rest the spanning atoms and the caller's ``initial``.  The master starts from
    the ``_MASTER_ATOMS`` witnesses most aligned with ``u`` and the rest, then :func:`_seed_loop` (each
    warm LP prices every witness explicitly, :func:`_witness_scores`, and adds the most violated distinct
    ones, until none violates).  With ``_SEED_LPS = 0`` this is the start of the earlier early
    pricing (the aligned witnesses only), which at ``n = 400`` paid for most of ``u`` through the
    spanning atoms and did not close in 60 rounds.  Only which columns start the master changes.

    ``carry`` (:func:`variation_norm`'s): when it holds an earlier norm's master on the same ``Phi``,
    that LP is reused with ``u`` as its new right-hand side (every atom it holds stays a column, the
    last basis stays dual feasible) and only the witness loop runs; ``thetas`` after the seed block
    are then not added (they are the earlier norm's atoms, already columns).
    """
    from relu_gating.layers._master_lp import MasterLP

    W = thetas[:n_seed]
    if carry and "lp" in carry:  # the earlier norm's master, pruned of atoms long out of its basis
        lp, out_t, D = carry["lp"], *_prune(carry["lp"], carry["thetas"], carry["D"])
        lp.set_target(u)
    else:
        rest = thetas[n_seed:]
        lp = MasterLP(u, M)
        s = _witness_scores(P, W, u)
        top = np.argsort(-s, kind="stable")[:_MASTER_ATOMS]
        top = top[s[top] > 0]
        D, keep = normalized_neurons(P, np.vstack([W[top], rest]))
        out_t = np.vstack([W[top], rest])[keep]
        lp.add(D, tag=np.r_[top, np.full(rest.shape[0], -1)][keep])
    return _seed_loop(lp, out_t, D, W, lambda y: _witness_scores(P, W, y),
                      lambda idx: normalized_neurons(P, W[idx]), tol)


def _seed_loop(lp: Any, cols: np.ndarray, D: np.ndarray, W: np.ndarray, scores: Any, neurons: Any,
               tol: float) -> tuple[Any, np.ndarray, np.ndarray, int]:
    """The seed phase's column generation over the witnesses ``W``: ``(lp, cols, D, LPs solved)``.

    Each of at most ``_SEED_LPS`` warm LPs prices every witness explicitly (``scores(y)``: ``|<y, d_w>|``
    for each) and adds up to :func:`_seed_add` of the most violated, no two of them nearly parallel
    (:func:`_distinct`), until none violates.  Then the witnesses its dual prices below ``_SEED_DROP``
    leave the master if out of its basis, each at most once (:func:`_drop_far`).  ``neurons(idx)`` is
    ``normalized_neurons`` of ``W[idx]``; ``lp.tag`` labels each witness column with its index in ``W``
    (-1 for the other atoms).  Only which columns the master holds changes: the loop ends, as before,
    where no witness prices above ``1 + tol/4``, so its LP is the LP over every witness.
    """
    lps = 0
    dropped = np.zeros(W.shape[0], dtype=bool)  # witnesses dropped once: if they come back, they stay
    while lps < _SEED_LPS:
        _, _, y = lp.solve()
        lps += 1
        act = np.zeros(W.shape[0], dtype=bool)  # the witnesses in the master (a pruned one may come back)
        act[lp.tag[lp.tag >= 0]] = True
        score = scores(y)
        viol = np.flatnonzero(~act & (score > 1.0 + tol / 4))
        if viol.size == 0:
            break
        add_k = _seed_add(lp.n)
        viol = viol[np.argsort(-score[viol], kind="stable")[:_SEED_POOL * add_k]]
        Dn, k = neurons(viol)  # every violating witness is a nonzero neuron
        Dn, viol = Dn[:, k], viol[k]
        pick = _distinct(Dn, add_k, _SEED_DISTINCT)
        add, Da = viol[pick], Dn[:, pick]
        cols, D = _drop_far(lp, cols, D, y, dropped)
        lp.add(Da, tag=add)
        cols, D = np.vstack([cols, W[add]]), np.hstack([D, Da])
    return lp, cols, D, lps


def _seed_add(n: int) -> int:
    """Witnesses a seed LP adds at most on ``n`` rows: ``_SEED_ADD``, or ``_SEED_ADD_PER_ROW`` a row when more.

    Measured on clusters, n = 400, the second basis norm, 10 priced rounds (one run each, CPU s, interval):
    400 a LP (40 LPs at most) stopped at the cap, the seed master not yet the LP over every witness, 139 s,
    [1.80, 2.95]; 1,000 a LP 152 s, [2.74, 2.93]; 1,000 a LP with 80 LPs at most: the loop ends by itself
    after 45, 132 s, [2.84, 2.93] (each LP costs about a cold solve either way: 1,500-2,000 pivots)."""
    return max(_SEED_ADD, int(_SEED_ADD_PER_ROW * n))


def _distinct(Dc: np.ndarray, k: int, cos_max: float) -> np.ndarray:
    """Up to ``k`` of the unit columns ``Dc`` (in their order: the most violated first), each taken unless
    ``|<d, d'>| > cos_max`` for one taken before (neighbouring chambers' witnesses are near copies: the
    most violated hundreds are a few directions, each many times)."""
    free = np.ones(Dc.shape[1], dtype=bool)
    picked: list[int] = []
    i = 0
    while len(picked) < k:
        nxt = np.flatnonzero(free[i:])
        if nxt.size == 0:
            break
        i += int(nxt[0])
        picked.append(i)
        free &= np.abs(Dc[:, i] @ Dc) <= cos_max
        free[i] = False
    return np.asarray(picked, dtype=np.int64)


def _drop_far(lp: Any, cols: np.ndarray, D: np.ndarray, y: np.ndarray,
              dropped: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop from the master the witness columns out of its basis that ``y`` prices below ``_SEED_DROP``
    and that were never dropped before (``dropped``, over the witnesses, is updated): the master's size,
    hence each pivot's cost, stays near what the LP uses.  A witness dropped once and priced back in stays
    (no cycling: each witness leaves at most once)."""
    tag = lp.tag
    far = (tag >= 0) & (np.abs(y @ D) < _SEED_DROP)
    far[far] = ~dropped[tag[far]]
    keep = lp.drop(far)
    dropped[tag[~keep]] = True
    return cols[keep], D[:, keep]


def _prune(lp: Any, thetas: np.ndarray, D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop the master's atoms long out of its basis (``_PRUNE_AGE`` solves, once it holds more than
    ``_PRUNE_ABOVE`` per row) and the same rows of ``thetas`` and columns of ``D``.

    Done between the norms of a carry only: within a norm (the seed loop, the priced rounds) pruned
    atoms come back and the LPs cycle (one moons norm at n = 200 took 73 LPs instead of 16).
    """
    if _PRUNE_AGE is None or lp.J <= _PRUNE_ABOVE * lp.n:
        return thetas, D
    keep = lp.prune(_PRUNE_AGE)
    return thetas[keep], D[:, keep]


def _seed_master(P: np.ndarray, u: np.ndarray, thetas: np.ndarray, n_seed: int, tol: float,
                 M: float) -> tuple[Any, np.ndarray, np.ndarray, int]:
    """The warm master LP loaded with the useful part of the seed pool: ``(lp, thetas, D, LPs solved)``.

    The first ``n_seed`` atoms are one witness per chamber: ``O(n^2)`` dense columns at ``d = 2``, too
    many for one LP at ``n = 200`` (it was most of the time).  The master over them is solved by
    column generation with explicit pricing (``|<y, d>|`` for every witness, one product): start
    from the ``_MASTER_ATOMS`` witnesses most aligned with ``u`` and every atom after the seed block
    (the spanning atoms, the caller's ``initial``), then :func:`_seed_loop`.  Only which columns start
    the master changes; the bounds come from the cone pricing as before.
    """
    from relu_gating.layers._master_lp import MasterLP

    lp = MasterLP(u, M)
    D, keep = normalized_neurons(P, thetas)
    thetas, ns = thetas[keep], int(np.sum(keep < n_seed))
    if ns <= _MASTER_ATOMS:
        lp.add(D)
        return lp, thetas, D, 0
    Dw, W = D[:, :ns], thetas[:ns]
    top = np.sort(np.argsort(-np.abs(u @ Dw), kind="stable")[:_MASTER_ATOMS])
    cols, Dc = np.vstack([W[top], thetas[ns:]]), np.hstack([Dw[:, top], D[:, ns:]])
    lp.add(Dc, tag=np.r_[top, np.full(thetas.shape[0] - ns, -1)])
    return _seed_loop(lp, cols, Dc, W, lambda y: np.abs(y @ Dw), lambda idx: (Dw[:, idx], np.arange(idx.size)), tol)


def _residual_blocks(a: np.ndarray, upper: float, tol: float) -> bool:
    """The residual's part of ``upper`` (its cost in the spanning atoms) alone exceeds ``tol / 2`` of it:
    the interval cannot close while the master uses the residual."""
    return not math.isfinite(upper) or upper - float(np.abs(a).sum()) > tol / 2 * upper


def _violates(P: np.ndarray, thetas: np.ndarray, y: np.ndarray, limit: float) -> bool:
    """Some neuron of ``thetas`` has ``|<y, d>| > limit`` (floats: only which dual is priced next depends on it)."""
    if thetas.size == 0:
        return False
    D, _ = normalized_neurons(P, thetas)
    return bool(D.size and np.abs(y @ D).max() > limit)


def _solve_cone(P: np.ndarray, u: np.ndarray, v: np.ndarray, thetas: np.ndarray, B: np.ndarray | None, cone: Any,
                tol: float, max_iter: int, n_seed: int = 0, early: bool = False, on_round: Any = None,
                carry: dict | None = None) -> dict:
    """Column generation priced by :class:`~relu_gating.layers._cone_pricing.ConePricer` every round.

    The master is one warm LP (:class:`~relu_gating.layers._master_lp.MasterLP`) to which rounds add
    columns; its first columns come from the seed pool (:func:`_seed_master`), whose LPs count in
    ``it`` (master LPs solved), not against ``max_iter`` (the priced rounds).

    The master LP is degenerate (many optimal duals); the dual is smoothed (Wentges): the pricing is
    at ``SMOOTHING * centre + (1 - SMOOTHING) * y``, the centre being the dual of the best lower end
    so far (it proves ``max |<centre, d>| <= 1``).  Every priced dual gives a certified lower end.
    ``lower_v`` is the certified lower end for ``v`` itself (``<y, v> / bound``, exact); the dual
    ``y`` returned satisfies ``max_d |<y, d>| <= 1`` (the certified bound divided out, rounded up).

    The residual's penalty ``M`` rises tenfold when the LP's own dual ``y`` prices feasible (certified:
    the master is then optimal over every atom, so an open interval means the primal pays for part of
    ``v`` with the residual), and at a certified pricing ``CERTIFY_EVERY`` rounds or more after the last
    change while the residual's part of ``upper`` alone keeps the interval open.  A smoothed pricing
    that finds nothing violating the smoothed dual nor a column violating ``y`` (a mis-pricing) prices
    ``y`` itself.  Before, ``M`` rose only on the first, unsmoothed pricing, and a small ``M`` kept the
    residual in the primal for good (moons, n = 400: the upper end near 1,942 for 60 rounds, the norm
    near 11; n = 200 with ``M = 1`` forced: [4.09, 162,500] for 60 rounds, now [7.82, 9.67], the
    residual gone by round 24).  ``M`` only steers the master: the bounds are as certified for any.

    ``early``: a round first prices the LP's own dual uncertified (:meth:`ConePricer.columns`) and
    adds what violates; the certified bound (smoothed as above) runs only when that finds nothing
    and every ``CERTIFY_EVERY`` rounds.  Only the
    certified bounds move ``lower``, so the interval is as valid as without.
    """
    nv = float(np.linalg.norm(v))
    lower_v, best_y = _trivial_dual(v)  # ||v||_A >= ||v||: closes at once when v is one atom (the constant)
    center, center_low = np.zeros_like(u), 0.0  # the smoothing's centre: the best priced dual (not the trivial one)
    M = carry.get("M", 1e3) if early and carry is not None else 1e3
    if early:
        lp, thetas, D, seed_lps = _seed_master_chunked(P, u, thetas, n_seed, tol, M, carry)
    else:
        lp, thetas, D, seed_lps = _seed_master(P, u, thetas, n_seed, tol, M)
    out: dict = {}
    raised = 0  # the round M last changed
    for it in range(1, max_iter + 1):
        a, r, y = lp.solve()
        upper, c, residual = _upper(D, a, u, B)
        out = {"thetas": thetas, "a": a, "c": c, "upper": upper, "residual": residual, "it": it + seed_lps}
        if on_round is not None:
            on_round(it, lower_v, upper * nv)
        if upper * nv - lower_v <= tol * upper * nv:
            break
        smoothed = center_low > 0
        if early and it % CERTIFY_EVERY:
            new = cone.columns(y, 1.0 + tol / 4, n_columns=_ROUND_COLUMNS)
            Dn, keep = normalized_neurons(P, new) if new.size else (None, np.zeros(0, dtype=int))
            if keep.size:
                lp.add(Dn)
                thetas, D = np.vstack([thetas, new[keep]]), np.hstack([D, Dn])
                continue
        ys = SMOOTHING * center + (1 - SMOOTHING) * y if smoothed else y
        bound, yq, new, _ = cone.bound(ys, n_columns=_ROUND_COLUMNS)
        if smoothed and bound <= 1.0 + tol / 4 and not _violates(P, new, y, 1.0 + tol / 4):
            bound, yq, new, _ = cone.bound(y, n_columns=_ROUND_COLUMNS)  # a mis-pricing: nothing violates ys nor y's columns
            smoothed = False  # y itself priced: its bound decides the penalty below
        if bound > 0:
            low = _lower_exact(yq, v, bound)
            if low > center_low:
                center_low, center = low, yq / math.nextafter(bound * (1 + 4e-16), math.inf)
            if low > lower_v:
                lower_v, best_y = low, center
        if upper * nv - lower_v <= tol * upper * nv:
            break
        stuck = _residual_blocks(a, upper, tol) and it - raised >= CERTIFY_EVERY
        if (bound <= 1.0 + tol / 4 and not smoothed) or stuck:
            M *= 10.0  # y dual feasible, or CERTIFY_EVERY rounds at this M, yet the primal uses the residual
            lp.set_penalty(M)
            raised = it
            continue
        Dn, keep = normalized_neurons(P, new) if new.size else (np.zeros((P.shape[0], 0)), np.zeros(0, dtype=int))
        if keep.size:  # the master keeps every atom (dropping them lets its dual cycle between extreme points)
            lp.add(Dn)
            thetas, D = np.vstack([thetas, new[keep]]), np.hstack([D, Dn])
    out.update(lower=lower_v / nv, lower_v=lower_v, y=best_y)
    if early and carry is not None:  # the next norm on this Phi starts from this master and its atoms
        carry.update(lp=lp, thetas=thetas, D=D, M=M)
    return out


@dataclass(frozen=True, eq=False)
class Representability:
    r"""Bounds on :math:`\kappa(U) = \max_{u\in\mathrm{col}(U),\|u\|=1}\|u\|_{\mathcal A}` (Def 5.8).

    Attributes
    ----------
    lower, upper : float
        ``lower <= kappa <= upper``.
    direction : ndarray, shape (n,)
        A unit vector of ``col(U)`` with ``||direction||_A >= lower``.
    coefficients : ndarray, shape (J, K)
        The unit coefficient vectors ``c`` (``u = U c``) evaluated.
    norms : ndarray, shape (J, 2)
        ``[lower, upper]`` of ``||U c||_A`` for each.
    basis_norms : ndarray, shape (K, 2)
        The same for the columns of ``U`` (the paper's ``kappa <= sqrt(K) max_k ||u_k||_A``).
    radius : float
        Inradius of the convex hull of ``±coefficients`` (the net's covering factor).
    certified : bool
        Every norm interval closed.
    seconds : float
    rounds : ndarray of int, shape (J,)
        Master rounds of each norm's column generation.
    solve_seconds : ndarray, shape (J,)
        Seconds of each norm.
    upper_parts : dict
        The upper ends of each argument: ``"basis"`` (Cauchy-Schwarz on the basis), ``"net"`` (the
        net's largest upper end over its inradius) and ``"gauge"`` (the weighted hull, the smallest).
    closed : ndarray of bool, shape (J,)
        Which norm intervals closed to ``tol`` (a partial bracket: the last one may still be running).
    """

    lower: float
    upper: float
    direction: np.ndarray
    coefficients: np.ndarray
    norms: np.ndarray
    basis_norms: np.ndarray
    radius: float
    certified: bool
    seconds: float
    rounds: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    solve_seconds: np.ndarray = field(default_factory=lambda: np.zeros(0))
    upper_parts: dict = field(default_factory=dict)
    closed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))


def _net(K: int, n_directions: int, seed: int) -> np.ndarray:
    """Unit coefficient vectors: ``±`` covers the sphere of ``R^K`` (basis first)."""
    if K == 1:
        return np.ones((1, 1))
    if K == 2:
        ang = np.pi * np.arange(n_directions) / n_directions
        return np.c_[np.cos(ang), np.sin(ang)]
    rng = np.random.default_rng(seed)
    C = rng.standard_normal((max(n_directions - K, 0), K))
    return np.vstack([np.eye(K), C / np.linalg.norm(C, axis=1, keepdims=True)])


def _inradius(C: np.ndarray) -> float:
    """Radius of the largest ball about 0 inside ``conv(±C)`` (every unit ``c`` is in ``conv(±C) / radius``)."""
    K = C.shape[1]
    if K == 1:
        return float(np.abs(C).max())
    if K == 2:
        ang = np.sort(np.mod(np.arctan2(C[:, 1], C[:, 0]), np.pi))
        gaps = np.diff(np.r_[ang, ang[0] + np.pi])
        return float(np.cos(gaps.max() / 2)) if gaps.max() < np.pi else 0.0
    from scipy.spatial import ConvexHull

    hull = ConvexHull(np.vstack([C, -C]))
    return float(max(0.0, -hull.equations[:, -1].max()))


#: Relative margin on the float hull computations of :func:`_gauge_upper` (qhull's facets, a solve per facet).
_HULL_MARGIN = 1e-9


def _gauge_upper(C: np.ndarray, ups: np.ndarray) -> tuple[float, np.ndarray]:
    r"""An upper end on ``max ||U c||_A`` over unit ``c`` from upper ends ``ups`` on ``||U c_j||_A``, and where.

    ``c -> ||U c||_A`` is a seminorm, so it is at most 1 on ``V = conv(±c_j / ups_j)``: on the cone of a
    facet ``F`` of ``V`` (vertices ``v_1..v_K``, plane ``a^T x = 1``, ``F a = 1``) every ``c = sum
    lambda_i v_i`` (``lambda >= 0``) has ``||U c||_A <= sum lambda_i = a^T c <= ||a||``.  The bound is
    the largest ``||a||`` over the facets (``1 / inradius`` of ``V``; with the basis alone it is
    Cauchy-Schwarz on the basis) and the direction ``a / ||a||`` attaining it.  The hull is computed in
    floats: every facet is checked to support all ``±v_j`` (within ``_HULL_MARGIN``) and the bound is
    raised by ``_HULL_MARGIN``; ``inf`` if a check fails or ``V`` is not full-dimensional.
    """
    K = C.shape[1]
    if np.any(~np.isfinite(ups)) or np.any(ups <= 0):
        return math.inf, C[0]
    V = C / ups[:, None]
    if K == 1:
        return float(1.0 / np.abs(V).max()), np.ones(1)
    from scipy.spatial import ConvexHull, QhullError

    pts = np.vstack([V, -V])
    try:
        hull = ConvexHull(pts)
    except (QhullError, ValueError):
        return math.inf, C[0]
    A = np.array([np.linalg.lstsq(pts[f], np.ones(K), rcond=None)[0] for f in hull.simplices])
    if np.any(pts @ A.T > 1.0 + _HULL_MARGIN) or np.any(np.abs(np.einsum("fkm,fm->fk", pts[hull.simplices], A) - 1)
                                                        > _HULL_MARGIN):
        return math.inf, C[0]
    norms = np.linalg.norm(A, axis=1)
    j = int(np.argmax(norms))
    return float(norms[j]) * (1 + 4 * _HULL_MARGIN), A[j] / norms[j]


def _kappa_direction(Ub: np.ndarray, c: np.ndarray, P: np.ndarray, atoms: np.ndarray, opts: dict,
                     on_round: Any = None) -> tuple:
    """``||U c||_A`` with its dual's lower ends on kappa: (result, [(value, direction), ...])."""
    r = variation_norm(Ub @ c, P, initial=atoms, on_round=on_round, **opts)
    g = Ub.T @ r.dual
    return r, [(float(np.linalg.norm(g)), g / max(np.linalg.norm(g), 1e-300)), (r.lower, c)]


def representability_constant(U: Any, Phi: Any, *, n_directions: int = 12, refine: int = 2, tol: float = 1e-5,
                              seed: int = 0, patterns: Any = None, max_iter: int = 200,
                              max_patterns: int | None = None, adaptive: int = 0,
                              gap: float = 0.0, on_norm: Any = None, pricing: str = "auto",
                              carry: dict | None = None, on_round: Any = None) -> Representability:
    r"""Bounds on :math:`\kappa(U)`, the largest ``||u||_A`` over unit ``u`` in ``col(U)`` (Def 5.8, ``epsilon = 0``).

    ``U`` is ``(kappa, 0)``-representable exactly for ``kappa >= kappa(U)``.  The maximum of a norm
    over a sphere is bounded on a net of unit coefficient vectors ``c`` (``u = U c``): the seminorm
    ``c -> ||U c||_A`` is at most 1 on ``conv(±c_j / upper_j)``, so ``kappa`` is at most the inverse
    inradius of that hull (:func:`_gauge_upper`; never above Cauchy-Schwarz on the basis,
    ``sqrt(sum_k ||u_k||_A^2)``, nor the paper's ``sqrt(K) max_k ||u_k||_A``).  Each certified dual
    ``y`` (``|<y, d>| <= 1`` on every atom) gives ``kappa >= ||U^T y||``; ``refine`` ascent steps
    move to ``c = U^T y / ||U^T y||``, ``adaptive`` steps evaluate the direction where the hull's
    bound is attained (the upper end's worst point).

    Parameters
    ----------
    U : array_like, shape (n, K)
        Orthonormal columns (``U_K``, or the normalized cluster indicators of Example 5.12).
    Phi : array_like, shape (n, m)
    n_directions : int
        Net size (K = 2: equally spaced angles in ``[0, pi)``; K >= 3: the basis plus random directions).
    refine : int
        Dual ascent steps from the best direction.
    tol, max_iter, patterns, max_patterns
        As in :func:`variation_norm`.
    seed : int
        Seed of the random directions (K >= 3).
    adaptive : int
        Extra directions, each where the current upper end is attained (after the ascent steps).
    gap : float
        Stop the adaptive steps once ``upper - lower <= gap * upper``.
    pricing : str
        As in :func:`variation_norm` (``"early"`` for large ``n``).
    carry : dict, optional
        As in :func:`variation_norm`, shared by every norm of the bracket (a new dict if None): the
        cone pricer is built once, and with ``pricing="early"`` each norm's master starts from the
        previous one's LP and atoms.  Pass the same dict to brackets of several ``U`` on one ``Phi``.
    on_norm : callable, optional
        Called with the bounds so far (a :class:`Representability`, valid as it stands) after each
        norm: long runs can save them as they come.  Before the ``K`` basis norms are in, every upper
        end is ``inf`` (no argument bounds the sphere yet) and the lower end is the best certified one.
    on_round : callable, optional
        Called the same way after each priced round of a norm's column generation (the cone pricings),
        the running norm included as an open row with its interval so far (its certified lower end
        already bounds ``kappa`` from below: ``||U c|| = 1``).
    """
    from relu_gating.coverage.metrics import check_basis
    from relu_gating.patterns import enumerate_patterns

    t0 = time.perf_counter()
    P = as_matrix(Phi, "Phi")
    Ub = check_basis(U, "U", n=P.shape[0])
    K = Ub.shape[1]
    for name, val in (("n_directions", n_directions), ("refine", refine), ("adaptive", adaptive)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < (name == "n_directions"):
            raise InputError(f"{name} must be a {'positive' if name == 'n_directions' else 'nonnegative'} "
                             f"integer, got {val!r}")
    opts = {"tol": tol, "max_iter": max_iter, "pricing": pricing, "carry": {} if carry is None else carry,
            "patterns": enumerate_patterns(P, max_patterns=max_patterns) if patterns is None else patterns}
    C: list[np.ndarray] = []
    rows: list[tuple] = []  # (lower, upper, certified, rounds, seconds) of each direction
    lows: list[tuple] = []  # certified lower ends on kappa: (value, direction)
    atoms = np.zeros((0, P.shape[1]))

    def running(c: np.ndarray, started: float) -> Any:  # the bracket with the running norm as an open row
        if on_round is None:
            return None

        def report(it: int, lower: float, upper: float) -> None:
            row = (lower, upper, False, it, time.perf_counter() - started)
            on_round(_representability(Ub, np.array([*C, c]), [*rows, row], [*lows, (lower, c)], t0))
        return report

    def evaluate(c: np.ndarray) -> bool:
        nonlocal atoms
        if any(np.allclose(c, d) or np.allclose(c, -d) for d in C):
            return False
        r, new_lows = _kappa_direction(Ub, c, P, atoms, opts, running(c, time.perf_counter()))
        C.append(c)
        atoms = np.vstack([atoms, r.thetas])[-400:]
        rows.append((r.lower, r.upper, r.certified, r.iterations, r.seconds))
        lows.extend(new_lows)
        if on_norm is not None:
            on_norm(_representability(Ub, np.array(C), rows, lows, t0))
        return True

    for c in [*np.eye(K), *_net(K, max(n_directions, K), seed)]:
        evaluate(c)
    for _ in range(refine):  # dual ascent: the best dual's direction
        if not evaluate(lows[int(np.argmax([lv for lv, _ in lows]))][1]):
            break
    for _ in range(adaptive):  # where the upper end is attained
        up, worst = _gauge_upper(np.array(C), np.array([r[1] for r in rows]))
        if up - max(lv for lv, _ in lows) <= gap * up or not evaluate(worst):
            break
    return _representability(Ub, np.array(C), rows, lows, t0)


def _representability(Ub: np.ndarray, Cm: np.ndarray, rows: list[tuple], lows: list[tuple], t0: float) -> Representability:
    """The bounds of :func:`representability_constant` from its evaluated directions."""
    K = Ub.shape[1]
    norms = np.array([[lo, up] for lo, up, *_ in rows])
    basis = norms[:K]
    if len(rows) < K:  # the basis not yet evaluated: no argument bounds the whole sphere
        radius, parts = 0.0, {"basis": math.inf, "net": math.inf, "gauge": math.inf}
    else:
        radius = _inradius(Cm)
        parts = {"basis": float(np.sqrt(np.sum(basis[:, 1] ** 2))),
                 "net": float(norms[:, 1].max()) / radius if radius > 0 else math.inf,
                 "gauge": _gauge_upper(Cm, norms[:, 1])[0]}
    best = int(np.argmax([lv for lv, _ in lows]))
    return Representability(
        lower=float(lows[best][0]), upper=float(min(parts.values())), direction=Ub @ lows[best][1], coefficients=Cm,
        norms=norms, basis_norms=basis, radius=radius, certified=all(ok for _, _, ok, *_ in rows),
        seconds=time.perf_counter() - t0, rounds=np.array([r[3] for r in rows], dtype=int),
        solve_seconds=np.array([r[4] for r in rows]), upper_parts=parts,
        closed=np.array([bool(r[2]) for r in rows], dtype=bool))
