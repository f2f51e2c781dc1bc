"""Choosing the graph (Rem 6.1): smoothness term versus the coverage certified neurons reach.

For targets ``f`` on two-moons samples (the ±1 moon labels, and a smooth function plus noise), every
graph (kNN, Gaussian, epsilon; several parameters) and every ``K`` fixes ``U_K`` and
``lambda_{K+1}``.  A layer of ``t`` certified greedy neurons (:func:`relu_gating.greedy_layer`, from the
bias) gives readout features ``Z``; recorded per (graph, K, target):

* the smoothness term ``E(f) / sqrt(lambda_{K+1})`` (depends on f and the graph only),
* the coverage term ``s_K(Z) ||f||`` and ``N_K(Z)``,
* the Cor 3.1 bound ``s ||f|| + E(f) / sqrt(lambda_{K+1})`` (and its sharper first form, and Rem 6.1's
  ``sqrt(K - N_K) ||f|| + E / sqrt(lambda_{K+1})``),
* the readout error ``||g - f||`` actually obtained (least squares on ``Z``).

The graph minimizing the Cor 3.1 bound after ``t`` neurons is reported per target; every readout
error must lie below its bounds (checked).

    relu-gating experiment graph-choice [--quick]
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from relu_gating.experiments._plotting import saver
from relu_gating.experiments._base import Check, Experiment, ExperimentResult

__all__ = ["EXPERIMENT", "run", "plot", "figure", "compare_graphs"]

TOL = 1e-8


def _graphs(quick: bool) -> list[tuple[str, dict]]:
    if quick:
        return [("knn k=5", {"kind": "knn", "n_neighbors": 5}), ("gaussian median", {"kind": "gaussian"})]
    return [("knn k=5", {"kind": "knn", "n_neighbors": 5}), ("knn k=10", {"kind": "knn", "n_neighbors": 10}),
            ("gaussian median", {"kind": "gaussian"}), ("gaussian sigma=0.25", {"kind": "gaussian", "sigma": 0.25}),
            ("epsilon MST", {"kind": "epsilon"})]


def targets(X: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    """The two targets: moon labels (±1, first half upper moon) and sin(2 x_1) + x_2 plus noise 0.1."""
    n = X.shape[0]
    noise = np.random.default_rng(seed + 101).standard_normal(n)
    return {"moon labels": np.r_[np.ones(n // 2), -np.ones(n - n // 2)],
            "smooth + noise": np.sin(2.0 * X[:, 0]) + X[:, 1] + 0.1 * noise}


def compare_graphs(X: np.ndarray, fs: dict, graphs: list[tuple[str, dict]], Ks: list[int], t: int) -> list[dict]:
    """One row per (graph, K, target): the Cor 3.1 / Rem 6.1 terms after ``t`` certified greedy neurons."""
    from relu_gating.coverage.bounds import target_coverage_bound
    from relu_gating.layers.greedy import greedy_layer
    from relu_gating.layers.networks import layer_input
    from relu_gating.spectral.graphs import laplacian, sample_graph
    from relu_gating.spectral.spectra import low_frequency_basis

    Phi, rows = layer_input(X), []
    for gname, opts in graphs:
        L = laplacian(sample_graph(X, **opts))
        for K in Ks:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                basis = low_frequency_basis(L, K)
            g = greedy_layer(Phi, basis.U_K, t)
            for fname, f in fs.items():
                b = target_coverage_bound(g.features, f, basis.U_K, L=L, next_eigenvalue=basis.next_eigenvalue)
                rows.append({"target": fname, "graph": gname, "K": K, "t": int(g.gains.size),
                             "certified": bool(g.certified), "alpha_certified": _ratio(g), "tie_at_K": bool(basis.tie_at_K),
                             "lambda_K1": float(basis.next_eigenvalue), "energy_term": b.energy_term,
                             "coverage_term": b.coverage_gap * float(np.linalg.norm(f)), "s_K": b.coverage_gap,
                             "N_K": b.captured, "cor31_bound": b.smoothness_bound,
                             "cor31_projection_bound": b.projection_bound, "rem61_bound": b.deficit_bound,
                             "readout_error": b.residual_norm, "norm_f": float(np.linalg.norm(f))})
    return rows


def _ratio(g: Any) -> float:
    """Smallest gain / certified bound over the steps: the alpha every neuron is certified for."""
    ub = np.asarray(g.upper_bounds, float)
    return float(np.min(np.asarray(g.gains) / np.maximum(ub, 1e-300), initial=1.0))


def _best(rows: list[dict]) -> list[dict]:
    out = []
    for fname in dict.fromkeys(r["target"] for r in rows):
        rs = [r for r in rows if r["target"] == fname]
        b = min(rs, key=lambda r: r["cor31_bound"])
        e = min(rs, key=lambda r: r["readout_error"])
        out.append({"target": fname, "best_graph": b["graph"], "best_K": b["K"], "cor31_bound": b["cor31_bound"],
                    "readout_error": b["readout_error"], "lowest_error_graph": e["graph"], "lowest_error_K": e["K"],
                    "lowest_readout_error": e["readout_error"]})
    return out


def _checks(rows: list[dict]) -> tuple[Check, ...]:
    worst = max(rows, key=lambda r: r["readout_error"] - r["cor31_projection_bound"])
    return (
        Check("readout error <= Cor 3.1 first form s||P_K f|| + ||P_K^perp f||",
              all(r["readout_error"] <= r["cor31_projection_bound"] + TOL for r in rows),
              f"largest error - bound = {worst['readout_error'] - worst['cor31_projection_bound']:.3g}"),
        Check("readout error <= Cor 3.1 bound s||f|| + E(f)/sqrt(lambda_K+1)",
              all(r["readout_error"] <= r["cor31_bound"] + TOL for r in rows), f"{len(rows)} configurations"),
        Check("readout error <= Rem 6.1 bound sqrt(K - N_K)||f|| + E(f)/sqrt(lambda_K+1)",
              all(r["readout_error"] <= r["rem61_bound"] + TOL for r in rows), f"{len(rows)} configurations"),
    )


def run(*, seed: int = 0, quick: bool = False) -> ExperimentResult:
    """Trade-off of smoothness term and certified coverage across graphs and K (Rem 6.1)."""
    from relu_gating.data.datasets import two_moons

    t0 = time.perf_counter()
    graphs = _graphs(quick)
    params: dict[str, Any] = {"seed": seed, "quick": quick, "data": "two_moons", "noise": 0.1, "n": 24 if quick else 32,
              "Ks": [3, 4] if quick else [2, 4, 6], "t": 2 if quick else 3, "features_0": "bias",
              "graphs": {name: opts for name, opts in graphs}, "targets": ["moon labels", "smooth + noise"],
              "tol": TOL}
    X = two_moons(params["n"], noise=0.1, seed=seed)
    rows = compare_graphs(X, targets(X, seed), graphs, params["Ks"], params["t"])
    return ExperimentResult(
        name="graph-choice",
        title=f"Choosing the graph (Rem 6.1): smoothness term vs coverage of {params['t']} certified neurons "
              f"(two moons, n = {params['n']})",
        params=params, tables={"configurations": rows, "best": _best(rows)}, checks=_checks(rows),
        seconds=time.perf_counter() - t0)


def figure(result: ExperimentResult) -> Any:
    """The matplotlib Figure: per target the two terms of Cor 3.1 per (graph, K); bound vs error."""
    from relu_gating.experiments._plotting import figure as new_figure
    from relu_gating.experiments._plotting import label

    rows, p = result.tables["configurations"], result.params
    fig, axs = new_figure(result.title, 3, width=5.6, height=4.3)
    graphs = list(p["graphs"])
    markers = dict(zip(graphs, "osD^v<>"))
    colors = dict(zip(p["Ks"], ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")))
    best = {b["target"]: b for b in result.tables["best"]}
    for ax, fname in zip(axs[:2], p["targets"]):
        rs = [r for r in rows if r["target"] == fname]
        for r in rs:
            ax.scatter(r["energy_term"], r["coverage_term"], marker=markers[r["graph"]], color=colors[r["K"]], s=40,
                       label="_")
        b = next(r for r in rs if r["graph"] == best[fname]["best_graph"] and r["K"] == best[fname]["best_K"])
        ax.scatter(b["energy_term"], b["coverage_term"], s=220, facecolors="none", edgecolors="k", lw=1.5,
                   label="_smallest Cor 3.1 bound")
        hi = max(max(r["energy_term"] + r["coverage_term"] for r in rs), 1e-9)
        for c in np.linspace(0.25, 1.0, 4) * hi:
            ax.plot([0, c], [c, 0], color="gray", lw=0.5, ls=":", label="_")
        label(ax, f"target: {fname} (circled: smallest bound; dotted: equal sums)",
              "smoothness term E(f)/sqrt(lambda_(K+1)) (norm units)", "coverage term s_K(Z)||f|| (norm units)")
    for r in rows:
        axs[2].scatter(r["cor31_bound"], r["readout_error"], marker=markers[r["graph"]], color=colors[r["K"]],
                       s=30, label="_")
    top = max(r["cor31_bound"] for r in rows)
    axs[2].plot([0, top], [0, top], "k--", lw=0.8, label="error = bound")
    label(axs[2], "readout error vs Cor 3.1 bound (all targets)", "Cor 3.1 bound s||f|| + E/sqrt(lambda) (norm units)",
          "readout error ||g - f|| (norm units)")
    for g in graphs:  # legend entries: marker = graph, color = K
        axs[2].scatter([], [], marker=markers[g], color="gray", label=f"graph: {g}")
    for K in p["Ks"]:
        axs[2].scatter([], [], marker="s", color=colors[K], label=f"K = {K}")
    return fig


plot = saver(figure)


EXPERIMENT = Experiment(
    name="graph-choice",
    summary="Rem 6.1: smoothness term vs certified coverage across graphs and K; best graph and its readout error",
    run=run, plot=plot)
