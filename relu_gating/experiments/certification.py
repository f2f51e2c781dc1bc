"""What certification buys: certified greedy neurons against uncertified methods (issue 12, Rem 5.11).

On two moons with a kNN graph, the certified greedy path ``H_t = [1, h_1, ..., h_t]`` is built with
:func:`relu_gating.greedy_layer`.  At every step, on the *same* ``H_{t-1}``, each uncertified method
proposes a neuron: one Gaussian random neuron (mean over draws), the best of many random neurons
(random-pattern sampling), fixed-gating local search and gradient ascent on theta (several
restarts).  Recorded per step: the gain each found, the certified bound ``G*`` over all neurons, and
the gap.  No method may beat the bound (checked).  Each method also builds its own greedy layer of the
same number of neurons; ``N_K`` of each layer is recorded.

    relu-gating experiment certification [--quick]
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from relu_gating.experiments._plotting import saver
from relu_gating.experiments._base import Check, Experiment, ExperimentResult

__all__ = ["EXPERIMENT", "run", "plot", "figure", "moons_problem", "METHODS"]

TOL = 1e-8
#: Methods in table order; "certified" is the exact search.
METHODS = ("certified", "random neuron", "random sampling", "local search", "gradient ascent")


def moons_problem(n: int, K: int, *, seed: int = 0, noise: float = 0.1, n_neighbors: int = 8) -> dict:
    """Two moons, kNN graph, ``Phi = [X, 1]``, ``U_K``, ``L``, ``lambda_{K+1}`` and the ±1 moon labels."""
    from relu_gating.data.datasets import two_moons
    from relu_gating.layers.networks import layer_input
    from relu_gating.spectral.graphs import laplacian, sample_graph
    from relu_gating.spectral.spectra import low_frequency_basis

    X = two_moons(n, noise=noise, seed=seed)
    L = laplacian(sample_graph(X, kind="knn", n_neighbors=n_neighbors))
    basis = low_frequency_basis(L, K)
    labels = np.r_[np.ones(n // 2), -np.ones(n - n // 2)]
    return {"X": X, "Phi": layer_input(X), "U_K": basis.U_K, "L": L, "next_eigenvalue": basis.next_eigenvalue,
            "labels": labels}


def _relu(Phi: np.ndarray, theta: np.ndarray) -> np.ndarray:
    return np.maximum(Phi @ theta, 0.0)


def _propose(method: str, Phi, U, H, cfg: dict, rng_seed: int) -> tuple[np.ndarray, float, int]:
    """One uncertified method's neuron for the gain over ``H``: (theta, gain, evaluations).

    "random neuron" reports the mean gain of single Gaussian neurons (a dead or excluded neuron counts 0).
    """
    from relu_gating.experiments._local import gradient_ascent
    from relu_gating.search.baselines import local_search, random_search
    from relu_gating.search.objectives import make_objective, neuron_values

    if method == "random neuron":
        T = np.random.default_rng(rng_seed).standard_normal((cfg["draws"], Phi.shape[1]))
        vals = np.nan_to_num(neuron_values(make_objective(Phi, U, H), T), nan=0.0)
        return T[0], float(vals.mean()), cfg["draws"]
    r: Any
    if method == "random sampling":
        r = random_search(Phi, U, features=H, n_samples=cfg["samples"], seed=rng_seed)
    elif method == "local search":
        r = local_search(Phi, U, features=H, n_starts=cfg["starts"], seed=rng_seed)
    else:
        r = gradient_ascent(Phi, U, features=H, restarts=cfg["restarts"], seed=rng_seed)
    return r.theta, float(r.value), int(r.evaluations)


def _step_rows(prob: dict, g: Any, cfg: dict, seed: int) -> list[dict]:
    """Per step t: every method's gain on the certified path's H_{t-1}, the certified bound, the gap."""
    Phi, U = prob["Phi"], prob["U_K"]
    rows = []
    for t in range(1, g.gains.size + 1):
        H = g.features[:, :t]
        ub = float(g.upper_bounds[t - 1])
        rows.append({"t": t, "method": "certified", "gain": float(g.gains[t - 1]), "upper_bound": ub,
                     "gap": ub - float(g.gains[t - 1]), "evaluations": None})
        for j, m in enumerate(METHODS[1:]):
            _, v, ev = _propose(m, Phi, U, H, cfg, seed + 1000 * t + j)
            rows.append({"t": t, "method": m, "gain": v, "upper_bound": ub, "gap": ub - v, "evaluations": ev})
    return rows


def _layer_rows(prob: dict, g: Any, cfg: dict, seed: int) -> list[dict]:
    """Each method's own greedy layer of t neurons (random neurons: mean over draws): N_K, s_K for t = 0..T."""
    from relu_gating.coverage.metrics import captured_features, coverage_gap

    Phi, U = prob["Phi"], prob["U_K"]
    n, T = Phi.shape[0], g.gains.size
    rows = [{"t": t, "method": "certified", "N_K": float(g.captured[t]), "s_K": float(g.gap[t])} for t in range(T + 1)]
    for j, m in enumerate(METHODS[1:]):
        H = np.ones((n, 1))
        rows.append({"t": 0, "method": m, "N_K": captured_features(H, U), "s_K": coverage_gap(H, U)})
        if m == "random neuron":  # layers of random neurons, no selection: mean over draws
            T_all = np.random.default_rng(seed + 7).standard_normal((cfg["draws"], T, Phi.shape[1]))
            for t in range(1, T + 1):
                Hs = [np.c_[H, _relu(Phi, T_all[d, :t].T)] for d in range(cfg["draws"])]
                rows.append({"t": t, "method": m, "N_K": float(np.mean([captured_features(h, U) for h in Hs])),
                             "s_K": float(np.mean([coverage_gap(h, U) for h in Hs]))})
            continue
        for t in range(1, T + 1):
            theta, _, _ = _propose(m, Phi, U, H, cfg, seed + 1000 * t + j)
            H = np.c_[H, _relu(Phi, theta)]
            rows.append({"t": t, "method": m, "N_K": captured_features(H, U), "s_K": coverage_gap(H, U)})
    return rows


def _checks(g: Any, steps: list[dict], layers: list[dict]) -> tuple[Check, ...]:
    worst = max(steps, key=lambda r: r["gain"] - r["upper_bound"])
    first = {r["method"]: r["N_K"] for r in layers if r["t"] == 1}
    inc = np.diff(g.captured)
    return (
        Check("every certified step certified", bool(g.certified), f"{g.gains.size} steps",
              tests="the search's stopping rule (value >= alpha * largest open bound)",
              fails_if="a step whose search ended without a certificate"),
        Check("no heuristic beats the certified bound (gain <= G* + tol)",
              worst["gain"] <= worst["upper_bound"] + TOL,
              f"largest gain - G* = {worst['gain'] - worst['upper_bound']:.3g} ({worst['method']}, t = {worst['t']})",
              tests="the certified bound against every heuristic's recomputed gain (independent lower bounds)",
              fails_if="a bound below the true optimum (a missed pattern or a wrong per-pattern bound)"),
        Check("certified gain = N_K(H_t) - N_K(H_t-1) (Prop 4.5)",
              bool(np.allclose(inc, g.gains, atol=1e-7, rtol=0)),
              f"max difference {float(np.max(np.abs(inc - g.gains), initial=0.0)):.3g}",
              tests="that the reported gain is the captured increase of the appended neuron",
              fails_if="a perturbed neuron appended, or a gain formula that differs from N_K's increase",
              informative=False, kind="code test"),
        Check("first neuron: no method's layer beats the certified one",
              all(v <= first["certified"] + TOL for v in first.values()),
              ", ".join(f"{k}: {v:.6f}" for k, v in first.items()),
              tests="the certified first neuron against each method's first neuron",
              fails_if="a certified neuron that is not optimal (a heuristic's first layer captures more)"),
    )


def run(*, seed: int = 0, quick: bool = False) -> ExperimentResult:
    """Certified greedy against random neurons, random sampling, local search and gradient ascent."""
    from relu_gating.layers.greedy import greedy_layer

    t0 = time.perf_counter()
    params: dict[str, Any] = {"seed": seed, "quick": quick, "data": "two_moons", "noise": 0.1, "graph": "knn", "n_neighbors": 8,
              "n": 24 if quick else 40, "K": 4 if quick else 6, "T": 3 if quick else 7, "features_0": "bias",
              "draws": 20, "samples": 3000 if quick else 20000, "starts": 10 if quick else 30,
              "restarts": 5 if quick else 10, "tol": TOL}
    prob = moons_problem(params["n"], params["K"], seed=seed)
    g = greedy_layer(prob["Phi"], prob["U_K"], params["T"])
    steps = _step_rows(prob, g, params, seed)
    layers = _layer_rows(prob, g, params, seed)
    return ExperimentResult(
        name="certification",
        title=f"What certification buys: gains per step vs the certified bound (two moons, n = {params['n']}, "
              f"K = {params['K']})",
        params=params, tables={"steps": steps, "layers": layers}, checks=_checks(g, steps, layers),
        seconds=time.perf_counter() - t0)


def figure(result: ExperimentResult) -> Any:
    """The matplotlib Figure: gains per step, gap to the bound, and each method's layer coverage."""
    from matplotlib.ticker import MaxNLocator

    from relu_gating.experiments._plotting import figure as new_figure
    from relu_gating.experiments._plotting import label

    steps, layers = result.tables["steps"], result.tables["layers"]
    fig, axs = new_figure(result.title, 3)
    markers = dict(zip(METHODS, "o^sDv"))
    for m in METHODS:
        rs = [r for r in steps if r["method"] == m]
        t = [r["t"] for r in rs]
        style = {"marker": markers[m], "ls": "-" if m == "certified" else ":"}
        axs[0].plot(t, [r["gain"] for r in rs], label=m, **style)
        axs[1].plot(t, [max(r["gap"], 1e-12) for r in rs], label="_" + m, **style)
        ls_ = [r for r in layers if r["method"] == m]
        axs[2].plot([r["t"] for r in ls_], [r["N_K"] for r in ls_], label="_" + m, **style)
    ub = [r["upper_bound"] for r in steps if r["method"] == "certified"]
    axs[0].plot(range(1, len(ub) + 1), ub, "k--", lw=1, label="certified bound G* (all neurons)")
    label(axs[0], "gain of each method's neuron over H_(t-1) (same H)", "greedy step t (neurons)",
          "marginal gain G (captured dims)")
    label(axs[1], "gap to the certified bound (floored at 1e-12)", "greedy step t (neurons)",
          "G* - gain (captured dims)", log=True)
    axs[2].axhline(result.params["K"], color="gray", lw=0.8, label="_K")
    label(axs[2], "each method's own layer of t neurons (gray: K)", "neurons in the layer t",
          "N_K([1, h_1..h_t]) (captured dims)")
    for a in axs:
        a.xaxis.set_major_locator(MaxNLocator(integer=True))
    return fig


plot = saver(figure)


EXPERIMENT = Experiment(
    name="certification",
    summary="certified greedy vs random neurons, random sampling, local search, gradient ascent (gain, bound, gap)",
    run=run, plot=plot)
