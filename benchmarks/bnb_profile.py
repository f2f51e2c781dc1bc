r"""Benchmark: where a serial branch and bound spends its CPU, by node size and by bound.

Runs one case of ``benchmarks/real.py`` serially for ``--cpu`` CPU seconds (as ``bnb_fixed_cpu.py``:
one BLAS thread, the incumbent seeded as ``branch_and_bound`` does, no audit) and records every
expansion: the node's undecided rows ``k`` (its band of ``--band``), its CPU seconds, how the search's own
timers (``t_bound``, ``t_nnls``, ``t_lifted``, ...) grew during it, and what the node became (a lifted
``"d"`` leaf, a split, a chain of implied rows ending in a ``"b"`` leaf, ...). Prints a table per band and
the totals; ``--out`` saves them as JSON (commit, command and load recorded).

``--lifted-max N`` tries the lifted bound on nodes of up to ``N`` undecided rows (both limits,
``_node_bounds.LIFTED_MAX_UNDECIDED`` and ``_strong.MAX_UNDECIDED``; 128 by default). ``--ab 128,256`` runs
one fresh process per value, both at once (the same load), ``--repeats`` times, the order alternating,
and prints expansions and alpha reached at ``--cpu`` CPU seconds.

Run::

    python benchmarks/bnb_profile.py --case bc-pca5 --cpu 100 --out benchmarks/results/bnb_profile_bcpca5.json
    python benchmarks/bnb_profile.py --case bc-pca5 --cpu 60 --ab 128,256 --repeats 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(1, str(HERE.parent))

TIMERS = ("t_bound", "t_nnls", "t_forced", "t_lp", "t_score", "t_lifted", "t_lifted_plain", "t_lifted_check",
          "t_chamber", "t_zero")
COUNTS = ("nodes", "implied", "nnls", "nnls_rows", "nnls_hits", "lifted", "lifted_settled", "lifted_plain",
          "chambers", "face_leaves")


def _outcome(node) -> str:
    """What an expanded node became: its kind, following a chain of implied rows to its end."""
    seen = 0
    while node.kind == "i" and node.children:
        node, seen = node.children[0], seen + 1
    return ("chain+" if seen else "") + node.kind


def profile(case: str, cpu: float, band: int) -> dict:
    """The search's own timers count wall seconds (``time.perf_counter``; ``time.process_time``, a system
    call, would cost more than they measure): each expansion's CPU and wall seconds are both kept, and the
    table gives each timer's share of the wall seconds times the CPU seconds."""
    from bnb_fixed_cpu import fixed_cpu_search

    from relu_gating.search.bnb._search import Search

    per: dict = defaultdict(lambda: defaultdict(float))
    outcomes: dict = defaultdict(lambda: defaultdict(int))
    orig = Search.expand

    def expand(self, node):
        k = int(((node.signs == 0) & ~self.P.zero_rows).sum()) if node.signs is not None else -1
        before = {key: self.stats.get(key, 0) for key in TIMERS + COUNTS}
        c0, w0 = time.process_time(), time.perf_counter()
        try:
            orig(self, node)
        finally:
            row = per[k // band * band]
            row["expansions"] += 1
            row["cpu"] += time.process_time() - c0
            row["wall"] += time.perf_counter() - w0
            for key in TIMERS + COUNTS:
                row[key] += self.stats.get(key, 0) - before[key]
            outcomes[k // band * band][_outcome(node)] += 1

    Search.expand = expand
    try:
        s, why, used, wall = fixed_cpu_search(case, cpu)
    finally:
        Search.expand = orig
    upper = max(s.global_bound(), s.best_value)
    stats = {k: v for k, v in s.stats.items() if isinstance(v, (int, float))}
    return {"case": case, "stop": why, "cpu": used, "wall": wall, "expansions": s.expansions,
            "alpha": s.best_value / upper, "value": s.best_value, "upper": upper, "stats": stats,
            "split": s.split_summary(),
            "lifted_skipped": {str(k): v for k, v in sorted(s.lifted_skipped.items())}, "bands": {str(b): dict(v) for b, v in sorted(per.items())},
            "outcomes": {str(b): dict(v) for b, v in sorted(outcomes.items())}}


def set_lifted_max(top: int) -> None:
    """The lifted bound tried on nodes of up to ``top`` undecided rows (before any search is built)."""
    from relu_gating.search.bnb import _node_bounds, _search, _strong

    _node_bounds.LIFTED_MAX_UNDECIDED = _search.LIFTED_MAX_UNDECIDED = _strong.MAX_UNDECIDED = int(top)


def ab(case: str, cpu: float, values: list[str], repeats: int) -> list[dict]:
    """One child per ``--lifted-max`` value, both at once, ``repeats`` times (order alternating)."""
    import tempfile

    rows = []
    for r in range(repeats):
        procs = []
        for top in (values if r % 2 == 0 else values[::-1]):
            out = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
            cmd = [sys.executable, __file__, "--case", case, "--cpu", str(cpu), "--lifted-max", top, "--out", out, "--quiet"]
            procs.append((top, subprocess.Popen(cmd, stdout=subprocess.DEVNULL), out))
        for top, p, out in procs:
            p.wait()
            g = json.loads(Path(out).read_text())
            os.unlink(out)
            st = g["stats"]
            rows.append({"lifted_max": int(top), "repeat": r, "cpu": g["cpu"], "expansions": g["expansions"],
                         "nodes": st["nodes"], "alpha": g["alpha"], "value": g["value"], "upper": g["upper"],
                         "lifted": st["lifted"], "lifted_settled": st["lifted_settled"], "t_lifted": st["t_lifted"],
                         "load_end": g["meta"]["load_end"][0]})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def table(got: dict) -> None:
    tot = sum(r["cpu"] for r in got["bands"].values())
    print(f"{got['case']}: {got['cpu']:.1f} CPU s, {got['expansions']:,} expansions, alpha {got['alpha']:.6f}; "
          f"expand total {tot:.1f} s")
    cols = ("cpu", "t_bound", "t_nnls", "t_forced", "t_score", "t_lifted", "t_lifted_plain", "t_lifted_check")
    print("CPU seconds; a timer's CPU is its share of the band's wall seconds times the band's CPU seconds")
    print("| k band | expansions | " + " | ".join(cols) + " | other | implied | lifted (settled) | outcomes |")
    print("| ---: " * (len(cols) + 5) + "| --- |")
    for b, r in got["bands"].items():
        f = r["cpu"] / max(r["wall"], 1e-12)
        r = {**r, **{c: r.get(c, 0.0) * f for c in cols[1:] + ("t_lp",)}}
        got["bands"][b] = r
        other = r["cpu"] - sum(r.get(c, 0.0) for c in cols[1:] if c != "t_lifted_check") - r.get("t_lp", 0.0)
        outs = ", ".join(f"{k} {v}" for k, v in sorted(got["outcomes"][b].items(), key=lambda x: -x[1]))
        print(f"| {b} | {r['expansions']:.0f} | " + " | ".join(f"{r.get(c, 0.0):.2f}" for c in cols)
              + f" | {other:.2f} | {r['implied']:.0f} | {r['lifted']:.0f} ({r['lifted_settled']:.0f}) | {outs} |")
    tt = {c: sum(r.get(c, 0.0) for r in got["bands"].values()) for c in cols + ("t_lp",)}
    print("totals: " + ", ".join(f"{c} {v:.1f} s ({v / max(tot, 1e-9):.0%})" for c, v in tt.items()))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", default="bc-pca5")
    ap.add_argument("--cpu", type=float, default=60.0)
    ap.add_argument("--band", type=int, default=32)
    ap.add_argument("--out", default=None)
    ap.add_argument("--lifted-max", type=int, default=None, help="the lifted bound's limit of undecided rows")
    ap.add_argument("--ab", default=None, help="comma-separated --lifted-max values, run both at once")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--quiet", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    load = os.getloadavg()
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True).stdout.strip()
    meta = {"commit": commit, "command": "python " + " ".join(sys.argv), "load_start": load}
    if args.ab:
        rows = ab(args.case, args.cpu, args.ab.split(","), args.repeats)
        if args.out:
            Path(args.out).write_text(json.dumps({"meta": {**meta, "load_end": os.getloadavg()}, "rows": rows}, indent=1))
        return
    if args.lifted_max is not None:
        set_lifted_max(args.lifted_max)
    got = profile(args.case, args.cpu, args.band)
    if args.out:
        meta["load_end"] = os.getloadavg()
        Path(args.out).write_text(json.dumps({"meta": meta, **got}, indent=1))  # timers as measured (wall)
    if not args.quiet:
        table(got)


if __name__ == "__main__":
    main()
