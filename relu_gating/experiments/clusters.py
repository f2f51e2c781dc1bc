r"""Clusters cut off by hyperplanes (Example 5.12) with epsilon > 0, at n where the theory speaks.

``K = 3`` clusters of ``n / K`` points, uniform in discs of radius ``rho`` around the vertices of a
unit triangle (``d = 2``); a *connected* Gaussian-kernel graph of bandwidth ``sigma``, so that the low
eigenvectors are only close to piecewise constant: ``epsilon = ||(I - Pi_chi) U_K||_2`` ranges from
about 1e-3 to 0.2 over the configurations.  Cluster ``c`` is cut off by the direction ``w_c`` of its
centre: with ``z = X w_c``, ``a_c`` the largest ``z`` outside and ``a'_c`` the smallest inside,
``omega_c = (z_max - a_c) / (a'_c - a_c)``.

Per configuration (``n = 300`` in the full run), a certified greedy layer from ``H_0 = [1]``
(``alpha = 1``, every step certified) is grown; recorded per step (table ``steps``): ``s_t``, the
certified gain and bound on ``G*``, Lemma 5.9's lower bound ``s^2 (s - eps)^2 / kappa^2`` with
``kappa`` the certified upper end of ``kappa(chi)`` (the explicit decomposition of Example 5.12 with
exact atom norms, ``kappa(chi) <= sqrt(sum_c ||chi_c||_A^2)``); per configuration (table ``configs``):
the neurons needed to reach each target gap ``s`` (``s >= 2 eps``), a least-squares fit
``t = a + b / s^2`` against Thm 5.10's slope ``4 K^2 kappa^2 / alpha``, the final ``s_T^2`` against the
floor ``4 eps^2``, and the lower bound on ``kappa(U_K)`` that Lemma 5.9 gives read backwards
(``kappa(U_K) >= s_t^2 / sqrt(G*_t)``) beside the interval of ``kappa(chi)``.  At a small ``n`` (table
``kappa``) both ``kappa(U_K)`` and ``kappa(chi)`` are bracketed by column generation, refined until
the interval is within 5% (at ``n = 300`` one bracket takes more than 5 minutes here: see
docs/experiments.md).  Spectral ties are recorded, not suppressed.

Run: ``relu-gating experiment clusters --out DIR`` (``--quick`` for a small version).
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from relu_gating.experiments._base import Check, Experiment, ExperimentResult

__all__ = ["EXPERIMENT", "run", "plot", "cluster_data", "omegas", "chi_upper", "fit_rate"]

K = 3
TOL = 1e-8
#: Target gaps whose neuron counts are fitted against 1 / s^2 (only those >= 2 eps are used).
TARGETS = (0.5, 0.3, 0.2, 0.15, 0.1, 0.07, 0.05)


def cluster_data(n: int, rho: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Samples (n, 2), cluster labels (n,), centre directions (K, 2): ``n // K`` points per cluster."""
    rng = np.random.default_rng(seed)
    ang = np.pi / 2 + 2 * np.pi * np.arange(K) / K
    C = np.c_[np.cos(ang), np.sin(ang)]
    labels = np.arange(n) % K
    r = rho * np.sqrt(rng.uniform(size=n))
    phi = rng.uniform(0, 2 * np.pi, size=n)
    return C[labels] + np.c_[r * np.cos(phi), r * np.sin(phi)], labels, C


def omegas(X: np.ndarray, labels: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Spread-to-margin ratios ``omega_c`` of Example 5.12 for the cut directions ``W`` (one row per cluster)."""
    out = np.empty(W.shape[0])
    for c, w in enumerate(W):
        z = X @ w
        a, a2 = z[labels != c].max(), z[labels == c].min()
        if a2 <= a:
            raise ValueError(f"cluster {c} is not cut off by its direction")
        out[c] = (z.max() - a) / (a2 - a)
    return out


def chi_upper(X: np.ndarray, labels: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Feasible ``sum |a_j|`` of Example 5.12's two-atom decomposition of each ``chi_c`` (upper ends of ``||chi_c||_A``).

    ``1_C = (sigma(z - a) - sigma(z - a')) / (a' - a)`` exactly on the sample, so with atoms normalized
    ``||chi_c||_A <= (||sigma(z - a)|| + ||sigma(z - a')||) / ((a' - a) sqrt|C_c|) <= 2 omega_c``.
    """
    out = np.empty(W.shape[0])
    for c, w in enumerate(W):
        z = X @ w
        a, a2 = z[labels != c].max(), z[labels == c].min()
        h1, h2 = np.maximum(z - a, 0), np.maximum(z - a2, 0)
        out[c] = (np.linalg.norm(h1) + np.linalg.norm(h2)) / ((a2 - a) * np.sqrt(np.sum(labels == c)))
    return out


def _basis(X: np.ndarray, sigma: float) -> tuple[np.ndarray, list[str], float]:
    """``U_K`` of the Gaussian graph, the spectral-tie warnings raised, ``lambda_(K+1)``."""
    from relu_gating.spectral.graphs import laplacian, sample_graph
    from relu_gating.spectral.spectra import SpectralTieWarning, low_frequency_basis

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SpectralTieWarning)
        b = low_frequency_basis(laplacian(sample_graph(X, kind="gaussian", sigma=sigma)), K)
    ties = [str(w.message) for w in caught if issubclass(w.category, SpectralTieWarning)]
    return b.U_K, ties, float(b.next_eigenvalue)


def fit_rate(targets: Any, t_needed: Any) -> tuple[float, float]:
    """Least-squares ``t = a + b / s^2`` over the reached targets: ``(a, b)`` (NaN with fewer than 2 points)."""
    pts = [(1.0 / s**2, t) for s, t in zip(targets, t_needed) if t is not None]
    if len({x for x, _ in pts}) < 2:
        return float("nan"), float("nan")
    x, y = np.array(pts, float).T
    b, a = np.polyfit(x, y, 1)
    return float(a), float(b)


def _config(n: int, rho: float, sigma: float, T: int, seed: int, **search_options: Any) -> tuple[dict, list]:
    """One configuration: the greedy layer's steps and the summary row (``search_options`` go to every step's
    query, e.g. ``max_seconds``: a step stopped by its wall-time budget is not certified)."""
    from relu_gating.coverage.bounds import ky_fan_limits
    from relu_gating.coverage.metrics import coverage_gap
    from relu_gating.experiments.greedy_rate import step_rows
    from relu_gating.layers.greedy import greedy_layer
    from relu_gating.layers.networks import layer_input

    X, lab, W = cluster_data(n, rho, seed)
    U, ties, lam = _basis(X, sigma)
    Phi = layer_input(X)
    chi = np.stack([(lab == c) / np.sqrt(np.sum(lab == c)) for c in range(K)], axis=1)
    om, cu = omegas(X, lab, W), chi_upper(X, lab, W)
    eps = coverage_gap(chi, U)
    kap_chi = float(np.sqrt(np.sum(cu**2)))  # ||sum c_k chi_k||_A <= ||c|| sqrt(sum ||chi_k||_A^2)
    t0 = time.perf_counter()
    g = greedy_layer(Phi, U, T, min_gain=1e-12, **search_options)
    secs = time.perf_counter() - t0
    alpha = float(np.min(g.gains / g.upper_bounds)) if g.gains.size else 1.0
    key = {"n": n, "rho": rho, "sigma": sigma, "seed": seed, "start": "bias"}
    steps = step_rows(g, ky_fan_limits(np.ones((n, 1)), U), key, K, kap_chi, alpha, eps)
    kU = max((r["s_prev"] ** 2 / np.sqrt(r["bound_G"]) for r in steps if r["t"] and r["bound_G"] > 0), default=0.0)
    reach = [next((int(t) for t in range(g.gap.size) if g.gap[t] <= s), None) for s in TARGETS]
    speaks = [s >= 2 * eps for s in TARGETS]
    a, b = fit_rate([s for s, ok in zip(TARGETS, speaks) if ok], [t for t, ok in zip(reach, speaks) if ok])
    row = {**key, "epsilon": eps, "two_eps": 2 * eps, "lambda_K1": lam, "spectral_ties": " | ".join(ties),
           "omega_max": float(om.max()), **{f"omega_{c + 1}": float(om[c]) for c in range(K)},
           **{f"chi{c + 1}_upper": float(cu[c]) for c in range(K)}, "kappa_chi_upper": kap_chi,
           "kappa_example": float(2 * np.sqrt(K) * om.max()), "kappa_UK_lower_lemma59": float(kU),
           "alpha_eff": alpha, "steps": int(g.gains.size), "certified": bool(g.certified), "seconds_greedy": secs,
           **{f"t_at_s{s:g}": t for s, t in zip(TARGETS, reach)},
           "fit_a": a, "fit_b": b, "theory_slope": 4 * K**2 * kap_chi**2 / alpha,
           "t_pred_example_s0.1": float(16 * K**3 * om.max() ** 2 / (alpha * 0.1**2)),
           "s_final2": float(g.gap[-1] ** 2), "floor_4eps2": 4 * eps**2, "below_2eps": bool(g.gap[-1] < 2 * eps)}
    return row, steps


def _kappa_row(n: int, rho: float, sigma: float, seed: int, budget: float) -> dict:
    """Small n: kappa(U_K) and kappa(chi) bracketed by column generation, each refined toward 5%."""
    from relu_gating.coverage.metrics import coverage_gap
    from relu_gating.experiments._theory import closed_kappa
    from relu_gating.layers.networks import layer_input
    from relu_gating.patterns import enumerate_patterns

    X, lab, W = cluster_data(n, rho, seed)
    U, ties, _ = _basis(X, sigma)
    Phi = layer_input(X)
    pats = enumerate_patterns(Phi)
    chi = np.stack([(lab == c) / np.sqrt(np.sum(lab == c)) for c in range(K)], axis=1)
    row = {"n": n, "rho": rho, "sigma": sigma, "seed": seed, "epsilon": coverage_gap(chi, U),
           "spectral_ties": " | ".join(ties), "omega_max": float(omegas(X, lab, W).max()),
           "kappa_chi_explicit": float(np.sqrt(np.sum(chi_upper(X, lab, W) ** 2)))}
    for name, B in (("UK", U), ("chi", chi)):
        kap, how = closed_kappa(B, Phi, patterns=pats, max_directions=12, seconds=budget)
        row.update({f"kappa_{name}_lower": kap.lower, f"kappa_{name}_upper": kap.upper,
                    f"kappa_{name}_rel_width": how["rel_width"], f"kappa_{name}_closed_5pct": how["closed"],
                    f"kappa_{name}_why_open": how["why"], f"kappa_{name}_directions": how["n_directions"]})
    return row


def run(*, seed: int = 0, quick: bool = False, overrides: dict | None = None) -> ExperimentResult:
    """Certified greedy layers on connected cluster graphs (epsilon > 0): neurons vs 1 / s^2, floor, kappa.

    ``overrides`` replaces entries of the configuration (a reduced run; recorded as ``params["reduced"]``).
    """
    t0 = time.perf_counter()
    p: dict[str, Any] = ({"n": 45, "configs": [(0.4, 0.4), (0.7, 0.3)], "T": 5, "kappa_n": 12, "kappa_seconds": 4.0} if quick else
         {"n": 300, "configs": [(0.4, 0.3), (0.4, 0.4), (0.7, 0.3)], "T": 7, "kappa_n": 24, "kappa_seconds": 60.0})
    if overrides:
        p.update(overrides, reduced=sorted(overrides))
    rows, steps = [], []
    for rho, sigma in p["configs"]:
        r, st = _config(p["n"], rho, sigma, p["T"], seed)
        rows.append(r)
        steps += st
    krows = [_kappa_row(p["kappa_n"], 0.4, 0.4, seed, p["kappa_seconds"])]
    return ExperimentResult(
        name="clusters",
        title=f"Clusters (Example 5.12), connected Gaussian graphs (epsilon > 0), n = {p['n']}, K = {K}: "
              f"certified greedy gaps with the Thm 5.10 bound, certified G* with Lemma 5.9",
        params={"seed": seed, "quick": quick, "K": K, "data": "3 discs of radius rho at a unit triangle, d = 2",
                "graph": "gaussian(sigma)", "laplacian": "combinatorial", "alpha_requested": 1.0,
                "targets": list(TARGETS), **p},
        tables={"configs": rows, "steps": steps, "kappa": krows}, checks=tuple(_checks(rows, steps, krows)),
        seconds=time.perf_counter() - t0)


def _checks(rows: list, steps: list, krows: list) -> list:
    from relu_gating.experiments.greedy_rate import (check_certified, check_gap_rate, check_lemma59, check_prop45,
                                                     check_thm513)

    return [check_certified(steps), check_lemma59(steps), check_prop45(steps), check_thm513(steps), check_gap_rate(steps),
            check_example(rows), check_kappa_chi(krows), check_prediction(rows)]


def check_example(rows: list) -> Check:
    """Example 5.12: the explicit decomposition's cost is at most ``2 omega_c``."""
    bad = [(r["rho"], r["sigma"], c) for r in rows for c in range(1, K + 1)
           if r[f"chi{c}_upper"] > 2 * r[f"omega_{c}"] * (1 + 1e-9)]
    ratio = max(r[f"chi{c}_upper"] / r[f"omega_{c}"] for r in rows for c in range(1, K + 1))
    return Check("||chi_c||_A <= (||sigma(z-a)|| + ||sigma(z-a')||) / ((a'-a) sqrt|C|) <= 2 omega_c (Example 5.12)",
                 not bad, f"violations {bad}; largest decomposition / omega_c = {ratio:.3g}",
                 tests="the margins a_c, a'_c, the spread omega_c and the decomposition",
                 fails_if="a wrong margin (a' taken inside the gap) or a cluster not cut off by w_c")


def check_kappa_chi(krows: list) -> Check:
    """Column generation's interval for kappa(chi) is consistent with the explicit decomposition."""
    bad = [k for k in krows if k["kappa_chi_lower"] > min(k["kappa_chi_upper"], k["kappa_chi_explicit"]) * (1 + 1e-6)
           or k["kappa_UK_lower"] > k["kappa_UK_upper"] * (1 + 1e-6)]
    return Check("kappa(chi) lower end <= explicit decomposition's kappa; kappa(U_K) interval consistent", not bad,
                 "; ".join(f"n {k['n']}: kappa(chi) [{k['kappa_chi_lower']:.4g}, {k['kappa_chi_upper']:.4g}] "
                           f"(explicit {k['kappa_chi_explicit']:.4g}), kappa(U_K) [{k['kappa_UK_lower']:.4g}, "
                           f"{k['kappa_UK_upper']:.4g}]" for k in krows),
                 tests="variation_norm's dual lower end against an independent feasible decomposition",
                 fails_if="a dual lower end above a feasible decomposition (a wrong pricing bound)")


def check_prediction(rows: list) -> Check:
    """Neurons needed for s = 0.1 within Example 5.12's prediction; informative only if it is below n."""
    sel = [r for r in rows if 0.1 >= r["two_eps"]]
    bad = [r for r in sel if r["t_at_s0.1"] is not None and r["t_at_s0.1"] > r["t_pred_example_s0.1"]]
    useful = [r for r in sel if r["t_pred_example_s0.1"] < r["n"]]
    return Check("neurons to reach s = 0.1 <= 16 K^3 max omega^2 / (alpha s^2) (Example 5.12)", not bad,
                 "; ".join(f"eps {r['epsilon']:.2g}: t = {r['t_at_s0.1']} vs {r['t_pred_example_s0.1']:.3g}"
                           for r in sel) + f"; prediction below n in {len(useful)}/{len(sel)}",
                 tests="the greedy layer against the example's count", fails_if="a greedy that stalls",
                 informative=bool(useful))


def plot(result: ExperimentResult, path: str) -> None:
    """Gap s_t with Thm 5.10's bound, certified G*_t with Lemma 5.9's bound, neurons vs 1 / s^2 with the theory."""
    from relu_gating.experiments._plotting import figure, label, save

    fig, (a1, a2, a3) = figure(result.title, 3, width=5.4)
    rows, steps = result.tables["configs"], result.tables["steps"]
    for r in rows:
        sel = [x for x in steps if x["rho"] == r["rho"] and x["sigma"] == r["sigma"]]
        lab_ = f"rho {r['rho']}, sig {r['sigma']}"
        line, = a1.plot([x["t"] for x in sel], [max(x["s"], 1e-6) for x in sel], marker="o",
                        label=f"s_t, {lab_} (eps {r['epsilon']:.2g})")
        c = line.get_color()
        pos = [x for x in sel if x["t"]]
        a1.plot([x["t"] for x in pos], [np.sqrt(x["s2_bound"]) for x in pos], ls="--", color=c,
                label=f"Thm 5.10, {lab_}")
        a1.axhline(max(r["two_eps"], 1e-6), color=c, ls=":", lw=1)
        a2.plot([x["t"] for x in pos], [x["bound_G"] for x in pos], marker="o", color=c, label=f"G*_t, {lab_}")
        a2.plot([x["t"] for x in pos], [max(x["lemma59"], 1e-9) for x in pos], ls="--", marker="v", color=c,
                label=f"Lemma 5.9, {lab_}")
        pts = [(1 / s**2, r[f"t_at_s{s:g}"]) for s in TARGETS if r[f"t_at_s{s:g}"] is not None and s >= r["two_eps"]]
        if pts:
            x, y = np.array(pts, float).T
            a3.plot(x, y, "o", color=c, label=f"measured, {lab_}")
            xs = np.array([x.min(), x.max()])
            a3.plot(xs, r["theory_slope"] * xs, "--", color=c,
                    label=f"Thm 5.10 slope {r['theory_slope']:.3g}")
            if len(pts) >= 3 and np.isfinite(r["fit_b"]):  # a line through two points is no fit
                a3.plot(xs, np.maximum(r["fit_a"] + r["fit_b"] * xs, 0.5), ":", color=c,
                        label=f"fit {r['fit_a']:.2g} + {r['fit_b']:.2g}/s^2 ({len(pts)} pts)")
    label(a1, "gap along the certified greedy layer (dotted: 2 eps; dashed: Thm 5.10)",
          "neurons added t (count)", "s_K(H_t) (unitless)", log=True)
    label(a2, "certified G*_t and Lemma 5.9's lower bound (kappa: kappa(chi) upper end)",
          "greedy step t (count)", "best marginal gain G*_t (unitless)", log=True)
    a2.xaxis.get_major_locator().set_params(integer=True)
    label(a3, "neurons needed vs 1/s^2 (s >= 2 eps; dashed: Thm 5.10 t = 4K^2 kappa^2/(alpha s^2))", "1 / s^2 (unitless)", "neurons t (count)", log=True)
    a3.set_xscale("log")
    save(fig, path)


EXPERIMENT = Experiment(
    name="clusters",
    summary="Example 5.12 with epsilon > 0 (connected Gaussian graphs, n = 300): certified greedy gaps, "
            "neurons vs 1/s^2, the 2 eps floor, kappa(U_K) vs kappa(chi)",
    run=run, plot=plot)
