"""Parallel branch and bound (private): independent subtrees on an executor, one shared incumbent.

The main process runs the best-first search (:class:`~relu_gating.search.bnb._search.Search`)
until ``FRONTIER_PER_WORKER`` open nodes per worker wait on its heap.  Then it keeps one task per
worker in flight: a task takes the open nodes of largest bound (their signs, interior points and
bounds), the incumbent neuron and a time slice; the worker runs the same best-first search on
those subtrees, pruning against the incumbent it was given and every better neuron it finds, and
returns each subtree in preorder (the nodes still open at the end of its slice with their signs)
and its best neuron.  The main process grafts each subtree in place of its root, pushes the
returned open nodes on its heap, keeps the better incumbent and sends it with the next task:
the incumbent is shared between tasks (a round trip per slice), not within one.

Nothing here is trusted: a grafted node is an ordinary node of the one tree certificate, checked
by :func:`relu_gating.verify` like every other.  A subtree whose task has not come back (time
budget, Ctrl-C, the search settled first) keeps its root as an open node, written as a leaf with
its bound, so the tree is a valid certificate of the alpha reached at every stop.

Executors: a ``concurrent.futures.Executor`` (threads or processes; the objective, a few
hundred kB at most, travels with each task) or a ``dask.distributed.Client`` (the objective is
scattered to every worker once).  Without one, :func:`run_executor` gives the search a
:class:`~relu_gating._runtime.executors.LocalPool` of every usable core (``workers=`` fewer; 1 serial): its
processes start only when ``SERIAL_SECONDS`` of serial search have not settled the query, and end
with the call.  The audit of the finished tree runs on the same executor
(:func:`relu_gating.search.bnb._audit.audit_tree`).
"""

from __future__ import annotations

import contextlib
import gc
import heapq
import math
import time
from typing import Any, Iterator

import numpy as np

from relu_gating.patterns import single_thread_blas
from relu_gating.search.bnb._audit import audit_workers
from relu_gating.search.bnb._budget import SLOWDOWN_MAX, SLOWDOWN_MIN_WALL, slowdown
from relu_gating.search.bnb._search import FREEZE_EVERY, Search
from relu_gating.search.bnb._tallies import learnt, merge, seed as seed_tallies, tallies
from relu_gating.search.bnb._tree_build import Node

__all__ = ["run_parallel", "run_executor", "check_workers", "subtree_task", "FRONTIER_PER_WORKER", "SLICE_SECONDS",
           "SERIAL_SECONDS"]

#: Open nodes per worker on the main heap before any subtree is shipped.
FRONTIER_PER_WORKER = 4
#: The main process ships subtrees after this many seconds of serial search, whatever the frontier.
SERIAL_SECONDS = 2.0
#: Seconds of search per task: the incumbent is shared between tasks, at least this often.
SLICE_SECONDS = 1.0
#: Most open nodes a task takes from the main heap.
MAX_TASK_NODES = 64
#: After the time budget, seconds to wait for the tasks in flight (their slices end at the budget).
DRAIN_SECONDS = 1.0
_POLL = 0.1
#: Tasks grafted between two ``gc.freeze()`` calls of the main process (``FREEZE_EVERY`` expansions serially).
FREEZE_TASKS = 16


# ---------------------------------------------------------------------- the best-first loop
def expand_until(search: Search, end: float | None, bar: Any = None, pause: Any = None, keep: bool = False) -> str:
    """Expand the open node of largest bound until the heap is settled (``"settled"``), the
    clock passes ``end`` (less :meth:`Search.reserve` with ``keep``: ``"time"``) or ``pause()`` holds
    (``"paused"``); Ctrl-C: ``"interrupted"``.  The same loop as :meth:`Search.run`, without pushing the root."""
    from relu_gating._runtime.interrupt import check_stop

    try:
        while search.heap:
            check_stop()
            if end is not None and time.perf_counter() >= end - (kept := search.reserve() if keep else 0.0):
                if keep:
                    search.stats["t_reserve"] = kept
                return "time"
            if end is not None and keep:
                search.chamber_until = end - kept
            u = search.global_bound()
            if search.settled(u):
                return "settled"
            if pause is not None and pause():
                return "paused"
            search.expand_timed(heapq.heappop(search.heap)[-1])
            if bar is not None:
                bar.update(1, note=_note(search, u))
    except KeyboardInterrupt:
        return "interrupted"
    return "settled"


def _note(search: Search, u: float, busy: int = 0) -> str:
    extra = f"  tasks {busy}" if busy else ""
    return search.progress_note(u) + extra


# ---------------------------------------------------------------------- subtrees as flat lists
def _open_data(node: Node) -> tuple:
    return (node.signs, node.v, node.z, float(node.claim), float(node.bound), int(node.depth), node.evidence,
            node.guide)


def _open_node(data: tuple) -> Node:
    signs, v, z, claim, bound, depth, evidence = data[:7]
    node = Node(signs, v, claim, z, depth)
    node.bound, node.evidence = bound, evidence  # a claim lowered by lifted evidence keeps it
    node.guide = data[7] if len(data) > 7 else None  # the replayed tree's geometry below it (bnb/_replay.py)
    return node


def flatten(root: Node) -> list[tuple]:
    """The subtree of ``root`` in preorder (``+`` child first), open nodes with their signs."""
    out, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.kind == "open":
            out.append(("open",) + _open_data(node))
            continue
        out.append((node.kind, int(node.row), int(node.sign), tuple(node.rows), float(node.claim),
                    float(node.bound), node.evidence, int(node.depth)))
        if node.kind in ("s", "i"):
            stack.extend(reversed(node.children))
    return out


def _closed(entry: tuple) -> Node:
    """The closed node ``entry`` (children added by the caller)."""
    kind, row, sign, rows, claim, bound, evidence, depth = entry
    node = Node(None, None, claim, None, depth)
    node.row, node.sign, node.rows, node.bound, node.evidence = row, sign, tuple(rows), bound, evidence
    node.kind = kind
    return node


def graft(root: Node, entries: list[tuple]) -> list[Node]:
    """Replace the open node ``root`` by the subtree ``entries`` (:func:`flatten`); returns the
    subtree's open nodes (``root`` itself when the task left it open).

    The subtree is built apart and ``root`` changes kind last: interrupted before that, ``root``
    is still an open node (a leaf with its bound)."""
    if entries[0][0] == "open":
        root.v = entries[0][2]  # the same node, perhaps with more interior points
        if entries[0][7] is not None:  # its lifted bound tried there (a lowered claim with its evidence)
            root.claim, root.evidence = entries[0][4], entries[0][7]
        return [root]
    top = _closed(entries[0])
    opened: list[Node] = []
    stack = [(top, 2 if top.kind == "s" else 1)] if top.kind in ("s", "i") else []
    for entry in entries[1:]:
        if not stack:
            raise ValueError("a returned subtree has nodes beyond its last leaf")
        node = _open_node(entry[1:]) if entry[0] == "open" else _closed(entry)
        if node.kind == "open":
            opened.append(node)
        parent, need = stack[-1]
        parent.children.append(node)
        if len(parent.children) == need:
            stack.pop()
        if node.kind in ("s", "i"):
            stack.append((node, 2 if node.kind == "s" else 1))
    if stack:
        raise ValueError("a returned subtree is truncated")
    root.row, root.sign, root.rows, root.children = top.row, top.sign, top.rows, top.children
    root.claim, root.bound, root.evidence = top.claim, top.bound, top.evidence
    root.settle(top.kind)
    return opened


# ---------------------------------------------------------------------- the worker's side
def subtree_task(obj: Any, roots: list[tuple], incumbent: np.ndarray | None, alpha: float, tol: float,
                 method: str, seed: int, seconds: float, lifted: bool = True, delay: int = 0,
                 probes: int = 0, small: bool = False, left: float | None = None, carry: dict | None = None) -> tuple:
    """Best-first search of the subtrees below ``roots`` (open-node data) for ``seconds``.

    ``left``: seconds until the whole search must stop (the sender's deadline less its reserve; None: no
    budget): a chamber's solve ends by then (``Search.chamber_until``), not only by ``CHAMBER_SECONDS``.

    ``delay``, ``probes`` and ``small``: what the sender leaves of the lifted bound's delay (nodes), of
    its probes, and whether they ended it for small nodes (:func:`_delay`; ``_node_bounds.LIFTED_DELAY_NODES``).

    ``carry``: the sender's tallies of where the lifted bounds pay (:func:`relu_gating.search.bnb._tallies.tallies`):
    the task starts from them, and returns what it added (``stats["tallies"]``).

    Returns ``(subtrees, theta, stats, notes)``: each root's subtree (:func:`flatten`), the best
    neuron seen (None if none) and the counters this task added.
    """
    t0, cpu0 = time.perf_counter(), time.process_time()
    end = t0 + seconds
    search = Search(obj, alpha, tol, method, seed, lifted)
    search.lifted_costs = False  # a task is a fresh search, too short to measure its splits (bnb/_subtree.py)
    search.lifted_after = search.stats["nodes"] + int(delay)  # what is left of the sender's delay, not a fresh one
    search.probe_max = int(probes)  # and of its probes (their subtrees reported: probe_would, probe_spared)
    search.lifted_small = bool(small)  # the sender's probes ended the delay for small nodes
    search.chamber_until = None if left is None else t0 + float(left)
    seed_tallies(search, carry, t0)  # the sender's tallies, not fresh ones (bnb/_tallies.py)
    base, lp0 = dict(search.stats), search.lp.calls
    if incumbent is not None:
        search.offer(incumbent)  # recomputed here: the task trusts no value it is sent
    nodes = [_open_node(r) for r in roots]
    for node in nodes:
        search.push(node)
    with single_thread_blas():  # tiny products only: extra BLAS threads just wait
        expand_until(search, end)
    for item in search.heap:
        if search.settled(item[-1].claim):
            item[-1].settle("b")
    stats = {k: v - base.get(k, 0) for k, v in search.stats.items() if isinstance(v, (int, float))}  # (some keys
    # appear on first use: stats["unproven"])
    stats["lp_calls"] = search.lp.calls - lp0
    stats.pop("lifted_delay_ended", None)  # (the sender decides from the probes reported)
    stats["probe_would"], stats["probe_spared"] = search.probe_spared()
    stats["tallies"] = learnt(search, carry)
    out = [flatten(n) for n in nodes]
    stats["task_wall"], stats["task_cpu"] = time.perf_counter() - t0, time.process_time() - cpu0
    return out, search.best_theta, stats, list(search.notes)


# ---------------------------------------------------------------------- the main process's side
class _Pool:
    """Submit :func:`subtree_task` to a ``concurrent.futures`` executor or a Dask client."""

    def __init__(self, executor: Any, obj: Any) -> None:
        self.ex = executor
        self.dask = hasattr(executor, "gather") and hasattr(executor, "scatter")
        self.obj = executor.scatter(obj, broadcast=True, hash=False) if self.dask else obj

    def submit(self, *args: Any, **kw: Any) -> Any:
        if self.dask:
            return self.ex.submit(subtree_task, self.obj, *args, pure=False, **kw)
        return self.ex.submit(subtree_task, self.obj, *args, **kw)

    def wait(self, futures: list, timeout: float) -> list:
        """The futures done within ``timeout`` seconds (at least one, unless it ran out)."""
        if not futures:
            return []
        if not self.dask:
            import concurrent.futures as cf

            return list(cf.wait(futures, timeout=timeout, return_when=cf.FIRST_COMPLETED)[0])
        stop = time.perf_counter() + timeout
        while True:
            done = [f for f in futures if f.done()]
            if done or time.perf_counter() >= stop:
                return done
            time.sleep(0.005)


def workers_of(executor: Any) -> int:
    from relu_gating._runtime.executors import workers_of as count

    return count(executor)


def check_workers(workers: Any) -> None:
    """Reject a ``workers`` that is not None or a positive integer, naming the argument."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1):
        from relu_gating.errors import InputError

        raise InputError(f"workers must be a positive integer or None (every usable core), got {workers!r}")


@contextlib.contextmanager
def run_executor(executor: Any, workers: int | None) -> Iterator[Any]:
    """The executor a branch and bound runs on: ``executor`` when given (the caller's, left open);
    else None for one worker, or a :class:`~relu_gating._runtime.executors.LocalPool` of ``workers`` processes
    (None: every usable core, where the platform can fork them without re-importing the caller's
    script; elsewhere one unless ``workers`` says more), ended when the block ends, Ctrl-C included."""
    from relu_gating._runtime.executors import LocalPool, local_context
    from relu_gating._runtime.threads import usable_cores

    check_workers(workers)
    if executor is not None:
        yield executor
        return
    count = (usable_cores() if local_context() is not None else 1) if workers is None else int(workers)
    if count <= 1:
        yield None
        return
    with LocalPool(count) as pool:
        yield pool


def _take(search: Search, k: int) -> list[Node]:
    """Up to ``k`` open nodes of largest bound off the heap (settled ones become leaves)."""
    out: list[Node] = []
    while search.heap and len(out) < k:
        node = heapq.heappop(search.heap)[-1]
        if search.settled(node.claim):
            node.settle("b")
        else:
            out.append(node)
    return out


def _absorb(search: Search, batch: list[Node], answer: tuple, totals: dict) -> int:
    """Graft a task's subtrees, push their open nodes, take its incumbent; returns nodes added."""
    subtrees, theta, stats, notes = answer
    merge(search, stats.pop("tallies", None))
    for root, entries in zip(batch, subtrees):
        for node in graft(root, entries):
            search.push(node)
    if theta is not None:
        search.offer(theta)
    for key, val in stats.items():
        if key == "lp_calls":
            search.lp.calls += int(val)
        elif key not in ("task_wall", "task_cpu"):
            search.stats[key] = search.stats.get(key, 0) + val
    search.notes.extend(notes)
    totals["task_wall"] = totals.get("task_wall", 0.0) + stats.get("task_wall", 0.0)
    totals["task_cpu"] = totals.get("task_cpu", 0.0) + stats.get("task_cpu", 0.0)
    if totals["task_wall"] >= SLOWDOWN_MIN_WALL and totals["task_cpu"] > 0:  # the workers' wall over CPU seconds
        search.slowdown_fixed = min(SLOWDOWN_MAX, max(1.0, totals["task_wall"] / totals["task_cpu"]))
    totals["tasks"] += 1
    totals["grafted"] += int(stats.get("nodes", 0))
    return int(stats.get("nodes", 0))


def _delay(search: Search, workers: int) -> tuple[int, int, bool]:
    """What a task gets of the delay of the lifted bound: the nodes left of it, a share of the probes left
    (``bnb/_subtree.py``) while any nodes are left and the probes have not ended it, and whether they have."""
    left = search.lifted_delay_left()
    probes = max(0, search.probe_max - int(search.stats.get("probe", 0)))
    return left, (math.ceil(probes / workers) if left and not search.lifted_small else 0), search.lifted_small


def _bound_in_flight(search: Search, inflight: dict) -> float:
    top = max((n.claim for batch in inflight.values() for n in batch), default=-np.inf)
    return max(search.global_bound(), top)


def run_parallel(search: Search, executor: Any, deadline: float | None, bar: Any = None, seed: int = 0) -> str:
    """What :meth:`Search.run` does, with subtrees searched on ``executor``; returns
    ``"settled"``, ``"time"`` or ``"interrupted"``.  The tree is grafted into ``search.root``;
    every node not settled when it returns stays open (a leaf with its bound)."""
    own = gc.get_freeze_count() == 0  # as Search.run: the collector kept off the tree built so far
    try:
        return _run_parallel(search, executor, deadline, bar, seed, own)
    finally:
        if own:
            gc.unfreeze()


def _run_parallel(search: Search, executor: Any, deadline: float | None, bar: Any, seed: int, own: bool) -> str:
    W = workers_of(executor)
    lazy = bool(getattr(executor, "lazy", False))  # a pool of our own: started only if the serial phase has not settled
    t0 = time.perf_counter()
    totals: dict[str, float] = {"tasks": 0, "submitted": 0, "grafted": 0, "workers": W}
    search.stats.update({f"parallel_{k}": v for k, v in totals.items()})  # also when the budget ends first
    search.push(search.root)

    def pause() -> bool:
        if own and search.expansions % FREEZE_EVERY == 0:
            gc.freeze()
        return (not lazy and len(search.heap) >= FRONTIER_PER_WORKER * W) or time.perf_counter() - t0 >= SERIAL_SECONDS

    why = expand_until(search, deadline, bar, pause, keep=True)
    if why != "paused":
        return why
    totals["serial"] = time.perf_counter() - t0  # (the tasks' clock for the lifted bounds' shares starts from it)
    search.audit_workers = audit_workers(executor)  # the audit runs there too: Search.reserve keeps less
    search.slowdown_fixed = slowdown(search)  # this process mostly waits from now on: the workers' from their tasks
    pool = _Pool(executor, search.obj)
    inflight: dict = {}
    try:
        why = _rounds(search, pool, inflight, totals, deadline, bar, seed, own)
        if why == "time" and inflight:
            _drain(search, pool, inflight, totals, executor)
    except KeyboardInterrupt:
        why = "interrupted"
    finally:
        for fut, batch in inflight.items():  # not back: their roots stay open nodes
            fut.cancel()
            for node in batch:
                search.push(node)
        search.stats.update({f"parallel_{k}": v for k, v in totals.items()})
    return why


def _drain(search: Search, pool: _Pool, inflight: dict, totals: dict, executor: Any) -> None:
    """At the time budget: take what the tasks in flight found (their slices end with it) for up to
    ``DRAIN_SECONDS``; a task still running then is one long expansion past its slice: a pool of our own
    is renewed (that worker ended) so that it does not hold a core through the audit (issue 39)."""
    t0 = time.perf_counter()
    stop = t0 + DRAIN_SECONDS
    while inflight and time.perf_counter() < stop:
        for fut in pool.wait(list(inflight), stop - time.perf_counter()):
            _absorb(search, inflight.pop(fut), fut.result(), totals)
    late = [fut for fut in inflight if not fut.done()]
    if late and hasattr(executor, "renew"):
        executor.renew()
    totals["late"] = len(late)
    totals["drain"] = time.perf_counter() - t0


def _rounds(search: Search, pool: _Pool, inflight: dict, totals: dict, deadline: float | None, bar: Any,
            seed: int, own: bool = False) -> str:
    """Keep one task per worker in flight until settled, out of time or interrupted."""
    from relu_gating._runtime.interrupt import check_stop

    W = totals["workers"]
    while True:
        check_stop()
        now = time.perf_counter()
        keep = 0.0 if deadline is None else search.reserve()
        stop = None if deadline is None else deadline - keep  # the tasks' slices end there too
        if stop is not None and now >= stop:
            search.stats["t_reserve"] = keep  # kept for the ending (benchmarks/budget.py: against what it took)
            return "time"
        u = _bound_in_flight(search, inflight)
        if (not search.heap and not inflight) or search.settled(u):
            return "settled"
        while len(inflight) < W and search.heap:
            k = min(MAX_TASK_NODES, math.ceil(len(search.heap) / (W - len(inflight))))
            batch = _take(search, k)
            if not batch:
                break
            budget = SLICE_SECONDS if stop is None else max(0.0, min(SLICE_SECONDS, stop - now))
            fut = pool.submit([_open_data(n) for n in batch], search.best_theta, search.alpha, search.tol,
                              search.method, seed + 1 + totals["submitted"], budget, search.lifted,
                              *_delay(search, W), None if stop is None else max(0.0, stop - now),
                              carry=tallies(search, totals["serial"] + totals.get("task_wall", 0.0)))
            totals["submitted"] += 1
            inflight[fut] = batch
        timeout = _POLL if deadline is None else max(0.0, min(_POLL, deadline - time.perf_counter()))
        for fut in pool.wait(list(inflight), timeout):
            added = _absorb(search, inflight.pop(fut), fut.result(), totals)
            if own and totals["tasks"] % FREEZE_TASKS == 0:  # the grafted tree is acyclic: keep the collector off it
                gc.freeze()
            if bar is not None:
                bar.update(added, note=_note(search, _bound_in_flight(search, inflight), len(inflight)))
