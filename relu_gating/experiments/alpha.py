"""alpha in practice: time to certificate and final deficit versus alpha (Thm 5.10, Rem 5.11).

The certified search stops as soon as its best neuron reaches ``alpha`` times the largest bound still
open, so a smaller ``alpha`` needs fewer exact per-pattern solves.  On two moons with a kNN graph, a
greedy layer of ``T`` neurons from the bias is built for each alpha in {1, 0.99, 0.9, 0.5}
(patterns enumerated once).  Recorded per step: the search's wall time and exact solves, the gain, its
certified bound, and, on the same ``H``, the best value an ``alpha = 1`` search finds; per alpha: the
final deficit ``K - N_K``.  Checked: every step's gain is at least ``alpha`` times the exact search's
value on the same features (minus ``tol``), and the alpha = 0.5 searches stop before closing their bound.  Times depend on the machine; exact-solve counts do not.

    relu-gating experiment alpha [--quick]
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from relu_gating.experiments._plotting import saver
from relu_gating.experiments._base import Check, Experiment, ExperimentResult

__all__ = ["EXPERIMENT", "run", "plot", "figure", "ALPHAS", "check_alpha_used"]

TOL = 1e-8
ALPHAS = (1.0, 0.99, 0.9, 0.5)


def _path(Phi: np.ndarray, U: np.ndarray, patterns: Any, alpha: float, T: int) -> list[dict]:
    """Greedy layer at ``alpha`` with per-step timing and the alpha = 1 value on the same features."""
    from relu_gating.coverage.metrics import captured_features
    from relu_gating.search.front import best_neuron
    from relu_gating.search.options import EnumerateOptions

    n, K = U.shape
    H, rows = np.ones((n, 1)), []
    for t in range(1, T + 1):
        res = best_neuron(Phi, U, features=H, alpha=alpha, options=EnumerateOptions(patterns=patterns))
        exact = res if alpha == 1.0 else best_neuron(Phi, U, features=H, alpha=1.0,
                                                       options=EnumerateOptions(patterns=patterns))
        H = np.c_[H, np.maximum(Phi @ res.theta, 0.0)]
        rows.append({"alpha": alpha, "t": t, "gain": res.value, "upper_bound": res.upper_bound,
                     "certified": bool(res.certified), "exact_value": exact.value, "exact_upper_bound": exact.upper_bound,
                     "seconds": float(res.seconds["total"]), "exact_solves": int(res.n_exact),
                     "patterns": int(res.n_patterns), "deficit": K - captured_features(H, U)})
    return rows


def _summary(steps: list[dict], K: int, deficit_0: float) -> list[dict]:
    out = []
    for a in ALPHAS:
        rs = [r for r in steps if r["alpha"] == a]
        out.append({"alpha": a, "steps": len(rs), "total_seconds": float(sum(r["seconds"] for r in rs)),
                    "median_seconds_per_step": float(np.median([r["seconds"] for r in rs])),
                    "exact_solves": int(sum(r["exact_solves"] for r in rs)), "initial_deficit": deficit_0,
                    "final_deficit": rs[-1]["deficit"],
                    "final_N_K": K - rs[-1]["deficit"]})
    return out


def _checks(steps: list[dict], summary: list[dict]) -> tuple[Check, ...]:
    slack = min(r["gain"] - r["alpha"] * r["exact_value"] for r in steps)
    solves = [s["exact_solves"] for s in summary]
    return (
        Check("each alpha-run's gain >= alpha * exact optimum on the same H - tol",
              slack >= -TOL, f"min gain - alpha * optimum = {slack:.3g}",
              tests="the alpha stopping rule against an exact search on the same features",
              fails_if="a search that stops before its value reaches alpha times the optimum"),
        Check("each step certified at its alpha (gain >= alpha * bound - tol)",
              all(r["certified"] for r in steps), f"{len(steps)} steps",
              tests="the certificate flag of every step", fails_if="a step ended without a certificate"),
        Check("no gain exceeds the certified bound of the alpha = 1 search on the same H",
              all(r["gain"] <= r["exact_upper_bound"] + TOL for r in steps), "",
              tests="the exact search's bound against the alpha searches' recomputed values",
              fails_if="an exact bound below a neuron's value (a missed pattern)"),
        check_alpha_used(steps, solves),
    )


def check_alpha_used(steps: list[dict], solves: list[int]) -> Check:
    """alpha = 0.5 stops before proving the optimum: at some step its certified bound stays above its gain.

    A search that ignores alpha runs until its bound meets its value (gain = bound at every step), so
    this fails; the earlier check "alpha = 0.5 needs no more exact solves" could not (equal counts passed).
    """
    half = [r for r in steps if r["alpha"] == ALPHAS[-1]]
    early = [r for r in half if r["upper_bound"] > r["gain"] * (1 + 1e-6) + TOL]
    return Check(f"alpha = {ALPHAS[-1]:g} stops early: at some step its certified bound stays above its gain",
                 bool(early), f"{len(early)}/{len(half)} steps stopped with bound > gain; largest bound / gain "
                 f"{max((r['upper_bound'] / r['gain'] for r in half if r['gain'] > 0), default=float('nan')):.4g}; "
                 f"exact solves per alpha {dict(zip(ALPHAS, solves))}",
                 tests="that the stopping rule uses alpha (value >= alpha * largest open bound ends the search)",
                 fails_if="a stopping rule that ignores alpha (every search closes: bound = gain at every step)")


def run(*, seed: int = 0, quick: bool = False) -> ExperimentResult:
    """Greedy layers at alpha in {1, 0.99, 0.9, 0.5}: time to certificate and final deficit."""
    from relu_gating.experiments.certification import moons_problem
    from relu_gating.patterns import enumerate_patterns

    t0 = time.perf_counter()
    params: dict[str, Any] = {"seed": seed, "quick": quick, "data": "two_moons", "noise": 0.1, "graph": "knn", "n_neighbors": 8,
              "n": 24 if quick else 60, "K": 4 if quick else 6, "T": 3 if quick else 6, "alphas": list(ALPHAS),
              "features_0": "bias", "tol": TOL}
    prob = moons_problem(params["n"], params["K"], seed=seed)
    patterns = enumerate_patterns(prob["Phi"])
    steps = [r for a in ALPHAS for r in _path(prob["Phi"], prob["U_K"], patterns, a, params["T"])]
    from relu_gating.coverage.metrics import coverage_deficit

    summary = _summary(steps, params["K"], coverage_deficit(np.ones((params["n"], 1)), prob["U_K"]))
    return ExperimentResult(
        name="alpha",
        title=f"alpha in practice: search time and final deficit vs alpha (two moons, n = {params['n']}, "
              f"K = {params['K']}, {params['T']} neurons)",
        params=params, tables={"steps": steps, "summary": summary}, checks=_checks(steps, summary),
        seconds=time.perf_counter() - t0)


def figure(result: ExperimentResult) -> Any:
    """The matplotlib Figure: seconds and exact solves per step, deficit along the layer, per alpha."""
    from matplotlib.ticker import MaxNLocator

    from relu_gating.experiments._plotting import figure as new_figure
    from relu_gating.experiments._plotting import label

    steps, d0 = result.tables["steps"], result.tables["summary"][0]["initial_deficit"]
    fig, axs = new_figure(result.title, 3, width=5.0)
    for a, mk, ls, ms in zip(ALPHAS, "osD^", ("-", "--", "-.", ":"), (9, 7, 5, 4)):
        rs = [r for r in steps if r["alpha"] == a]
        t = [r["t"] for r in rs]
        st = {"marker": mk, "ls": ls, "ms": ms}
        axs[0].plot(t, [r["seconds"] for r in rs], label=f"alpha = {a:g}", **st)
        axs[1].plot(t, [r["exact_solves"] for r in rs], label=f"_alpha = {a:g}", **st)
        axs[2].plot([0] + t, [d0] + [r["deficit"] for r in rs], label=f"_alpha = {a:g}", **st)
    label(axs[0], "time to certificate per neuron", "greedy step t (neurons)", "search wall time (s)", log=True)
    label(axs[1], "exact per-pattern solves per neuron", "greedy step t (neurons)", "exact solves (count)")
    label(axs[2], "deficit along the layer (coinciding curves overlap)", "neurons t", "K - N_K([1, h_1..h_t]) (dims)", log=True)
    for a in axs:
        a.xaxis.set_major_locator(MaxNLocator(integer=True))
    return fig


plot = saver(figure)


EXPERIMENT = Experiment(
    name="alpha",
    summary="time to certificate and final deficit vs alpha in {1, 0.99, 0.9, 0.5} (greedy layers)",
    run=run, plot=plot)
