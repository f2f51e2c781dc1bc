"""Coverage across layers: plain vs concatenated-skip networks (Rem 5.7, Cor 5.2, Thm 5.3); certified layers.

Two moons, ``U_K`` of a kNN graph.  Networks of ``depth`` layers of ``width`` ReLU neurons with seeded
Gaussian weights (He scale), in two forms drawn from the same seeded stream (identical first layers):

* plain ``H_l = relu(Phi_l Theta_l)``;
* concatenated skip ``H_l = [H_{l-1}, relu(Phi_l Theta_l)]`` (Rem 5.7),

with ``Phi_l = [H_{l-1}, 1]``.  At every layer: ``N_K([H_l, 1])``; the Cor 5.2 ceiling
``N_K(V_P)`` of the layer input (classes of identical rows of ``H_{l-1}``); for ``H = [R_l, 1]`` (the
layer's own neurons and the bias, ``col(H) ⊆ V_P``) Thm 5.3's identity
``N_K(V_P) - N_K(H) = ||(Pi_P - Pi_H) U_K||_F^2`` and its strict increase (a): whenever
``N_K(H) < N_K(V_P)`` some neuron of the layer has a positive gain.  The witness is constructive (the
``q`` neurons of Thm 5.1 (b), one of which must gain); on the plain network of the first seed the
certified search (:func:`relu_gating.best_neuron`, layer inputs of rank ``width + 1``) also gives the
best gain ``G*``, which must be positive exactly then.  (Skip layers are not searched: their input
rank grows by ``width`` per layer, and at rank 4-5 with ``n`` = 20-30 a single certified query took
from seconds to minutes here.)

Certified layers (:func:`certified_depth`, tables ``certified_layers``, ``certified_steps`` and
``variation_norms``): Rem 5.6's layer (the Prop 5.5 neurons plus ``t`` certified ones), Cor 5.4's
(the ``2d`` copy neurons plus one certified), skip networks whose branch at every layer is ``t``
certified neurons over ``[H_(l-1), 1]`` (Rem 5.7) and plain certified layers, each against one
certified layer of the same total width; and ``||u_k||_A`` (so a bound on kappa) under layer 1's
input ``[X, 1]`` and under layer 2's.  Checked: every step certified at ``alpha = 1``, Prop 4.5,
Rem 5.6 (the Prop 5.5 part keeps ``N_K(Phi)``) and Cor 5.4 (``N_K`` rises strictly).

    relu-gating experiment depth [--quick]
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from relu_gating.experiments._plotting import saver
from relu_gating.experiments._base import Check, Experiment, ExperimentResult

__all__ = ["EXPERIMENT", "run", "plot", "figure"]

TOL = 1e-8
ARCHS = ("plain", "skip")


def _witness_gain(Phi_in: np.ndarray, H: np.ndarray, U: np.ndarray) -> float:
    """Largest marginal gain over H among the Thm 5.1 (b) neurons that span V_P (0 if none gains)."""
    from relu_gating.coverage.metrics import complement_apply, orthonormal_basis
    from relu_gating.layers.networks import class_spanning_neurons

    Theta = class_spanning_neurons(Phi_in[:, :-1])
    V = np.maximum(Phi_in @ Theta, 0.0)
    P = complement_apply(orthonormal_basis(H), V)
    norms = np.einsum("ij,ij->j", P, P)
    ok = norms > 1e-18 * np.maximum(np.einsum("ij,ij->j", V, V), 1e-300)
    gains = np.einsum("ij,ij->j", U.T @ P[:, ok], U.T @ P[:, ok]) / norms[ok]
    return float(gains.max(initial=0.0))


def _layer_row(arch: str, seed: int, layer: int, H_prev: np.ndarray, R: np.ndarray, H_new: np.ndarray,
               U: np.ndarray) -> dict:
    from relu_gating.coverage.bounds import coverage_ceiling
    from relu_gating.coverage.metrics import captured_features, coverage_gap, orthonormal_basis
    from relu_gating.layers.networks import layer_input

    n = U.shape[0]
    ceil = coverage_ceiling(H_prev, U)
    Hown = np.c_[R, np.ones(n)]
    N_own = captured_features(Hown, U)
    QH = orthonormal_basis(Hown)
    diff = ceil.basis() @ (ceil.basis().T @ U) - QH @ (QH.T @ U)
    return {"arch": arch, "seed": seed, "layer": layer, "N_K": captured_features(layer_input(H_new), U),
            "s_K": coverage_gap(layer_input(H_new), U), "ceiling": float(ceil.value), "classes": ceil.q,
            "classes_out": int(np.unique(H_new, axis=0).shape[0]), "N_K_own": N_own,
            "thm53_identity_residual": abs(float(ceil.value) - N_own - float(np.sum(diff ** 2))),
            "witness_gain": _witness_gain(layer_input(H_prev), Hown, U)}


def _network(X: np.ndarray, U: np.ndarray, depth: int, width: int, seed: int) -> list[dict]:
    """Rows of both architectures for one seed (branch weights drawn per layer from one stream)."""
    from relu_gating.layers.networks import layer_input

    rows = []
    for arch in ARCHS:
        rng = np.random.default_rng(seed)
        H = X
        for layer in range(1, depth + 1):
            Phi = layer_input(H)
            Theta = rng.standard_normal((Phi.shape[1], width)) * np.sqrt(2.0 / Phi.shape[1])
            R = np.maximum(Phi @ Theta, 0.0)
            H_new = np.c_[H, R] if arch == "skip" else R
            rows.append(_layer_row(arch, seed, layer, H, R, H_new, U))
            H = H_new
    return rows


def _certified_rows(X: np.ndarray, U: np.ndarray, depth: int, width: int, seed: int) -> list[dict]:
    """Plain network of ``seed``: the certified best gain G* over [R_l, 1] at every layer."""
    from relu_gating.coverage.bounds import coverage_ceiling
    from relu_gating.coverage.metrics import captured_features
    from relu_gating.layers.networks import layer_input
    from relu_gating.search.front import best_neuron

    rng = np.random.default_rng(seed)
    H, rows = X, []
    for layer in range(1, depth + 1):
        Phi = layer_input(H)
        Theta = rng.standard_normal((Phi.shape[1], width)) * np.sqrt(2.0 / Phi.shape[1])
        R = np.maximum(Phi @ Theta, 0.0)
        Hown = np.c_[R, np.ones(H.shape[0])]
        res = best_neuron(Phi, U, features=Hown)
        rows.append({"layer": layer, "rank_Phi": int(np.linalg.matrix_rank(Phi)), "N_K_own": captured_features(Hown, U),
                     "ceiling": float(coverage_ceiling(H, U).value), "G_star": res.value,
                     "upper_bound": res.upper_bound, "certified": bool(res.certified), "patterns": res.n_patterns,
                     "witness_gain": _witness_gain(Phi, Hown, U)})
        H = R
    return rows


def _greedy(Phi: np.ndarray, U: np.ndarray, t: int, initial: Any, key: dict) -> tuple[Any, list[dict]]:
    """A certified greedy layer and its step rows (Prop 4.5 / bound checks; kappa not used here)."""
    from relu_gating.coverage.bounds import ky_fan_limits
    from relu_gating.experiments.greedy_rate import step_rows
    from relu_gating.layers.greedy import greedy_layer

    g = greedy_layer(Phi, U, t, initial=initial, min_gain=1e-12)
    alpha = float(np.min(g.gains / g.upper_bounds)) if g.gains.size else 1.0
    H0 = np.ones((Phi.shape[0], 1)) if isinstance(initial, str) else np.asarray(initial)
    return g, step_rows(g, ky_fan_limits(H0, U), key, U.shape[1], np.inf, alpha)


def _norm_row(arch: str, layer: int, Phi: np.ndarray, U: np.ndarray, budget_iter: int) -> dict:
    """||u_k||_A under this layer input (certified intervals; inf when u_k is not constant on merged rows)."""
    from relu_gating.layers.variation import variation_norm

    row: dict = {"arch": arch, "layer": layer, "rank_Phi": int(np.linalg.matrix_rank(Phi)),
                 "distinct_rows": int(np.unique(Phi, axis=0).shape[0])}
    for k in range(U.shape[1]):
        r = variation_norm(U[:, k], Phi, max_iter=budget_iter)
        row[f"u{k + 1}_lower"], row[f"u{k + 1}_upper"], row[f"u{k + 1}_closed"] = r.lower, r.upper, bool(r.certified)
    ups = [row[f"u{k + 1}_upper"] for k in range(U.shape[1])]
    row["kappa_upper_CS"] = float(np.sqrt(np.sum(np.square(ups))))  # kappa <= sqrt(sum ||u_k||_A^2)
    row["kappa_lower_max"] = float(max(row[f"u{k + 1}_lower"] for k in range(U.shape[1])))
    return row


def certified_depth(X: np.ndarray, U: np.ndarray, depth: int, t: int, seed: int, norm_iter: int,
                    skip_norms: bool = True, skip_depth: int | None = None) -> dict:
    """Certified layers: Rem 5.6 (Prop 5.5 + t certified), skips with certified branches (Rem 5.7), plain
    certified layers, each against one layer of the same total width; ||u_k||_A under layer 1 and 2 inputs.

    ``skip_depth`` (default ``depth``): layers of the skip network; from layer 2 on its certified search
    runs over features ``[H_(l-1), 1]`` of rank ``d + 1 + t (l - 1)``, which contain ``col(Phi)``: ``X``
    on a dyadic grid and the exact products of :func:`~relu_gating.experiments._theory.exact_product`
    keep that containment exact, and each layer's certified neurons are passed on exactly
    (:func:`~relu_gating.experiments._theory.exact_neurons`), so the next input's columns are dependent
    exactly where a neuron is active: the search proves these steps (skip layer 2 at n = 40: 45 s,
    certified; with the float outputs 245 s and not certified)."""
    from relu_gating.coverage.metrics import captured_features, coverage_gap
    from relu_gating.experiments._theory import column_basis, exact_neurons, exact_product
    from relu_gating.layers.networks import copy_neurons, layer_input, preserving_layer

    n, Phi1 = X.shape[0], layer_input(X)
    rows, steps = [], []
    base = {"seed": seed, "N_K_Phi1": captured_features(Phi1, U), "s_K_Phi1": coverage_gap(Phi1, U)}
    pl = preserving_layer(Phi1, U, seed=seed)
    P55 = np.maximum(exact_product(Phi1, pl.Theta)[2], 0)  # relu(p) - relu(-p) = p exactly: see dyadic
    g, st = _greedy(Phi1, U, t, column_basis(np.c_[P55, np.ones(n)]), {"seed": seed, "start": "Rem 5.6 layer"})
    steps += st
    width = P55.shape[1] + t
    g1, st = _greedy(Phi1, U, width, "bias", {"seed": seed, "start": "one certified layer, same width"})
    steps += st
    rows += [{**base, "arch": "Rem 5.6: Prop 5.5 + t certified", "layer": 1, "width": width,
              "N_K_P55": float(g.captured[0]), "N_K": float(g.captured[-1]), "s_K": float(g.gap[-1])},
             {**base, "arch": "one certified layer, same width", "layer": 1, "width": int(g1.gains.size),
              "N_K": float(g1.captured[-1]), "s_K": float(g1.gap[-1])}]
    W, b = copy_neurons(X, first_layer=True)  # Cor 5.4: 2d copies + one certified neuron
    Hc = np.c_[np.maximum(X @ W + b, 0), np.ones(n)]
    gc, st = _greedy(Phi1, U, 1, column_basis(Hc), {"seed": seed, "start": "Cor 5.4 layer"})
    steps += st
    rows.append({**base, "arch": "Cor 5.4: 2d copies + 1 certified", "layer": 1, "width": W.shape[1] + 1,
                 "N_K_P55": float(gc.captured[0]), "N_K": float(gc.captured[-1]), "s_K": float(gc.gap[-1])})
    norms = [_norm_row("layer 1 input [X, 1]", 1, Phi1, U, norm_iter)]
    skip_depth = depth if skip_depth is None else skip_depth
    for arch in ("skip, certified branch", "plain, certified"):
        H = X
        for layer in range(1, (skip_depth if arch.startswith("skip") else depth) + 1):
            Phi = layer_input(H)
            init = Phi if arch.startswith("skip") else "bias"  # Rem 5.7: Thm 5.10 with H0 = Phi
            g, st = _greedy(Phi, U, t, init, {"seed": seed, "start": f"{arch}, layer {layer}"})
            steps += st
            # the certified neurons passed on exactly (weights on the grid): the next input's identities exact
            R = exact_neurons(Phi, g.thetas) if g.gains.size else np.zeros((n, 0))
            H = np.c_[H, R] if arch.startswith("skip") else (R if R.shape[1] else H)
            rows.append({**base, "arch": arch, "layer": layer, "width": t * layer,
                         "N_K": captured_features(layer_input(H), U), "s_K": coverage_gap(layer_input(H), U),
                         "distinct_rows_out": int(np.unique(H, axis=0).shape[0])})
            if layer == 1 and (skip_norms or not arch.startswith("skip")):
                norms.append(_norm_row(f"layer 2 input, {arch}", 2, layer_input(H), U, norm_iter))
    if skip_depth > 1:  # with one skip layer, this layer is that skip layer
        g2, st = _greedy(Phi1, U, t * skip_depth, Phi1, {"seed": seed, "start": "one layer [X, certified], same width"})
        steps += st
        rows.append({**base, "arch": "one layer [X, certified], same width", "layer": 1, "width": int(g2.gains.size),
                     "N_K": float(g2.captured[-1]), "s_K": float(g2.gap[-1])})
    return {"rows": rows, "steps": steps, "norms": norms}


def _checks(rows: list[dict], cert: list[dict], n: int, K: int, cdep: dict | None = None) -> tuple[Check, ...]:
    from relu_gating.experiments.greedy_rate import check_certified, check_gain_below_bound, check_prop45

    skip = [r for r in rows if r["arch"] == "skip"]
    by_seed: dict = {}
    for r in skip:
        by_seed.setdefault(r["seed"], []).append(r["N_K"])
    drops = [min(np.diff(v), default=0.0) for v in by_seed.values()]
    over = max(r["N_K"] - r["ceiling"] for r in rows)
    open_ = [r for r in rows if r["ceiling"] - r["N_K_own"] > TOL]
    cert_bad = [c for c in cert if (c["ceiling"] - c["N_K_own"] > TOL) != (c["G_star"] > TOL)]
    out = [
        Check("N_K([H_l, 1]) nondecreasing in l with skips (Rem 5.7)", min(drops) >= -TOL,
              f"smallest layer-to-layer change {min(drops):.3g}", tests="that skip layers concatenate",
              fails_if="a skip layer that replaces instead of concatenating", informative=False, kind="code test"),
        Check("N_K([H_l, 1]) <= Cor 5.2 ceiling N_K(V_P), both architectures", over <= TOL,
              f"max N_K - ceiling = {over:.3g}", tests="coverage_ceiling (class means of U_K)",
              fails_if="a ceiling computed from the wrong layer's rows (too few classes)"),
        Check("skips keep rows distinct: ceiling = K at every layer (Rem 5.7)",
              all(r["classes_out"] == n and abs(r["ceiling"] - K) <= 1e-9 for r in skip),
              f"distinct rows per skip layer: {sorted({r['classes_out'] for r in skip})} of n = {n}",
              tests="row classes of skip networks", fails_if="merged rows in the input X", informative=False,
              kind="code test"),
        Check("Thm 5.3 identity N_K(V_P) - N_K(H) = ||(Pi_P - Pi_H) U_K||_F^2",
              max(r["thm53_identity_residual"] for r in rows) <= 1e-8,
              f"max residual {max(r['thm53_identity_residual'] for r in rows):.3g}",
              tests="the ceiling's basis against the projector difference", fails_if="a wrong V_P basis",
              informative=False, kind="code test"),
        Check("Thm 5.3 (a): a neuron with positive gain exists whenever N_K(H) < ceiling (Thm 5.1 b witness)",
              all(r["witness_gain"] > TOL for r in open_), f"{len(open_)} layers below the ceiling",
              tests="class_spanning_neurons", fails_if="spanning neurons that miss a class",
              informative=bool(open_)),
        Check("certified G* > 0 exactly when N_K(H) < ceiling (plain network, first seed)",
              not cert_bad and all(c["certified"] for c in cert), f"{len(cert)} layers searched",
              tests="the certified search's bound at the ceiling (G* = 0 must be proved)",
              fails_if="a search bound that stays positive at the ceiling, or misses a positive gain"),
        Check("certified G* >= the Thm 5.1 (b) witness's gain (independent lower bound)",
              all(c["upper_bound"] >= c["witness_gain"] - TOL for c in cert),
              f"min G* - witness = {min(c['upper_bound'] - c['witness_gain'] for c in cert):.3g}",
              tests="the search's certified bound against an explicit neuron",
              fails_if="a search bound below a neuron's recomputed gain"),
    ]
    if cdep is not None:
        out += [check_certified(cdep["steps"]), check_prop45(cdep["steps"]), check_gain_below_bound(cdep["steps"]), check_rem56(cdep["rows"]),
                check_cor54(cdep["rows"])]
    return tuple(out)


def check_rem56(rows: list[dict]) -> Check:
    """Rem 5.6 / Prop 5.5: the preserving neurons keep N_K(Phi); the t certified ones add to it."""
    r = [x for x in rows if x["arch"].startswith("Rem 5.6")]
    bad = [x for x in r if x["N_K_P55"] < x["N_K_Phi1"] - TOL or x["N_K"] < x["N_K_P55"] - TOL]
    return Check("Rem 5.6 layer: N_K(Prop 5.5 part) >= N_K(Phi), and its t certified neurons do not lower it",
                 not bad and bool(r), "; ".join(f"N_K(Phi) {x['N_K_Phi1']:.4f} -> Prop 5.5 {x['N_K_P55']:.4f} -> "
                                                f"+t {x['N_K']:.4f}" for x in r),
                 tests="preserving_layer and the certified neurons appended to it",
                 fails_if="a principal-vector pair dropped (N_K falls below N_K(Phi))")


def check_cor54(rows: list[dict]) -> Check:
    """Cor 5.4: with distinct rows and N_K(Phi) < K, 2d copies + 1 certified neuron strictly increase N_K."""
    r = [x for x in rows if x["arch"].startswith("Cor 5.4")]
    bad = [x for x in r if not x["N_K"] > x["N_K_Phi1"] + TOL]
    return Check("Cor 5.4: 2d copy neurons + 1 certified neuron give N_K > N_K(Phi)", not bad and bool(r),
                 "; ".join(f"{x['N_K_Phi1']:.4f} -> {x['N_K']:.4f}" for x in r),
                 tests="the copy neurons (Prop 3.3 c) and a positive certified gain (Thm 5.3 a)",
                 fails_if="a zero-gain neuron appended, or copies that lose col(Phi)")


def run(*, seed: int = 0, quick: bool = False, overrides: dict | None = None) -> ExperimentResult:
    """Coverage across layers of random plain and skip networks, with the ceiling and Thm 5.3 checked.

    ``overrides`` replaces entries of ``params`` (a reduced run; recorded as ``params["reduced"]``).
    """
    from relu_gating.experiments._theory import dyadic
    from relu_gating.experiments.certification import moons_problem

    t0 = time.perf_counter()
    params: dict[str, Any] = {"seed": seed, "quick": quick, "data": "two_moons", "noise": 0.1, "graph": "knn", "n_neighbors": 8,
              "n": 16 if quick else 40, "K": 4, "depth": 3 if quick else 5, "width": 2,
              "seeds": 3 if quick else 10, "weights": "Gaussian, std sqrt(2 / fan_in)", "tol": TOL,
              "cert_depth": 2 if quick else 3, "cert_skip_depth": 2 if quick else 3, "cert_t": 1,
              "norm_iter": 10 if quick else 60, "norms_of_skip_layer_2": not quick}
    if overrides:
        params.update(overrides, reduced=sorted(overrides))
    prob = moons_problem(params["n"], params["K"], seed=seed)
    X, U = dyadic(prob["X"]), prob["U_K"]  # on a dyadic grid: the layers' identities hold exactly
    rows = [r for s in range(seed, seed + params["seeds"]) for r in _network(X, U, params["depth"], params["width"], s)]
    cert = _certified_rows(X, U, params["depth"], params["width"], seed)
    cdep = certified_depth(X, U, params["cert_depth"], params["cert_t"], seed, params["norm_iter"],
                           params["norms_of_skip_layer_2"], params["cert_skip_depth"])
    return ExperimentResult(
        name="depth",
        title=f"Coverage across layers: plain vs concatenated skip (two moons n = {params['n']}, K = {params['K']}, "
              f"{params['width']} random ReLUs per layer, {params['seeds']} seeds)",
        params=params, tables={"layers": rows, "certified": cert, "certified_layers": cdep["rows"],
                               "certified_steps": cdep["steps"], "variation_norms": cdep["norms"]},
        checks=_checks(rows, cert, params["n"], params["K"], cdep),
        seconds=time.perf_counter() - t0)


def figure(result: ExperimentResult) -> Any:
    """The matplotlib Figure: N_K and the Cor 5.2 ceiling per layer; classes of identical rows."""
    from matplotlib.ticker import MaxNLocator

    from relu_gating.experiments._plotting import band, label
    from relu_gating.experiments._plotting import figure as new_figure

    rows, p = result.tables["layers"], result.params
    cl = result.tables.get("certified_layers", [])
    fig, axs = new_figure(result.title, 3 if cl else 2, width=5.6)
    layers = np.arange(1, p["depth"] + 1)
    def grid(arch: str, key: str) -> np.ndarray:
        """(seeds, layers) array of ``key`` for one architecture."""
        rs = [r for r in rows if r["arch"] == arch]
        seeds = sorted({r["seed"] for r in rs})
        return np.array([[r[key] for r in rs if r["seed"] == s] for s in seeds], float)

    for arch, color in zip(ARCHS, ("tab:red", "tab:blue")):
        band(axs[0], layers, grid(arch, "N_K"), f"{arch}: N_K([H_l, 1]) (median, range)", color=color, marker="o")
        axs[0].plot(layers, np.median(grid(arch, "ceiling"), axis=0), color=color, ls="--",
                    label=f"{arch}: Cor 5.2 ceiling N_K(V_P) of H_(l-1) (median)")
    for arch, color, st in zip(ARCHS, ("tab:red", "tab:blue"), ({"marker": "o", "ms": 7, "lw": 2, "zorder": 3},
                                                                {"marker": "s", "ms": 4, "ls": "--", "lw": 1,
                                                                 "zorder": 4})):
        # plain first (thick), skip on top (thin, dashed): where their medians coincide both stay visible
        band(axs[1], layers, grid(arch, "classes_out"), f"{arch}: distinct rows of H_l (median, range)",
             color=color, **st)
    axs[0].axhline(p["K"], color="gray", lw=0.8, label="K")
    label(axs[0], "captured low frequencies after each layer", "layer l", "N_K (captured dims, of K)")
    label(axs[1], "samples still told apart (Cor 5.2: merged rows stay merged)", "layer l",
          "classes of identical rows (count)")
    for a in axs[:2]:
        a.xaxis.set_major_locator(MaxNLocator(integer=True))
    if cl:
        names = [f"{r['arch']}, layer {r['layer']} (width {r['width']})" for r in cl]
        axs[2].barh(range(len(cl)), [r["N_K"] for r in cl], color="tab:green")
        axs[2].axvline(cl[0]["N_K_Phi1"], color="k", ls="--", lw=1, label="N_K([X, 1])")
        axs[2].set_yticks(range(len(cl)), names, fontsize=6)
        label(axs[2], "certified layers vs one layer of the same width", "N_K([H, 1]) (captured dims, of K)",
              "architecture (total width)")
    return fig


plot = saver(figure)


EXPERIMENT = Experiment(
    name="depth",
    summary="coverage across layers, plain vs concatenated skip (Cor 5.2 ceiling, Thm 5.3); certified layers "
            "(Rem 5.6, Cor 5.4, certified skip branches) against one layer of the same width; ||u_k||_A across layers",
    run=run, plot=plot)
