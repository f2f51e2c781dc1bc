r"""Benchmark: the late steps of a greedy layer, profiled, and the merged guide against the last tree's (issue 39).

Its commands, on the layer's own features (``benchmarks/real.py``'s case, default iris):

- ``build --steps 4 --budget 900 --out layer.pkl``: the layer's first steps, serially (one worker), each
  step's neuron, tree, candidates and CPU seconds saved (a pickle of plain lists and arrays);
- ``profile --layer layer.pkl --step 5 --cpu 120``: step ``--step`` with the earlier steps' merged guide
  and the previous step's candidates, serially, its open heap sampled at fixed CPU seconds (largest open
  bound, alpha, open nodes, their undecided rows and depths, the search's stats);
- ``fixed --layer layer.pkl --step 5 --cpu 60 --repeats 3 --against /work/main``: step ``--step`` without a
  guide, the previous step's candidates as starts, ``--cpu`` CPU seconds in a fresh process, alternately
  with this checkout and the checkout at ``--against`` (a directory put first on ``PYTHONPATH``); per run the
  expansions, nodes, alpha and the search's counters;
- ``guided --layer layer.pkl --step 6 --cpu 60 --repeats 2 --against /work/main``: step ``--step`` as the
  layer runs it (the previous step's tree as its guide, its candidates as starts), ``--cpu`` CPU seconds
  in a fresh process, then the tree audited as ``branch_and_bound`` returns it, alternately with this
  checkout and the one at ``--against``; per run the alpha (audited), the largest open bound, the nodes,
  replayed expansions and lifted tries;
- ``checks --layer layer.pkl --step 6 --cpu 400 --repeats 1``: step ``--step`` as the layer runs it, serially,
  to settlement, with the search's own test of lifted evidence sampled (``_node_bounds.CHECK_EVERY``) and on
  every evidence, both at once (one process per core): CPU seconds, nodes, the lifted bound's timers;
- ``paired --layer layer.pkl --step 5 --cpu 400 --repeats 1 --against <checkout>``: step ``--step`` as the layer
  runs it, serially, to settlement, on this checkout and the one at ``--against`` at once (one process per core,
  pinned with ``taskset`` where there is one): CPU seconds, nodes, the chambers', slivers' and pointless nodes'
  counters and timers;
- ``merge --layer layer.pkl --step 4 --first 30 --cpu 40 --order plain,merged,merged,plain``: step
  ``--step - 1`` searched ``--first`` CPU seconds (cut short, replaying the step before it), then step
  ``--step`` for ``--cpu`` CPU seconds (``--first 0``: the previous step's tree as ``build`` saved it)
  with the guide of that cut tree alone (``plain``, as before) or
  merged with the earlier guide (``merged``, :func:`relu_gating.search.bnb.merge_guides`), in the
  order given.

Every search here stops on its own CPU clock (``time.process_time``), so the figures hold under load.

Run::

    python benchmarks/greedy_late.py build --steps 4 --budget 900 --out /tmp/layer4.pkl
    python benchmarks/greedy_late.py profile --layer /tmp/layer4.pkl --step 5 --cpu 120
    python benchmarks/greedy_late.py merge --layer /tmp/layer4.pkl --step 4 --first 30 --cpu 40
    python benchmarks/greedy_late.py fixed --layer /tmp/layer4.pkl --step 5 --cpu 60 --against /work/main
    python benchmarks/greedy_late.py guided --layer /tmp/layer5.pkl --step 6 --cpu 60 --against /work/main
    python benchmarks/greedy_late.py paired --layer /tmp/layer4.pkl --step 5 --cpu 400 --against <checkout>
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from real import case_problem  # noqa: E402


def build(case: str, steps: int, budget: float, out: str) -> None:
    from relu_gating.layers.greedy import greedy_steps
    from relu_gating.search.options import BranchAndBoundOptions

    Phi, U, _, _ = case_problem(case)
    saved = []
    for st in greedy_steps(Phi, U, steps, strategy="branch-and-bound", max_seconds=budget,
                           options=BranchAndBoundOptions(workers=1)):
        r = st.result
        saved.append({"theta": r.theta, "value": float(r.value), "upper_bound": float(r.upper_bound),
                      "certified": bool(r.certified), "tree": r.tree["nodes"], "cpu": st.cpu_seconds,
                      "candidates": getattr(r.certificate, "candidates", None), "nodes": int(r.n_nodes)})
        print(json.dumps({k: saved[-1][k] for k in ("value", "upper_bound", "certified", "cpu", "nodes")}), flush=True)
        Path(out).write_bytes(pickle.dumps(saved))


def _features(Phi: np.ndarray, layer: list, step: int) -> np.ndarray:
    H = np.ones((Phi.shape[0], 1))
    for r in layer[: step - 1]:
        H = np.c_[H, np.maximum(Phi @ r["theta"], 0)]
    return H


def _search(Phi: np.ndarray, U: np.ndarray, H: np.ndarray, guide, starts):
    from relu_gating.search.bnb._api import _seed_incumbent, _starts, _use_guide
    from relu_gating.search.bnb._search import Search
    from relu_gating.search.objectives import make_objective, with_rank
    from relu_gating.search.proofs import exact_rank

    obj = make_objective(Phi, U, H)
    obj = with_rank(obj, exact_rank(obj.Phi))
    s = Search(obj, 1.0, 1e-9, "auto", 0, True)
    _use_guide(s, obj, guide)
    _seed_incumbent(s, obj, 0, _starts(starts, Phi.shape[1]))
    return s


def _run(s, cpu: float, marks=(), snap=None) -> str:
    """``s.run`` until ``cpu`` CPU seconds of this process from now; ``snap()`` at each of ``marks``."""
    from relu_gating.patterns import single_thread_blas

    c0, todo = time.process_time(), list(marks)

    class Clock:
        def update(self, n, note=None):
            c = time.process_time() - c0
            if todo and c >= todo[0]:
                while todo and c >= todo[0]:
                    todo.pop(0)
                snap(c)
            if c >= cpu:
                raise KeyboardInterrupt

    with single_thread_blas():
        return s.run(None, Clock())


def _quartiles(a) -> list:
    return [float(x) for x in np.percentile(a, [0, 25, 50, 75, 100])] if len(a) else []


def heap_snapshot(s, cpu: float) -> dict:
    """The open heap of a search: its largest bound, alpha, size, undecided rows and depths."""
    heap = [e[-1] for e in s.heap]
    u = float(s.global_bound()) if heap else float("nan")
    und = [int(np.count_nonzero((n.signs == 0) & ~s.P.zero_rows)) for n in heap if n.signs is not None]
    return {"cpu": cpu, "u": u, "best": float(s.best_value), "alpha": float(s.best_value / u) if heap else 1.0,
            "open": len(heap), "open_above_best": int(sum(n.claim > s.best_value for n in heap)),
            "undecided": _quartiles(und), "depth": _quartiles([n.depth for n in heap]),
            "guided_open": int(sum(n.guide is not None for n in heap)), "expansions": int(s.expansions),
            "stats": {k: v for k, v in s.stats.items() if not k.startswith(("lifted_tried_", "lifted_settled_"))}}


def layer_guide(Phi: np.ndarray, layer: list, upto: int):
    """The merged guide of the layer's steps before ``upto`` (as ``greedy_steps`` hands it on)."""
    from relu_gating.search.bnb import merge_guides, tree_guide

    g = None
    for r in layer[: upto - 1]:
        g = merge_guides(tree_guide(r["tree"], Phi), g)
    return g


def _cands(r: dict):
    """A step's candidates (``build`` saves them as ``candidates``; other layer files as ``cands``)."""
    got = r.get("candidates", r.get("cands"))
    return [] if got is None else list(got)


def _step_search(Phi: np.ndarray, U: np.ndarray, layer: list, step: int, guided: bool):
    """Step ``step``'s search on the layer's features: the previous step's candidates as starts and, when
    ``guided``, its tree as the guide (as ``greedy_steps`` runs it)."""
    from relu_gating.search.bnb import tree_guide

    prev = layer[step - 2]
    starts = [c for c in _cands(prev) if not np.array_equal(c, prev["theta"])][:32]
    guide = tree_guide(prev["tree"], Phi) if guided else None
    return _search(Phi, U, _features(Phi, layer, step), guide, np.array(starts) if starts else None)


def fixed_child(case: str, layer: list, step: int, cpu: float) -> dict:
    """Step ``step`` without a guide for ``cpu`` CPU seconds of this process: expansions, nodes, alpha, counters."""
    from relu_gating.patterns import single_thread_blas

    Phi, U, _, _ = case_problem(case)
    s = _step_search(Phi, U, layer, step, guided=False)
    c0 = time.process_time()
    s.reserve = lambda: 2e9 if time.process_time() - c0 > cpu else 0.0  # stops the loop at the CPU budget
    with single_thread_blas():
        s.run(time.perf_counter() + 1e9)
    snap = heap_snapshot(s, time.process_time() - c0)
    keep = ("nodes", "lifted", "lifted_settled", "lifted_plain", "exact_farkas", "lp", "implied", "lifted_cost_skips")
    return {"alpha": snap["alpha"], "u": snap["u"], "best": snap["best"], "expansions": s.expansions,
            "open": snap["open"], "cpu": snap["cpu"], **{k: s.stats.get(k, 0) for k in keep}}


def guided_child(case: str, layer: list, step: int, cpu: float) -> dict:
    """Step ``step`` as the layer runs it (the previous step's tree as guide, its candidates as starts) for
    ``cpu`` CPU seconds of this process, then its tree audited (``_result``, as ``branch_and_bound`` ends)."""
    from relu_gating.search.bnb._api import _result

    Phi, U, _, _ = case_problem(case)
    c0 = time.process_time()
    s = _step_search(Phi, U, layer, step, guided=True)
    _run(s, cpu)
    spent, u = time.process_time() - c0, float(s.global_bound())
    res = _result(s.obj, s, "time", 1.0, 1e-9, spent)
    st = res.tree["stats"]
    return {"alpha": float(res.value / res.upper_bound), "value": float(res.value), "u_open": u,
            "upper": float(res.upper_bound), "certified": bool(res.certified), "cpu": spent,
            "nodes": int(st["nodes"]), "replayed": int(st.get("replayed", 0)), "expansions": int(s.expansions),
            **{k: st.get(k, 0) for k in ("lifted", "lifted_settled", "lifted_plain", "guide_entries", "collapsed")},
            "claim_uncollapsed": st.get("claim_uncollapsed")}


def checks_child(case: str, layer: list, step: int, cpu: float, tested: str) -> dict:
    """Step ``step`` as the layer runs it, serially, to settlement or ``cpu`` CPU seconds, with the search's own
    test of lifted evidence sampled (``tested="sampled"``, the default) or run on every evidence (``"all"``:
    ``_node_bounds.CHECK_FIRST`` raised): CPU seconds and the search's counters and timers."""
    from relu_gating.search.bnb import _node_bounds

    if tested == "all":
        _node_bounds.CHECK_FIRST = 10**12
    Phi, U, _, _ = case_problem(case)
    c0 = time.process_time()
    s = _step_search(Phi, U, layer, step, guided=True)
    why = _run(s, cpu)
    keep = ("nodes", "lifted", "lifted_plain", "t_lifted", "t_lifted_plain", "t_lifted_check", "t_bound", "lifted_offered",
            "lifted_checked", "lifted_unchecked", "lifted_check_failed")
    return {"tested": tested, "why": why, "cpu": time.process_time() - c0, "value": float(s.best_value),
            **{k: s.stats.get(k, 0) for k in keep}}


def settle_child(case: str, layer: list, step: int, cpu: float) -> dict:
    """Step ``step`` as the layer runs it, serially, to settlement or ``cpu`` CPU seconds: CPU seconds, the value,
    and the counters of its chambers, slivers and pointless nodes (whatever ``relu_gating`` is on the path)."""
    import relu_gating

    Phi, U, _, _ = case_problem(case)
    c0 = time.process_time()
    s = _step_search(Phi, U, layer, step, guided=True)
    why = _run(s, cpu)
    keep = ("nodes", "chambers", "pointless", "blind", "sliver_dual", "zero_tried", "t_zero", "t_chamber", "t_lifted",
            "t_bound")
    return {"library": str(Path(relu_gating.__file__).parent.parent), "why": why, "cpu": time.process_time() - c0,
            "value": float(s.best_value), **{k: s.stats.get(k, 0) for k in keep}}


def paired(args) -> list:
    """``settle_child`` on this checkout and on ``--against`` at once (one per core, ``taskset`` where there
    is one), ``--repeats`` times: the machine's pace is shared by both arms of a pair."""
    import shutil

    pin = shutil.which("taskset")
    child = ["settle-child", "--layer", args.layer, "--case", args.case, "--step", str(args.step), "--cpu", str(args.cpu)]
    runs = [(([pin, "-c", str(core)] if pin else []) + [sys.executable, __file__] + child, tree)
            for core, tree in enumerate((str(HERE.parent), args.against))]
    return _at_once(runs, args.repeats)


def _at_once(runs: list, repeats: int) -> list:
    """Each ``(command, PYTHONPATH)`` of ``runs`` started together, ``repeats`` times: the last JSON line each printed."""
    import os
    import subprocess

    rows = []
    for _ in range(repeats):
        procs = [subprocess.Popen(cmd, env={**os.environ, "PYTHONPATH": tree}, stdout=subprocess.PIPE, text=True)
                 for cmd, tree in runs]
        for p in procs:
            rows.append(json.loads(p.communicate()[0].strip().splitlines()[-1]))
            print(json.dumps(rows[-1]), flush=True)
    return rows


def checks(args) -> list:
    """``checks_child`` sampled and all-tested, both at once (one per core), ``--repeats`` times."""
    child = [sys.executable, __file__, "checks-child", "--layer", args.layer, "--case", args.case, "--step", str(args.step),
             "--cpu", str(args.cpu), "--tested"]
    return _at_once([(child + [t], str(HERE.parent)) for t in ("sampled", "all")], args.repeats)


def fixed(args) -> list:
    """``fixed_child`` (``fixed``) or ``guided_child`` (``guided``) in fresh processes, this checkout and
    ``--against`` alternately."""
    import os
    import subprocess

    here = str(HERE.parent)
    rows = []
    for r in range(args.repeats):
        for tree in ((here, args.against) if r % 2 == 0 else (args.against, here)):
            env = {**os.environ, "PYTHONPATH": tree}
            out = subprocess.run([sys.executable, __file__, f"{args.command}-child", "--layer", args.layer, "--case", args.case,
                                  "--step", str(args.step), "--cpu", str(args.cpu)], env=env, capture_output=True,
                                 text=True, check=True).stdout.strip().splitlines()[-1]
            row = {"tree": "this" if tree == here else args.against, **json.loads(out)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def profile(case: str, layer: list, step: int, cpu: float, marks: list) -> list:
    Phi, U, _, _ = case_problem(case)
    prev = layer[step - 2]
    starts = [c for c in (prev["candidates"] if prev["candidates"] is not None else [])
              if not np.array_equal(c, prev["theta"])][:32]
    s = _search(Phi, U, _features(Phi, layer, step), layer_guide(Phi, layer, step), np.array(starts) if starts else None)
    snaps: list = []

    def snap(c):
        snaps.append(heap_snapshot(s, c))
        print(json.dumps({k: v for k, v in snaps[-1].items() if k != "stats"}), flush=True)

    snap(0.0)
    _run(s, cpu, [m for m in marks if m < cpu], snap)
    snap(cpu)
    return snaps


def merge_ab(case: str, layer: list, step: int, first: float, cpu: float, order: list) -> dict:
    from relu_gating.search.bnb import merge_guides, tree_guide
    from relu_gating.search.bnb._tree_build import to_nodes

    Phi, U, _, _ = case_problem(case)
    before = layer_guide(Phi, layer, step - 1)
    if first > 0:
        s = _search(Phi, U, _features(Phi, layer, step - 1), before, None)
        _run(s, first)
        cut = tree_guide(to_nodes(s.root), Phi)
        head = {k: v for k, v in heap_snapshot(s, first).items() if k != "stats"}
    else:  # the previous step's tree as the layer's run left it (build)
        cut = tree_guide(layer[step - 2]["tree"], Phi)
        head = {k: layer[step - 2][k] for k in ("value", "upper_bound", "certified", "cpu", "nodes")}
    merged = merge_guides(cut, before)
    out = {"first": head, "plain_entries": cut.entries, "merged_entries": merged.entries, "runs": []}
    print(json.dumps({k: out[k] for k in ("plain_entries", "merged_entries")}), flush=True)
    for mode in order:
        r = _search(Phi, U, _features(Phi, layer, step), cut if mode == "plain" else merged, None)
        _run(r, cpu)
        snap = heap_snapshot(r, cpu)
        row = {"mode": mode, "alpha": snap["alpha"], "u": snap["u"], "nodes": r.stats["nodes"],
               "expansions": r.expansions, "replayed": r.stats.get("replayed", 0), "open": snap["open"]}
        out["runs"].append(row)
        print(json.dumps(row), flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=("build", "profile", "merge", "fixed", "fixed-child", "guided", "guided-child",
                                        "checks", "checks-child", "paired", "settle-child"))
    ap.add_argument("--case", default="iris")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--budget", type=float, default=900.0)
    ap.add_argument("--out")
    ap.add_argument("--layer")
    ap.add_argument("--step", type=int, default=5)
    ap.add_argument("--cpu", type=float, default=120.0)
    ap.add_argument("--first", type=float, default=30.0)
    ap.add_argument("--marks", default="5,10,20,40,80,120,160,200,300,400,600")
    ap.add_argument("--order", default="plain,merged,merged,plain")
    ap.add_argument("--save")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--against", help="fixed: a checkout directory run alternately with this one")
    ap.add_argument("--tested", default="sampled", choices=("sampled", "all"), help="checks-child: the lifted evidence tested")
    args = ap.parse_args(argv)
    if args.command == "build":
        if not args.out:
            ap.error("build needs --out")
        build(args.case, args.steps, args.budget, args.out)
        return 0
    if not args.layer:
        ap.error(f"{args.command} needs --layer (a file written by build)")
    import os

    load0 = list(os.getloadavg())
    layer = pickle.loads(Path(args.layer).read_bytes())
    if args.command == "checks-child":
        print(json.dumps(checks_child(args.case, layer, args.step, args.cpu, args.tested), default=float))
        return 0
    if args.command == "settle-child":
        print(json.dumps(settle_child(args.case, layer, args.step, args.cpu), default=float))
        return 0
    if args.command in ("fixed-child", "guided-child"):
        child = fixed_child if args.command == "fixed-child" else guided_child
        print(json.dumps(child(args.case, layer, args.step, args.cpu), default=float))
        return 0
    if args.command in ("fixed", "guided"):
        if not args.against:
            ap.error(f"{args.command} needs --against (a checkout directory)")
        res = fixed(args)
    elif args.command == "checks":
        res = checks(args)
    elif args.command == "paired":
        if not args.against:
            ap.error("paired needs --against (a checkout directory)")
        res = paired(args)
    elif args.command == "profile":
        res = profile(args.case, layer, args.step, args.cpu, [float(x) for x in args.marks.split(",")])
    else:
        res = merge_ab(args.case, layer, args.step, args.first, args.cpu, args.order.split(","))
    if args.save:
        import os
        import subprocess

        commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        Path(args.save).write_text(json.dumps({"argv": sys.argv[1:], "command": "python benchmarks/greedy_late.py "
                                               + " ".join(sys.argv[1:]), "commit": commit, "load_start": load0,
                                               "load_end": list(os.getloadavg()), "result": res}, indent=1, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
