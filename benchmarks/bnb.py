r"""Benchmark: branch and bound over the arrangement against enumeration and uncertified search.

Each case: samples ``X`` (Gaussian, or ``--data clustered``: 4 Gaussian clusters), ``Phi = [X, 1]``,
``U_K`` = the K = 4 lowest eigenvectors of the kNN-graph Laplacian, the marginal gain over the
bias (``features="bias"``).  Per case, in the same run:

* the predicted chamber count (Cover's bound, ``count_patterns(method="bound")``);
* ``best_neuron(strategy="branch-and-bound", max_seconds=--budget)``: wall time, nodes created,
  splits, implied rows, leaves, chambers solved exactly, the alpha reached, and the time per
  node by kind (node bound; NNLS/LP row tests; exact chamber solves);
* ``best_neuron(strategy="enumerate")`` where the chamber count is at most ``--enum-max``
  (the answer must agree to 1e-9);
* the best of ``--random`` Gaussian neurons and of fixed-gating local search (50 starts):
  uncertified lower bounds (``relu_gating.search.baselines``);
* with ``--scip``: SCIP on a global MINLP of the same query with the same time limit
  (``--budget``), single-threaded (``benchmarks/_scip_query.py``): G recomputed at its theta,
  its dual bound and status;
* with ``--workers N``: the B&B on ``N`` worker processes (subtrees as tasks, shared incumbent);
* with ``--verify``: the B&B tree certificate written to JSON and re-checked by
  ``relu_gating.verify`` against the same problem (verified yes/no, seconds, bytes).

Medians over ``--seeds`` seeds are printed per case (value ratios against the B&B answer).

``--reach`` runs the cases enumeration cannot reach (issue 13): 1000x3, 100x5, 60x8, one seed,
``--enum-max 0``.  ``--save PATH.json`` writes every number as data (after each case, with the
machine load at start and end); ``--load PATH.json`` (repeatable) merges saved records, so the B&B
part can be re-run later (``--skip-baselines``) and merged with saved SCIP / random+LS results
(``--skip-bnb``); with ``--skip-bnb --skip-baselines`` and no ``--scip`` nothing runs and the
merged table is printed (``--markdown`` for a README table).

Run::

    python benchmarks/bnb.py                       # the default table
    python benchmarks/bnb.py --quick               # small cases, 1 seed
    python benchmarks/bnb.py --cases 120x3,80x4 --budget 120 --seeds 1
    python benchmarks/bnb.py --reach --data both --budget 600 --skip-bnb --scip \
        --save benchmarks/results/reach_baselines.json
    python benchmarks/bnb.py --reach --data both --budget 600 --skip-baselines --verify \
        --save benchmarks/results/reach_bnb.json
    python benchmarks/bnb.py --reach --data both --skip-bnb --skip-baselines --markdown \
        --load benchmarks/results/reach_baselines.json --load benchmarks/results/reach_bnb.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

DEFAULT_CASES = "40x2,100x2,40x3,80x3,20x4,30x4,15x5"
QUICK_CASES = "30x2,20x3,12x4"
REACH_CASES = "1000x3,100x5,60x8"


def instance(n: int, d: int, seed: int, data: str, K: int = 4):
    from relu_gating.spectral.graphs import laplacian, sample_graph
    from relu_gating.spectral.spectra import low_frequency_basis

    rng = np.random.default_rng(seed)
    if data == "clustered":
        centers = rng.normal(scale=3.0, size=(4, d))
        X = centers[rng.integers(0, 4, size=n)] + 0.5 * rng.normal(size=(n, d))
    else:
        X = rng.normal(size=(n, d))
    U = low_frequency_basis(laplacian(sample_graph(X, kind="knn")), K).U_K
    return np.c_[X, np.ones(n)], U


def run_bnb(Phi, U, args: argparse.Namespace) -> dict:
    """B&B with the time budget; stats, per-kind timings and (``--verify``) the certificate check."""
    from relu_gating import best_neuron, verify
    from relu_gating.certificate import result_to_dict

    from concurrent.futures import ProcessPoolExecutor

    t = time.perf_counter()
    if args.workers > 1:  # subtrees on worker processes, shared incumbent
        with ProcessPoolExecutor(max_workers=args.workers) as ex:
            b = best_neuron(Phi, U, strategy="branch-and-bound", max_seconds=args.budget, executor=ex)
    else:
        b = best_neuron(Phi, U, strategy="branch-and-bound", max_seconds=args.budget)
    tb = time.perf_counter() - t
    st = b.tree["stats"]
    row = {"t_bnb": tb, "workers": args.workers, "nodes": b.n_nodes, "splits": st["n_s"], "implied": st["n_i"],
           "leaves": st["n_b"] + st["n_c"] + st["n_x"], "solved": st["chambers"],
           "alpha": b.value / b.upper_bound if b.upper_bound > 0 else 1.0, "certified": bool(b.certified),
           "us_bound": 1e6 * st["t_bound"] / max(st["n_bound"], 1),
           "us_rowtest": 1e6 * (st["t_nnls"] + st["t_lp"]) / max(st["nnls"] + st["lp"], 1),
           "ms_chamber": 1e3 * st["t_chamber"] / max(st["chambers"], 1), "value": float(b.value),
           "upper": float(b.upper_bound), "gap": float(b.upper_bound - b.value),
           "stats": {k: v for k, v in st.items() if isinstance(v, (int, float, str))}}
    if args.verify:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "cert.json"
            t = time.perf_counter()
            path.write_text(json.dumps(result_to_dict(b), allow_nan=False))
            row["t_write"] = time.perf_counter() - t
            row["cert_bytes"] = path.stat().st_size
            t = time.perf_counter()
            rep = verify(str(path), Phi, U, "bias")
            row["t_verify"] = time.perf_counter() - t
        row.update(verified=bool(rep.valid), verify_certified=bool(rep.certified),
                   verify_alpha=float(rep.alpha_proven), verify_value=float(rep.value),
                   verify_upper=float(rep.upper_bound), verify_reasons=list(rep.reasons)[:5])
    return row


def run_baselines(Phi, U, seed: int, args: argparse.Namespace) -> dict:
    from relu_gating.search.baselines import local_search, random_search

    t = time.perf_counter()
    rs = random_search(Phi, U, features="bias", n_samples=args.random, seed=seed)
    ls = local_search(Phi, U, features="bias", n_starts=50, seed=seed)
    return {"random_value": float(rs.value), "ls_value": float(ls.value), "rls_value": float(max(rs.value, ls.value)),
            "t_rls": time.perf_counter() - t}


_SCIP_CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from bnb import instance
from _scip_query import scip_query
Phi, U = instance(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
print(json.dumps(scip_query(Phi, U, time_limit=float(sys.argv[6]), seed=int(sys.argv[4]))))
"""


def run_scip(n: int, d: int, seed: int, data: str, budget: float) -> dict:
    """:func:`_scip_query.scip_query` in a child process: SCIP aborting (it has, with
    ``free(): invalid size`` on the largest models) is recorded, not fatal to the run."""
    import subprocess

    cmd = [sys.executable, "-c", _SCIP_CHILD, str(Path(__file__).resolve().parent), str(n), str(d), str(seed), data,
           str(budget)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=budget + 300)
    except subprocess.TimeoutExpired:
        return {"status": "no answer (killed at budget + 300 s)", "value": float("nan"), "dual_bound": float("nan")}
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["?"])[-1][:120]
        return {"status": f"crashed (exit {out.returncode}: {last})", "value": float("nan"),
                "dual_bound": float("nan")}
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_case(n: int, d: int, seed: int, args: argparse.Namespace, data: str | None = None) -> dict:
    from relu_gating import best_neuron
    from relu_gating.patterns import count_patterns

    data = data or args.data
    Phi, U = instance(n, d, seed, data)
    row = {"n": n, "d": d, "data": data, "seed": seed, "budget": args.budget,
           "chambers": int(count_patterns(Phi, method="bound").count)}
    if not args.skip_bnb:
        row.update(run_bnb(Phi, U, args))
    if not args.skip_baselines:
        row.update(run_baselines(Phi, U, seed, args))
    if args.scip:
        row["scip"] = run_scip(n, d, seed, data, args.budget)
    row["t_enum"], row["agree"] = float("nan"), ""
    if not args.skip_bnb and row["chambers"] <= args.enum_max:
        t = time.perf_counter()
        e = best_neuron(Phi, U, strategy="enumerate")
        row["t_enum"] = time.perf_counter() - t
        row["agree"] = "yes" if abs(e.value - row["value"]) <= 1e-9 else f"NO ({e.value - row['value']:+.1e})"
    return row


def _load_now() -> dict:
    return {"utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "loadavg": [round(x, 2) for x in os.getloadavg()]}


def _key(r: dict) -> tuple:
    return (r["n"], r["d"], r["data"], r["seed"])


def merge(records: list[dict], new: dict) -> None:
    """Merge ``new`` into the record of the same case (n, d, data, seed), or append it."""
    for r in records:
        if _key(r) == _key(new):
            r.update({k: v for k, v in new.items() if k not in ("t_enum", "agree") or v == v and v != ""})
            return
    records.append(dict(new))


def save(path: str, records: list[dict], meta: dict) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(p.suffix + ".tmp")
    tmp.write_text(json.dumps({"meta": meta, "records": records}, indent=1, default=float))
    tmp.replace(p)


def _f(x, fmt: str, missing: str = "-") -> str:
    return missing if x is None or (isinstance(x, float) and x != x) else format(x, fmt)


def print_reach(records: list[dict], markdown: bool) -> None:
    """One line per case: B&B against chambers, random+LS and SCIP (whatever the records hold)."""
    cols = ["n x d", "data", "chambers", "B&B s", "B&B nodes", "nodes/chambers", "alpha reached", "certified", "gap = upper - value",
            "B&B value", "rand+LS value", "SCIP primal (G)", "SCIP dual bound", "SCIP status", "us/node bound",
            "us/row test", "ms/chamber solve", "verified"]
    rows = []
    for r in records:
        s = r.get("scip") or {}
        ver = r.get("verified")
        rows.append([f"{r['n']}x{r['d']}", r["data"], f"{r['chambers']:.2e}", _f(r.get("t_bnb"), ".0f"),
                     _f(r.get("nodes"), ","),
                     _f(r["nodes"] / r["chambers"] if "nodes" in r else None, ".1e"), _f(r.get("alpha"), ".6f"),
                     "-" if "certified" not in r else ("yes" if r["certified"] else "no"),
                     _f(r.get("gap"), ".2e"), _f(r.get("value"), ".6f"), _f(r.get("rls_value"), ".6f"),
                     _f(s.get("value"), ".6f"), _f(s.get("dual_bound"), ".4f"), s.get("status", "-"),
                     _f(r.get("us_bound"), ".0f"), _f(r.get("us_rowtest"), ".0f"), _f(r.get("ms_chamber"), ".1f"),
                     "-" if ver is None else ("yes" if ver else "NO")])
    if markdown:
        print("| " + " | ".join(cols) + " |")
        print("| " + " | ".join("---" if i < 2 else "---:" for i in range(len(cols))) + " |")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    w = [max(len(c), *(len(row[i]) for row in rows)) if rows else len(c) for i, c in enumerate(cols)]
    print("  ".join(c.rjust(w[i]) for i, c in enumerate(cols)))
    for row in rows:
        print("  ".join(v.rjust(w[i]) for i, v in enumerate(row)), flush=True)


def print_median_row(n: int, d: int, rows: list[dict]) -> None:
    def med(k: str) -> float:
        return float(np.nanmedian([r.get(k, float("nan")) for r in rows]))
    base = [r["rls_value"] / r["value"] if "rls_value" in r and "value" in r else float("nan") for r in rows]
    print(f"{n:>5} {d:>2} {rows[0]['chambers']:>11,} {med('t_bnb'):>7.2f} {med('t_enum'):>7.2f} "
          f"{'/'.join(sorted({r['agree'] or '-' for r in rows})):>6} {med('nodes'):>7.0f} {med('splits'):>6.0f} "
          f"{med('implied'):>7.0f} {med('solved'):>6.0f} {med('alpha'):>9.6f} "
          f"{sum(r.get('certified', False) for r in rows)}/{len(rows):<3} {med('us_bound'):>8.0f} "
          f"{med('us_rowtest'):>10.0f} {med('ms_chamber'):>10.1f} {float(np.nanmedian(base)):>11.6f}", flush=True)


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default=None, help=f"n x d list (default {DEFAULT_CASES}; --reach {REACH_CASES})")
    ap.add_argument("--data", default="gauss", choices=("gauss", "clustered", "both"))
    ap.add_argument("--budget", type=float, default=60.0, help="B&B (and SCIP) time limit per run, seconds")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per case (default 3; --reach 1)")
    ap.add_argument("--workers", type=int, default=1, help="B&B worker processes (1: serial)")
    ap.add_argument("--random", type=int, default=100_000, help="random neurons of the baseline")
    ap.add_argument("--enum-max", type=int, default=None,
                    help="enumerate only up to this many chambers (default 200000; --reach 0)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reach", action="store_true", help=f"the cases enumeration cannot reach: {REACH_CASES}")
    ap.add_argument("--scip", action="store_true", help="also run SCIP with the same time limit (--budget)")
    ap.add_argument("--verify", action="store_true", help="write and verify each B&B certificate")
    ap.add_argument("--skip-bnb", action="store_true", help="no B&B (baselines / SCIP only)")
    ap.add_argument("--skip-baselines", action="store_true", help="no random + local search baseline")
    ap.add_argument("--save", default=None, help="write all numbers to this JSON file (after each case)")
    ap.add_argument("--load", action="append", default=[], help="merge saved records (repeatable)")
    ap.add_argument("--markdown", action="store_true", help="print the per-case table as markdown")
    args = ap.parse_args(argv)
    if args.quick:
        args.random, args.budget = 20_000, min(args.budget, 20.0)
    args.seeds = args.seeds or (1 if args.reach or args.quick else 3)
    args.enum_max = args.enum_max if args.enum_max is not None else (0 if args.reach else 200_000)
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    cases = args.cases or (REACH_CASES if args.reach else QUICK_CASES if args.quick else DEFAULT_CASES)
    datas = ("gauss", "clustered") if args.data == "both" else (args.data,)
    records: list[dict] = []
    loaded = []
    for path in args.load:
        saved = json.loads(Path(path).read_text())
        loaded.append({"path": path, "meta": saved.get("meta")})
        for r in saved["records"]:
            merge(records, r)
    meta = {"argv": vars(args), "loaded": loaded, "start": _load_now(), "machine": platform.platform(), "cpus": os.cpu_count(),
            "env_threads": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}}
    runs = not (args.skip_bnb and args.skip_baselines and not args.scip)
    per_case = args.reach or args.save or args.load
    if runs:
        print(f"data {args.data}, knn graph, K = 4, features bias, time limit {args.budget:g} s, "
              f"{args.seeds} seed(s), load {meta['start']['loadavg']}")
    if runs and not per_case:
        print(f"{'n':>5} {'d':>2} {'chambers':>11} {'B&B s':>7} {'enum s':>7} {'agree':>6} {'nodes':>7} "
              f"{'splits':>6} {'implied':>7} {'solved':>6} {'alpha':>9} {'cert':>5} {'us/bound':>8} "
              f"{'us/rowtest':>10} {'ms/chamber':>10} {'rand+LS/B&B':>11}")
    for data in datas if runs else ():
        for case in cases.split(","):
            n, d = (int(x) for x in case.lower().split("x"))
            rows = []
            for s in range(args.seeds):
                rows.append(run_case(n, d, s, args, data))
                merge(records, rows[-1])
                if args.save:
                    save(args.save, records, {**meta, "end": _load_now()})
                if per_case:
                    print(json.dumps({k: v for k, v in rows[-1].items() if k != "stats"}, default=float), flush=True)
            if not per_case:
                print_median_row(n, d, rows)
    if per_case:
        print_reach(records, args.markdown)


if __name__ == "__main__":
    main()
