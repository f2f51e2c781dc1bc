r"""Clusters cut off by hyperplanes (Example 5.12): neurons needed to reach a gap, against the prediction.

``K = 3`` clusters of ``n / K`` points, uniform in discs of radius ``rho`` around the vertices of a
unit triangle; a kNN graph with ``min(2, n/K - 1)`` neighbours (nearly disconnected clusters: ``epsilon`` small).  Cluster ``c`` is cut off by the direction ``w_c`` of its centre:
with ``z = X w_c``, ``a_c`` the largest ``z`` outside the cluster and ``a'_c`` the smallest inside,
``omega_c = (z_max - a_c) / (a'_c - a_c)`` (measured on the sample).  Larger ``rho``: smaller margins.

Recorded per (rho, n): ``omega_c``; ``||chi_c||_A`` as a certified interval
(:func:`~relu_gating.coverage.variation.variation_norm`) against the example's ``2 omega_c``; the
computed ``kappa(chi)`` against ``2 sqrt(K) max omega_c``; ``epsilon = ||(I - Pi_chi) U_K||``; the
neurons a certified greedy layer from ``H_0 = [1]`` needs to reach ``s_K <= s`` against the
prediction ``16 K^3 max omega_c^2 / (alpha s^2)`` (and ``4 K^2 kappa^2 / (alpha s^2)`` with the
computed kappa), which does not depend on ``n``.

Run: ``relu-gating experiment clusters --out DIR`` (``--quick`` for a small version).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from relu_gating.experiments._base import Check, Experiment, ExperimentResult

__all__ = ["EXPERIMENT", "run", "plot", "cluster_data"]

K = 3
TOL = 1e-8
#: Neighbours of the kNN graph, at most this and fewer than a cluster's size (nearly disconnected clusters).
KNN = 2


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


def _config(n: int, rho: float, s_target: float, T: int, seed: int) -> dict:
    from relu_gating.coverage.metrics import coverage_gap
    from relu_gating.coverage.variation import representability_constant
    from relu_gating.layers.greedy import greedy_layer
    from relu_gating.layers.networks import layer_input
    from relu_gating.patterns import enumerate_patterns
    from relu_gating.spectral.graphs import laplacian, sample_graph
    from relu_gating.spectral.spectra import SpectralTieWarning, low_frequency_basis

    X, lab, W = cluster_data(n, rho, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SpectralTieWarning)
        U = low_frequency_basis(laplacian(sample_graph(X, kind="knn", n_neighbors=min(KNN, n // K - 1))), K).U_K
    Phi = layer_input(X)
    chi = np.stack([(lab == c) / np.sqrt(np.sum(lab == c)) for c in range(K)], axis=1)
    om = omegas(X, lab, W)
    eps = coverage_gap(chi, U)  # ||(I - Pi_chi) U_K||_2
    pats = enumerate_patterns(Phi)
    t0 = time.perf_counter()
    kap = representability_constant(chi, Phi, n_directions=K, refine=0, patterns=pats)
    secs_kappa = time.perf_counter() - t0
    H, gaps, alphas = np.ones((n, 1)), [coverage_gap(np.ones((n, 1)), U)], []
    while gaps[-1] > s_target and len(gaps) <= T:  # one certified step at a time, until the gap is reached
        g = greedy_layer(Phi, U, 1, initial=H, patterns=pats)
        if not g.gains.size:
            break
        H, alphas = g.features, alphas + [float(g.gains[0] / g.upper_bounds[0])]
        gaps.append(float(g.gap[-1]))
    hit = np.flatnonzero(np.array(gaps) <= s_target)
    alpha = min(alphas, default=1.0)
    return {
        "rho": rho, "n": n, "seed": seed, "margin_min": float(min(_margins(X, lab, W))),
        "omega_max": float(om.max()), **{f"omega_{c + 1}": float(om[c]) for c in range(K)},
        **{f"chi{c + 1}_lower": float(kap.basis_norms[c, 0]) for c in range(K)},
        **{f"chi{c + 1}_upper": float(kap.basis_norms[c, 1]) for c in range(K)},
        "kappa_lower": kap.lower, "kappa_upper": kap.upper, "kappa_example": float(2 * np.sqrt(K) * om.max()),
        "epsilon": eps, "s_target": s_target, "alpha_eff": alpha,
        "t_needed": int(hit[0]) if hit.size else None, "t_max": T,
        "t_pred_example": float(16 * K**3 * om.max() ** 2 / (alpha * s_target**2)),
        "t_pred_kappa": float(4 * K**2 * kap.upper**2 / (alpha * s_target**2)),
        "gaps": "|".join(f"{x:.6g}" for x in gaps), "kappa_certified": kap.certified, "seconds_kappa": secs_kappa,
    }


def _margins(X: np.ndarray, lab: np.ndarray, W: np.ndarray) -> list:
    return [float((X @ w)[lab == c].min() - (X @ w)[lab != c].max()) for c, w in enumerate(W)]


def run(*, seed: int = 0, quick: bool = False) -> ExperimentResult:
    """Neurons needed vs Example 5.12's prediction, across margins and sample sizes."""
    t0 = time.perf_counter()
    p = ({"ns": [6, 9], "rhos": [0.3, 0.6], "s_target": 0.3, "T": 5} if quick else
         {"ns": [9, 15, 21], "rhos": [0.3, 0.6], "s_target": 0.3, "T": 8})
    rows = [_config(n, rho, p["s_target"], p["T"], seed) for rho in p["rhos"] for n in p["ns"]]
    return ExperimentResult(
        name="clusters",
        title=f"Clusters (Example 5.12): neurons to reach s_K <= {p['s_target']} vs 16 K^3 max omega^2 / (alpha s^2), "
              f"K = {K}",
        params={"seed": seed, "quick": quick, "K": K, "data": "3 discs of radius rho at a unit triangle",
                "graph": f"knn (n_neighbors=min({KNN}, n // K - 1))", "laplacian": "combinatorial", "alpha_requested": 1.0, **p},
        tables={"configs": rows}, checks=tuple(_checks(rows)), seconds=time.perf_counter() - t0)


def _checks(rows: list) -> list:
    chi_bad = [(r["rho"], r["n"], c) for r in rows for c in range(1, K + 1)
               if r[f"chi{c}_lower"] > 2 * r[f"omega_{c}"] * (1 + 1e-9)]
    kap_bad = [r for r in rows if r["kappa_lower"] > r["kappa_example"] * (1 + 1e-9)]
    ok_eps = [r for r in rows if r["s_target"] >= 2 * r["epsilon"]]
    reached = [r for r in ok_eps if r["t_needed"] is not None]
    pred_bad = [r for r in reached if r["t_needed"] > min(r["t_pred_example"], r["t_pred_kappa"]) + TOL]
    spread = {}
    for r in rows:
        spread.setdefault(r["rho"], []).append(r["t_needed"])
    flat = {rho: ts for rho, ts in spread.items() if None not in ts and max(ts) - min(ts) <= 1}
    return [
        Check("||chi_c||_A <= 2 omega_c (Example 5.12; certified lower end)", not chi_bad, f"violations: {chi_bad}"),
        Check("kappa(chi) <= 2 sqrt(K) max omega_c (Example 5.12)", not kap_bad,
              "; ".join(f"rho {r['rho']}, n {r['n']}: [{r['kappa_lower']:.3g}, {r['kappa_upper']:.3g}] vs "
                        f"{r['kappa_example']:.3g}" for r in rows)),
        Check("s >= 2 epsilon (the prediction applies)", len(ok_eps) == len(rows),
              f"{len(ok_eps)}/{len(rows)} configurations"),
        Check("gap s reached within the predicted number of neurons", len(reached) == len(ok_eps) and not pred_bad,
              f"reached {len(reached)}/{len(ok_eps)}, over prediction {len(pred_bad)}"),
        Check("neurons needed independent of n (range <= 1 per margin)", len(flat) == len(spread),
              "; ".join(f"rho {rho}: t = {ts}" for rho, ts in spread.items())),
    ]


def plot(result: ExperimentResult, path: str) -> None:
    """Measured neurons needed and the two predictions vs n, one colour per margin (log scale)."""
    from relu_gating.experiments._plotting import figure, label, save

    fig, (a1, a2) = figure(result.title, 2)
    rows = result.tables["configs"]
    for rho in sorted({r["rho"] for r in rows}):
        sel = [r for r in rows if r["rho"] == rho]
        ns = [r["n"] for r in sel]
        line, = a1.plot(ns, [np.nan if r["t_needed"] is None else max(r["t_needed"], 0.5) for r in sel],
                        marker="os^v<>"[len(a1.lines) // 3 % 6], ls="-", ms=8 - len(a1.lines) // 3 * 2,
                        label=f"measured, rho = {rho} (min margin {min(r['margin_min'] for r in sel):.2f})")
        a1.plot(ns, [r["t_pred_example"] for r in sel], "--", color=line.get_color(),
                label=f"16 K^3 max omega^2 / (alpha s^2), rho = {rho}")
        a1.plot(ns, [r["t_pred_kappa"] for r in sel], ":", color=line.get_color(),
                label=f"4 K^2 kappa^2 / (alpha s^2), computed kappa, rho = {rho}")
        lo, up = np.array([r["kappa_lower"] for r in sel]), np.array([r["kappa_upper"] for r in sel])
        a2.errorbar([r["omega_max"] for r in sel], up, yerr=[up - lo, np.zeros_like(up)], fmt="o", capsize=3,
                    color=line.get_color(), label=f"computed kappa(chi): certified interval, rho = {rho}")
    om = np.array([r["omega_max"] for r in rows])
    grid = np.linspace(om.min(), om.max(), 20)
    a2.plot(grid, 2 * np.sqrt(K) * grid, "k--", label="Example 5.12: 2 sqrt(K) max omega")
    label(a1, "neurons needed to reach the gap (measured at 0.5 when t = 0)", "samples n",
          "neurons t (count)", log=True)
    label(a2, "representability constant of the clusters", "max_c omega_c (spread / margin, unitless)",
          "kappa (unitless)")
    save(fig, path)


EXPERIMENT = Experiment(
    name="clusters",
    summary="Example 5.12: neurons needed to reach a gap vs 16 K^3 max omega^2/(alpha s^2) as margins shrink "
            "and n grows; kappa(chi) computed",
    run=run, plot=plot)
