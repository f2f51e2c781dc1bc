"""Greedy layers of certified alpha-optimal neurons (Thm 5.10).

Starting from features ``H^(0)`` (for example the bias column, or the
coverage-preserving neurons of Prop 5.5), append one neuron at a time, each a
certified alpha-optimal maximizer of the marginal gain ``G_H`` (Prop 4.5)
over *all* neurons of the layer.  Thm 5.10 then bounds the deficit
``delta_t`` by ``(1/delta_0 + alpha t / (4 K^2 kappa^2))^{-1}``; this module
records the quantities the theorem speaks about so experiments can compare.
"""

from __future__ import annotations

import dataclasses
import resource
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from relu_gating._inputs.validate import as_matrix
from relu_gating.coverage.metrics import captured_features, coverage_gap
from relu_gating.errors import InputError
from relu_gating.search.objectives import resolve_features
from relu_gating.search.front import best_neuron

__all__ = ["GreedyLayer", "GreedyStep", "greedy_layer", "greedy_steps", "step_budget"]


@dataclass(frozen=True)
class GreedyLayer:
    """A layer built greedily from certified neurons.

    Attributes
    ----------
    thetas : ndarray, shape (t, m)
        The appended neurons' weights, in order.
    features : ndarray, shape (n, q0 + t)
        ``[H^(0), relu(Phi theta_1), ..., relu(Phi theta_t)]``.
    gains : ndarray, shape (t,)
        Certified marginal gain of each step.
    upper_bounds : ndarray, shape (t,)
        Each step's bound ``G*`` over all neurons (Lemma 5.9).
    captured : ndarray, shape (t + 1,)
        ``N_K(H^(s))`` for s = 0..t.
    deficit : ndarray, shape (t + 1,)
        ``delta_s = K - N_K(H^(s))``.
    gap : ndarray, shape (t + 1,)
        ``s_K(H^(s))``.
    certified : bool
        Every step was certified alpha-optimal.
    alpha : float
    seconds : ndarray, shape (t,)
        Wall time of each step's certified query (the layer's enumeration is in the first).
    cpu_seconds : ndarray, shape (t,)
        CPU time of each step, this process and its ended worker processes.
    nodes : ndarray, shape (t,)
        Nodes of each step's branch and bound (0 for an enumeration).
    """

    thetas: np.ndarray
    features: np.ndarray
    gains: np.ndarray
    upper_bounds: np.ndarray
    captured: np.ndarray
    deficit: np.ndarray
    gap: np.ndarray
    certified: bool
    alpha: float
    seconds: np.ndarray = field(default_factory=lambda: np.zeros(0))
    cpu_seconds: np.ndarray = field(default_factory=lambda: np.zeros(0))
    nodes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))


def greedy_layer(Phi: Any, U_K: Any, t: int, *, initial: Any = "bias", alpha: float = 1.0,
                 min_gain: float = 1e-10, reuse: bool = True, layer_seconds: float | None = None,
                 **search_options: Any) -> GreedyLayer:
    """Append ``t`` certified alpha-optimal neurons greedily (Thm 5.10).

    Parameters
    ----------
    Phi : array_like, shape (n, m)
        Layer input ``[H_{l-1}, 1]``.
    U_K : array_like, shape (n, K)
    t : int
        Number of neurons to add (stops early once no neuron gains more than
        ``min_gain``: then ``N_K(H) = N_K(V_P)`` by Thm 5.3).
    initial : "bias" or array_like, shape (n, q0)
        ``H^(0)``.
    alpha : float in (0, 1]
    reuse : bool
        Branch and bound steps only (issue 39): each step replays the previous step's tree geometry
        (its splits and exact implied rows, which depend on ``Phi`` alone;
        :class:`~relu_gating.search.options.BranchAndBoundOptions` ``guide``), computing only the node
        bounds for its own features where the previous tree went, and starts its incumbent from the
        previous step's candidate neurons (``starts``).  Every step is still certified by its own tree,
        checked as any other.  ``True`` (the default): iris step 2 certified in 0.36x the CPU seconds,
        every later step reached a higher alpha in the same time, a Gaussian 40 x 3 step 3 certified
        in 0.65-0.8x the CPU seconds
        (docs/branch-and-bound.md, "Greedy layers as one workload").  ``False``: every step is an
        independent query.
    layer_seconds : float, optional
        The wall-time budget of the whole layer (issue 39), instead of ``max_seconds`` for each step:
        each step gets the layer's time left over the steps left (:func:`step_budget`), so a step that
        settles early hands its time to the later ones.  Not with ``max_seconds``.
    **search_options
        Passed to :func:`relu_gating.best_neuron`.  ``strategy`` defaults to ``"auto"``: when the
        plan (:func:`relu_gating.search.plan.choose`, as for ``best_neuron``) chooses the enumeration,
        the arrangement is enumerated once for all ``t`` queries; otherwise every step is a branch
        and bound, whose certificate is its own tree.  ``max_seconds`` is each step's budget.
    """
    Phi, U, H = _checked(Phi, U_K, t, initial)
    thetas, gains, ubs, secs, cpus, nodes = [], [], [], [], [], []
    captured = [captured_features(H, U)]
    gap = [coverage_gap(H, U)]
    certified = True
    for step in greedy_steps(Phi, U, t, initial=H, alpha=alpha, min_gain=min_gain, reuse=reuse,
                             layer_seconds=layer_seconds, **search_options):
        res = step.result
        certified &= res.certified
        thetas.append(res.theta)
        gains.append(res.value)
        ubs.append(res.upper_bound)
        secs.append(step.seconds)
        cpus.append(step.cpu_seconds)
        nodes.append(int(res.n_nodes))
        H = np.c_[H, np.maximum(Phi @ res.theta, 0)]
        captured.append(captured_features(H, U))
        gap.append(coverage_gap(H, U))
    K = U.shape[1]
    cap = np.array(captured)
    return GreedyLayer(
        thetas=np.array(thetas).reshape(len(thetas), Phi.shape[1]), features=H, gains=np.array(gains),
        upper_bounds=np.array(ubs), captured=cap, deficit=K - cap, gap=np.array(gap),
        certified=bool(certified), alpha=float(alpha), seconds=np.array(secs),
        cpu_seconds=np.array(cpus), nodes=np.array(nodes, dtype=int),
    )


@dataclass(frozen=True)
class GreedyStep:
    """One step of a greedy layer (:func:`greedy_steps`).

    Attributes
    ----------
    features : ndarray, shape (n, q)
        The step's ``H`` (the initial features and the neurons chosen before it).
    result : NeuronResult
        The step's certified query; its certificate verifies against ``(Phi, U_K, features)``.
    seconds, cpu_seconds : float
        Wall and CPU time of the step (CPU: this process and its ended worker processes).
    """

    features: np.ndarray
    result: Any
    seconds: float
    cpu_seconds: float


def greedy_steps(Phi: Any, U_K: Any, t: int, *, initial: Any = "bias", alpha: float = 1.0,
                 min_gain: float = 1e-10, reuse: bool = True, layer_seconds: float | None = None,
                 **search_options: Any) -> Iterator[GreedyStep]:
    """The steps of :func:`greedy_layer` one at a time (same parameters), each with its query's
    result and certificate; ends after ``t`` steps or when no neuron gains more than ``min_gain``.
    With ``layer_seconds`` the layer's clock runs while a step runs: the caller's time between two
    ``next`` calls is not the layer's."""
    if not isinstance(reuse, bool):
        raise InputError(f"reuse must be True or False, got {reuse!r}")
    layer_seconds = _layer_seconds(layer_seconds, search_options)
    Phi, U, H = _checked(Phi, U_K, t, initial)
    spent = 0.0  # the layer's seconds: its steps', not the caller's between them
    if layer_seconds is not None:  # the plan chooses for an even share (an enumeration serves every step)
        search_options = dict(search_options, max_seconds=layer_seconds / max(t, 1))
    search_options = _per_step_options(Phi, U.shape[1], search_options)
    starts, guide = None, None
    t_step, c_step = time.perf_counter(), _cpu()  # the first step's time includes the layer's enumeration
    for k in range(t):
        if coverage_gap(H, U) ** 2 <= min_gain:
            return
        opts = _with_starts(search_options, starts, guide)
        if layer_seconds is not None:
            opts = dict(opts, max_seconds=step_budget(layer_seconds - spent - (time.perf_counter() - t_step), t - k))
        res = best_neuron(Phi, U, features=H, alpha=alpha, **opts)
        if res.value <= min_gain:
            return
        seconds = time.perf_counter() - t_step
        spent += seconds
        yield GreedyStep(H, res, seconds, _cpu() - c_step)
        starts = _next_starts(res, starts) if reuse else None
        guide = _next_guide(res, Phi) if reuse else None
        H = np.c_[H, np.maximum(Phi @ res.theta, 0)]
        t_step, c_step = time.perf_counter(), _cpu()


#: Candidate neurons carried from one greedy step to the next (the last step's first).
CARRIED = 32
#: The least budget a step of a layer with ``layer_seconds`` gets, its layer's time spent or not (a
#: branch and bound's first incumbent, from random neurons and local search, takes about 0.2 s on iris).
MIN_STEP_SECONDS = 0.5


def step_budget(left: float, steps_left: int) -> float:
    """A step's ``max_seconds`` under a layer budget: the layer's seconds ``left`` over the ``steps_left``
    steps still to run (this one included), at least :data:`MIN_STEP_SECONDS`.  A step that settles
    before its share leaves the rest to the steps after it."""
    return max(float(left) / max(int(steps_left), 1), MIN_STEP_SECONDS)


def _layer_seconds(layer_seconds: Any, search_options: dict) -> float | None:
    """``layer_seconds`` checked (a positive number or None), and not given with ``max_seconds``."""
    from relu_gating.search.options import check_max_seconds

    layer_seconds = check_max_seconds(layer_seconds, "layer_seconds")
    if layer_seconds is not None and search_options.get("max_seconds") is not None:
        raise InputError("give max_seconds (each step's budget) or layer_seconds (the whole layer's), not both")
    return layer_seconds


def _cpu() -> float:
    """CPU seconds of this process and its ended children (a step's worker pool is joined on return)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _next_starts(res: Any, starts: np.ndarray | None) -> np.ndarray | None:
    """The next step's starts: this step's candidates (its tree's best neurons of distinct patterns,
    the chosen one excluded: under the new features its gain is 0), then the ones carried before."""
    cands = getattr(res.certificate, "candidates", None)
    if cands is None:
        return starts
    keep = [c for c in cands if not np.array_equal(res.theta, c)]
    old = [] if starts is None else list(starts)
    out = (keep + old)[:CARRIED]
    return np.array(out) if out else None


def _next_guide(res: Any, Phi: np.ndarray) -> Any:
    """The next step's guide: this step's tree geometry (its splits and implied rows, which depend on
    ``Phi`` only; :func:`relu_gating.search.bnb.tree_guide`), None after an enumeration."""
    tree = getattr(res, "tree", None)
    if not tree or not tree.get("nodes"):
        return None
    from relu_gating.search.bnb import tree_guide

    return tree_guide(tree["nodes"], Phi)


def _with_starts(search_options: dict, starts: np.ndarray | None, guide: Any = None) -> dict:
    """``search_options`` with ``starts`` and ``guide`` in the branch and bound's options (an enumeration
    is exact and takes neither)."""
    opts = search_options.get("options")
    if (starts is None and guide is None) or search_options.get("strategy") != "branch-and-bound" or opts is None:
        return search_options
    return dict(search_options, options=dataclasses.replace(opts, starts=starts, guide=guide))


def _per_step_options(Phi: np.ndarray, K: int, search_options: dict) -> dict:
    """The ``best_neuron`` keywords of every step, from the plan's choice
    (:func:`relu_gating.search.plan.choose`, the same as ``best_neuron``'s): the branch and bound per
    step, or the enumeration over one pattern set enumerated once for all steps (one layer, one
    arrangement).  ``max_seconds`` is each step's budget."""
    from relu_gating.patterns import enumerate_patterns
    from relu_gating.search.options import LEGACY_DEFAULTS, resolve_options
    from relu_gating.search.plan import choose, plan_query

    search_options = dict(search_options)
    legacy = {k: search_options.pop(k) for k in list(search_options) if k in LEGACY_DEFAULTS}
    opts = resolve_options(search_options.pop("strategy", "auto"), search_options.pop("options", None), legacy)
    auto = opts.strategy == "auto" and not opts.enumerate.pins_enumeration()
    choice = choose(plan_query(Phi, K) if auto else None, opts, max_seconds=search_options.get("max_seconds"))
    if choice.strategy == "branch-and-bound":
        return dict(search_options, strategy="branch-and-bound", options=choice.options)
    eo = choice.options
    patterns = eo.patterns
    if patterns is None and eo.memory is None:
        limit = None if eo.max_patterns == "auto" else eo.max_patterns  # release 0.3: no cap unless one is given
        patterns = enumerate_patterns(Phi, max_patterns=limit)  # type: ignore[arg-type]
    if auto and "max_seconds" not in search_options:
        search_options["max_seconds"] = choice.max_seconds  # auto's limit is each step's budget
    return dict(search_options, strategy="enumerate", options=dataclasses.replace(eo, patterns=patterns))


def _checked(Phi: Any, U_K: Any, t: Any, initial: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(Phi, U_K, H^(0))`` as arrays, ``t`` a nonnegative integer (InputError naming the argument)."""
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or t < 0:
        raise InputError(f"t must be a nonnegative integer, got {t!r}")
    Phi = as_matrix(Phi, "Phi")
    U = as_matrix(U_K, "U_K")
    H = resolve_features(initial, Phi.shape[0])
    if H is None:
        raise InputError("initial must be 'bias' or a feature matrix (the greedy gain needs features)")
    return Phi, U, H
