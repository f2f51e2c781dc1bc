r"""kappa against n: certified bounds on kappa(U_K) (and kappa(chi) for clusters) for two families, several seeds.

Families (d = 2, data on the 2^-16 grid, ``Phi = [X, 1]``):

* ``moons``: two moons (noise 0.1), kNN graph with 8 neighbours, combinatorial Laplacian, ``K = 4``;
* ``clusters``: three discs of radius 0.4 at the vertices of a unit triangle (the clusters
  experiment), Gaussian graph of bandwidth 0.4, ``K = 3``; also ``kappa(chi)`` for the normalized
  cluster indicators, and Example 5.12's explicit upper end.

Each kappa is bracketed by :func:`~relu_gating.layers.variation.representability_constant` with the
cone pricing (every norm interval closed to ``--tol``), a net of ``--directions`` unit vectors plus
``--refine`` dual ascent steps: ``lower`` is a certified dual (``||U^T y||``), ``upper`` the smaller of
Cauchy-Schwarz on the basis and the net's maximum over its inradius.

Long runs lose nothing: with ``--out-dir`` a case's file is rewritten after every norm and, while a
norm runs, every ``--save-every`` CPU seconds when kappa's or the running norm's certified lower end rose.  A row with
``final: false`` is a partial bracket, valid as it stands: ``upper`` is ``inf`` until the ``K``
basis norms are in, ``closed`` says which norm intervals closed (the running one is open, its interval
so far included).  A partial case is resumed by the same command: the quantities it finished are kept
(each row records the commit it ran on), the rest run again from their start; its file is
replaced only once the new run has got further (more quantities finished, or as many and more norms),
until then the new run saves to ``NAME.restarted`` beside it.  The file records the commit, the command, the machine's load at the start and at
the last save, and ``complete``.

Usage::

    python benchmarks/kappa_n.py --n 50 100 200 --seeds 0 1 2 --out benchmarks/results/experiments_kappa_n/kappa_n.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's relu_gating


def _moons(n: int, d: int, seed: int) -> np.ndarray:
    """Two moons (noise 0.1) in the plane; at ``d = 3`` a third coordinate of the same noise."""
    from relu_gating.data.datasets import two_moons

    X = two_moons(n, noise=0.1, seed=seed)
    if d == 3:
        X = np.c_[X, 0.1 * np.random.default_rng(seed + 10_000).standard_normal(n)]
    return X


def _clusters(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The clusters experiment's discs (d = 2) or balls (d = 3) of radius 0.4 at a unit triangle's vertices."""
    from relu_gating.experiments.clusters import K, cluster_data

    if d == 2:
        return cluster_data(n, 0.4, seed)
    rng = np.random.default_rng(seed)
    ang = np.pi / 2 + 2 * np.pi * np.arange(K) / K
    C = np.c_[np.cos(ang), np.sin(ang), np.zeros(K)]
    lab = np.arange(n) % K
    g = rng.standard_normal((n, 3))
    r = 0.4 * rng.uniform(size=n) ** (1 / 3)  # uniform in the ball
    return C[lab] + g / np.linalg.norm(g, axis=1, keepdims=True) * r[:, None], lab, C


def family(name: str, n: int, seed: int, d: int = 2) -> dict:
    """``Phi``, the bases to bracket and (clusters) the explicit kappa(chi) upper end."""
    from relu_gating.experiments._theory import dyadic
    from relu_gating.layers.networks import layer_input
    from relu_gating.spectral.graphs import laplacian, sample_graph
    from relu_gating.spectral.spectra import low_frequency_basis

    if name == "moons":
        X = dyadic(_moons(n, d, seed))
        U = low_frequency_basis(laplacian(sample_graph(X, kind="knn", n_neighbors=8)), 4).U_K
        return {"Phi": layer_input(X), "bases": {"kappa(U_K)": U}, "explicit": None}
    from relu_gating.experiments.clusters import K, chi_upper, omegas

    X, lab, W = _clusters(n, d, seed)
    X = dyadic(X)
    U = low_frequency_basis(laplacian(sample_graph(X, kind="gaussian", sigma=0.4)), K).U_K
    chi = np.stack([(lab == c) / np.sqrt(np.sum(lab == c)) for c in range(K)], axis=1)
    return {"Phi": layer_input(X), "bases": {"kappa(U_K)": U, "kappa(chi)": chi},
            "explicit": float(np.sqrt(np.sum(chi_upper(X, lab, W) ** 2))),
            "paper": float(2 * np.sqrt(K) * omegas(X, lab, W).max()),
            "epsilon": float(np.linalg.norm(U - chi @ (chi.T @ U), 2))}


def _row(case: dict, f: dict, kap: Any, clock: tuple, final: bool) -> dict:
    """One saved row: the case, the bracket ``kap`` (``final``: every step done), its norms and costs."""
    row = {**case, "lower": kap.lower, "upper": kap.upper, "upper_parts": kap.upper_parts,
           "norms_closed": bool(kap.certified), "final": final, "closed": [bool(x) for x in kap.closed],
           "basis_complete": bool(kap.norms.shape[0] >= case["K"] and all(kap.closed[:case["K"]])),
           "directions": int(kap.coefficients.shape[0]), "coefficients": kap.coefficients.tolist(),
           "norms": kap.norms.tolist(), "rounds": [int(x) for x in kap.rounds],
           "solve_seconds": [float(x) for x in kap.solve_seconds],
           "basis_norm_upper": [float(x) for x in kap.basis_norms[:, 1]],
           "seconds": time.perf_counter() - clock[0], "cpu_seconds": time.process_time() - clock[1]}
    if case["what"] == "kappa(chi)":
        row.update(explicit_upper=f["explicit"], paper_upper=f["paper"], epsilon=f["epsilon"])
        row["upper"] = min(row["upper"], f["explicit"])
    return row


def _code_marks() -> dict:
    """What the variation-norm code that runs a row has (each None before it existed): the seed loop's cosine
    cap (cfc191c), the certified pricing on facet rows first (214b8fb), the seed loop's witnesses a LP per row
    of ``Phi`` (0f2e866)."""
    from relu_gating.layers import _cone_pricing, variation

    return {"seed_distinct": getattr(variation, "_SEED_DISTINCT", None),
            "facets": getattr(_cone_pricing, "FACETS", None),
            "seed_per_row": getattr(variation, "_SEED_ADD_PER_ROW", None)}


def rows_for(name: str, n: int, seed: int, args: argparse.Namespace, d: int = 2,
             on_row: Any = None, done: list[dict] | tuple = (), commit: str | None = None) -> list[dict]:
    """One row per bracketed basis of the case ``(name, d, n, seed)``; ``on_row(rows)`` after each.
    ``done``: the finished rows of an earlier run of the case (its saved partial file), kept as they are:
    their quantities are not bracketed again.  ``commit``: the code's, recorded in each new row."""
    from relu_gating.layers.variation import representability_constant
    from relu_gating.patterns import enumerate_patterns

    f = family(name, n, seed, d)
    t0 = time.perf_counter()
    pats = enumerate_patterns(f["Phi"])
    t_pat = time.perf_counter() - t0
    kept = {r["what"]: r for r in done}
    out = [kept[what] for what in f["bases"] if what in kept]  # in the case's order, as a full run writes them
    last: list = []
    carry: dict = {}  # every norm of the case (both quantities of clusters) on one Phi: one pricer, one master
    for what, B in f["bases"].items():
        if what in kept:
            print(f"{name} d={d} n={n} seed={seed} {what}: kept from the earlier run "
                  f"[{kept[what]['lower']:.4g}, {kept[what]['upper']:.4g}]", flush=True)
            continue
        t0, c0 = time.perf_counter(), time.process_time()
        case = {"family": name, "d": d, "n": n, "seed": seed, "K": B.shape[1], "what": what,
                "patterns": len(pats), "pattern_seconds": t_pat, "commit": commit,
                "pricing": getattr(args, "pricing", "auto"), **_code_marks()}
        clock = (t0, c0)

        def partial(kap: Any, case: dict = case, clock: tuple = clock) -> None:  # the bounds so far (valid)
            print(f"  {case['family']} n={case['n']} seed={case['seed']} {case['what']} after {kap.norms.shape[0]} norms: "
                  f"[{kap.lower:.4g}, {kap.upper:.4g}] ({time.process_time() - clock[1]:.0f} CPU s)", flush=True)
            if on_row is not None:
                on_row([*out, _row(case, f, kap, clock, final=False)])
                last[:] = [time.process_time(), kap.lower, 0.0]

        last[:] = [time.process_time(), 0.0, 0.0]  # CPU time, kappa's and the running norm's lower end at the last save

        def during(kap: Any, case: dict = case, clock: tuple = clock) -> None:  # a norm's round: save now and then
            rose = kap.lower > last[1] or kap.norms[-1, 0] > last[2]  # kappa's or the running norm's lower end
            if on_row is not None and rose and time.process_time() - last[0] >= args.save_every:
                on_row([*out, _row(case, f, kap, clock, final=False)])
                last[:] = [time.process_time(), kap.lower, kap.norms[-1, 0]]

        kap = representability_constant(B, f["Phi"], n_directions=args.directions, refine=args.refine,
                                        tol=args.tol, patterns=pats, max_iter=args.max_iter,
                                        adaptive=args.adaptive, gap=args.gap, on_norm=partial,
                                        pricing=getattr(args, "pricing", "auto"), carry=carry, on_round=during)
        row = _row(case, f, kap, clock, final=True)
        out.append(row)
        if on_row is not None:
            on_row(out)
        print(f"{name} d={d} n={n} seed={seed} {what}: [{row['lower']:.4g}, {row['upper']:.4g}] "
              f"({row['seconds']:.1f} s, {len(row['rounds'])} norms, rounds {row['rounds']})", flush=True)
    return out


def case_path(out_dir: str, name: str, d: int, n: int, seed: int) -> Path:
    """The JSON file of one case."""
    return Path(out_dir) / f"{name}_d{d}_n{n}_s{seed}.json"


def _save(path: Path, before: dict, args: argparse.Namespace, rows: list[dict], done: bool = False) -> None:
    """Write one case's file: the provenance from its start (load before and now), its rows so far."""
    import datetime

    prov = {**before, "load_start": before["load_end"], "load_end": list(os.getloadavg()),
            "saved": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    tmp = path.with_suffix(".tmp")  # a run stopped while writing leaves the last complete file
    tmp.write_text(json.dumps({"provenance": prov, "args": vars(args), "complete": done, "rows": rows}, indent=1))
    os.replace(tmp, path)


def _progress(rows: list[dict]) -> tuple[int, int, float]:
    """How far a case's rows got: (quantities finished, norms evaluated, the last quantity's lower end)."""
    return (sum(bool(r.get("final", True)) for r in rows), sum(len(r["norms"]) for r in rows),
            float(rows[-1]["lower"]) if rows else 0.0)


def _partial_rows(path: Path) -> list[dict] | None:
    """The rows of a saved case that did not finish (None: no file, or a complete one)."""
    if not path.exists():
        return None
    saved = json.loads(path.read_text())
    return None if saved.get("complete", True) else saved["rows"]


#: The settings a resumed case must share with the run whose finished quantities it keeps (``--pricing`` and
#: ``--save-every`` change only the speed and the saves: every row records its pricing).
_SAME = ("directions", "refine", "adaptive", "gap", "tol", "max_iter")


def _finished_rows(path: Path, args: argparse.Namespace) -> list[dict]:
    """The quantities a saved partial case finished (``final`` rows) under the same settings (``_SAME``;
    none otherwise: the case runs again from its start), each with the commit it ran on (rows of older
    files name none: their file's)."""
    if not path.exists():
        return []
    saved = json.loads(path.read_text())
    if saved.get("complete", True) or any(saved.get("args", {}).get(k) != getattr(args, k) for k in _SAME):
        return []
    commit = saved.get("provenance", {}).get("commit")
    return [{"commit": commit, **r} for r in saved["rows"] if r.get("final", True)]


def _save_ahead(path: Path, before: dict, args: argparse.Namespace, rows: list[dict], done: bool = False,
                behind: list[dict] | None = None) -> None:
    """:func:`_save`, except that a restarted case does not replace the partial file it restarts (rows
    ``behind``) until it has got further: until then it is saved to ``NAME.restarted`` beside it."""
    side = path.with_suffix(".restarted")
    if behind is not None and not done and _progress(rows) < _progress(behind):
        _save(side, before, args, rows, done)
        return
    _save(path, before, args, rows, done)
    side.unlink(missing_ok=True)


def _complete(path: Path) -> bool:
    """A saved case with every quantity (files of older runs carry no flag: they were written complete)."""
    return path.exists() and json.loads(path.read_text()).get("complete", True)


def load_rows(out_dir: str) -> list[dict]:
    """Every saved case's rows (each file: one ``(family, d, n, seed)``)."""
    return [r for p in sorted(Path(out_dir).glob("*_d*_n*_s*.json")) for r in json.loads(p.read_text())["rows"]]


def _split_partial(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """``(with an upper end, without)``: a bracket saved before its basis was done has ``upper = inf``."""
    return [r for r in rows if np.isfinite(r["upper"])], [r for r in rows if not np.isfinite(r["upper"])]


def _panel(ax: Any, rows: list[dict], d: int) -> None:
    """One dimension's panel: per family and quantity a band (smallest lower end to largest upper end over
    seeds) with each seed's certified interval as a bar, and Example 5.12's explicit upper end."""
    from matplotlib.ticker import NullFormatter

    from relu_gating.experiments._plotting import label

    sel_d = [r for r in rows if r["d"] == d]
    keys = list(dict.fromkeys((r["family"], r["what"]) for r in sel_d))
    for j, (fam, what) in enumerate(keys):
        sel = [r for r in sel_d if r["family"] == fam and r["what"] == what]
        sel, part = _split_partial(sel)
        for r in part:  # no upper end yet: the certified lower end alone, hollow, off the lines
            ax.plot([r["n"]], [r["lower"]], marker="v", ls="none", mfc="none", ms=9, color=f"C{j}",
                    label=f"{fam}: {what}, partial: lower end only")
        if not sel:
            continue
        ns = sorted({r["n"] for r in sel})
        lo = [min(r["lower"] for r in sel if r["n"] == n) for n in ns]
        hi = [max(r["upper"] for r in sel if r["n"] == n) for n in ns]
        line, = ax.plot(ns, lo, marker="v", ls="-", color=f"C{j}", label=f"{fam}: {what}, lower ends (min over seeds)")
        ax.plot(ns, hi, marker="^", ls="--", color=line.get_color(), label=f"{fam}: {what}, upper ends (max)")
        ax.fill_between(ns, lo, hi, color=line.get_color(), alpha=0.15, lw=0)
        for r in sel:
            x = r["n"] * (1 + 0.025 * (j - len(keys) / 2) + 0.008 * r["seed"])
            ax.plot([x, x], [r["lower"], r["upper"]], color=line.get_color(), lw=1.5,
                    ls="-" if r.get("final", True) else ":")  # dotted: a partial bracket with its basis in
        ex = [(r["n"], r["explicit_upper"]) for r in sel if r.get("explicit_upper")]
        if ex:
            ax.plot(*zip(*sorted(ex)), "x", color=line.get_color(), label=f"{fam}: Example 5.12's explicit upper end")
    ax.set_xscale("log")
    ns = sorted({r["n"] for r in sel_d})
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(ns[0] / 1.4, ns[-1] * 1.4)  # one n alone: not a zoom onto the seeds' offsets
    label(ax, f"d = {d}: certified kappa (moons K = 4, clusters K = 3)", "n (samples, log scale)", "kappa (unitless)")


def plot(out_dir: str, png: str) -> None:
    """kappa against n from the saved cases: one panel per dimension, and the variation norm's cost."""
    from matplotlib.ticker import NullFormatter

    from relu_gating.experiments._plotting import figure, label, save

    rows = load_rows(out_dir)
    dims = sorted({r["d"] for r in rows})
    fig, axes = figure("Certified bounds on kappa against n (bars: each seed's interval, dotted: partial; "
                       "hollow triangles: lower end only; band: all seeds)",
                       len(dims) + 1, width=5.6)
    for ax, d in zip(axes, dims):
        _panel(ax, rows, d)
    ax = axes[-1]
    for d in dims:
        sel = [r for r in rows if r["d"] == d and r.get("final", True)]  # a partial row's last norm is unfinished
        ax.plot([r["n"] for r in sel], [r["cpu_seconds"] / len(r["rounds"]) for r in sel], "o", alpha=0.6,
                label=f"d = {d}: CPU seconds per norm")
        ax.plot([r["n"] for r in sel], [float(np.median(r["rounds"])) for r in sel], "s", alpha=0.6,
                label=f"d = {d}: median master rounds per norm")
    ax.set_xscale("log")
    ns = sorted({r["n"] for r in rows})
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.xaxis.set_minor_formatter(NullFormatter())
    label(ax, "variation norm to close (tol 1e-2): rounds and CPU seconds", "n (samples, log scale)",
          "count / seconds", log=True)
    save(fig, png)


def main(argv: list[str] | None = None) -> int:
    from relu_gating.experiments._base import provenance

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--families", nargs="+", default=["clusters", "moons"], choices=["clusters", "moons"])
    ap.add_argument("--n", type=int, nargs="+", default=[50, 100, 200])
    ap.add_argument("--d", type=int, nargs="+", default=[2], choices=[2, 3])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--directions", type=int, default=1, help="net size (at least K: the basis)")
    ap.add_argument("--refine", type=int, default=2, help="dual ascent steps (the lower end)")
    ap.add_argument("--adaptive", type=int, default=6, help="steps where the upper end is attained")
    ap.add_argument("--gap", type=float, default=0.03, help="stop the adaptive steps at this relative gap")
    ap.add_argument("--tol", type=float, default=1e-2)
    ap.add_argument("--max-iter", type=int, default=60)
    ap.add_argument("--pricing", default="auto", choices=["auto", "cone", "batched", "early"],
                    help="variation_norm's pricing ('early' for n >= 400: no dense pool of every witness)")
    ap.add_argument("--out-dir", default=None, help="one JSON per (family, d, n, seed), rewritten after each "
                                                    "quantity; complete cases already there are skipped")
    ap.add_argument("--save-every", type=float, default=120.0,
                    help="CPU seconds between saves while a norm runs (when kappa's or that norm's lower end rose)")
    ap.add_argument("--plot", nargs=2, metavar=("DIR", "PNG"), help="only draw the figure of a saved run")
    args = ap.parse_args(argv)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # one BLAS thread: the small solves gain nothing from more, and spinning threads cost CPU
    if args.plot:
        plot(*args.plot)
        return 0
    started = provenance()  # the commit whose code this process loaded (HEAD may move while it runs)
    for n in args.n:
        for seed in args.seeds:
            for d in args.d:
                for name in args.families:
                    path = case_path(args.out_dir, name, d, n, seed) if args.out_dir else None
                    claim = path.with_suffix(".running") if path is not None else None
                    if path is not None and (_complete(path) or claim.exists()):
                        continue  # done, or claimed by another process running the same command
                    save = partial(_save_ahead, path, {**started, "date": provenance()["date"],
                                                       "load_end": provenance()["load_end"]}, args,
                                   behind=_partial_rows(path) if path is not None else None)
                    if path is not None:
                        path.parent.mkdir(parents=True, exist_ok=True)
                        claim.write_text(str(os.getpid()))
                    rows = rows_for(name, n, seed, args, d, on_row=save if path is not None else None,
                                    done=_finished_rows(path, args) if path is not None else (), commit=started["commit"])
                    if path is not None:  # each quantity was saved as it came; now the case is complete
                        save(rows, done=True)
                        claim.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
