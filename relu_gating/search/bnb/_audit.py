"""The checker's view of a finished tree (private): the search claims what the checker proves.

The branch and bound bounds its nodes in its own orthonormal basis of ``col(Phi)``; the checker
bounds them from ``Phi``'s own columns with proven projector gaps.  Before the tree is returned,
it is walked by the checker (:func:`relu_gating.checker.walk_tree`, float mode: what ``verify``
runs).  A leaf whose claim the checker does not confirm (beyond ``BOUND_SLACK``) is raised to the
bound the checker proves; a ``b`` leaf whose node bound the checker proves lower is lowered to it
(that bound does not depend on the claim, so the checker proves the same value again); a tree the
checker refuses outright is reported, not certified.  So the search's ``certified`` and
``verify``'s agree by construction.

On an executor of several workers (the search's own) a large tree is walked in parts
(:func:`split_tree`): subtrees of about ``1 / (TASKS_PER_WORKER W)`` of the nodes each are walked
on the workers from their root's signs, while the main process walks the top of the tree with each
of those subtrees replaced by a leaf (whose result is dropped).  Every node is walked once, from the
signs the whole walk would reach it with, so the leaves' proven bounds are those of the whole walk.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np

from relu_gating._runtime.collector import paused_gc
from relu_gating._runtime.threads import blas_threads

__all__ = ["audit_tree", "audit_workers", "split_tree", "walk_parts", "PARALLEL_MIN_NODES", "TASKS_PER_WORKER", "MIN_PART",
           "AUDIT_BLAS_THREADS"]

#: BLAS threads of the audit (per process; its products are small: a lifted leaf's is at most a few
#: hundred square).  Measured on a clustered 400 x 3 tree (86,816 nodes, 264 lifted leaves), the other
#: core busy: 4.0 s with one thread against 28-32 s with two (``benchmarks/bnb_cores.py --audit``).
AUDIT_BLAS_THREADS = 1

#: Trees of fewer nodes are walked in the main process alone.
PARALLEL_MIN_NODES = 2000
#: Subtrees per worker: their costs differ (a lifted leaf costs 10-100 node bounds), so several each.
TASKS_PER_WORKER = 4
#: A subtree of fewer nodes stays in the main process's walk of the top.
MIN_PART = 64
_PLACEHOLDER = ["b", 0.0]  # a well-formed leaf in place of a subtree walked elsewhere (its result is dropped)


def audit_tree(obj: Any, nodes: list, executor: Any = None) -> tuple[int, str | None]:
    """Raise, in place, the leaf claims of ``nodes`` (preorder JSON) the checker does not confirm.
    Returns ``(number raised, the checker's first refusal or None)``.  ``executor``: the search's
    (:func:`walk_parts` uses it for a large tree when it has several workers)."""
    from relu_gating.checker import BOUND_SLACK, state_problem
    from relu_gating.search._claims import _features

    features = _features(obj)
    P = state_problem(obj.Phi, obj.U_K, features)
    with blas_threads(AUDIT_BLAS_THREADS):
        leaves, reasons = walk_parts(nodes, P, (obj.Phi, obj.U_K, features), executor)
    if reasons:
        return 0, reasons[0]
    raised = 0
    for idx, claim, proven in leaves:
        if nodes[idx][0] not in ("b", "c", "d"):
            continue
        if proven > claim + BOUND_SLACK:
            nodes[idx][1] = float(np.nextafter(proven, np.inf)) if np.isfinite(proven) else float(P.M.shape[1])
            raised += 1
        elif proven < claim and nodes[idx][0] == "b":  # the checker's node bound is lower: claim it
            nodes[idx][1] = float(proven)  # (claim-free: the checker's walk proves the same value again)
    return raised, None


def walk_parts(nodes: list, P: Any, stated: tuple, executor: Any = None) -> tuple[list, list[str]]:
    """The checker's float walk of ``nodes``: ``(leaves as (index, claim, proven), reasons)``, in parts
    on ``executor`` when it has several workers (a pool of our own only if it was started: the search
    needed it; not threads) and the tree at least ``PARALLEL_MIN_NODES`` nodes.  ``stated``: ``(Phi, U_K, features)``
    from which each task states the problem again."""
    from relu_gating._runtime.executors import submit
    from relu_gating.checker import walk_tree

    W = audit_workers(executor)  # (the checker's limit on a tree's nodes, 2 (n + 1) a chamber, holds for the search's)
    if W <= 1 or len(nodes) < PARALLEL_MIN_NODES or not getattr(executor, "started", True):
        return walk_tree(nodes, P)[:2]
    try:
        top, parts = split_tree(nodes, P.n, TASKS_PER_WORKER * W)
    except (IndexError, TypeError, ValueError):  # a malformed tree: the whole walk says where
        return walk_tree(nodes, P)[:2]
    futures = []
    with paused_gc():  # (the parts go pickled: unpickled with the collector on, 10k nodes took 1.1-1.6 s, 0.15 s off)
        for group in _groups(nodes, parts, TASKS_PER_WORKER * W):
            futures.append(submit(executor, walk_subtrees, *stated, pickle.dumps(group, protocol=pickle.HIGHEST_PROTOCOL)))
    leaves, reasons, _ = walk_tree([nodes[i] if i >= 0 else _PLACEHOLDER for i in top], P)
    leaves = [(top[j], c, p) for j, c, p in leaves if top[j] >= 0]
    try:
        for fut in futures:
            idx, claims, proven, why = fut.result()
            leaves += zip(idx.tolist(), claims.tolist(), proven.tolist())
            reasons += why
    except Exception:  # noqa: BLE001 - a worker lost (a broken pool, a Dask worker gone): the whole walk here
        for fut in futures:
            fut.cancel()
        return walk_tree(nodes, P)[:2]
    return leaves, reasons


def audit_workers(executor: Any) -> int:
    """The workers of ``executor`` the audit walks subtrees on: none for threads (the walk holds the GIL
    most of the time) or in-process."""
    from concurrent.futures import ThreadPoolExecutor

    from relu_gating._runtime.executors import workers_of

    return 1 if executor is None or isinstance(executor, ThreadPoolExecutor) else workers_of(executor)


def walk_subtrees(Phi: Any, U_K: Any, features: Any, group: bytes) -> tuple:
    """The task: the checker's walk of each ``(first index, root signs, nodes)`` of the pickled ``group``:
    ``(leaf indices in the whole tree, claims, proven bounds, reasons)`` (arrays: cheap to send back)."""
    from relu_gating.checker import state_problem, walk_tree

    P = state_problem(Phi, U_K, features)
    leaves, reasons = [], []
    with paused_gc():
        parts = pickle.loads(group)
    with blas_threads(AUDIT_BLAS_THREADS):
        for first, signs, part in parts:
            got, why, _ = walk_tree(part, P, signs)
            leaves += [(first + i, c, p) for i, c, p in got]
            reasons += [_whole(first, r) for r in why]
    idx, claims, proven = (np.array(col) for col in zip(*leaves)) if leaves else (np.zeros(0, int),) + (np.zeros(0),) * 2
    return idx, claims, proven, reasons


def _whole(first: int, reason: str) -> str:
    """A reason of the walk of the subtree at node ``first`` in the whole tree's numbering."""
    head, sep, rest = reason.partition(": ")
    if sep and head.startswith("node ") and head[5:].isdigit():
        return f"node {first + int(head[5:])}: {rest}"
    return f"the subtree at node {first}: {reason}"


def _groups(nodes: list, parts: list, tasks: int) -> list[list]:
    """The subtrees ``parts`` (``(first, end, signs)``, preorder) as about ``tasks`` consecutive groups
    of ``(first, signs, nodes)`` of similar node counts."""
    total = sum(end - first for first, end, _ in parts)
    size = max(1, total // max(1, tasks))
    groups: list[list] = [[]]
    count = 0
    for first, end, signs in parts:
        if count >= size:
            groups.append([])
            count = 0
        groups[-1].append((first, signs, nodes[first:end]))
        count += end - first
    return [g for g in groups if g]


def ends(nodes: list) -> list[int]:
    """For each node of a preorder tree, the index just past its subtree."""
    end = [0] * len(nodes)
    stack: list[int] = []  # the ends of the subtrees that follow, the next one on top
    for idx in range(len(nodes) - 1, -1, -1):
        kind = nodes[idx][0]
        if kind == "s":
            stack.pop()  # the + child's; the - child's end, below it, is this subtree's too
            end[idx] = stack[-1]
        elif kind == "i":
            end[idx] = stack[-1]
        else:
            end[idx] = idx + 1
            stack.append(idx + 1)
    if len(stack) != 1 or stack[0] != len(nodes):
        raise ValueError("not one tree")
    return end


def split_tree(nodes: list, n: int, parts: int) -> tuple[list[int], list[tuple]]:
    """``(top, subtrees)``: subtrees of at most ``len(nodes) / parts`` nodes (and at least
    ``MIN_PART``) as ``(first, end, root signs)`` in preorder, and the top of the tree as the indices
    of its nodes in preorder, ``-1`` where a subtree is left out (a leaf stands there).  The signs
    are those the checker's walk reaches the subtree's root with (rows it always fixes aside)."""
    end = ends(nodes)
    target = max(MIN_PART, len(nodes) // max(1, parts))
    top: list[int] = []
    out: list[tuple] = []
    stack = [(0, np.zeros(n, dtype=np.int8))]
    while stack:
        idx, signs = stack.pop()
        size = end[idx] - idx
        if size <= target:
            if size >= MIN_PART:
                out.append((idx, end[idx], signs))
                top.append(-1)
            else:
                top.extend(range(idx, end[idx]))
            continue
        top.append(idx)
        node, row = nodes[idx], int(nodes[idx][1])
        if node[0] == "s":
            plus, minus = signs.copy(), signs.copy()
            plus[row], minus[row] = 1, -1
            stack += [(end[idx + 1], minus), (idx + 1, plus)]
        else:  # "i": the implied sign
            child = signs.copy()
            child[row] = int(node[2])
            stack.append((idx + 1, child))
    return top, out
