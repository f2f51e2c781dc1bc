r"""Benchmark: verifying a certificate against finding it, and answers under changes of coordinates.

For each benchmark case of ``benchmarks/best_neuron.py`` (features ``bias``,
K = 4 kNN-graph basis) and for the same data in other coordinates (``X + 250``,
``X + 1e4``, a column times ``1e6`` and ``2^40``, a random well-conditioned
``Phi R``), in one run:

* the median wall time of ``best_neuron`` (the search, enumeration included)
  and of ``verify`` on its certificate (a fresh JSON round trip, the problem
  stated by the caller), and their ratio: verifying must cost less;
* the value and whether search and verifier certify it: the neurons of
  ``Phi`` and ``Phi R`` are the same set, so every row of a case must show the
  same value (to 1e-9) and ``certified`` twice.

Usage::

    python benchmarks/verify.py [--quick] [--repeats 3] [--cases n100d2,...]

Machines here are shared: compare the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from best_neuron import CASES, QUICK_CASES, make_case  # noqa: E402

import relu_gating as rg  # noqa: E402


def transforms(Phi: np.ndarray, seed: int = 0) -> dict:
    """The same layer input in other coordinates (``Phi -> Phi R``)."""
    rng = np.random.default_rng(seed)
    m = Phi.shape[1]
    shift = np.eye(m)
    shift[-1, :-1] = 250.0  # [X + 250, 1] = [X, 1] R
    big_shift = np.eye(m)
    big_shift[-1, :-1] = 1e4
    R = np.linalg.qr(rng.normal(size=(m, m)))[0] @ np.diag(rng.uniform(0.5, 2.0, m))
    return {"X": Phi, "X+250": Phi @ shift, "X+1e4": Phi @ big_shift,
            "x1*1e6": Phi * np.r_[1e6, np.ones(m - 1)], "x1*2^40": Phi * np.r_[2.0**40, np.ones(m - 1)],
            "Phi R": Phi @ R}


def _median_time(fn, repeats: int):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def run(name: str, spec: tuple, repeats: int) -> list[dict]:
    n, d, data = spec
    Phi0, U_K = make_case(n, d, data)
    rows = []
    for tname, Phi in transforms(Phi0).items():
        t_search, res = _median_time(lambda Phi=Phi: rg.best_neuron(Phi, U_K, features="bias"), repeats)
        cert = json.loads(json.dumps(res.to_dict()))
        t_verify, rep = _median_time(lambda Phi=Phi, cert=cert: rg.verify(cert, Phi, U_K, "bias"), repeats)
        rows.append({"case": name, "coords": tname, "patterns": res.n_patterns, "value": res.value,
                     "search_certified": res.certified, "verify_valid": rep.valid, "verify_certified": rep.certified,
                     "search_s": t_search, "verify_s": t_verify})
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small cases only")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cases", default=None, help=f"comma-separated subset of {','.join(CASES)}")
    args = p.parse_args(argv)
    table = QUICK_CASES if args.quick else CASES
    names = args.cases.split(",") if args.cases else list(table)
    print(f"{'case':8s} {'coords':9s} {'patterns':>9s} {'value':>16s} {'cert':>5s} {'valid':>5s} "
          f"{'search':>8s} {'verify':>8s} {'verify/search':>13s}")
    ok = True
    for name in names:
        rows = run(name, {**CASES, **QUICK_CASES}[name], args.repeats)
        ref = rows[0]["value"]
        for r in rows:
            same = abs(r["value"] - ref) <= 1e-9 * max(1.0, abs(ref))
            good = same and r["search_certified"] and r["verify_valid"] and r["verify_certified"]
            ok &= good
            print(f"{r['case']:8s} {r['coords']:9s} {r['patterns']:9d} {r['value']:16.12f} "
                  f"{'yes' if r['search_certified'] else 'NO':>5s} {'yes' if r['verify_valid'] else 'NO':>5s} "
                  f"{r['search_s']:7.3f}s {r['verify_s']:7.3f}s {r['verify_s'] / r['search_s']:13.2f}"
                  + ("" if good else "   <-- differs or not certified"))
    print("all answers identical and certified" if ok else "SOME ANSWERS DIFFER OR ARE NOT CERTIFIED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
