r"""Example 5.12 across n: the certified greedy neurons needed to reach a coverage gap ``s``, against the paper's
n-independent prediction ``16 K^3 max_c omega_c^2 / (alpha s^2)``.

The clusters experiment's data (:mod:`relu_gating.experiments.clusters`: ``K = 3`` discs of radius ``rho``
at the vertices of a unit triangle, ``d = 2``, a connected Gaussian graph of bandwidth ``sigma``), at
several ``n`` and seeds.  Per case a certified greedy layer of ``T`` neurons from ``H_0 = [1]``
(``alpha = 1``, every step certified; ``alpha_eff`` is the smallest gain over its bound) is grown, and
the neurons needed to reach each target ``s >= 2 epsilon`` are recorded beside Example 5.12's count
(``omega_c`` measured on the sample) and Thm 5.10's count with the explicit decomposition's
``kappa(chi)`` (``sqrt(sum_c ||chi_c||_A^2)``, exact atom norms), both of which do not grow with ``n``.
One JSON per ``(n, seed)`` is written when the case starts (``"complete": false``, ``"row": null``: a record
that it was run and did not finish) and rewritten when it completes (``"complete": true``), each with the
commit, command and load.

Usage::

    python benchmarks/example512_n.py --n 30 60 120 240 --seeds 0 1 2 --out-dir benchmarks/results/experiments_example512
    python benchmarks/example512_n.py --plot benchmarks/results/experiments_example512 examples/figures/example512_n.png
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

#: Targets reported (those below 2 epsilon are outside the theorem and dropped per case).
TARGETS = (0.5, 0.3, 0.2, 0.15, 0.1, 0.07, 0.05)


def case(n: int, seed: int, rho: float, sigma: float, T: int, step_seconds: float | None = None) -> dict:
    """One case: the certified greedy layer's gaps and the neurons needed per target, with both predictions.
    ``step_seconds``: each step's wall-time budget (None: the search's default, 600 s); under a heavy load a
    step that runs out of it is not certified, so long runs on a shared machine raise it."""
    from relu_gating.experiments.clusters import K, _config

    t0, c0 = time.perf_counter(), time.process_time()
    opts = {} if step_seconds is None else {"max_seconds": step_seconds}
    row, steps = _config(n, rho, sigma, T, seed, **opts)
    alpha = row["alpha_eff"]
    targets = [s for s in TARGETS if s >= row["two_eps"]]
    return {"n": n, "seed": seed, "rho": rho, "sigma": sigma, "T": T, "K": K, "epsilon": row["epsilon"],
            "omega_max": row["omega_max"], "kappa_chi_upper": row["kappa_chi_upper"],
            "kappa_example": row["kappa_example"], "alpha_eff": alpha, "certified": row["certified"],
            "spectral_ties": row["spectral_ties"], "gaps": [float(x["s"]) for x in steps],
            "targets": targets, "t_needed": [row[f"t_at_s{s:g}"] for s in targets],
            "t_pred_example": [16 * K**3 * row["omega_max"] ** 2 / (alpha * s**2) for s in targets],
            "t_pred_kappa_chi": [4 * K**2 * row["kappa_chi_upper"] ** 2 / (alpha * s**2) for s in targets],
            "step_seconds": step_seconds,
            "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}


def load_rows(out_dir: str) -> list[dict]:
    """Every completed case (one file per ``(n, seed)``; files of cases started and not finished are skipped)."""
    cases = [json.loads(p.read_text()) for p in sorted(Path(out_dir).glob("n*_s*.json"))]
    return [c["row"] for c in cases if is_complete(c)]


def is_complete(saved: dict) -> bool:
    """Whether a saved case finished (files written before the ``complete`` flag hold finished cases only)."""
    return bool(saved.get("complete", True)) and saved.get("row") is not None


def plot(out_dir: str, png: str) -> None:
    """Neurons needed against n per target (each seed a point, the median a line) beside the predictions."""
    from matplotlib.ticker import NullFormatter

    from relu_gating.experiments._plotting import figure, label, save

    rows = load_rows(out_dir)
    fig, (a1, a2) = figure("Example 5.12 across n (clusters, rho 0.4, sigma 0.3): certified greedy neurons to "
                           "reach s, against the n-independent predictions", 2, width=6.0)
    ns = sorted({r["n"] for r in rows})
    for j, s in enumerate(TARGETS):
        pts = [(r["n"], r["t_needed"][r["targets"].index(s)]) for r in rows if s in r["targets"]]
        pts = [(n, t) for n, t in pts if t is not None]
        if not pts:
            continue
        x = [n * (1 + 0.02 * (j - 3)) for n, _ in pts]
        line, = a1.plot(x, [t for _, t in pts], "o", alpha=0.6)
        med = [(n, float(np.median([t for m, t in pts if m == n]))) for n in ns if any(m == n for m, _ in pts)]
        a1.plot(*zip(*med), "-", color=line.get_color(), label=f"s = {s:g}: measured (median; dots: seeds)")
    label(a1, "neurons needed to reach gap s (certified greedy, alpha = 1)", "n (samples)", "neurons t (count)")
    for s in (0.3, 0.1):
        for key, ls, what in (("t_pred_example", "--", "16 K^3 max omega^2 / (alpha s^2)"),
                              ("t_pred_kappa_chi", ":", "4 K^2 kappa(chi)^2 / (alpha s^2), explicit kappa")):
            pts = sorted((r["n"], r[key][r["targets"].index(s)]) for r in rows if s in r["targets"])
            if pts:
                med = [(n, float(np.median([t for m, t in pts if m == n]))) for n in ns if any(m == n for m, _ in pts)]
                a2.plot(*zip(*med), ls, marker="s", label=f"s = {s:g}: {what}")
        meas = [(r["n"], r["t_needed"][r["targets"].index(s)]) for r in rows
                if s in r["targets"] and r["t_needed"][r["targets"].index(s)] is not None]
        if meas:
            a2.plot(*zip(*sorted(meas)), "o", label=f"s = {s:g}: measured (each seed)")
    label(a2, "the predictions (medians over seeds) against the measured counts", "n (samples)",
          "neurons t (count)", log=True)
    for ax in (a1, a2):
        ax.set_xscale("log")
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.xaxis.set_minor_formatter(NullFormatter())
    save(fig, png)


def main(argv: list[str] | None = None) -> int:
    from relu_gating.experiments._base import provenance

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[30, 60, 120, 240])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--rho", type=float, default=0.4)
    ap.add_argument("--sigma", type=float, default=0.3)
    ap.add_argument("--T", type=int, default=8, help="greedy neurons per case")
    ap.add_argument("--step-seconds", type=float, default=None,
                    help="each greedy step's wall-time budget (default: the search's, 600 s; a step stopped by it "
                         "is not certified: raise it under a heavy load)")
    ap.add_argument("--out-dir", default=None, help="one JSON per (n, seed), written when it starts (complete: "
                                                    "false) and when it completes; completed cases are skipped")
    ap.add_argument("--plot", nargs=2, metavar=("DIR", "PNG"), help="only draw the figure of a saved run")
    args = ap.parse_args(argv)
    if args.plot:
        plot(*args.plot)
        return 0
    for n in args.n:
        for seed in args.seeds:
            path = Path(args.out_dir) / f"n{n}_s{seed}.json" if args.out_dir else None
            if path is not None and path.exists() and is_complete(json.loads(path.read_text())):
                continue
            before = provenance()
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps({"provenance": {**before, "load_start": before["load_end"]},
                                            "args": vars(args), "case": {"n": n, "seed": seed},
                                            "complete": False, "row": None}, indent=1))
            row = case(n, seed, args.rho, args.sigma, args.T, args.step_seconds)
            print(f"n={n} seed={seed}: eps {row['epsilon']:.3g}, targets {row['targets']}, t {row['t_needed']}, "
                  f"gaps {[round(g, 3) for g in row['gaps']]} ({row['seconds']:.0f} s)", flush=True)
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                prov = {**before, "load_start": before["load_end"], "load_end": provenance()["load_end"]}
                path.write_text(json.dumps({"provenance": prov, "args": vars(args), "case": {"n": n, "seed": seed},
                                            "complete": True, "row": row},
                                           indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
