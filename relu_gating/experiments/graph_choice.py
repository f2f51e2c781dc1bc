"""Choosing the graph (Rem 6.1) as a ranking: does the Cor 3.1 bound order graphs by readout error?

For targets ``f`` on two-moons samples (the ±1 moon labels, and a smooth function plus noise), every
graph family (kNN, Gaussian, epsilon; several parameters) with either operator, the combinatorial
``L`` or the normalized ``L_sym`` (Rem 6.1 is about choosing the operator), fixes ``U_K`` and
``lambda_{K+1}``.  A layer of ``t`` certified greedy neurons (from the bias) gives readout features
``Z``; recorded per (seed, graph, operator, target): the smoothness term ``E(f) / sqrt(lambda_{K+1})``,
the coverage term ``s_K(Z) ||f||``, the Cor 3.1 bound and its first form, Rem 6.1's deficit form, and
the readout error ``||g - f||`` (least squares on ``Z``).

Per (seed, target) the graphs are ranked by the Cor 3.1 bound and by the readout error; table
``ranking`` gives Spearman's rho and Kendall's tau between the two (scipy.stats) and whether the
bound's best graph is the error's best; table ``summary`` their median and range over the seeds (at
least 10 in the full run).  Checked per row: Lemma 2.1 ``||P_K^perp f|| <= E(f) / sqrt(lambda_{K+1})``
(fails with a Laplacian that is not the one ``U_K`` came from) and the two forms of Cor 3.1.

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


OPERATORS = ("L", "L_sym")


def _graphs(quick: bool) -> list[tuple[str, dict]]:
    if quick:
        return [("knn k=5", {"kind": "knn", "n_neighbors": 5}), ("gaussian median", {"kind": "gaussian"}),
                ("gaussian sigma=0.25", {"kind": "gaussian", "sigma": 0.25})]
    return [("knn k=5", {"kind": "knn", "n_neighbors": 5}), ("knn k=10", {"kind": "knn", "n_neighbors": 10}),
            ("gaussian median", {"kind": "gaussian"}), ("gaussian sigma=0.25", {"kind": "gaussian", "sigma": 0.25}),
            ("epsilon MST", {"kind": "epsilon"})]


def targets(X: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    """The two targets: moon labels (±1, first half upper moon) and sin(2 x_1) + x_2 plus noise 0.1."""
    n = X.shape[0]
    noise = np.random.default_rng(seed + 101).standard_normal(n)
    return {"moon labels": np.r_[np.ones(n // 2), -np.ones(n - n // 2)],
            "smooth + noise": np.sin(2.0 * X[:, 0]) + X[:, 1] + 0.1 * noise}


def bound_row(Z: np.ndarray, f: np.ndarray, U: np.ndarray, L: Any, lam: float) -> dict:
    """The Cor 3.1 / Rem 6.1 terms of readout features ``Z`` for ``f`` with ``U_K``, operator ``L``, ``lambda_{K+1}``."""
    from relu_gating.coverage.bounds import target_coverage_bound

    b = target_coverage_bound(Z, f, U, L=L, next_eigenvalue=lam)
    nf = float(np.linalg.norm(f))
    return {"lambda_K1": float(lam), "energy_term": b.energy_term, "perp_norm": b.high_term,
            "coverage_term": b.coverage_gap * nf, "s_K": b.coverage_gap, "N_K": b.captured,
            "cor31_bound": b.smoothness_bound, "cor31_projection_bound": b.projection_bound,
            "rem61_bound": b.deficit_bound, "readout_error": b.residual_norm, "norm_f": nf}


def compare_graphs(X: np.ndarray, fs: dict, graphs: list[tuple[str, dict]], Ks: list[int], t: int,
                   operators: tuple = OPERATORS) -> list[dict]:
    """One row per (graph, operator, K, target): the Cor 3.1 / Rem 6.1 terms after ``t`` certified neurons."""
    from relu_gating.layers.greedy import greedy_layer
    from relu_gating.search.options import EnumerateOptions
    from relu_gating.layers.networks import layer_input
    from relu_gating.patterns import enumerate_patterns
    from relu_gating.spectral.graphs import laplacian, sample_graph
    from relu_gating.spectral.spectra import SpectralTieWarning, low_frequency_basis

    Phi, rows = layer_input(X), []
    pats = enumerate_patterns(Phi)
    for gname, opts in graphs:
        Wg = sample_graph(X, **opts)
        for op in operators:
            L = laplacian(Wg, kind="combinatorial" if op == "L" else "sym")
            for K in Ks:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", SpectralTieWarning)
                    basis = low_frequency_basis(L, K)
                tie = any(issubclass(w.category, SpectralTieWarning) for w in caught)
                g = greedy_layer(Phi, basis.U_K, t, options=EnumerateOptions(patterns=pats))
                for fname, f in fs.items():
                    rows.append({"target": fname, "graph": gname, "operator": op, "K": K, "t": int(g.gains.size),
                                 "certified": bool(g.certified), "alpha_certified": _ratio(g),
                                 "tie_at_K": bool(basis.tie_at_K) or tie,
                                 **bound_row(g.features, f, basis.U_K, L, basis.next_eigenvalue)})
    return rows


def _ratio(g: Any) -> float:
    """Smallest gain / certified bound over the steps: the alpha every neuron is certified for."""
    ub = np.asarray(g.upper_bounds, float)
    return float(np.min(np.asarray(g.gains) / np.maximum(ub, 1e-300), initial=1.0))


def rank_agreement(bounds: Any, errors: Any) -> dict:
    """Spearman's rho and Kendall's tau (scipy.stats) between the bound and the error over graphs, and
    whether the bound's argmin is the error's argmin."""
    from scipy.stats import kendalltau, spearmanr

    b, e = np.asarray(bounds, float), np.asarray(errors, float)
    return {"spearman": float(spearmanr(b, e).statistic), "kendall": float(kendalltau(b, e).statistic),
            "argmin_agrees": bool(np.argmin(b) == np.argmin(e)), "graphs": int(b.size)}


def _ranking(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    rank, summ = [], []
    keys = list(dict.fromkeys((r["seed"], r["target"], r["K"]) for r in rows))
    for seed, fname, K in keys:
        rs = [r for r in rows if r["seed"] == seed and r["target"] == fname and r["K"] == K]
        best = min(rs, key=lambda r: r["cor31_bound"])
        rank.append({"seed": seed, "target": fname, "K": K, "best_by_bound": f"{best['graph']} / {best['operator']}",
                     "best_by_error": "{graph} / {operator}".format(**min(rs, key=lambda r: r["readout_error"])),
                     **rank_agreement([r["cor31_bound"] for r in rs], [r["readout_error"] for r in rs])})
    for fname, K in dict.fromkeys((k[1], k[2]) for k in keys):
        rk = [r for r in rank if r["target"] == fname and r["K"] == K]
        sp, kt = np.array([r["spearman"] for r in rk]), np.array([r["kendall"] for r in rk])
        rs = [r for r in rows if r["target"] == fname and r["K"] == K]
        by_op = {op: float(np.median([r["readout_error"] for r in rs if r["operator"] == op])) for op in OPERATORS}
        summ.append({"target": fname, "K": K, "seeds": len(rk), "spearman_median": float(np.nanmedian(sp)),
                     "spearman_min": float(np.nanmin(sp)), "spearman_max": float(np.nanmax(sp)),
                     "kendall_median": float(np.nanmedian(kt)), "kendall_min": float(np.nanmin(kt)),
                     "kendall_max": float(np.nanmax(kt)),
                     "argmin_agrees": f"{sum(r['argmin_agrees'] for r in rk)}/{len(rk)}",
                     **{f"median_error_{op}": v for op, v in by_op.items()}})
    return rank, summ


def _best(rows: list[dict]) -> list[dict]:
    out = []
    for fname in dict.fromkeys(r["target"] for r in rows):
        rs = [r for r in rows if r["target"] == fname and r["seed"] == rows[0]["seed"]]
        b = min(rs, key=lambda r: r["cor31_bound"])
        e = min(rs, key=lambda r: r["readout_error"])
        out.append({"target": fname, "seed": rows[0]["seed"], "best_graph": b["graph"], "best_operator": b["operator"],
                    "best_K": b["K"], "cor31_bound": b["cor31_bound"], "readout_error": b["readout_error"],
                    "lowest_error_graph": e["graph"], "lowest_error_operator": e["operator"],
                    "lowest_error_K": e["K"], "lowest_readout_error": e["readout_error"]})
    return out


def _checks(rows: list[dict]) -> tuple[Check, ...]:
    return (check_lemma21(rows), check_cor31_first(rows), check_cor31(rows), check_rem61(rows))


def check_lemma21(rows: list[dict]) -> Check:
    """Lemma 2.1: ``||P_K^perp f|| <= E(f) / sqrt(lambda_{K+1})`` for every graph and operator."""
    bad = [r for r in rows if r["perp_norm"] > r["energy_term"] * (1 + 1e-9) + TOL]
    tight = max(r["perp_norm"] / r["energy_term"] for r in rows if r["energy_term"] > 0)
    return Check("||P_K^perp f|| <= E(f) / sqrt(lambda_K+1) (Lemma 2.1), every graph and operator", not bad,
                 f"{len(bad)} violations of {len(rows)}; largest ratio {tight:.3g}",
                 tests="that E(f) and lambda_K+1 come from the operator whose eigenvectors are U_K",
                 fails_if="a wrong Laplacian (L instead of L_sym, another graph, a rescaled L)", informative=False,
                 kind="code test")


def check_cor31_first(rows: list[dict]) -> Check:
    """Cor 3.1, first form: ``||g - f|| <= s ||P_K f|| + ||P_K^perp f||``."""
    worst = max(rows, key=lambda r: r["readout_error"] - r["cor31_projection_bound"])
    return Check("readout error <= Cor 3.1 first form s||P_K f|| + ||P_K^perp f||",
                 all(r["readout_error"] <= r["cor31_projection_bound"] + TOL for r in rows),
                 f"largest error - bound = {worst['readout_error'] - worst['cor31_projection_bound']:.3g}",
                 tests="s_K(Z) of the readout features and the least-squares residual",
                 fails_if="s_K computed for other features than the readout's Z (or for another U_K)", informative=False,
                 kind="code test")


def check_cor31(rows: list[dict]) -> Check:
    """Cor 3.1: ``||g - f|| <= s ||f|| + E(f) / sqrt(lambda_{K+1})``."""
    bad = [r for r in rows if r["readout_error"] > r["cor31_bound"] + TOL]
    return Check("readout error <= Cor 3.1 bound s||f|| + E(f)/sqrt(lambda_K+1)", not bad,
                 f"{len(bad)} violations of {len(rows)}", tests="the energy term and the gap together",
                 fails_if="a wrong Laplacian (energy term too small) or a wrong gap", informative=False,
                 kind="code test")


def check_rem61(rows: list[dict]) -> Check:
    """Rem 6.1: ``||g - f|| <= sqrt(K - N_K) ||f|| + E(f) / sqrt(lambda_{K+1})`` (via s^2 <= K - N_K)."""
    bad = [r for r in rows if r["readout_error"] > r["rem61_bound"] + TOL or r["s_K"] ** 2 > r["K"] - r["N_K"] + 1e-9]
    return Check("readout error <= Rem 6.1 bound, and s_K^2 <= K - N_K (Lemma 3.5 iv)", not bad,
                 f"{len(bad)} violations of {len(rows)}", tests="N_K against s_K of the same features",
                 fails_if="N_K and s_K of different features or bases", informative=False,
                 kind="code test")


def run(*, seed: int = 0, quick: bool = False) -> ExperimentResult:
    """Graphs and operators ranked by the Cor 3.1 bound vs by readout error, over seeds (Rem 6.1)."""
    from relu_gating.data.datasets import two_moons

    t0 = time.perf_counter()
    graphs = _graphs(quick)
    params: dict[str, Any] = {"seed": seed, "quick": quick, "data": "two_moons", "noise": 0.1, "n": 20 if quick else 32,
                              "Ks": [4], "t": 2 if quick else 3, "features_0": "bias", "seeds": 3 if quick else 10,
                              "operators": list(OPERATORS), "graphs": {name: opts for name, opts in graphs},
                              "targets": ["moon labels", "smooth + noise"], "tol": TOL}
    rows = []
    for s in range(seed, seed + params["seeds"]):
        X = two_moons(params["n"], noise=0.1, seed=s)
        rows += [{"seed": s, **r} for r in compare_graphs(X, targets(X, s), graphs, params["Ks"], params["t"])]
    rank, summ = _ranking(rows)
    return ExperimentResult(
        name="graph-choice",
        title=f"Choosing the graph (Rem 6.1): Cor 3.1 bound vs readout error over {len(graphs)} graphs x "
              f"{{L, L_sym}}, {params['t']} certified neurons, two moons n = {params['n']}, {params['seeds']} seeds",
        params=params, tables={"configurations": rows, "ranking": rank, "summary": summ, "best": _best(rows)},
        checks=_checks(rows), seconds=time.perf_counter() - t0)


def figure(result: ExperimentResult) -> Any:
    """The matplotlib Figure: per target, readout error vs Cor 3.1 bound (all seeds); rank correlations per seed."""
    from relu_gating.experiments._plotting import figure as new_figure
    from relu_gating.experiments._plotting import label

    rows, p = result.tables["configurations"], result.params
    fig, axs = new_figure(result.title, 3, width=5.6, height=4.3)
    graphs = list(p["graphs"])
    markers = dict(zip(graphs, "osD^v<>"))
    colors = {"L": "tab:blue", "L_sym": "tab:orange"}
    for ax, fname in zip(axs[:2], p["targets"]):
        rs = [r for r in rows if r["target"] == fname]
        for r in rs:
            ax.scatter(r["cor31_bound"], r["readout_error"], marker=markers[r["graph"]], color=colors[r["operator"]],
                       s=22, alpha=0.7, label="_")
        top = max(r["cor31_bound"] for r in rs)
        ax.plot([0, top], [0, top], "k--", lw=0.8, label="error = bound")
        label(ax, f"target: {fname} ({p['seeds']} seeds)", "Cor 3.1 bound s||f|| + E/sqrt(lambda) (norm units)",
              "readout error ||g - f|| (norm units)")
    rank = result.tables["ranking"]
    for i, fname in enumerate(p["targets"]):
        rk = [r for r in rank if r["target"] == fname]
        x = np.full(len(rk), i) + np.linspace(-0.15, 0.15, len(rk))
        axs[2].scatter(x, [r["kendall"] for r in rk], color="tab:green", marker="o", label="_")
        axs[2].scatter(x + 0.4, [r["spearman"] for r in rk], color="tab:purple", marker="s", label="_")
    axs[2].scatter([], [], color="tab:green", marker="o", label="Kendall tau (one per seed)")
    axs[2].scatter([], [], color="tab:purple", marker="s", label="Spearman rho (one per seed)")
    axs[2].axhline(0, color="gray", lw=0.8)
    axs[2].set_xticks([i + 0.2 for i in range(len(p["targets"]))], p["targets"])
    label(axs[2], "rank agreement of bound and error over graphs x operators", "target (graph ranking per seed)", "rank correlation (unitless, -1..1)")
    for g in graphs:  # legend entries: marker = graph, color = operator
        axs[0].scatter([], [], marker=markers[g], color="gray", label=f"graph: {g}")
    for op, c in colors.items():
        axs[0].scatter([], [], marker="s", color=c, label=f"operator {op}")
    return fig


plot = saver(figure)


EXPERIMENT = Experiment(
    name="graph-choice",
    summary="Rem 6.1: graph families x {L, L_sym} over seeds, ranked by the Cor 3.1 bound vs by readout error "
            "(Spearman, Kendall)",
    run=run, plot=plot)
