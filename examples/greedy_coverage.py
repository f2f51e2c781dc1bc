r"""Greedy coverage with certified neurons (Thm 5.10) against the Ky Fan limits (Thm 5.13).

Starting from ``H_0 = [1]`` (or ``H_0 = Phi`` with ``--start phi``), append
``t = 1..T`` neurons greedily, each the *certified exact* maximizer of the
marginal gain (``best_neuron(Phi, U_K, features=H_{t-1})``, Prop 4.5), and
record

* the captured features ``N_K(H_t)``, the deficit ``delta_t = K - N_K(H_t)``
  and the coverage gap ``s_K(H_t)``;
* the Ky Fan limits of Thm 5.13 (the unconstrained benchmark: any t vectors,
  not only ReLU neurons): ``col(H_t)`` lies in ``col(B) + T`` with
  ``dim T <= t`` for both ``B = H_0`` and ``B = Phi``, so
  ``N_K(H_t) <= N_K(B) + sum_{i<=t} eta_i(B)^2`` and ``s_K(H_t) >= eta_{t+1}(B)``
  (``eta(B)`` = singular values of ``(I - Pi_B) U_K``);
* the rate of Thm 5.10, ``delta_t <= (1/delta_0 + t / (4 K^2 kappa^2))^{-1}``,
  with ``kappa`` replaced by the smallest value that Lemma 5.9 (with
  ``epsilon = 0``) allows along the path, ``kappa_emp = max_t s_{t-1}^2 /
  sqrt(G*_t)``: with it the proof's recursion holds step by step, so the
  curve must lie above the observed deficits;
* layers of ``t`` random neurons ``relu(Phi theta)``, ``theta ~ N(0, I)``
  (mean and range over ``--random-layers`` seeded draws), same ``H_0``.

Each of these relations is checked; the script exits 1 if one fails.  The
picture goes to ``--out``; the table to stdout.

Run from the repository root::

    PYTHONPATH=. python examples/greedy_coverage.py [--n 60] [--K 6] [--T 6] [--out greedy_coverage.png]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import relu_gating as rg
from relu_gating.coverage.bounds import ky_fan_limits
from relu_gating.coverage.metrics import captured_features, coverage_deficit, coverage_gap
from relu_gating.data.datasets import two_moons
from relu_gating.data.io import InputData, resolve_problem

TOL = 1e-8


def greedy(Phi, U_K, H0, T):
    """Certified greedy path (:func:`relu_gating.greedy_layer`): per-step dicts and the final features."""
    g = rg.greedy_layer(Phi, U_K, T, initial=H0)  # stops early once nothing is left to gain (Thm 5.3)
    q0 = H0.shape[1]
    steps = []
    for t in range(1, g.gains.size + 1):
        H_prev, H_t = g.features[:, :q0 + t - 1], g.features[:, :q0 + t]
        steps.append({"t": t, "gain": g.gains[t - 1], "bound": g.upper_bounds[t - 1], "certified": g.certified,
                      "gain_check": captured_features(H_t, U_K) - captured_features(H_prev, U_K),
                      "s_prev": g.gap[t - 1], "N": g.captured[t], "delta": coverage_deficit(H_t, U_K),
                      "s": g.gap[t], "seconds": float(g.seconds[t - 1])})
    return steps, g.features


def random_layers(Phi, U_K, H0, T, draws, seed):
    """N_K and s_K of ``[H0, t random neurons]``, shape (draws, T) each."""
    rng = np.random.default_rng(seed)
    N = np.empty((draws, T))
    S = np.empty((draws, T))
    for r in range(draws):
        H = H0.copy()
        for t in range(T):
            H = np.c_[H, np.maximum(Phi @ rng.standard_normal(Phi.shape[1]), 0.0)]
            N[r, t], S[r, t] = captured_features(H, U_K), coverage_gap(H, U_K)
    return N, S


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=60, help="two-moons samples (default 60)")
    p.add_argument("--K", type=int, default=6, help="low-frequency eigenvectors (default 6)")
    p.add_argument("--T", type=int, default=6, help="greedy steps (default 6)")
    p.add_argument("--start", choices=("bias", "phi"), default="bias", help="H_0 = [1] (default) or Phi = [X, 1]")
    p.add_argument("--random-layers", type=int, default=50, help="random layers per t (default 50)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="greedy_coverage.png", help="plot file (default greedy_coverage.png)")
    args = p.parse_args(argv)
    try:  # the picture needs matplotlib: say so before the work, not after
        import matplotlib  # noqa: F401
    except ImportError:
        print('this example draws a figure: pip install ".[plot]" (from the repository root)', file=sys.stderr)
        return 2

    X = two_moons(args.n, noise=0.1, seed=args.seed)
    prob = resolve_problem(InputData(path="<two_moons>", X=X), K=args.K)
    Phi, U_K, K, n = prob.Phi, prob.U_K, prob.K, prob.n
    H0 = np.ones((n, 1)) if args.start == "bias" else Phi.copy()
    kf = ky_fan_limits(Phi, U_K)
    k0 = ky_fan_limits(H0, U_K)
    N0, d0, s0 = captured_features(H0, U_K), coverage_deficit(H0, U_K), coverage_gap(H0, U_K)

    t_start = time.perf_counter()
    steps, _ = greedy(Phi, U_K, H0, args.T)
    T = len(steps)
    RN, RS = random_layers(Phi, U_K, H0, max(T, 1), args.random_layers, args.seed + 1)

    # Thm 5.10 with the smallest kappa Lemma 5.9 (epsilon = 0) allows on this path
    kappa = max((st["s_prev"] ** 2 / np.sqrt(st["bound"]) for st in steps), default=np.nan)
    rate = lambda t: 1.0 / (1.0 / d0 + t / (4 * K**2 * kappa**2)) if d0 > 0 else 0.0  # noqa: E731

    print(f"two moons n = {n}, kNN graph, K = {K}; H_0 = {'[1]' if args.start == 'bias' else 'Phi = [X, 1]'}: "
          f"N_K = {N0:.6f}, delta_0 = {d0:.6f}, s_K = {s0:.6f}")
    print(f"Thm 5.13: N_K(Phi) = {kf.captured:.6f}, eta(Phi) = {np.array2string(kf.etas, precision=4)}; "
          f"eta(H_0) = {np.array2string(k0.etas, precision=4)}")
    print(f"Thm 5.10: kappa_emp = max_t s_(t-1)^2 / sqrt(G*_t) = {kappa:.4f}\n")
    hdr = (f"{'t':>2s} {'gain G*_t':>11s} {'N_K(H_t)':>9s} {'KF(H_0)':>8s} {'KF(Phi)':>8s} {'rand N_K':>9s}"
           f" {'delta_t':>9s} {'Thm5.10':>8s} {'s_K(H_t)':>9s} {'eta(H_0)':>8s} {'eta(Phi)':>8s} {'rand s_K':>8s}"
           f" {'sec':>5s}")
    print(hdr)
    print("-" * len(hdr))
    print(f"{0:2d} {'':>11s} {N0:9.6f} {N0:8.5f} {kf.captured:8.5f} {N0:9.6f} {d0:9.6f} {d0:8.4f} {s0:9.6f}"
          f" {k0.gap_bound(0):8.5f} {kf.gap_bound(0):8.5f} {s0:8.5f}")
    failures = []
    for i, st in enumerate(steps):
        t = st["t"]
        kyN, kyS = kf.captured + kf.gain_bound(t), kf.gap_bound(t)
        k0N, k0S = k0.captured + k0.gain_bound(t), k0.gap_bound(t)
        print(f"{t:2d} {st['gain']:11.8f} {st['N']:9.6f} {k0N:8.5f} {kyN:8.5f} {RN[:, i].mean():9.6f}"
              f" {st['delta']:9.6f} {rate(t):8.4f} {st['s']:9.6f} {k0S:8.5f} {kyS:8.5f} {RS[:, i].mean():8.5f}"
              f" {st['seconds']:5.2f}")
        checks = {
            "certified": st["certified"],
            "gain = N_K(H_t) - N_K(H_t-1) (Prop 4.5)": abs(st["gain_check"] - st["gain"]) <= TOL,
            "N_K(H_t) <= N_K(Phi) + sum eta^2 (Thm 5.13)": st["N"] <= kyN + TOL,
            "s_K(H_t) >= eta_t+1 (Thm 5.13)": st["s"] >= kyS - TOL,
            "N_K(H_t) <= N_K(H_0) + sum eta(H_0)^2 (Thm 5.13)": st["N"] <= k0N + TOL,
            "s_K(H_t) >= eta_t+1(H_0) (Thm 5.13)": st["s"] >= k0S - TOL,
            "delta_t <= Thm 5.10 rate (kappa_emp)": st["delta"] <= rate(t) + TOL,
            "delta_t = K - N_K(H_t)": abs(st["delta"] - (K - st["N"])) <= TOL,
        }
        failures += [f"t = {t}: {name}" for name, ok in checks.items() if not ok]
    if T < args.T:
        print(f"(stopped after {T} steps: no neuron adds coverage any more, Thm 5.3)")
    if T and steps[0]["gain"] < RN[:, 0].max() - captured_features(H0, U_K) - TOL:
        failures.append("t = 1: a random neuron beat the certified optimum")
    print(f"\nall relations checked ({len(failures)} failures); total {time.perf_counter() - t_start:.1f} s")
    for f in failures:
        print(f"FAILED: {f}", file=sys.stderr)

    _plot(args.out, steps, N0, d0, s0, (k0, kf), rate, RN, RS, K, args)
    print(f"plot saved to {args.out}")
    return 1 if failures else 0


def _plot(path, steps, N0, d0, s0, limits, rate, RN, RS, K, args):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ts = np.arange(len(steps) + 1)
    N = np.r_[N0, [s["N"] for s in steps]]
    D = np.r_[d0, [s["delta"] for s in steps]]
    S = np.r_[s0, [s["s"] for s in steps]]
    tr = np.arange(1, RN.shape[1] + 1)
    fig, ax = plt.subplots(1, 3, figsize=(14, 4.2))
    ax[0].plot(ts, N, "o-", label="greedy, certified neurons")
    for kl, style, name in zip(limits, ("k--", "k:"), ("H_0", "Phi")):
        ax[0].plot(ts, [kl.captured + kl.gain_bound(int(t)) for t in ts], style, label=f"Ky Fan limit, B = {name}")
    ax[0].errorbar(tr, RN.mean(0), yerr=[RN.mean(0) - RN.min(0), RN.max(0) - RN.mean(0)], fmt="s:", capsize=3,
                   label=f"random neurons (mean, range of {RN.shape[0]})")
    ax[0].axhline(K, color="gray", lw=0.8)
    ax[0].set(xlabel="neurons added t", ylabel="N_K(H_t)", title="captured low-frequency features")
    ax[1].semilogy(ts, np.maximum(D, 1e-16), "o-", label="greedy deficit delta_t")
    ax[1].semilogy(ts, [rate(int(t)) for t in ts], "k--", label="Thm 5.10 rate, kappa_emp")
    ax[1].semilogy(tr, K - RN.mean(0), "s:", label="random neurons (mean)")
    ax[1].set(xlabel="neurons added t", ylabel="K - N_K(H_t)", title="deficit")
    ax[2].plot(ts, S, "o-", label="greedy s_K(H_t)")
    for kl, style, name in zip(limits, ("k--", "k:"), ("H_0", "Phi")):
        ax[2].plot(ts, [kl.gap_bound(int(t)) for t in ts], style, label=f"eta_(t+1)(B), B = {name} (Thm 5.13)")
    ax[2].plot(tr, RS.mean(0), "s:", label="random neurons (mean)")
    ax[2].set(xlabel="neurons added t", ylabel="s_K(H_t)", title="coverage gap")
    for a in ax:
        a.legend(fontsize=8)
        a.grid(alpha=0.3)
    fig.suptitle(f"two moons n = {args.n}, K = {K}, H_0 = {'[1]' if args.start == 'bias' else 'Phi'}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
