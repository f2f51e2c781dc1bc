"""Benchmark: ``verify`` of a tree certificate in one process against its walk in parts on 2 workers
(``relu_gating.verify(..., workers=1)`` and ``workers=2``), medians of ``--repeats`` alternating runs in
this process, wall seconds, and the ratio.  The serial way is timed twice: as ``verify`` runs it (BLAS
threads as the process has them) and with BLAS at one thread (what each worker of the walk in parts uses),
so the ratio of cores alone is shown beside the whole gain.  Every way must give the same report.

The certificate: ``best_neuron`` on a case of ``benchmarks/real.py`` (default ``clustered-400x3``, its
search time printed too), or a stored one (``--cert CERT.json --input IN.npz`` with ``Phi`` and ``U_K``).

Run::

    python benchmarks/verify_cores.py                                  # clustered 400 x 3, 3 repeats
    python benchmarks/verify_cores.py --cert /work/bench/prof/clustered-400x3.json \\
        --input /work/bench/prof/clustered-400x3_in.npz
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

import relu_gating as rg


def certificate(case: str, cert: str | None, inp: str | None) -> tuple:
    """``(Phi, U_K, certificate dict, search seconds or nan)``."""
    if cert:
        with np.load(inp) as z:
            Phi, U = z["Phi"], z["U_K"]
        with open(cert) as f:
            return Phi, U, json.load(f), float("nan")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from real import case_problem

    Phi, U, _, _ = case_problem(case)
    t = time.perf_counter()
    res = rg.best_neuron(Phi, U, strategy="branch-and-bound", max_seconds=600)
    return Phi, U, json.loads(json.dumps(res.to_dict())), time.perf_counter() - t


def timed(cert: dict, Phi: np.ndarray, U: np.ndarray, way: str) -> tuple[float, tuple]:
    from relu_gating._runtime.threads import blas_threads

    workers = 2 if way == "2 workers" else 1
    t = time.perf_counter()
    if way == "serial, 1 BLAS thread":
        with blas_threads(1):
            rep = rg.verify(cert, Phi, U, "bias", workers=1)
    else:
        rep = rg.verify(cert, Phi, U, "bias", workers=workers)
    return time.perf_counter() - t, (rep.valid, rep.certified, rep.alpha_proven, rep.reasons)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", default="clustered-400x3")
    ap.add_argument("--cert", default=None)
    ap.add_argument("--input", default=None)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    Phi, U, cert, search = certificate(a.case, a.cert, a.input)
    ways = ("serial", "serial, 1 BLAS thread", "2 workers")
    t: dict = {w: [] for w in ways}
    reps = set()
    for _ in range(a.repeats):
        for w in ways:
            sec, rep = timed(cert, Phi, U, w)
            t[w].append(sec)
            reps.add(rep)
    assert len(reps) == 1, reps  # the same report every way
    med = {w: statistics.median(v) for w, v in t.items()}
    print(f"{a.cert or a.case}: {len(cert['tree']['nodes']):,} nodes, search {search:.1f} s, report {reps.pop()[:3]}")
    for w in ways:
        print(f"  {w:>22s}: {med[w]:8.2f} s  (runs {', '.join(f'{x:.2f}' for x in t[w])})")
    print(f"  serial / 2 workers: {med['serial'] / med['2 workers']:.2f}x; with one BLAS thread each: "
          f"{med['serial, 1 BLAS thread'] / med['2 workers']:.2f}x")
    if np.isfinite(search):
        print(f"  verify / search: serial {med['serial'] / search:.3f}, 2 workers {med['2 workers'] / search:.3f}")


if __name__ == "__main__":
    main()
