"""Calibrate the plan: predicted against measured peak memory and time, at both ends of the sizes.

Each case runs in a fresh child process (so its peak resident memory, ``VmHWM`` of
``/proc/self/status`` or ``ru_maxrss``, is that query's alone): Gaussian ``X``
(``np.random.default_rng(seed).normal(size=(n, d))``, the generator of
``benchmarks/scale.py`` and ``benchmarks/best_neuron.py``), ``U_K`` the K = 4 lowest
eigenvectors of the kNN-graph Laplacian, features bias, alpha = 1.  Next to each
measurement is what :func:`relu_gating.search.plan.estimate` predicts for it, and the ratio
measured / predicted (the plan is meant to stay within 2x: ratios in [0.5, 2]).  Time is
compared as the child's CPU time (user + system), which a busy machine inflates far less than
wall time; on an idle machine a single-threaded run's wall time is its CPU time.

Modes (``--mode``):

* ``enumerate``: ``best_neuron(..., strategy="enumerate", options=EnumerateOptions(max_patterns=None))`` (in memory);
* ``branch-and-bound``: ``best_neuron(..., strategy="branch-and-bound", max_seconds=...)``;
* ``patterns``: the ``relu-gating patterns`` command's work (enumeration and completeness check).

The grid covers large ``n`` at d = 1-2, the middle, and d up to 8 at small ``n``.  The
machine may be shared: memory peaks do not depend on the load, times do; with
``--repeats R`` the cases alternate (round robin) and the median time is reported, and the
load average is recorded before and after.  Results are saved as JSON (``--save``).

Run::

    python benchmarks/calibrate_plan.py                          # the default grid, enumeration
    python benchmarks/calibrate_plan.py --cases 2000x1 300x3 --repeats 3
    python benchmarks/calibrate_plan.py --mode patterns --cases 300x3
    python benchmarks/calibrate_plan.py --save benchmarks/results/calibrate_plan_DATE.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout's relu_gating

GRID = ["2000x1", "10000x1", "20000x1", "300x2", "1000x2", "2000x2", "100x3", "200x3", "300x3",
        "50x4", "80x4", "30x5", "40x5", "20x6", "30x6", "18x7", "22x7", "14x8", "18x8"]

_CHILD = r"""
import json, os, resource, sys, time
mode, n, d, seed, max_seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
K = int(sys.argv[6]) if len(sys.argv) > 6 else 4
import numpy as np
from relu_gating.data.io import InputData, resolve_problem
from relu_gating.search.plan import plan_query

def hwm():
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

X = np.random.default_rng(seed).normal(size=(n, d))
prob = resolve_problem(InputData(path="<bench>", X=X), K=K)
Phi, U_K = prob.Phi, prob.U_K
t = time.perf_counter()
plan = plan_query(Phi)
t_plan = time.perf_counter() - t
import relu_gating.search.front  # imports before the baseline
base = hwm()
c0 = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
out = {}
if mode == "patterns":
    from relu_gating.patterns import check_completeness, enumerate_patterns
    ps = enumerate_patterns(Phi, max_patterns=None, progress=False)
    t1 = time.perf_counter()
    rep = check_completeness(Phi, ps.masks, ps.witnesses)
    out.update(count=len(ps), complete=bool(rep.ok), enumerate_seconds=t1 - t0,
               check_seconds=time.perf_counter() - t1)
    certified = bool(rep.ok)
else:
    from relu_gating.search.front import best_neuron
    kw = dict(max_seconds=max_seconds)
    if mode == "enumerate":
        from relu_gating.search.options import EnumerateOptions
        kw = dict(options=EnumerateOptions(max_patterns=None))
    res = best_neuron(Phi, U_K, features="bias", strategy=mode, **kw)
    certified = bool(res.certified)
    out.update(count=int(res.n_patterns), nodes=int(getattr(res, "n_nodes", 0) or 0),
               phases={k: round(v, 3) for k, v in res.seconds.items()})
sec = time.perf_counter() - t0
c1, ch = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime) + ch.ru_utime + ch.ru_stime
print(json.dumps(dict(out, mode=mode, n=n, d=d, K=K, seed=seed, seconds=sec, cpu_seconds=cpu, certified=certified,
                      peak_bytes=hwm(), base_bytes=base, plan_seconds_to_compute=t_plan,
                      plan_patterns=plan.patterns, m=int(Phi.shape[1]))))
"""


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:  # pragma: no cover
        return float("nan")


def run_case(mode: str, n: int, d: int, seed: int, timeout: float, threads: int | None = None, K: int = 4) -> dict:
    """One query in a fresh process: its measurements, or ``{"timeout": ...}``."""
    env = dict(os.environ)
    if threads is not None:  # BLAS threads spinning on a busy machine inflate CPU time too
        env.update({k: str(threads) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD, mode, str(n), str(d), str(seed), str(timeout), str(K)],
                              capture_output=True, text=True, timeout=timeout + 30, env=env)
    except subprocess.TimeoutExpired:
        return {"mode": mode, "n": n, "d": d, "seed": seed, "timeout": timeout}
    if proc.returncode != 0:
        return {"mode": mode, "n": n, "d": d, "seed": seed, "error": proc.stderr.strip().splitlines()[-1:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _predicted(r: dict, mode: str) -> tuple[float, float]:
    """``(seconds, bytes)`` the current plan predicts for this run (from its size; no rerun needed)."""
    from relu_gating.search.plan import estimate

    est = estimate(mode, r["n"], r["m"], r["plan_patterns"], r.get("K", 4))
    return float(est.seconds), float(est.memory_bytes)


def summarize(runs: list[dict], mode: str) -> dict:
    """Median time and max peak of the repeats of one case, with the plan's predictions and ratios."""
    ok = [r for r in runs if "seconds" in r]
    if not ok:
        return dict(runs[0], ok=False)
    r = dict(ok[0])
    r["seconds_all"] = [round(x["seconds"], 3) for x in ok]
    r["seconds"] = statistics.median(x["seconds"] for x in ok)
    r["cpu_seconds"] = statistics.median(x.get("cpu_seconds", x["seconds"]) for x in ok)
    r["peak_bytes"] = max(x["peak_bytes"] for x in ok)
    p_sec, p_mem = _predicted(r, mode)
    r.update(predicted_seconds=p_sec, predicted_bytes=p_mem, time_ratio=r["cpu_seconds"] / p_sec,
             wall_ratio=r["seconds"] / p_sec, memory_ratio=r["peak_bytes"] / p_mem, ok=True)
    return r


def _row(r: dict) -> str:
    if not r.get("ok"):
        what = f"timeout {r['timeout']:.0f} s" if "timeout" in r else f"error {r.get('error')}"
        return f"| {r['n']} | {r['d']} | {r.get('K', 4)} | - | {what} | | | | | | |"
    return (f"| {r['n']} | {r['d']} | {r.get('K', 4)} | {r['count']:,} | {r['seconds']:.1f} s | {r['cpu_seconds']:.1f} s | "
            f"{r['predicted_seconds']:.1f} s | {r['time_ratio']:.2f} | {r['peak_bytes'] / 1e6:,.0f} MB | "
            f"{r['predicted_bytes'] / 1e6:,.0f} MB | {r['memory_ratio']:.2f} |")


def fit_bnb(paths: list[str]) -> int:
    """Least squares in logs of the branch and bound's CPU time over the saved runs of ``paths``:
    ``BNB_T0_SECONDS + c n^p N^q m^r K^s`` (``plan.BNB_SECONDS = (c, p, q, r, s)``), with the ratios
    measured / fitted."""
    import numpy as np

    from relu_gating.search.plan import BNB_T0_SECONDS

    runs = [r for path in paths for r in json.load(open(path))["runs"] if "cpu_seconds" in r]
    X = np.array([[1.0, np.log(r["n"]), np.log(r["plan_patterns"]), np.log(r["m"]), np.log(r.get("K", 4))]
                  for r in runs])
    y = np.log(np.maximum([r["cpu_seconds"] - BNB_T0_SECONDS for r in runs], 0.1))
    coef = np.linalg.lstsq(X, y, rcond=None)[0]
    print(f"BNB_SECONDS = ({np.exp(coef[0]):.3g}, {coef[1]:.3f}, {coef[2]:.3f}, {coef[3]:.3f}, {coef[4]:.3f})")
    fitted = BNB_T0_SECONDS + np.exp(X @ coef)
    for r, f in zip(runs, fitted):
        print(f"n = {r['n']}, d = {r['d']}, K = {r.get('K', 4)}: {r['cpu_seconds']:.1f} s CPU, fitted {f:.1f} s, "
              f"ratio {r['cpu_seconds'] / f:.2f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mode", default="enumerate", choices=("enumerate", "branch-and-bound", "patterns"))
    p.add_argument("--cases", nargs="+", default=GRID, metavar="NxD")
    p.add_argument("--repeats", type=int, default=1, help="alternating repeats; the median time is reported")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per run (the B&B's max_seconds too)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--K", type=int, default=4, help="low-frequency eigenvectors (the CLI's default is min(8, n - 1))")
    p.add_argument("--threads", type=int, default=None,
                   help="BLAS threads of the child (1: its CPU time is the idle single-core wall time)")
    p.add_argument("--save", default=None, metavar="PATH.json")
    p.add_argument("--from", dest="source", default=None, metavar="PATH.json",
                   help="no runs: the saved runs of PATH.json against the current plan")
    p.add_argument("--fit", nargs="+", default=None, metavar="PATH.json",
                   help="no runs: refit the branch and bound's time model to the saved runs of these files")
    a = p.parse_args(argv)
    if a.fit:
        return fit_bnb(a.fit)
    if a.source:
        with open(a.source) as fh:
            saved = json.load(fh)
        a.mode, load0 = saved["args"]["mode"], saved["load_before"]
        cases = [tuple(c) for c in dict.fromkeys(tuple(r[k] for k in ("n", "d")) for r in saved["runs"])]
        runs = {c: [r for r in saved["runs"] if (r["n"], r["d"]) == c] for c in cases}
    else:
        cases = [tuple(int(v) for v in c.lower().split("x")) for c in a.cases]
        load0 = _load()
        runs = {c: [] for c in cases}
        print(f"mode {a.mode}; load average {load0:.2f}; {os.cpu_count()} cpus", flush=True)
        for _ in range(a.repeats):  # round robin: each case sees the same mix of load
            for n, d in cases:
                r = run_case(a.mode, n, d, a.seed, a.timeout, a.threads, a.K)
                r.update(load=_load(), threads=a.threads)
                runs[(n, d)].append(r)
                print(json.dumps(r), file=sys.stderr, flush=True)
                if a.save:  # the raw runs as they come: a later --from re-reads them against a refitted plan
                    with open(a.save, "w") as fh:
                        json.dump({"args": vars(a), "load_before": load0,
                                   "runs": [x for c in cases for x in runs[c]]}, fh)
    rows = [summarize(runs[c], a.mode) for c in cases]
    print("| n | d | K | patterns | wall time | CPU time | predicted | ratio (CPU) | peak memory | predicted | ratio |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(_row(r))
    load1 = _load()
    print(f"load average {load0:.2f} before, {load1:.2f} after", flush=True)
    if a.save:
        with open(a.save, "w") as fh:
            json.dump({"args": vars(a), "load_before": load0, "load_after": load1,
                       "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                       "runs": [r for c in cases for r in runs[c]], "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
