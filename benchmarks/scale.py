r"""Benchmark: the streamed search in bounded memory, binary certificates, and Dask.

Cases: ``X`` standard normal (seeded), ``Phi = [X, 1]``, ``U_K`` the K = 4
lowest eigenvectors of the kNN-graph Laplacian, features ``bias`` (the
marginal gain ``G_H``), alpha = 1.

Sections (each prints its baseline in the same run, medians over ``--repeats``):

``memory``
    Peak resident memory (``ru_maxrss`` of a fresh child process) and wall
    time of the in-memory path (``best_neuron``) against the streamed path
    (``best_neuron(memory=...)``) writing a binary certificate, then the
    streamed verification of that certificate (another child), and whether
    both paths give the same value and bound.
``dask``
    Throughput (patterns per second, enumeration + bounds + exact phase) of the
    streamed search in-process and on a ``dask.distributed.LocalCluster`` of 1,
    2 and 4 single-threaded worker processes; speed-up against 1 worker; a
    SHA-256 of the certificate's per-pattern arrays (identical across worker
    counts); the per-task overhead of the cluster (median round trip of an
    empty task) against the median compute time of one part.
``big``
    The must-show runs: n = 300, d = 3 and n = 2000, d = 2 streamed under
    ``--memory`` (default 2G) to a binary certificate, then verified, each in
    its own child process (peak RSS, seconds, certificate size per pattern).

Commands::

    python benchmarks/scale.py memory --n 120 --d 3
    python benchmarks/scale.py dask --n 120 --d 3 --workers 1 2 4 [--part-max 65536]
    python benchmarks/scale.py big --cases 300x3 2000x2 --memory 2G
    python benchmarks/scale.py child stream --n 300 --d 3 --memory 2G --out /tmp/c.npz   # one run, JSON
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def make_case(n: int, d: int, K: int = 4, seed: int = 0):
    """``(Phi, U_K)``: Gaussian samples, kNN-graph Laplacian eigenvectors (as ``best_neuron.py``)."""
    from relu_gating.data.io import InputData, resolve_problem

    X = np.random.default_rng(seed).normal(size=(n, d))
    prob = resolve_problem(InputData(path="<bench>", X=X), K=K)
    return prob.Phi, prob.U_K


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _digest(res) -> str:
    """SHA-256 of the per-pattern arrays and the claim (read in chunks)."""
    from relu_gating.certificate._binary import _rows

    h = hashlib.sha256(f"{res.value!r}|{res.upper_bound!r}|{res.theta.tobytes().hex()}".encode())
    for a in (res.packed, res.witnesses, res.bounds, res.settlement):
        for s in range(0, res.n_patterns, 1 << 16):
            h.update(np.ascontiguousarray(_rows(a, s, s + (1 << 16))).tobytes())
    return h.hexdigest()[:16]


# ----------------------------------------------------------------------------- child process (one run)
def child(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("stream", "memory", "verify"))
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--d", type=int, required=True)
    p.add_argument("--memory", default="2G")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    Phi, U_K = make_case(a.n, a.d)
    from relu_gating import EnumerateOptions, best_neuron, verify

    t = time.perf_counter()
    if a.mode == "verify":
        rep = verify(a.out, Phi, U_K, "bias")
        out = {"valid": rep.valid, "value": rep.value, "upper": rep.upper_bound, "reasons": list(rep.reasons)}
    else:
        res = best_neuron(Phi, U_K, features="bias", options=EnumerateOptions(
            max_patterns=None, memory=a.memory if a.mode == "stream" else None))
        out = {"patterns": res.n_patterns, "value": res.value, "upper": res.upper_bound, "certified": res.certified,
               "exact": res.n_exact, "phases": {k: round(v, 2) for k, v in res.seconds.items()}}
        if a.out:
            from relu_gating.certificate import save_binary

            t_w = time.perf_counter()
            save_binary(res, a.out)
            out["write_seconds"] = time.perf_counter() - t_w
            out["bytes_per_pattern"] = os.path.getsize(a.out) / max(res.n_patterns, 1)
    out.update(seconds=time.perf_counter() - t, peak_rss_mb=_peak_mb())
    print(json.dumps(out))
    return 0


def _run_child(*args: str) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "child", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------- sections
def section_memory(a) -> None:
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "cert.npz")
    rows = []
    for _ in range(a.repeats):
        mem = _run_child("memory", "--n", str(a.n), "--d", str(a.d))
        st = _run_child("stream", "--n", str(a.n), "--d", str(a.d), "--memory", a.memory, "--out", out)
        ver = _run_child("verify", "--n", str(a.n), "--d", str(a.d), "--out", out)
        rows.append((mem, st, ver))
    med = lambda i, k: statistics.median(r[i][k] for r in rows)  # noqa: E731
    mem, st, ver = rows[0]
    print(f"n = {a.n}, d = {a.d}: {st['patterns']:,} patterns; medians of {a.repeats}")
    print(f"{'path':<28}{'seconds':>10}{'peak RSS MB':>14}")
    print(f"{'in-memory (baseline)':<28}{med(0, 'seconds'):>10.1f}{med(0, 'peak_rss_mb'):>14.0f}")
    print(f"{'streamed, memory=' + a.memory:<28}{med(1, 'seconds'):>10.1f}{med(1, 'peak_rss_mb'):>14.0f}"
          f"   ratio {med(1, 'peak_rss_mb') / med(0, 'peak_rss_mb'):.2f} (RSS), "
          f"{med(1, 'seconds') / med(0, 'seconds'):.2f} (time)")
    print(f"{'verify the .npz (streamed)':<28}{med(2, 'seconds'):>10.1f}{med(2, 'peak_rss_mb'):>14.0f}")
    print(f"certificate {st['bytes_per_pattern']:.1f} bytes/pattern (limit n/8 + 8m + 16 = "
          f"{a.n / 8 + 8 * (a.d + 1) + 16:.1f}); same value {mem['value'] == st['value']}, bound |diff| "
          f"{abs(mem['upper'] - st['upper']):.1e}; verified {ver['valid']}")


def _noop(x):
    return x


def section_dask(a) -> None:
    from dask.distributed import Client, LocalCluster

    from relu_gating import EnumerateOptions, best_neuron

    Phi, U_K = make_case(a.n, a.d)
    times, digests = {}, {}
    t = []
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        res = best_neuron(Phi, U_K, options=EnumerateOptions(memory=a.memory, max_patterns=None))
        t.append(time.perf_counter() - t0)
    times["in-process"], digests["in-process"], N = statistics.median(t), _digest(res), res.n_patterns
    parts = next((x for x in res.notes if x.startswith("streamed")), "")
    overhead, part_s = None, None
    for w in a.workers:
        with LocalCluster(n_workers=w, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
                Client(cl) as client:
            client.submit(_noop, 0).result()
            t = []
            for _ in range(a.repeats):
                t0 = time.perf_counter()
                res = best_neuron(Phi, U_K, options=EnumerateOptions(memory=a.memory, max_patterns=None),
                                  executor=client)
                t.append(time.perf_counter() - t0)
            times[f"dask {w} worker(s)"], digests[f"dask {w} worker(s)"] = statistics.median(t), _digest(res)
            if overhead is None:
                rt = []
                for k in range(50):
                    t0 = time.perf_counter()
                    client.submit(_noop, k, pure=False).result()
                    rt.append(time.perf_counter() - t0)
                overhead = statistics.median(rt)
                part_s = res.seconds.get("enumerate", 0) + res.seconds.get("bounds", 0)
    print(f"n = {a.n}, d = {a.d}: {N:,} patterns ({parts}); medians of {a.repeats}; {os.cpu_count()} CPU(s)")
    print(f"{'run':<22}{'seconds':>9}{'patterns/s':>13}{'speed-up vs 1':>15}  certificate sha256")
    base = times.get(f"dask {a.workers[0]} worker(s)", times["in-process"])
    for k, v in times.items():
        print(f"{k:<22}{v:>9.2f}{N / v:>13,.0f}{base / v:>15.2f}  {digests[k]}")
    same = len({v for k, v in digests.items() if k.startswith("dask")}) == 1
    print(f"identical certificate across worker counts: {same}; in-process identical: "
          f"{digests['in-process'] == digests[f'dask {a.workers[0]} worker(s)']}")
    n_parts = int(parts.split()[1]) if parts else 1
    print(f"per-task overhead (empty task round trip, median of 50): {1e3 * overhead:.1f} ms; one part computes "
          f"{1e3 * part_s / max(n_parts, 1):.0f} ms on average (overhead {overhead / (part_s / n_parts):.1%})")


def section_big(a) -> None:
    tmp = tempfile.mkdtemp()
    print(f"streamed, memory = {a.memory}; certificate written (.npz) and verified, each run a fresh process")
    print(f"{'case':<12}{'patterns':>12}{'search s':>10}{'peak MB':>9}{'B/pattern':>11}{'verify s':>10}"
          f"{'peak MB':>9}  certified/valid")
    for case in a.cases:
        n, d = (int(x) for x in case.split("x"))
        out = os.path.join(tmp, f"c{n}x{d}.npz")
        st = _run_child("stream", "--n", str(n), "--d", str(d), "--memory", a.memory, "--out", out)
        ver = _run_child("verify", "--n", str(n), "--d", str(d), "--out", out)
        print(f"{case:<12}{st['patterns']:>12,}{st['seconds']:>10.0f}{st['peak_rss_mb']:>9.0f}"
              f"{st['bytes_per_pattern']:>11.1f}{ver['seconds']:>10.0f}{ver['peak_rss_mb']:>9.0f}  "
              f"{st['certified']}/{ver['valid']}  phases {st['phases']}", flush=True)
        os.unlink(out)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "child":
        return child(argv[1:])
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("section", choices=("memory", "dask", "big"))
    p.add_argument("--n", type=int, default=120)
    p.add_argument("--d", type=int, default=3)
    p.add_argument("--memory", default="2G")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--cases", nargs="+", default=["300x3", "2000x2"])
    p.add_argument("--part-max", type=int, default=None,
                   help="largest part (patterns; default relu_gating.search._stream.parts.PART_MAX)")
    a = p.parse_args(argv)
    if a.part_max:
        import relu_gating.search._stream.parts as stream

        stream.PART_MAX = a.part_max  # the plan is made in this (client) process
    {"memory": section_memory, "dask": section_dask, "big": section_big}[a.section](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
