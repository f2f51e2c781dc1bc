r"""Benchmark: where a late greedy step's time goes, per bound and per band of undecided rows (issue 39, Reach IV).

Step ``--step`` of a layer file (``greedy_late.py build``) as ``greedy_late.py fixed`` runs it (no guide, the
previous step's candidates as starts), serially, for ``--cpu`` CPU seconds of this process, single-threaded
BLAS.  Reported:

- the search's own timers (``t_bound``, ``t_lifted``, ``t_lifted_plain``, ``t_lp``, ``t_nnls``, ...; wall
  seconds, the process is serial) and the rest of the CPU;
- per band of ``--band`` undecided rows: the full lifted bound's tries, the nodes settled, and by which
  multipliers (first-order, at the level, ADMM, Clarabel), its seconds split the same way (each piece
  timed by wrapping the ``_strong`` function), the tries the cheap tests turned down, and the band's
  measured split cost (``split_seconds``), the seconds a split spends below a node;
- the lifted bound without multipliers (``try_plain``) per band: tries, nodes settled, seconds.

``--admm`` runs with ``_strong.LEVEL_ADMM = True`` (every node the first-order steps leave, beyond
Clarabel's sizes); ``--gate`` with the ADMM tries gated by their own tally (``_lifted_gate``), when this
checkout has it.

Run::

    python benchmarks/lifted_bands.py --layer /tmp/layer7.pkl --step 5 --cpu 60 --save out.json
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from greedy_late import _cands, _features, _search  # noqa: E402
from real import case_problem  # noqa: E402

_PIECES = ("first_order", "level_order", "sparsify", "admm_level", "_solve", "_admm")


class Recorder:
    """Wraps ``_strong``'s pieces and ``strong_bound``: per try, its undecided count and seconds by piece."""

    def __init__(self, strong, node_bounds) -> None:
        self.tries: list[dict] = []
        self.cur: dict | None = None
        self.strong = strong
        for name in _PIECES:
            if hasattr(strong, name):
                setattr(strong, name, self._timed(name, getattr(strong, name)))
        sb = strong.strong_bound

        def strong_bound(Q, M, QH, signs, zero, V, k=strong.N_DECIDED, level=-np.inf, **kw):
            und = int(np.sum((signs == 0) & ~zero))
            self.cur = {"k": und, "t": defaultdict(float), "ok": {}}
            t0 = time.perf_counter()
            got = sb(Q, M, QH, signs, zero, V, k, level, **kw)
            self.cur["total"] = time.perf_counter() - t0
            self.cur["u"] = None if got is None else float(got[0])
            self.cur["level"] = float(level)
            self.tries.append(self.cur)
            self.cur = None
            return got

        strong.strong_bound = strong_bound

    def _timed(self, name, fn):
        rec = self

        def wrapped(*a, **kw):
            t0 = time.perf_counter()
            try:
                out = fn(*a, **kw)
            finally:
                if rec.cur is not None:
                    rec.cur["t"][name] += time.perf_counter() - t0
            if rec.cur is not None and name in ("first_order", "level_order", "admm_level"):
                rec.cur["ok"].setdefault(name, out is not None)
            return out

        return wrapped


def settled_by(tr: dict) -> str:
    """Which piece's multipliers the try returned (the last piece run before it returned a bound at the level)."""
    if tr["u"] is None or not tr["u"] <= tr["level"]:
        return "none"
    t = tr["t"]
    for name in ("_solve", "admm_level", "level_order"):
        if t.get(name, 0.0) > 0:
            return name
    return "first_order"


def run(args) -> dict:
    from relu_gating.patterns import single_thread_blas
    from relu_gating.search.bnb import _node_bounds, _strong

    if args.admm:
        _strong.LEVEL_ADMM = True
    if args.gate:
        from relu_gating.search.bnb import _lifted_gate
        _lifted_gate.ENABLED = True
    rec = Recorder(_strong, _node_bounds)
    layer = pickle.loads(Path(args.layer).read_bytes())
    Phi, U, _, _ = case_problem(args.case)
    prev = layer[args.step - 2]
    starts = [c for c in _cands(prev) if not np.array_equal(c, prev["theta"])][:32]
    s = _search(Phi, U, _features(Phi, layer, args.step), None, np.array(starts) if starts else None)
    c0 = time.process_time()
    s.reserve = lambda: 2e9 if time.process_time() - c0 > args.cpu else 0.0
    w0 = time.perf_counter()
    with single_thread_blas():
        s.run(time.perf_counter() + 1e9)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    u = float(s.global_bound())
    timers = {k: round(float(v), 3) for k, v in s.stats.items() if k.startswith("t_") and not k[k.rfind("_") + 1:].isdigit()}
    counts = {k: v for k, v in s.stats.items() if not k.startswith(("t_", "lifted_tried_", "lifted_settled_", "explored_"))
              and not isinstance(v, (dict, list))}
    bands: dict = {}
    for tr in rec.tries:
        lo = tr["k"] // args.band * args.band
        b = bands.setdefault(lo, {"tries": 0, "s": 0.0, "settled": defaultdict(int), "s_piece": defaultdict(float),
                                  "admm_tries": 0, "admm_settled": 0, "s_admm": 0.0})
        b["tries"] += 1
        b["s"] += tr["total"]
        b["settled"][settled_by(tr)] += 1
        for name, dt in tr["t"].items():
            b["s_piece"][name] += dt
        if tr["t"].get("admm_level", 0.0) > 0:
            b["admm_tries"] += 1
            b["s_admm"] += tr["t"]["admm_level"]
            b["admm_settled"] += settled_by(tr) == "admm_level"
    for lo, b in bands.items():
        split = [s.split_seconds(x) for x in range(lo, lo + args.band, _node_bounds.LIFTED_BAND)]
        b["split_seconds"] = [None if x is None else round(x, 4) for x in split]
        b["skipped"] = sum(s.lifted_skipped.get(x, 0) for x in range(lo, lo + args.band, _node_bounds.LIFTED_BAND))
        b["ms_try"] = round(1e3 * b["s"] / b["tries"], 2)
        b["s"] = round(b["s"], 3)
        b["settled"] = dict(b["settled"])
        b["s_piece"] = {k: round(v, 3) for k, v in b["s_piece"].items()}
        b["s_admm"] = round(b["s_admm"], 3)
    plain = {str(k * _node_bounds.PLAIN_BAND): v for k, v in sorted(s.plain_bands.items())}
    gate = getattr(s, "_admm_gate", None)
    return {"step": args.step, "cpu": cpu, "wall": wall, "alpha": float(s.best_value / u), "u": u,
            "best": float(s.best_value), "expansions": s.expansions, "open": len(s.heap), "timers": timers,
            "timed_sum": round(sum(v for k, v in timers.items() if k in _TOP), 3), "counts": counts,
            "bands": {str(k): bands[k] for k in sorted(bands)}, "plain_bands": plain,
            "split": s.split_summary(), "gate": None if gate is None else gate.summary()}


#: The search's timers that do not nest in one another (``t_lifted_check`` is within ``t_lifted`` and
#: ``t_lifted_plain``; ``t_lifted_large`` within ``t_lifted``).
_TOP = ("t_bound", "t_lp", "t_chamber", "t_nnls", "t_score", "t_lifted", "t_lifted_plain", "t_forced", "t_zero", "t_probe")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="iris")
    ap.add_argument("--layer", required=True)
    ap.add_argument("--step", type=int, default=5)
    ap.add_argument("--cpu", type=float, default=60.0)
    ap.add_argument("--band", type=int, default=8)
    ap.add_argument("--admm", action="store_true", help="_strong.LEVEL_ADMM = True")
    ap.add_argument("--gate", action="store_true", help="ADMM gated by its own tally")
    ap.add_argument("--save")
    args = ap.parse_args(argv)
    load0 = list(os.getloadavg())
    res = run(args)
    commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    out = {"command": "python benchmarks/lifted_bands.py " + " ".join(sys.argv[1:] if argv is None else argv),
           "commit": commit, "load_start": load0, "load_end": list(os.getloadavg()), "result": res}
    text = json.dumps(out, indent=1, default=float)
    if args.save:
        Path(args.save).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
