"""``relu-gating demo``: the main job on built-in data (two moons).

Builds a k-nearest-neighbour graph on the two-moons sample, takes its K
lowest Laplacian eigenvectors and finds the certified best neuron for the
marginal gain over the bias feature (Prop 4.5 with ``H = 1``; the plain
``N_K`` objective is trivially 1 at the constant neuron when ``u_1`` is
constant).  Then it shows what uncertified methods (random sampling and
fixed-gating local search) find, and how far they stay below the optimum.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from relu_gating.data.io import InputData, resolve_problem
from relu_gating.cli._json import dumps
from relu_gating._files import check_writable

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help="certified best neuron on a built-in data set (two moons)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=100, help="number of samples (default 100)")
    p.add_argument("--K", type=int, default=4, help="low-frequency eigenvectors (default 4)")
    p.add_argument("--noise", type=float, default=0.1, help="two-moons noise (default 0.1)")
    p.add_argument("--seed", type=int, default=0, help="data and baseline seed (default 0)")
    p.add_argument("--samples", type=int, default=20_000, help="random neurons for the sampling baseline")
    p.add_argument("--plot", default=None, metavar="FILE.png", help="save a picture (needs the 'plot' extra)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from relu_gating.search.baselines import local_search, random_search
    from relu_gating.data.datasets import two_moons
    from relu_gating.search.front import best_neuron

    if args.plot:  # before the work: a missing matplotlib or an unwritable path is said now
        _require_matplotlib()
        check_writable(args.plot, "--plot")
    X = two_moons(args.n, noise=args.noise, seed=args.seed)
    prob = resolve_problem(InputData(path="<two_moons>", X=X), K=args.K)
    t0 = time.perf_counter()
    res = best_neuron(prob.Phi, prob.U_K, features="bias", progress=None if not args.quiet else False)
    t_cert = time.perf_counter() - t0
    t0 = time.perf_counter()
    rnd = random_search(prob.Phi, prob.U_K, features="bias", n_samples=args.samples, seed=args.seed)
    t_rnd = time.perf_counter() - t0
    t0 = time.perf_counter()
    loc = local_search(prob.Phi, prob.U_K, features="bias", n_starts=20, seed=args.seed)
    t_loc = time.perf_counter() - t0
    out = {
        "input": {"input_name": "two_moons", "n": args.n, "noise": args.noise, "seed": args.seed, "K": prob.K,
                 "graph": prob.description.get("graph"), "laplacian": prob.description.get("laplacian")},
        "certified": {"value": res.value, "upper_bound": res.upper_bound, "certified": res.certified,
                      "theta": res.theta.tolist(), "n_patterns": res.n_patterns, "n_exact": res.n_exact,
                      "seconds": t_cert},
        "random_sampling": {"value": rnd.value, "samples": rnd.evaluations, "patterns_seen": rnd.patterns_seen,
                            "missed": res.value - rnd.value, "seconds": t_rnd},
        "local_search": {"value": loc.value, "starts": 20, "missed": res.value - loc.value, "seconds": t_loc},
    }
    if args.plot:
        _plot(args.plot, X, prob, res)
        out["plot"] = args.plot
    if args.json:
        print(dumps(out, "demo"))
        return 0
    rel = lambda v: 100.0 * (res.value - v) / res.value if res.value > 0 else 0.0  # noqa: E731
    print(f"two moons: n = {args.n}, noise = {args.noise}, kNN graph, combinatorial Laplacian, K = {prob.K}")
    print("objective: marginal gain G_H(h) over the bias feature H = 1 (Prop 4.5)\n")
    print(f"certified best neuron  value {res.value:.10f}   upper bound {res.upper_bound:.10f}   "
          f"{'CERTIFIED exact' if res.certified else 'NOT certified'}")
    print(f"  theta = [{', '.join(f'{t:.5f}' for t in res.theta)}], {int(res.pattern.sum())} of {args.n} active")
    print(f"  {res.n_patterns} realized patterns, {res.n_exact} solved exactly, {res.n_bound} settled by bound, "
          f"{t_cert:.2f} s")
    print(f"random sampling        value {rnd.value:.10f}   missed {res.value - rnd.value:.3g} ({rel(rnd.value):.2f}%)"
          f"   {rnd.evaluations} samples saw {rnd.patterns_seen} of {res.n_patterns} patterns, {t_rnd:.2f} s")
    print(f"local search           value {loc.value:.10f}   missed {res.value - loc.value:.3g} ({rel(loc.value):.2f}%)"
          f"   20 starts, {t_loc:.2f} s")
    if args.plot:
        print(f"picture saved to {args.plot}")
    return 0


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:  # pragma: no cover - optional extra
        from relu_gating.errors import InputError

        raise InputError('--plot needs matplotlib: pip install ".[plot]" from the repository root') from exc


def _plot(path: str, X: np.ndarray, prob, res) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    h = np.maximum(prob.Phi @ res.theta, 0)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    sc = axes[0].scatter(X[:, 0], X[:, 1], c=h, cmap="viridis", s=18)
    w = res.theta
    xs = np.linspace(X[:, 0].min(), X[:, 0].max(), 50)
    if abs(w[1]) > 1e-12:
        axes[0].plot(xs, -(w[0] * xs + w[2]) / w[1], "r--", lw=1, label="gate boundary")
        axes[0].set_ylim(X[:, 1].min() - 0.2, X[:, 1].max() + 0.2)
        axes[0].legend(loc="lower left")
    fig.colorbar(sc, ax=axes[0], label="h = relu(Phi theta)")
    axes[0].set_title(f"best neuron, gain {res.value:.4f} (certified)")
    order = np.argsort(-res.bounds)
    axes[1].plot(res.bounds[order], lw=1, label="pattern upper bound")
    axes[1].axhline(res.value, color="r", ls="--", lw=1, label="certified optimum")
    axes[1].set_xscale("log")
    axes[1].set_xlabel("patterns, by decreasing bound")
    axes[1].set_ylabel("marginal gain")
    axes[1].legend()
    axes[1].set_title(f"{res.n_patterns} patterns, {res.n_exact} solved exactly")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
