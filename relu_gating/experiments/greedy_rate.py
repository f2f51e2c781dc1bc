r"""Greedy rate (Thm 5.10): deficit and gap of a certified greedy layer against the theorem's bound.

For two-moons samples (one draw per seed), ``Phi = [X, 1]`` and ``U_K`` of a kNN graph, a layer is
built greedily from three starts ``H_0``: the bias ``[1]``; the copy neurons of Prop 3.3 (c)
``relu(±x_k)`` with ``1``; the ``2r + 2`` neurons of Prop 5.5 with ``1``.  Each appended neuron is the
certified exact maximizer of the marginal gain (``alpha = 1``).  Recorded per step ``t``: the deficit
``delta_t = K - N_K(H_t)``, the gap ``s_t = s_K(H_t)``, and

* Thm 5.10 with the *computed* kappa (:func:`~relu_gating.coverage.variation.representability_constant`,
  ``epsilon = 0``; its certified upper end, a valid kappa):
  ``delta_t <= (1/delta_0 + alpha t / (4 K^2 kappa^2))^{-1}`` and ``s_t^2 <= 4 K^2 kappa^2 / (alpha t)``,
  where ``alpha`` is the smallest ratio gain / (certified bound on ``G*``) over the layer's steps: the
  search asks for ``alpha = 1`` but the supremum ``G*`` of Lemma 5.9 need not be attained (neurons
  approaching ``col(H)``), and then the certified ratio is what Thm 5.10 may use;
* Thm 5.13: ``s_t >= eta_{t+1}(H_0)`` (``col(H_t) ⊆ col(H_0) + T``, ``dim T <= t``);
* Prop 5.5: ``N_K >= N_K(Phi)``, ``s_K <= s_K(Phi)`` and distinct rows for its layer.

Run: ``relu-gating experiment greedy-rate --out DIR`` (``--quick`` for a small version).
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from relu_gating.experiments._base import Check, Experiment, ExperimentResult

__all__ = ["EXPERIMENT", "run", "plot"]

TOL = 1e-8
STARTS = ("bias", "copy (Prop 3.3c)", "Prop 5.5")


def _problem(n: int, K: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from relu_gating.data.datasets import two_moons
    from relu_gating.data.io import InputData, resolve_problem
    from relu_gating.spectral.spectra import SpectralTieWarning

    X = two_moons(n, noise=0.1, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SpectralTieWarning)
        prob = resolve_problem(InputData(path="<two_moons>", X=X), K=K)
    return X, prob.Phi, prob.U_K


def _starts(X: np.ndarray, Phi: np.ndarray, U: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    from relu_gating.layers.networks import copy_neurons, preserving_layer

    one = np.ones((X.shape[0], 1))
    W, b = copy_neurons(X, first_layer=True)
    pl = preserving_layer(Phi, U, seed=seed)
    return {STARTS[0]: one, STARTS[1]: np.c_[np.maximum(X @ W + b, 0), one],
            STARTS[2]: np.c_[np.maximum(Phi @ pl.Theta, 0), one]}


def _rate(d0: float, t: int, K: int, kappa: float, alpha: float) -> float:
    return 0.0 if d0 <= 0 else 1.0 / (1.0 / d0 + alpha * t / (4 * K**2 * kappa**2))


def _one_seed(n: int, K: int, T: int, seed: int, n_directions: int, refine: int) -> tuple[list, list, list, list]:
    from relu_gating.coverage.bounds import ky_fan_limits
    from relu_gating.coverage.metrics import captured_features, coverage_gap
    from relu_gating.coverage.variation import representability_constant
    from relu_gating.layers.greedy import greedy_layer
    from relu_gating.patterns import enumerate_patterns

    X, Phi, U = _problem(n, K, seed)
    pats = enumerate_patterns(Phi)
    t0 = time.perf_counter()
    kap = representability_constant(U, Phi, n_directions=n_directions, refine=refine, patterns=pats)
    krow = {"seed": seed, "n": n, "K": K, "kappa_lower": kap.lower, "kappa_upper": kap.upper,
            "paper_sqrtK_max": float(np.sqrt(K) * kap.basis_norms[:, 1].max()), "net_radius": kap.radius,
            "certified": kap.certified, "seconds": time.perf_counter() - t0,
            **{f"norm_u{k + 1}_upper": float(kap.basis_norms[k, 1]) for k in range(K)}}
    kappa = kap.upper
    NPhi, sPhi = captured_features(Phi, U), coverage_gap(Phi, U)
    steps, starts, checks = [], [], []
    for name, H0 in _starts(X, Phi, U, seed).items():
        g = greedy_layer(Phi, U, T, initial=H0, patterns=pats)
        eta = ky_fan_limits(H0, U)
        d0 = float(g.deficit[0])
        # the alpha each step provably reached: gain / certified bound on G* (the sup may not be attained)
        alpha = float(np.min(g.gains / g.upper_bounds)) if g.gains.size else 1.0
        starts.append({"seed": seed, "start": name, "q0": H0.shape[1], "N_K": float(g.captured[0]),
                       "s_K": float(g.gap[0]), "N_K_Phi": NPhi, "s_K_Phi": sPhi,
                       "distinct_rows": bool(np.unique(H0, axis=0).shape[0] == n), "certified": g.certified,
                       "alpha_eff": alpha})
        for t in range(g.deficit.size):
            steps.append({"seed": seed, "start": name, "t": t, "delta": float(g.deficit[t]), "s": float(g.gap[t]),
                          "s2": float(g.gap[t] ** 2), "gain": float(g.gains[t - 1]) if t else None,
                          "bound_G": float(g.upper_bounds[t - 1]) if t else None,
                          "rate_bound": _rate(d0, t, K, kappa, alpha),
                          "s2_bound": 4 * K**2 * kappa**2 / (alpha * t) if t else None,
                          "eta_next": eta.gap_bound(t), "kappa": kappa})
        checks.append(alpha > 0)
    return steps, starts, [krow], checks


def run(*, seed: int = 0, quick: bool = False) -> ExperimentResult:
    """Greedy deficits/gaps for several seeds and three starts, with Thm 5.10 / 5.13 and Prop 5.5 checked."""
    t0 = time.perf_counter()
    p = ({"n": 8, "K": 2, "T": 3, "seeds": 2, "n_directions": 2, "refine": 0} if quick else
         {"n": 14, "K": 3, "T": 5, "seeds": 3, "n_directions": 3, "refine": 0})
    steps, starts, kappas, cert = [], [], [], []
    for s in range(p["seeds"]):
        st, sr, kr, ce = _one_seed(p["n"], p["K"], p["T"], seed + s, p["n_directions"], p["refine"])
        steps += st
        starts += sr
        kappas += kr
        cert += ce
    checks = _checks(steps, starts, kappas, cert)
    return ExperimentResult(
        name="greedy-rate",
        title=f"Certified greedy coverage vs Thm 5.10 (computed kappa) and Thm 5.13, two moons n = {p['n']}, "
              f"K = {p['K']}",
        params={"seed": seed, "quick": quick, "data": "two_moons(noise=0.1)", "graph": "knn",
                "laplacian": "combinatorial", "alpha_requested": 1.0, "starts": list(STARTS), **p,
                "data_seeds": [seed + s for s in range(p["seeds"])]},
        tables={"steps": steps, "starts": starts, "kappa": kappas}, checks=tuple(checks),
        seconds=time.perf_counter() - t0)


def _checks(steps: list, starts: list, kappas: list, cert: list) -> list:
    rate_bad = [r for r in steps if r["delta"] > r["rate_bound"] + TOL]
    s2_bad = [r for r in steps if r["t"] and r["s2"] > r["s2_bound"] + TOL]
    eta_bad = [r for r in steps if r["s"] < r["eta_next"] - TOL]
    p55 = [r for r in starts if r["start"] == STARTS[2]]
    p55_bad = [r for r in p55 if r["N_K"] < r["N_K_Phi"] - TOL or r["s_K"] > r["s_K_Phi"] + TOL
               or not r["distinct_rows"]]
    mono = all(a["delta"] >= b["delta"] - TOL for a, b in zip(steps, steps[1:])
               if a["seed"] == b["seed"] and a["start"] == b["start"])
    kap_ok = all(k["kappa_lower"] <= k["kappa_upper"] * (1 + 1e-6) and k["kappa_upper"] <= k["paper_sqrtK_max"]
                 * (1 + 1e-9) for k in kappas)
    return [
        Check("every greedy neuron certified alpha_eff-optimal with alpha_eff > 0 (gain / certified bound on G*)",
              all(cert), "alpha_eff per layer: " + ", ".join(f"{r['alpha_eff']:.3g}" for r in starts)),
        Check("delta_t <= Thm 5.10 bound with the computed kappa and alpha_eff", not rate_bad,
              f"{len(steps) - len(rate_bad)}/{len(steps)} steps within"),
        Check("s_t^2 <= 4 K^2 kappa^2 / (alpha_eff t) (Thm 5.10, epsilon = 0)", not s2_bad,
              f"{len(s2_bad)} violations"),
        Check("s_K(H_t) >= eta_(t+1)(H_0) (Thm 5.13)", not eta_bad, f"{len(eta_bad)} violations"),
        Check("Prop 5.5 layer: N_K >= N_K(Phi), s_K <= s_K(Phi), distinct rows", not p55_bad and bool(p55),
              f"{len(p55) - len(p55_bad)}/{len(p55)} draws"),
        Check("delta_t nonincreasing in t", mono, ""),
        Check("kappa interval consistent and below the paper's sqrt(K) max_k ||u_k||_A", kap_ok,
              "; ".join(f"[{k['kappa_lower']:.4g}, {k['kappa_upper']:.4g}]" for k in kappas)),
    ]


def plot(result: ExperimentResult, path: str) -> None:
    """Deficit and squared gap vs t per start (median and range over seeds) with the bounds."""
    from relu_gating.experiments._plotting import band, figure, label, save

    fig, (a1, a2) = figure(result.title, 2)
    rows = result.tables["steps"]
    seeds = sorted({r["seed"] for r in rows})
    floor = 1e-8  # values below are drawn at the floor (the layer reached full coverage)
    for name, color in zip(STARTS, ("C0", "C1", "C2")):
        sel = [r for r in rows if r["start"] == name]
        T = max(r["t"] for r in sel) + 1
        grid = np.arange(T)

        def mat(key: str, sel: Any = sel, T: int = T) -> np.ndarray:
            M = np.full((len(seeds), T), np.nan)
            for r in sel:
                M[seeds.index(r["seed"]), r["t"]] = np.nan if r[key] is None else r[key]
            return np.maximum(M, floor)

        band(a1, grid, mat("delta"), f"delta_t, H0 = {name}", marker="o", color=color)
        band(a1, grid, mat("rate_bound"), f"Thm 5.10 bound, H0 = {name}", ls="--", color=color)
        band(a2, grid, mat("s2"), f"s_t^2, H0 = {name}", marker="o", color=color)
        band(a2, grid, mat("eta_next") ** 2, f"eta_(t+1)(H0)^2 (Thm 5.13), H0 = {name}", ls=":", color=color)
    s2b = [[r["s2_bound"] for r in rows if r["seed"] == seeds[0] and r["start"] == STARTS[0] and r["t"]]]
    if s2b[0]:
        band(a2, np.arange(1, len(s2b[0]) + 1), s2b, "4 K^2 kappa^2 / (alpha t) (Thm 5.10), H0 = bias, first seed",
             color="k", ls="--")
    label(a1, f"coverage deficit (bands: range over {len(seeds)} seeds; floor {floor:g})", "neurons added t (count)",
          "delta_t = K - N_K(H_t) (unitless)", log=True)
    label(a2, "squared coverage gap", "neurons added t (count)", "s_K(H_t)^2 (unitless)", log=True)
    for ax in (a1, a2):
        ax.set_ylim(bottom=floor / 2)
        ax.xaxis.get_major_locator().set_params(integer=True)
    save(fig, path)


EXPERIMENT = Experiment(
    name="greedy-rate",
    summary="Thm 5.10: certified greedy deficit/gap vs t from three starts, bound with the computed kappa, "
            "Thm 5.13 limits",
    run=run, plot=plot)
