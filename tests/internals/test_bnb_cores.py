"""Every core by default (issue 39): the branch and bound's own process pool (started only when the
serial phase has not settled the query, ended on return, Ctrl-C included), ``workers=``, a Dask
``LocalCluster``, the audit walked in parts on the workers, and the time budget of the whole call."""

from __future__ import annotations

import contextlib
import copy
import json
import multiprocessing
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from _clock import slowdown

from relu_gating import best_neuron, verify
from relu_gating.errors import InputError
from relu_gating.search.bnb import _audit, _parallel as par
from relu_gating.search.options import BranchAndBoundOptions


def _instance(kind: str, n: int, d: int, seed: int, K: int = 3):
    rng = np.random.default_rng(seed)
    if kind == "clustered":
        centers = rng.normal(scale=3.0, size=(3, d))
        X = centers[rng.integers(0, 3, size=n)] + 0.3 * rng.normal(size=(n, d))
    else:
        X = rng.normal(size=(n, d))
    return np.c_[X, np.ones(n)], np.linalg.qr(rng.normal(size=(n, K)))[0]


@pytest.fixture
def early(monkeypatch):
    """The pool starts after 0.1 s of serial search (2 s by default: these queries settle before)."""
    monkeypatch.setattr(par, "SERIAL_SECONDS", 0.1)
    monkeypatch.setattr(par, "SLICE_SECONDS", 0.2)


def _verified(res, Phi, U, features="bias"):
    rep = verify(json.loads(json.dumps(res.to_dict())), Phi, U, features)
    assert rep.valid, rep.reasons
    assert rep.certified == res.certified
    return res


def _children() -> list:
    return [p for p in multiprocessing.active_children() if p.is_alive()]


# ---------------------------------------------------------------------- workers: the same answer
def test_one_two_and_default_workers_give_the_same_certified_answer(early):
    """1 worker (serial), 2 and the default (every usable core) on the search's own pool: the same
    value and certified, each certificate verified, no process left behind; the enumeration agrees."""
    Phi, U = _instance("gauss", 14, 2, 3)
    enum = best_neuron(Phi, U, strategy="enumerate")
    runs = {w: _verified(best_neuron(Phi, U, strategy="branch-and-bound", options=BranchAndBoundOptions(workers=w)),
                         Phi, U) for w in (1, 2, None)}
    assert enum.certified and all(r.certified for r in runs.values())
    for r in runs.values():
        assert abs(r.value - enum.value) <= 1e-9
    assert "parallel_workers" not in runs[1].tree["stats"]  # serial: no pool
    assert runs[2].tree["stats"]["parallel_workers"] == 2 and runs[2].tree["stats"]["parallel_tasks"] >= 1
    assert _children() == []


def test_dask_local_cluster_same_certified_answer(early):
    """``executor=Client(LocalCluster(...))``: the same certified answer, the certificate verified."""
    from dask.distributed import Client, LocalCluster

    Phi, U = _instance("gauss", 14, 2, 3)
    serial = best_neuron(Phi, U, strategy="branch-and-bound", options={"workers": 1})
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        res = _verified(best_neuron(Phi, U, strategy="branch-and-bound", executor=client), Phi, U)
    assert res.certified and abs(res.value - serial.value) <= 1e-9
    assert res.tree["stats"]["parallel_workers"] == 2 and res.tree["stats"]["parallel_tasks"] >= 1


@pytest.mark.slow  # worker processes of their own: several seconds to start
def test_dask_local_cluster_of_processes(early):
    from dask.distributed import Client, LocalCluster

    Phi, U = _instance("clustered", 16, 2, 24)
    serial = best_neuron(Phi, U, strategy="branch-and-bound", options={"workers": 1})
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        res = _verified(best_neuron(Phi, U, strategy="branch-and-bound", executor=client), Phi, U)
    assert res.certified and abs(res.value - serial.value) <= 1e-9


class _PoolStarted(Exception):
    pass


def test_an_easy_query_starts_no_process(monkeypatch):
    """Settled within the serial phase: the pool of every core is never made (not made up front, and the
    frontier alone does not start it: the pool is lazy).  No wall clock decides the outcome: the serial
    phase's time switch (``SERIAL_SECONDS``, wall time) is set out of reach, so a loaded machine cannot
    start the pool; the control (the switch at 0) shows that a pool start does reach the refusal."""
    from relu_gating._runtime.executors import LocalPool

    def refuse(self):
        raise _PoolStarted("a process pool was started")

    monkeypatch.setattr(LocalPool, "executor", refuse)
    monkeypatch.setattr(par, "SERIAL_SECONDS", 3600.0)
    Phi, U = _instance("gauss", 10, 2, 1)
    res = best_neuron(Phi, U, strategy="branch-and-bound")
    assert res.certified and res.tree["stats"].get("parallel_tasks", 0) == 0  # (the refusal above is the check)
    monkeypatch.setattr(par, "SERIAL_SECONDS", 0.0)  # the control: the serial phase ends at once
    with pytest.raises(_PoolStarted):
        best_neuron(Phi, U, strategy="branch-and-bound")


def test_an_explicit_executor_wins_over_workers(early):
    Phi, U = _instance("gauss", 12, 2, 1)
    with ThreadPoolExecutor(3) as ex:
        res = best_neuron(Phi, U, strategy="branch-and-bound", executor=ex, options={"workers": 1})
    assert res.tree["stats"]["parallel_workers"] == 3 and res.certified


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_bad_workers_are_refused_naming_the_argument(bad):
    from relu_gating.search.bnb import branch_and_bound

    with pytest.raises(InputError, match="workers"):
        BranchAndBoundOptions(workers=bad)
    Phi, U = _instance("gauss", 8, 2, 1)
    with pytest.raises(InputError, match="workers"):
        branch_and_bound(Phi, U, workers=bad)


# ---------------------------------------------------------------------- the pool ends with the call
def test_ctrl_c_ends_the_run_and_its_processes(early, monkeypatch):
    """Ctrl-C (the flag the command line sets) in the parallel phase: a valid certificate of the
    alpha reached, and the pool's processes are gone when the call returns."""
    from relu_gating._runtime import executors
    from relu_gating._runtime.interrupt import STOP

    Phi, U = _instance("gauss", 40, 2, 14)
    submit = executors.LocalPool.submit

    def submit_then_stop(self, fn, *args, **kwargs):  # Ctrl-C once the parallel phase has begun
        future = submit(self, fn, *args, **kwargs)
        STOP.set()
        return future

    monkeypatch.setattr(executors.LocalPool, "submit", submit_then_stop)
    try:
        res = best_neuron(Phi, U, strategy="branch-and-bound", options={"workers": 2})
    finally:
        STOP.clear()
    assert res.tree["stats"]["stop"] == "interrupted"
    _verified(res, Phi, U)
    assert _children() == []


def test_an_exception_in_the_call_leaves_no_process(early, monkeypatch):
    """KeyboardInterrupt raised while the tree is audited (on the workers): it propagates, and the
    pool's processes are ended all the same."""
    from relu_gating.search.bnb import _api

    def boom(*args, **kwargs):
        assert _children(), "the pool should be running here"
        raise KeyboardInterrupt

    monkeypatch.setattr(_api, "audit_tree", boom)
    Phi, U = _instance("gauss", 20, 2, 2)
    with pytest.raises(KeyboardInterrupt):
        best_neuron(Phi, U, strategy="branch-and-bound", options={"workers": 2})
    assert _children() == []


def test_local_pool_close_ends_busy_workers():
    from relu_gating._runtime.executors import LocalPool

    pool = LocalPool(2)
    assert not pool.started
    futs = [pool.submit(time.sleep, 30) for _ in range(3)]
    time.sleep(0.3)
    t = time.perf_counter()
    pool.close()
    assert time.perf_counter() - t < 15.0 and _children() == [] and not pool.started  # not the tasks' 30 s
    assert futs[-1].cancelled() or futs[-1].done()
    pool.close()  # idempotent


def _spin(seconds: float) -> int:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
    return 1


def test_close_ends_workers_forked_under_the_command_lines_sigterm_handler():
    """The command line's SIGTERM handler (raise KeyboardInterrupt, installed by ``run_interruptible``
    while the query's thread forks the pool) must not reach the workers: a busy worker would catch it
    as its task's error and live on after :meth:`LocalPool.close` (CI saw one left behind)."""
    import signal

    from relu_gating._runtime.executors import LocalPool
    from relu_gating._runtime.interrupt import _raise_interrupt

    old = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        pool = LocalPool(2)
        futs = [pool.submit(_spin, 30) for _ in range(4)]
        time.sleep(0.5)
        t = time.perf_counter()
        pool.close()
    finally:
        signal.signal(signal.SIGTERM, old)
    assert _children() == [] and time.perf_counter() - t < 15.0
    assert not any(f.done() and not f.cancelled() and f.exception() is None for f in futs)  # none ran to its end


# ---------------------------------------------------------------------- the audit in parts
@pytest.fixture(scope="module")
def tree():
    """A serial search's tree with every kind of node (splits, implied rows, b, c and d leaves: the lifted
    bound without its delay)."""
    from relu_gating.search.bnb import branch_and_bound
    from relu_gating.search.bnb._node_bounds import NodeBounds

    Phi, U = _instance("gauss", 16, 2, 1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(NodeBounds, "lifted_after", 0)
        res = branch_and_bound(Phi, U, workers=1)
    nodes = res.tree["nodes"]
    assert {n[0] for n in nodes} >= {"s", "i", "b", "c", "d"}
    return Phi, U, res, nodes


def _ends_reference(nodes):
    """Subtree ends by recursion (independent of the iterative pass)."""
    end = {}

    def visit(i):
        j = i + 1
        for _ in range({"s": 2, "i": 1}.get(nodes[i][0], 0)):
            j = visit(j)
        end[i] = j
        return j

    assert visit(0) == len(nodes)
    return [end[i] for i in range(len(nodes))]


def _signs_reference(nodes, n):
    """The signs the walk reaches each node with, by recursion."""
    out = {}

    def visit(i, signs):
        out[i] = signs.copy()
        kind = nodes[i][0]
        if kind == "s":
            plus, minus = signs.copy(), signs.copy()
            plus[nodes[i][1]], minus[nodes[i][1]] = 1, -1
            return visit(visit(i + 1, plus), minus)
        if kind == "i":
            child = signs.copy()
            child[nodes[i][1]] = nodes[i][2]
            return visit(i + 1, child)
        return i + 1

    visit(0, np.zeros(n, dtype=np.int8))
    return out


@pytest.mark.parametrize("parts", [2, 5, 17])
def test_split_tree_covers_every_node_once_with_its_signs(tree, monkeypatch, parts):
    Phi, U, _, nodes = tree
    monkeypatch.setattr(_audit, "MIN_PART", 3)
    assert _audit.ends(nodes) == _ends_reference(nodes)
    top, subtrees = _audit.split_tree(nodes, Phi.shape[0], parts)
    assert subtrees and top.count(-1) == len(subtrees)
    covered = [i for i in top if i >= 0] + [i for first, end, _ in subtrees for i in range(first, end)]
    assert sorted(covered) == list(range(len(nodes)))
    ref = _signs_reference(nodes, Phi.shape[0])
    for first, end, signs in subtrees:
        assert end - first >= 3 and np.array_equal(signs, ref[first])
    # the top with each subtree replaced by a leaf is itself one tree in preorder
    assert _audit.ends([nodes[i] if i >= 0 else ["b", 0.0] for i in top])[0] == len(top)


@contextlib.contextmanager
def _executor(kind: str):
    if kind == "processes":
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(2) as ex:
            yield ex
    else:
        from dask.distributed import Client

        with Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as client:
            yield client


def _spy_walks(monkeypatch) -> list:
    """The sizes of the trees the checker's walk is given in this process."""
    import relu_gating.checker as checker

    sizes, inner = [], checker.walk_tree

    def spy(nodes, P, start=None):
        sizes.append(len(nodes))
        return inner(nodes, P, start)

    monkeypatch.setattr(checker, "walk_tree", spy)
    return sizes


@pytest.mark.parametrize("tamper,kind", [(False, "processes"), (True, "processes"), (True, "dask")])
def test_audit_in_parts_equals_the_whole_walk(tree, monkeypatch, tamper, kind):
    """On two workers (processes, or an in-process Dask cluster), many small parts: the same leaves
    proven, the same claims raised and lowered as the audit of the whole tree in one walk (tampered
    leaves included)."""
    from relu_gating.checker import state_problem, walk_tree
    from relu_gating.search._claims import _features
    from relu_gating.search.objectives import make_objective

    Phi, U, _, nodes = tree
    nodes = copy.deepcopy(nodes)
    if tamper:  # leaves claiming less than their signs prove: each is raised by either audit
        for i in [i for i, nd in enumerate(nodes) if nd[0] in ("b", "d")][1::3]:
            nodes[i][1] = 0.5 * nodes[i][1]
    monkeypatch.setattr(_audit, "MIN_PART", 3)
    monkeypatch.setattr(_audit, "PARALLEL_MIN_NODES", 0)
    monkeypatch.setattr(_audit, "TASKS_PER_WORKER", 6)
    obj = make_objective(Phi, U, "bias")
    P = state_problem(Phi, U, _features(obj))
    whole = walk_tree(nodes, P)
    sizes = _spy_walks(monkeypatch)
    with _executor(kind) as ex:
        leaves, reasons = _audit.walk_parts(nodes, P, (Phi, U, _features(obj)), ex)
        assert sizes and max(sizes) < len(nodes)  # this process walked the top alone
        assert sorted(leaves) == sorted(whole[0]) and reasons == whole[1] == []
        serial, parallel = copy.deepcopy(nodes), copy.deepcopy(nodes)
        got_serial = _audit.audit_tree(obj, serial)
        got_parallel = _audit.audit_tree(obj, parallel, ex)
    assert got_serial == got_parallel and serial == parallel
    assert (got_serial[0] > 0) == tamper


def test_audit_in_parts_reports_a_refusal(tree, monkeypatch):
    """A malformed node inside a part walked by a worker: the tree is refused, as the whole walk does;
    threads walk it whole (the walk holds the GIL)."""
    from relu_gating.checker import state_problem
    from relu_gating.search._claims import _features
    from relu_gating.search.objectives import make_objective

    Phi, U, _, nodes = tree
    monkeypatch.setattr(_audit, "MIN_PART", 3)
    monkeypatch.setattr(_audit, "PARALLEL_MIN_NODES", 0)
    obj = make_objective(Phi, U, "bias")
    bad = copy.deepcopy(nodes)
    top, subtrees = _audit.split_tree(bad, Phi.shape[0], 8)
    first, end, _ = max(subtrees, key=lambda s: s[1] - s[0])
    k = next(i for i in range(first + 1, end) if bad[i][0] == "i")
    bad[k][3] = [bad[k][1]]  # the implied row among its own Farkas rows
    with _executor("processes") as ex:
        raised, refused = _audit.audit_tree(obj, bad, ex)
    assert raised == 0 and refused == f"node {k}: the implied sign of row {bad[k][1]} is not proven by its Farkas rows"
    sizes = _spy_walks(monkeypatch)
    with ThreadPoolExecutor(2) as ex:
        assert _audit.audit_tree(obj, copy.deepcopy(bad), ex) == (0, refused)  # the same, from the whole walk
    assert sizes == [len(bad)]
    P = state_problem(Phi, U, _features(obj))
    assert _audit.walk_parts(bad, P, (Phi, U, _features(obj)), None)[1]  # the whole walk refuses it too


# ---------------------------------------------------------------------- the budget of the whole call
@pytest.mark.parametrize("workers", [1, 2])
def test_max_seconds_is_the_wall_time_of_the_whole_call(workers):
    """A query far from settled in 3 s: the call, audit and result included, returns within the budget
    and a margin (loaded machine), with a valid certificate of the alpha reached."""
    Phi, U = _instance("gauss", 60, 3, 5, K=4)
    t = time.perf_counter()
    res = best_neuron(Phi, U, strategy="branch-and-bound", max_seconds=3.0, options={"workers": workers})
    wall = time.perf_counter() - t
    slow = slowdown()  # the margin scales with the machine's load (about 1 when quiet)
    assert wall < 3.0 + 3.0 * slow, (wall, slow)
    assert res.tree["stats"]["stop"] == "time" and not res.certified
    _verified(res, Phi, U)
    assert _children() == []


def test_cli_workers_default_and_one(tmp_path, capsys, monkeypatch):
    """``best-neuron`` passes ``--workers`` (default None: every usable core) to the branch and bound."""
    import relu_gating.search.bnb as bnb
    from relu_gating.cli import main

    seen = []
    inner = bnb.branch_and_bound

    def spy(*args, **kwargs):
        seen.append((kwargs.get("workers"), kwargs.get("executor")))
        return inner(*args, **kwargs)

    monkeypatch.setattr(bnb, "branch_and_bound", spy)
    X = np.random.default_rng(16).normal(size=(14, 2))
    np.save(tmp_path / "X.npy", X)
    for extra, want in (([], None), (["--workers", "1"], 1)):
        out = tmp_path / "cert.json"
        assert main(["best-neuron", str(tmp_path / "X.npy"), "--K", "3", "--strategy", "branch-and-bound",
                     "--out", str(out), "--quiet", *extra]) == 0
        assert seen[-1] == (want, None)
        assert main(["verify", str(out), str(tmp_path / "X.npy"), "--K", "3"]) == 0
    capsys.readouterr()


def test_slowdown_is_wall_over_cpu_seconds_and_scales_the_per_item_reserve(monkeypatch):
    """On a loaded machine a CPU second takes several wall seconds: the reserve's per-item terms (measured
    with a core each) grow by that factor, the measured seconds (``t_bound``) do not; the parallel
    driver's fixed value wins; the factor is clamped to [1, SLOWDOWN_MAX]."""
    from relu_gating.search.bnb import _budget, _search

    clock = {"wall": 100.0, "cpu": 50.0}
    monkeypatch.setattr(_budget.time, "perf_counter", lambda: clock["wall"])
    monkeypatch.setattr(_budget.time, "process_time", lambda: clock["cpu"])
    stats = {"nodes": 1000, "implied": 10_000, "t_bound": 2.0, "lifted_settled": 100, "t_lifted_check": 0.0}
    fake = type("S", (), {"stats": stats})()
    base = _search.Search.reserve(fake)  # the first call: factor 1
    per_item = (_budget.FINISH_PER_NODE * 11_000 + _budget.AUDIT_PER_IMPLIED * 10_000
                + _budget.AUDIT_PER_LIFTED_LEAF * 100)
    R = lambda est: _budget.RESERVE_SAFETY * est + _budget.RESERVE_SECONDS  # noqa: E731 - the safety margin
    assert base == pytest.approx(R(per_item + _budget.AUDIT_PER_BOUND_SECOND * 2.0))
    clock["wall"] += 10.0
    clock["cpu"] += 2.5  # 4 wall seconds per CPU second
    assert _budget.slowdown(fake) == pytest.approx(4.0)
    assert _search.Search.reserve(fake) == pytest.approx(R(4 * per_item + _budget.AUDIT_PER_BOUND_SECOND * 2.0))
    clock["cpu"] += 100.0  # more CPU than wall (threads): never below 1
    assert _budget.slowdown(fake) == 1.0
    clock["wall"] += 1e6
    assert _budget.slowdown(fake) == _budget.SLOWDOWN_MAX
    fake.slowdown_fixed, fake.audit_workers = 2.0, 2
    eff = 2 * _budget.AUDIT_PARALLEL_EFFICIENCY
    want = (2 * _budget.FINISH_PER_NODE * 11_000 + (2 * _budget.AUDIT_PER_IMPLIED * 10_000
            + 2 * _budget.AUDIT_PER_LIFTED_LEAF * 100 + _budget.AUDIT_PER_BOUND_SECOND * 2.0) / eff)
    assert _search.Search.reserve(fake) == pytest.approx(R(want))


def test_audit_workers():
    """The audit walks parts on processes and Dask, never on threads or in-process."""
    from relu_gating._runtime.executors import LocalPool

    with ThreadPoolExecutor(3) as ex:
        assert _audit.audit_workers(ex) == 1
    assert _audit.audit_workers(None) == 1
    assert _audit.audit_workers(LocalPool(3)) == 3


def test_audit_in_parts_survives_a_lost_worker(tree, monkeypatch):
    """A task that fails (a worker process gone): the audit walks the whole tree here, same answer."""
    from concurrent.futures import Future

    from relu_gating.search.objectives import make_objective

    class Broken:
        _max_workers = 2

        def submit(self, fn, *args):
            fut = Future()
            fut.set_exception(RuntimeError("a worker died"))
            return fut

    Phi, U, _, nodes = tree
    monkeypatch.setattr(_audit, "MIN_PART", 3)
    monkeypatch.setattr(_audit, "PARALLEL_MIN_NODES", 0)
    obj = make_objective(Phi, U, "bias")
    serial, broken = copy.deepcopy(nodes), copy.deepcopy(nodes)
    sizes = _spy_walks(monkeypatch)
    assert _audit.audit_tree(obj, broken, Broken()) == _audit.audit_tree(obj, serial) and broken == serial
    assert len(nodes) in sizes and min(sizes) < len(nodes)  # the top walked, then the whole tree


def test_a_counter_that_appears_during_a_task_is_carried_back(early, monkeypatch):
    """A stats key made on first use inside a task (``stats["unproven"]``: a KeyError in the worker, found by
    tests/test_float_range.py once every query ran on the pool) is added up in the main process."""
    from relu_gating.search.bnb import _search

    inner = _search.Search.expand

    def expand(self, node):
        self.stats["late_counter"] = self.stats.get("late_counter", 0) + 1
        return inner(self, node)

    monkeypatch.setattr(_search.Search, "expand", expand)
    Phi, U = _instance("gauss", 14, 2, 3)
    with ThreadPoolExecutor(2) as ex:
        res = best_neuron(Phi, U, strategy="branch-and-bound", executor=ex)
    st = res.tree["stats"]
    assert res.certified and st["parallel_tasks"] >= 1
    assert st["late_counter"] >= st["parallel_tasks"]  # the main process's expansions and every task's


#: Runs of the current checker (since ea0162f) whose recorded stats calibrate the reserve (``_budget.AUDIT_SCALE``).
_CALIBRATION = ("real_hidden_120s_quiet_713200e_20261206.json", "real_hidden_120s_quiet_rerun_713200e_20261206.json",
                "real_bcpca5_1500s_quiet_cdae4e2_20261206.json", "real_bcpca5_600s_quiet_5b4e11b_20261206.json",
                "real_bcpca5_600s_quiet_0781e0a_20261206.json", "real_bcpca5n200_120s_quiet_be90e7a_run1_20261206.json",
                "real_bcpca5n200_120s_quiet_be90e7a_run2_20261206.json", "real_c1000x3_8c_600s_quiet_5d586e5_20261206.json",
                "real_bcpca5n200_120s_quiet_b68dd31_run1_20261207.json", "real_bcpca5n200_120s_quiet_b68dd31_run2_20261207.json",
                "real_bcpca5_600s_quiet_b68dd31_20261207.json")  # (the last three: with the constants scaled)


def test_the_reserve_covers_every_recorded_ending():
    """Recomputed from each recorded run's stats with the constants as they are now, the reserve covers what that
    run's ending took (writing out and the audit), and keeps at most 3x it where the ending was long enough to
    matter: a constant lowered past the data, or left far above it, fails here (docs/certificate.md)."""
    from relu_gating.search.bnb import _search
    from tests._benchmarks import BENCHMARKS

    root = BENCHMARKS / "results"
    ratios = []
    for name in _CALIBRATION:
        for rec in json.loads((root / name).read_text())["records"]:
            st = rec["stats"]
            fake = type("S", (), {"stats": st, "slowdown_fixed": st["slowdown"],
                                  "audit_workers": int(st.get("parallel_workers", 1))})()
            ending = st["t_finish"] + st["t_audit"]
            ratios.append((_search.Search.reserve(fake) / ending, ending, rec["case"], name))
    assert len(ratios) >= 15
    assert min(r[0] for r in ratios) >= 1.0, min(ratios)
    assert max(r[0] for r in ratios if r[1] >= 5.0) <= 3.0, max(r for r in ratios if r[1] >= 5.0)
