r"""kappa against n: certified bounds on kappa(U_K) (and kappa(chi) for clusters) for two families, several seeds.

Families (d = 2, data on the 2^-16 grid, ``Phi = [X, 1]``):

* ``moons``: two moons (noise 0.1), kNN graph with 8 neighbours, combinatorial Laplacian, ``K = 4``;
* ``clusters``: three discs of radius 0.4 at the vertices of a unit triangle (the clusters
  experiment), Gaussian graph of bandwidth 0.4, ``K = 3``; also ``kappa(chi)`` for the normalized
  cluster indicators, and Example 5.12's explicit upper end.

Each kappa is bracketed by :func:`~relu_gating.layers.variation.representability_constant` with the
cone pricing (every norm interval closed to ``--tol``), a net of ``--directions`` unit vectors plus
``--refine`` dual ascent steps: ``lower`` is a certified dual (``||U^T y||``), ``upper`` the smaller of
Cauchy-Schwarz on the basis and the net's maximum over its inradius.  Rows are saved after each one.

Usage::

    python benchmarks/kappa_n.py --n 50 100 200 --seeds 0 1 2 --out benchmarks/results/experiments_kappa_n/kappa_n.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's relu_gating


def family(name: str, n: int, seed: int) -> dict:
    """``Phi``, the bases to bracket and (clusters) the explicit kappa(chi) upper end."""
    from relu_gating.experiments._theory import dyadic
    from relu_gating.layers.networks import layer_input
    from relu_gating.spectral.graphs import laplacian, sample_graph
    from relu_gating.spectral.spectra import low_frequency_basis

    if name == "moons":
        from relu_gating.data.datasets import two_moons

        X = dyadic(two_moons(n, noise=0.1, seed=seed))
        U = low_frequency_basis(laplacian(sample_graph(X, kind="knn", n_neighbors=8)), 4).U_K
        return {"Phi": layer_input(X), "bases": {"kappa(U_K)": U}, "explicit": None}
    from relu_gating.experiments.clusters import K, chi_upper, cluster_data

    X, lab, W = cluster_data(n, 0.4, seed)
    X = dyadic(X)
    U = low_frequency_basis(laplacian(sample_graph(X, kind="gaussian", sigma=0.4)), K).U_K
    chi = np.stack([(lab == c) / np.sqrt(np.sum(lab == c)) for c in range(K)], axis=1)
    return {"Phi": layer_input(X), "bases": {"kappa(U_K)": U, "kappa(chi)": chi},
            "explicit": float(np.sqrt(np.sum(chi_upper(X, lab, W) ** 2)))}


def rows_for(name: str, n: int, seed: int, args: argparse.Namespace) -> list[dict]:
    from relu_gating.layers.variation import representability_constant
    from relu_gating.patterns import enumerate_patterns

    f = family(name, n, seed)
    pats = enumerate_patterns(f["Phi"])
    out = []
    for what, B in f["bases"].items():
        t0 = time.perf_counter()
        kap = representability_constant(B, f["Phi"], n_directions=args.directions, refine=args.refine,
                                        tol=args.tol, patterns=pats, max_iter=args.max_iter)
        row = {"family": name, "d": 2, "n": n, "seed": seed, "K": B.shape[1], "what": what, "lower": kap.lower,
               "upper": kap.upper, "norms_closed": bool(kap.certified), "directions": int(kap.coefficients.shape[0]),
               "basis_norm_upper": [float(x) for x in kap.basis_norms[:, 1]], "patterns": int(pats.masks.shape[0]),
               "seconds": time.perf_counter() - t0}
        if what == "kappa(chi)":
            row["explicit_upper"] = f["explicit"]
            row["upper"] = min(row["upper"], f["explicit"])
        out.append(row)
        print(f"{name} n={n} seed={seed} {what}: [{row['lower']:.4g}, {row['upper']:.4g}] "
              f"({row['seconds']:.1f} s)", flush=True)
    return out


def plot(path: str, png: str) -> None:
    """kappa against n from a saved run: per family and quantity, the certified interval of each seed
    (a band from the smallest lower end to the largest upper end over seeds, the seeds' intervals as bars)."""
    from relu_gating.experiments._plotting import figure, label, save

    rows = json.loads(Path(path).read_text())["rows"]
    fig, (ax,) = figure("Certified bounds on kappa against n (d = 2; bars: each seed's interval; band: all seeds)", 1,
                        width=7.0)
    keys = list(dict.fromkeys((r["family"], r["what"]) for r in rows))
    for j, (fam, what) in enumerate(keys):
        sel = [r for r in rows if r["family"] == fam and r["what"] == what]
        ns = sorted({r["n"] for r in sel})
        lo = [min(r["lower"] for r in sel if r["n"] == n) for n in ns]
        hi = [max(r["upper"] for r in sel if r["n"] == n) for n in ns]
        line, = ax.plot(ns, lo, marker="v", ls="-", label=f"{fam}: {what}, lower ends (min over seeds)")
        ax.plot(ns, hi, marker="^", ls="--", color=line.get_color(), label=f"{fam}: {what}, upper ends (max)")
        ax.fill_between(ns, lo, hi, color=line.get_color(), alpha=0.15, lw=0)
        for r in sel:
            x = r["n"] + 1.5 * (j - len(keys) / 2) + 0.6 * r["seed"]
            ax.plot([x, x], [r["lower"], r["upper"]], color=line.get_color(), lw=1)
        ex = [(r["n"], r["explicit_upper"]) for r in sel if r.get("explicit_upper")]
        if ex:
            ax.plot(*zip(*sorted(ex)), "x", color=line.get_color(), label=f"{fam}: Example 5.12's explicit upper end")
    ax.set_xticks(sorted({r["n"] for r in rows}))
    label(ax, "kappa(U_K) (moons K = 4, clusters K = 3) and kappa(chi), certified", "n (samples)", "kappa (unitless)")
    save(fig, png)


def main(argv: list[str] | None = None) -> int:
    from relu_gating.experiments._base import provenance

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--families", nargs="+", default=["clusters", "moons"], choices=["clusters", "moons"])
    ap.add_argument("--n", type=int, nargs="+", default=[50, 100, 200])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--directions", type=int, default=1, help="net size (at least K: the basis)")
    ap.add_argument("--refine", type=int, default=2)
    ap.add_argument("--tol", type=float, default=1e-2)
    ap.add_argument("--max-iter", type=int, default=60)
    ap.add_argument("--out", default=None, help="JSON file (rewritten after every row)")
    ap.add_argument("--append", action="store_true", help="keep the rows already in --out (skip those cases)")
    ap.add_argument("--plot", nargs=2, metavar=("JSON", "PNG"), help="only draw the figure of a saved run")
    args = ap.parse_args(argv)
    if args.plot:
        plot(*args.plot)
        return 0
    rows: list[dict] = []
    if args.append and args.out and Path(args.out).exists():
        rows = json.loads(Path(args.out).read_text())["rows"]
    done = {(r["family"], r["n"], r["seed"]) for r in rows}
    saved = json.loads(Path(args.out).read_text()) if rows and args.out else {}
    commands = saved.get("commands", [saved["provenance"]["command"]] if saved.get("provenance") else [])
    for n in args.n:
        for seed in args.seeds:
            for name in args.families:
                if (name, n, seed) in done:
                    continue
                rows += rows_for(name, n, seed, args)
                if args.out:
                    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
                    Path(args.out).write_text(json.dumps({"provenance": provenance(), "args": vars(args),
                                                          "commands": commands + [provenance()["command"]],
                                                          "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
