"""Entry point of the branch and bound: options, the run, the result (private)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from relu_gating._runtime.progress import Progress
from relu_gating.errors import InputError
from relu_gating.patterns import single_thread_blas
from relu_gating.search.bnb._budget import slowdown
from relu_gating.search.bnb._search import Search
from relu_gating.search.bnb._audit import audit_tree
from relu_gating.search.bnb._collapse import collapse
from relu_gating.search.bnb._chamber import UNPROVEN_NOTE
from relu_gating.search.bnb._tree_build import count_kinds, to_nodes
from relu_gating.search._exact.signs import exact_signs
from relu_gating.search.proofs import exact_rank
from relu_gating.search.objectives import Objective, containment_remark, make_objective, with_rank
from relu_gating.search.result import NeuronResult, ProblemId, SearchStats, TreeCertificate

__all__ = ["branch_and_bound"]

#: Random neurons tried for the first incumbent.
SEED_RANDOM = 10_000


def branch_and_bound(Phi: Any, U_K: Any, *, features: Any = "bias", alpha: float = 1.0, method: str = "auto",
                     tol: float = 1e-9, max_seconds: float | None = None, progress: bool | None = False,
                     seed: int = 0, executor: Any = None, lifted: bool = True,
                     deadline: float | None = None, writes: str | None = None, workers: int | None = None,
                     starts: Any = None, guide: Any = None) -> NeuronResult:
    """Certified best neuron by branch and bound; the certificate is the search tree.

    Same problem and result type as :func:`relu_gating.best_neuron` (which dispatches here for
    ``strategy="branch-and-bound"``); the per-pattern arrays of the result are empty and
    ``result.tree`` holds the tree certificate.  ``max_seconds`` or Ctrl-C end the run with the
    incumbent and a valid certificate of the alpha reached.  ``executor`` (a
    ``concurrent.futures.Executor`` or a ``dask.distributed.Client``): subtrees are searched
    there, with a shared incumbent (:mod:`relu_gating.search.bnb._parallel`); one tree results.
    Without one, ``workers`` local processes (None, the default: every core this process may use;
    1: serial), started only when 2 s of serial search have not settled the query, ended on return.
    ``lifted`` (on by default): nodes with at most 128 undecided rows also try the lifted doubly
    nonnegative bound coupling those rows (``["d", ...]`` leaves of the tree,
    :mod:`relu_gating.search.bnb._strong`), with multipliers found by first-order steps (Clarabel on
    nodes with at most 8 undecided rows when those do not settle the node), after a delay: not before
    the search has bounded 6,000 nodes, unless a few probes of it find sooner that the subtrees it would
    spare cost more than it does (an easy query settles on the subspace bound alone; issue 39,
    docs/branch-and-bound.md); ``lifted=False`` keeps the subspace node bound alone
    (``benchmarks/bnb_lifted_effect.py`` compares the two).
    ``deadline`` (a ``time.perf_counter()`` time, for :class:`relu_gating.search.strategy.BranchAndBound`)
    replaces ``max_seconds`` by an end fixed by the caller, whose call began earlier; ``writes``
    (``"json"`` or ``"npz"``): the caller writes the certificate after, within that budget.
    ``starts`` (array_like, shape (k, m)): neurons tried first for the incumbent, each after a few
    fixed-gating ascent steps under this query's objective, its value recomputed (a greedy layer
    passes the previous step's candidates, issue 39); like every incumbent they only help pruning.
    The result's ``certificate.candidates`` holds the best neurons of distinct patterns the search met.
    ``guide`` (:class:`relu_gating.search.bnb._replay.TreeGuide` of a tree on the same ``Phi``, from
    :func:`relu_gating.search.bnb.tree_guide`): the search replays that tree's splits and implied rows
    before its own expansions (a greedy layer passes its previous step's tree, issue 39); the tree is
    checked as any other, and a guide made on another ``Phi`` is ignored.
    """
    t0 = time.perf_counter()
    from relu_gating.search.options import check_max_seconds

    max_seconds = check_max_seconds(max_seconds)
    obj = make_objective(Phi, U_K, features)
    obj = with_rank(obj, exact_rank(obj.Phi))  # the rank the verifier decides (exact rationals)
    if not isinstance(lifted, bool):
        raise InputError(f"lifted must be True or False, got {lifted!r}")
    search = Search(obj, float(alpha), float(tol), method, seed, lifted)
    search.writes = writes
    _use_guide(search, obj, guide)
    _seed_incumbent(search, obj, seed, _starts(starts, obj.Phi.shape[1]))
    if deadline is None and max_seconds is not None:
        deadline = t0 + max_seconds
    from relu_gating.search.bnb._parallel import run_executor, run_parallel

    with run_executor(executor, workers) as ex:  # a pool of our own is ended on return (Ctrl-C included)
        with Progress(None, "branch and bound", enabled=progress, unit="nodes") as bar, single_thread_blas():
            if ex is None:  # tiny products only: extra BLAS threads just wait (2x the nodes measured)
                why = search.run(deadline, bar)
            else:
                why = run_parallel(search, ex, deadline, bar, seed)
        return _result(obj, search, why, float(alpha), float(tol), time.perf_counter() - t0, ex)


def _use_guide(search: Search, obj: Objective, guide: Any) -> None:
    """Hang ``guide``'s root below the search's root when it was made on this ``Phi`` (InputError if it
    is not a guide)."""
    from relu_gating.search.bnb._replay import TreeGuide, phi_digest

    if guide is None:
        return
    if not isinstance(guide, TreeGuide):
        raise InputError(f"guide must be a tree guide (relu_gating.search.bnb.tree_guide) or None, got "
                         f"{type(guide).__name__}")
    if guide.root is not None and guide.digest == phi_digest(obj.Phi):
        search.root.guide = guide.root
        search.stats["guide_entries"] = guide.entries


def _starts(starts: Any, m: int) -> np.ndarray:
    """``starts`` as a finite float array of shape (k, m) (k = 0 for None), or InputError."""
    if starts is None:
        return np.zeros((0, m))
    try:
        arr = np.array(starts, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"starts must be an array of neurons of shape (k, {m}), got {type(starts).__name__}") from None
    arr = arr.reshape(1, -1) if arr.ndim == 1 else arr
    if arr.ndim != 2 or arr.shape[1] != m or not np.isfinite(arr).all():
        raise InputError(f"starts must be a finite array of neurons of shape (k, {m}), got shape {np.shape(starts)}")
    return arr


def _seed_incumbent(search: Search, obj: Objective, seed: int = 0, starts: Any = ()) -> None:
    """A first incumbent from ``starts`` (each ascended), random neurons and fixed-gating local
    search (uncertified, only lower bounds: they can only help pruning)."""
    from relu_gating.search._exact.pilot import ascend
    from relu_gating.search.baselines import local_search, random_search
    from relu_gating.search.objectives import neuron_values

    if len(starts):
        vals = np.nan_to_num(neuron_values(obj, starts), nan=-np.inf)
        for theta, v in zip(starts, vals):
            search._take(theta, float(v))
            if np.isfinite(v):
                search._take(*ascend(obj, theta, float(v)))
    features = obj.stated_features
    for res in (random_search(obj.Phi, obj.U_K, features=features, n_samples=SEED_RANDOM, seed=seed),
                local_search(obj.Phi, obj.U_K, features=features, n_starts=20, max_iter=30, seed=seed)):
        if np.isfinite(res.value):
            search.offer(res.theta)


def _result(obj: Objective, search: Search, why: str, alpha: float, tol: float, seconds: float,
            executor: Any = None) -> NeuronResult:
    t0 = time.perf_counter()
    search.stats["slowdown"] = slowdown(search)  # wall over CPU seconds of the search (Search.reserve)
    if search.stats["lifted_lowered"] + search.stats["lifted_plain_lowered"]:  # else no split node has lifted evidence
        search.stats["collapsed"], search.stats["claim_uncollapsed"] = collapse(search.root)  # (bnb/_collapse.py)
    nodes = to_nodes(search.root)
    search.stats["t_finish"] = time.perf_counter() - t0
    before = [nd[1] if nd[0] == "b" else None for nd in nodes]
    raised, refused = audit_tree(obj, nodes, executor)  # on the search's workers, if it had several
    if raised and refused is None:  # raised leaves that are chambers: claimed as chamber leaves, decided exactly
        from relu_gating.search.bnb._rechamber import rechamber

        up = [k for k, c in enumerate(before) if c is not None and nodes[k][1] > c]
        if rechamber(search, nodes, up):
            raised, refused = audit_tree(obj, nodes, executor)
    search.stats["t_audit"] = time.perf_counter() - t0 - search.stats["t_finish"]
    claims = [nd[1] for nd in nodes if nd[0] in ("b", "c", "d")]
    n, m = obj.Phi.shape
    notes = list(dict.fromkeys(search.notes))
    hint = containment_remark(obj) if UNPROVEN_NOTE in notes else None
    notes += [hint] if hint else []
    if raised:
        notes.append(f"{raised} leaf bound(s) raised to what the checker proves (lifted evidence it does not "
                     f"confirm, or its projector gaps wider than the search's on this data)")
    if refused:
        notes.append(f"the checker refuses this tree ({refused}): not certified")
    if search.best_theta is None:
        theta, value = np.zeros(m), 0.0
        notes.append("no admissible neuron found: value 0")
    else:
        from relu_gating.search._enum.finish import reported_neuron

        theta, value, evaluated, flagged = reported_neuron(obj, search.best_theta)  # to 1e-10 or exact
        notes += flagged
        refused = refused if evaluated else (refused or "the value of theta is not evaluated")
    upper = float(max(max(claims, default=-np.inf), value))
    if why != "settled":
        notes.append(f"branch and bound stopped early ({'time budget' if why == 'time' else 'interrupted'}): "
                     f"alpha reached {value / upper if upper > 0 else 1.0:.6f}")
    loose = _loose_chambers(nodes, value, alpha, tol) if why == "settled" and refused is None else ""
    notes += [loose] if loose else []
    if search.stats["unproven_empty"]:
        notes.append(f"{search.stats['unproven_empty']} node(s) without interior kept as leaves with their bound")
    kinds = count_kinds(nodes)
    stats = dict(search.stats, lp=search.lp.calls, open=len(search.heap), stop=why, **{f"n_{k}": v for k, v in kinds.items()})
    from relu_gating.search._value import confirmed

    return confirmed(obj, NeuronResult(
        theta=theta, value=value, upper_bound=upper, alpha=alpha, certified=bool(value >= alpha * upper - tol) and refused is None,
        pattern=exact_signs(obj.Phi, theta) > 0, seconds={"total": seconds, "bound": search.stats["t_bound"],
                                              "lp": search.stats["t_lp"], "chambers": search.stats["t_chamber"]},
        tol=tol, certificate=TreeCertificate({"nodes": nodes, "stats": stats}, search.candidates()), notes=tuple(notes),
        problem=ProblemId(obj.kind, K=int(obj.U_K.shape[1]), rank=obj.rank, features=obj.features,
                          features_sha256=obj.features_sha256),
        stats=SearchStats("branch-and-bound", n_patterns=kinds["c"] + kinds["x"], n_exact=kinds["c"], n_bound=kinds["b"],
                          n_pruned=kinds["x"], n_nodes=int(search.stats["nodes"]), stop=why),
    ))


def _loose_chambers(nodes: list, value: float, alpha: float, tol: float) -> str:
    """Why a search that settled every node is not certified, when chamber leaves are why: their proven
    claims (solved, not pruned: a chamber is final) stay above ``value / alpha``; "" otherwise.  Seen on
    slivers below blind splits whose verified solves gave loose bounds (the first 80 iris sepals, K = 3,
    before their dual evidence was tried: three chambers at 0.938 against the value 0.926)."""
    over = [nd[1] for nd in nodes if nd[0] == "c" and value < alpha * nd[1] - tol]
    if not over:
        return ""
    return (f"{len(over)} chamber leaf(s) claim more than the value over alpha (largest {max(over):.6g}): their "
            f"proven bounds are valid but not tight, so the search settled without certifying")
