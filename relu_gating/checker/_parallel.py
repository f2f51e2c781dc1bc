"""Verify's walk of a large tree in parts, on the cores this process may use (private).

Loaded only for a tree of at least :data:`relu_gating.checker._verify.PARALLEL_NODES` nodes and more
than one worker.  The checker's own (it shares nothing with the search it checks): subtrees of about
``1 / (TASKS_PER_WORKER W)`` of the nodes each are walked by :func:`relu_gating.checker._tree.walk` in
``W`` forked processes from the signs the whole walk reaches their root with, while this process walks
the top of the tree with each of those subtrees replaced by :data:`~relu_gating.checker._tree.PART`.
The children inherit the stated problem and the node list (nothing of the tree is pickled: a task is a
list of ``(first, end, root signs)``).

Every node is walked once, from the signs the whole walk reaches it with, so the leaves' proven bounds
are those of the whole walk; each part's walk checks its structure (one tree, no node beyond its last
leaf) and the top's walk the rest.  Leaves come back in the whole tree's numbering.  Any reason, any
malformed node (a :class:`~relu_gating.errors.CertificateError` in a part), a failed pool or a platform
without ``fork``: the whole tree is walked again serially here, so the report (reasons and their
numbering included) is the serial walk's exactly.  One BLAS thread per process.
"""

from __future__ import annotations

import multiprocessing
import os
from typing import Any

import numpy as np

from relu_gating.checker._problem import StatedProblem

__all__ = ["walk_in_parts", "split", "ends", "usable_workers", "TASKS_PER_WORKER", "MIN_PART"]

#: Subtrees per worker: their costs differ (a lifted leaf costs 10-100 node bounds), so several each.
TASKS_PER_WORKER = 4
#: A subtree of fewer nodes stays in this process's walk of the top.
MIN_PART = 64

_STATE: tuple | None = None  # (nodes, P, exact, walk) while a walk in parts runs: the forked workers inherit it


def usable_workers(workers: int | None) -> int:
    """``workers``, or every core this process may use for None (``os.sched_getaffinity``)."""
    if workers is not None:
        return workers
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def walk_in_parts(nodes: list, P: StatedProblem, exact: bool, workers: int | None, walk: Any,
                  part: Any) -> tuple[list, list[str], dict]:
    """The walk of ``nodes`` (as :func:`relu_gating.checker._tree.walk`, given as ``walk`` with its
    placeholder ``part``, the tree's size already checked: leaves, reasons, counts) in parts on ``workers``
    forked processes; serial where that cannot run or anything is wrong."""
    W = usable_workers(workers)
    if W <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return walk(nodes, P, exact)
    try:
        top, parts = split(nodes, P.n, TASKS_PER_WORKER * W)
    except Exception:  # noqa: BLE001 - a malformed tree: the serial walk says where (or raises)
        return walk(nodes, P, exact)
    got = _run(nodes, P, exact, walk, part, W, top, parts) if parts else None
    return walk(nodes, P, exact) if got is None else got


def _run(nodes: list, P: StatedProblem, exact: bool, walk: Any, part: Any, W: int, top: list[int],
         parts: list) -> tuple | None:
    """The parts on a fork pool of ``W`` and the top here: the merged walk, or None on any reason or failure."""
    from concurrent.futures import ProcessPoolExecutor

    from relu_gating._runtime.blas_limit import limited_blas

    global _STATE
    _STATE = (nodes, P, exact, walk)
    try:
        with ProcessPoolExecutor(W, mp_context=multiprocessing.get_context("fork")) as pool:
            futures = [pool.submit(_walk_group, g) for g in _groups(parts, TASKS_PER_WORKER * W)]
            with limited_blas(1):
                leaves, reasons, counts = walk([nodes[i] if i >= 0 else part for i in top], P, exact)
            leaves = [(top[j], c, p) for j, c, p in leaves]
            for f in futures:
                if reasons:  # the serial walk redoes it all: the work left is not started
                    f.cancel()
                    continue
                idx, claims, proven, reasons, cnt = f.result()
                leaves += zip(idx.tolist(), claims.tolist(), proven.tolist())
                counts = {k: counts[k] + cnt[k] for k in counts}
    except Exception:  # noqa: BLE001 - a malformed node in a part, a lost worker, no pool: the serial walk
        return None
    finally:
        _STATE = None
    if reasons:
        return None
    leaves.sort(key=lambda t: t[0])
    return leaves, [], counts


def _walk_group(group: list) -> tuple:
    """The task (in a forked worker): the walk of each ``(first, end, signs)`` of ``group``, leaves in the
    whole tree's numbering as arrays, the reasons (any: the whole walk is redone), the counts."""
    from relu_gating._runtime.blas_limit import limited_blas

    nodes, P, exact, walk = _STATE
    out, reasons, counts = [], [], {"split": 0, "implied": 0, "leaves": 0}
    with limited_blas(1):
        for first, end, signs in group:
            got, why, cnt = walk(nodes[first:end], P, exact, start=signs)
            out += [(first + i, c, p) for i, c, p in got]
            reasons += why
            counts = {k: counts[k] + cnt[k] for k in counts}
            if why:
                break
    idx, claims, proven = (np.array(col) for col in zip(*out)) if out else (np.zeros(0, int),) + (np.zeros(0),) * 2
    return idx, claims, proven, reasons, counts


def _groups(parts: list, tasks: int) -> list[list]:
    """The subtrees ``parts`` (``(first, end, signs)``, preorder) as about ``tasks`` consecutive groups of
    similar node counts."""
    size = max(1, sum(end - first for first, end, _ in parts) // max(1, tasks))
    groups: list[list] = [[]]
    count = 0
    for part in parts:
        if count >= size:
            groups.append([])
            count = 0
        groups[-1].append(part)
        count += part[1] - part[0]
    return [g for g in groups if g]


def ends(nodes: list) -> list[int]:
    """For each node of a preorder tree, the index just past its subtree (ValueError: not one tree)."""
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


def split(nodes: list, n: int, parts: int) -> tuple[list[int], list[tuple]]:
    """``(top, subtrees)``: subtrees of at most ``len(nodes) / parts`` nodes (at least ``MIN_PART``) as
    ``(first, end, root signs)`` in preorder, and the top as the indices of its nodes in preorder, ``-1``
    where a subtree is left out.  The signs are those the walk reaches the subtree's root with when the top
    is well formed (its walk checks that; rows of ``Phi`` that are 0 the walk fixes itself)."""
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
        if not 0 <= row < n:
            raise ValueError("a row off the range")  # (a negative index would name another row)
        if node[0] == "s":
            plus, minus = signs.copy(), signs.copy()
            plus[row], minus[row] = 1, -1
            stack += [(end[idx + 1], minus), (idx + 1, plus)]
        else:  # "i": the implied sign
            child = signs.copy()
            child[row] = int(node[2])
            stack.append((idx + 1, child))
    return top, out
