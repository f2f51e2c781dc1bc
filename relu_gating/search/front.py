"""Certified best-neuron search: global comparison across gating patterns.

Given a layer input ``Phi``, a low-frequency basis ``U_K`` and optionally the
features ``H`` already in the layer, find

.. math::

    \\max_{\\theta}\\; N_K(\\operatorname{relu}(\\Phi\\theta))
    \\quad\\text{or}\\quad
    \\max_{\\theta}\\; G_H(\\operatorname{relu}(\\Phi\\theta)),

with a proof.  The method (SPEC section 3): enumerate the realized gating
patterns exactly; bound every pattern cheaply (vectorised); solve the
cone-constrained generalized eigenvalue problem of a pattern exactly only while
its bound can still beat ``best / alpha``.  The result is certified
alpha-optimal; ``alpha = 1`` is exact (to ``tol``).

References
----------
Prop 4.3, Rem 4.4, Prop 4.5, Lemma 5.9 and Thm 5.10 of the paper.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from relu_gating.search.result import NeuronResult
from relu_gating.search.options import LEGACY_DEFAULTS, resolve_options
from relu_gating.search._config import DEFAULT_TOL, NEAR_TIE_TOL

__all__ = ["NeuronResult", "best_neuron", "DEFAULT_TOL", "NEAR_TIE_TOL"]


def best_neuron(
    Phi: Any,
    U_K: Any,
    *,
    features: Any = "bias",
    alpha: float = 1.0,
    tol: float = DEFAULT_TOL,
    method: str = "auto",
    strategy: str = "auto",
    options: Any = None,
    max_seconds: float | None = None,
    executor: Any = None,
    progress: bool | None = False,
    **legacy: Any,
) -> NeuronResult:
    """Find the certified best single ReLU neuron.

    Parameters
    ----------
    Phi : array_like, shape (n, m)
        Layer input with the ones column (``[H_{l-1}, 1]``), samples as rows.
    U_K : array_like, shape (n, K)
        Orthonormal low-frequency eigenvectors.
    features : "bias" (default), None or array_like, shape (n, q)
        Features already in the layer: the marginal gain ``G_H(h)`` over them
        is maximised (Prop 4.5; ``"bias"`` is the ones column, the interesting
        default).  None maximises ``N_K(h)`` (Prop 4.3), which a constant
        neuron maximises whenever ``u_1`` is constant.
    alpha : float in (0, 1]
        Stop as soon as ``value >= alpha * (largest remaining bound)``.
    tol : float
        Absolute tolerance of the comparison ``value >= alpha * bound``.
    method : str
        Per-pattern exact method of :mod:`solvers` (``"auto"``, ``"faces"``,
        ``"dnn"``); failures fall back to the others.
    strategy : {"auto", "enumerate", "branch-and-bound"}
        ``"auto"`` (default) runs what :func:`relu_gating.search.plan.choose` (the one decision,
        shared with the command line and :func:`relu_gating.greedy_layer`) predicts fastest within
        ``max_seconds`` and half this machine's memory: in-memory enumeration, streamed enumeration
        or branch and bound; when nothing is predicted within the limit it runs the branch and
        bound, which is anytime (it stops at the limit with the alpha reached).  It refuses
        (:class:`~relu_gating.errors.ProblemTooLargeError`, naming the options with their
        estimates) only when nothing can work: the branch and bound left out by
        ``EnumerateOptions`` or beyond the memory budget.  ``"enumerate"`` lists every chamber;
        ``"branch-and-bound"`` (:mod:`relu_gating.search.bnb`) discards whole cones of weights at
        once and returns a tree certificate (``result.tree``; the per-pattern arrays are empty).
        The strategies are :mod:`relu_gating.search.strategy`.
    options : EnumerateOptions, BranchAndBoundOptions or dict, optional
        The options of the strategy (:mod:`relu_gating.search.options`): the enumeration's
        pattern cap, memory budget, chunk sizes, checkpoint and reusable pattern set; the
        branch and bound's seed and lifted bound.  A dict needs ``strategy`` named; with
        ``"auto"``, ``EnumerateOptions`` leave auto the enumerations to choose from and
        ``BranchAndBoundOptions`` choose the branch and bound.
    max_seconds : float, optional
        The wall time of the whole call, for every strategy (default: 600 s with ``"auto"``,
        ``plan.DEFAULT_MAX_SECONDS``, which auto also plans within; no limit with a strategy named).
        A run stopped there returns a valid answer, not certified, with the alpha reached: the
        branch and bound its incumbent and tree; the enumeration its best pattern, every chamber
        still open claiming its bound (a chamber not yet bounded the trivial bound 1).
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where the chunks (or the branch and bound's subtrees) run; in-process by default.
    progress : bool or None
        Progress on stderr: False none (the default), True a bar, None a bar on a terminal and a plain
        line every 30 s elsewhere (a pipe, a log file).
    **legacy
        Release 0.3's keywords ``max_patterns``, ``chunk_size``, ``batch_size``,
        ``checkpoint``, ``patterns`` and ``memory``: the fields of ``EnumerateOptions``,
        accepted for this release with a :class:`DeprecationWarning`.

    Returns
    -------
    NeuronResult

    Examples
    --------
    >>> import numpy as np
    >>> from relu_gating import best_neuron
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(12, 2)); Phi = np.c_[X, np.ones(12)]
    >>> U_K = np.linalg.qr(rng.normal(size=(12, 3)))[0]
    >>> res = best_neuron(Phi, U_K)
    >>> res.certified and res.value <= res.upper_bound + 1e-9
    True
    """
    t0 = time.perf_counter()
    from relu_gating.search import strategy as strategies
    from relu_gating.search.plan import choose, plan_query

    unknown = sorted(set(legacy) - set(LEGACY_DEFAULTS))
    if unknown:
        raise TypeError(f"best_neuron() got an unexpected keyword argument {unknown[0]!r}")
    opts = resolve_options(strategy, options, legacy)
    auto = opts.strategy == "auto" and not opts.enumerate.pins_enumeration()
    plan = plan_query(Phi, np.shape(U_K)[1] if np.ndim(U_K) == 2 else None) if auto else None
    choice = choose(plan, opts, max_seconds=max_seconds)
    query = strategies.Query(Phi, U_K, features=features, alpha=alpha, tol=tol, method=method, executor=executor,
                             progress=progress, deadline=strategies.deadline_of(t0, choice.max_seconds))
    return strategies.run(choice, query)
