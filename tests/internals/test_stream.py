"""The streamed search (``best_neuron(memory=...)``): the in-memory path's answers, in bounded memory.

The oracle is the in-memory path on the same input: value, bound, counts, and
per pattern (matched by mask) the same bound and settlement.  Parts, chunks
and the candidate capacity are forced small here so that every mechanism
runs (several parts, candidates dropped for room, re-scans of the store).
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import relu_gating.search._stream.parts as stream
import relu_gating.search._stream.run as stream_run
from relu_gating.search._enum.exact import Candidates
from relu_gating import InputError, best_neuron, verify
from relu_gating.patterns import enumerate_patterns


def _inst(seed=4, n=50, d=2, K=4):
    rng = np.random.default_rng(seed)
    Phi = np.c_[rng.normal(size=(n, d)), np.ones(n)]
    U_K = np.linalg.qr(rng.normal(size=(n, K)))[0]
    return Phi, U_K


def _by_mask(res):
    """Per-pattern arrays sorted by mask bytes (the streamed order is by part)."""
    pk = np.asarray(res.packed)
    order = np.lexsort(pk.T[::-1])
    return pk[order], np.asarray(res.bounds)[order], np.asarray(res.settlement)[order]


def _force(monkeypatch, **kw):
    real = stream.plan
    monkeypatch.setattr(stream_run, "plan", lambda *a, **k: dataclasses.replace(real(*a, **k), **kw))


def _same_answer(ref, st, same_chunks=True):
    """Same neuron, value, bound and pattern set; per pattern the same bound and settlement when the
    chunks are the same (the bound pass settles on the spot what its chunk's incumbent allows, so
    other chunks may settle a few patterns differently, never the answer)."""
    assert st.value == pytest.approx(ref.value, abs=1e-14) and st.certified == ref.certified
    assert st.upper_bound == pytest.approx(ref.upper_bound, abs=1e-13)
    assert (st.n_patterns, st.n_pruned) == (ref.n_patterns, ref.n_pruned)
    np.testing.assert_allclose(st.theta, ref.theta, rtol=1e-9, atol=1e-12)
    a, b = _by_mask(ref), _by_mask(st)
    np.testing.assert_array_equal(a[0], b[0])
    if same_chunks:
        assert (st.n_exact, st.n_bound) == (ref.n_exact, ref.n_bound)
        np.testing.assert_allclose(a[1], b[1], rtol=0, atol=1e-13)
        np.testing.assert_array_equal(a[2], b[2])


def test_one_part_is_the_in_memory_path_bit_for_bit():
    Phi, U_K = _inst(2, 25)
    ref = best_neuron(Phi, U_K)
    st = best_neuron(Phi, U_K, memory="1G")
    assert "streamed: 1 part(s)" in st.notes[-1]
    for name in ("packed", "witnesses", "bounds", "settlement"):
        np.testing.assert_array_equal(np.asarray(getattr(ref, name)), np.asarray(getattr(st, name)))
    _same_answer(ref, st)
    assert verify(st, Phi, U_K, "bias").valid


@pytest.mark.parametrize(("features", "alpha"), [("bias", 1.0), pytest.param(None, 0.9, marks=pytest.mark.slow)])
def test_parts_dropped_candidates_and_rescans_give_the_same_answer(monkeypatch, features, alpha):
    Phi, U_K = _inst(4, 30)
    ref = best_neuron(Phi, U_K, features=features, alpha=alpha, batch_size=8)
    _force(monkeypatch, parts=4, capacity=12, chunk_size=64)
    st = best_neuron(Phi, U_K, features=features, alpha=alpha, batch_size=8, memory="1G")
    assert "4 part(s), chunks of 64" in st.notes[-1]
    if features == "bias" and alpha == 1.0:
        assert "0 re-scan" not in st.notes[-1]  # the store was re-scanned for dropped candidates
    _same_answer(ref, st, same_chunks=False)
    assert verify(st, Phi, U_K, features).valid


@pytest.mark.slow
def test_dask_clusters_of_any_size_give_the_identical_result(monkeypatch):
    distributed = pytest.importorskip("dask.distributed")
    Phi, U_K = _inst(6, 30)
    ref = best_neuron(Phi, U_K)
    _force(monkeypatch, parts=3, capacity=50, chunk_size=100)
    runs = []
    for workers in (1, 2):
        with distributed.Client(processes=False, n_workers=workers, threads_per_worker=1,
                                dashboard_address=None) as client:
            runs.append(best_neuron(Phi, U_K, memory="1G", executor=client))
    a, b = runs
    for name in ("packed", "witnesses", "bounds", "settlement", "lowers"):
        np.testing.assert_array_equal(np.asarray(getattr(a, name)), np.asarray(getattr(b, name)))
    assert a.value == b.value and a.evidence.keys() == b.evidence.keys()
    _same_answer(ref, a, same_chunks=False)
    with ThreadPoolExecutor(2) as ex:  # any executor: the same answer
        _same_answer(ref, best_neuron(Phi, U_K, memory="1G", executor=ex), same_chunks=False)


def test_given_pattern_set_is_streamed():
    Phi, U_K = _inst(7, 30)
    ps = enumerate_patterns(Phi)
    ref = best_neuron(Phi, U_K, patterns=ps)
    # streamed in consecutive parts of the set: not in the complementary pairs of the in-memory chunks
    _same_answer(ref, best_neuron(Phi, U_K, patterns=ps, memory="1G"), same_chunks=False)


def test_memory_option_checked():
    assert stream.parse_memory("2G") == 2**31 and stream.parse_memory("512MB") == 2**29
    assert stream.parse_memory(2**30) == 2**30
    Phi, U_K = _inst(8, 20)
    for bad in ("lots", "10M", -1, True, "1.5 parsecs"):
        with pytest.raises(InputError, match="memory"):
            best_neuron(Phi, U_K, memory=bad)
    with pytest.raises(InputError, match="max_patterns"):
        best_neuron(Phi, U_K, memory="1G", max_patterns=0)


def test_plan_respects_the_budget():
    Phi = np.c_[np.random.default_rng(9).normal(size=(2000, 2)), np.ones(2000)]  # Cover: 4M patterns
    small, big = stream.plan(Phi, 400 * 2**20, 8192), stream.plan(Phi, 2**31, 8192)
    assert small.parts > big.parts >= 1 and small.chunk_size <= big.chunk_size
    assert stream.plan(Phi, 2**31, 8192, workers=4).parts == big.parts  # never depends on the executor


def test_cli_memory_and_binary_out(tmp_path, capsys):
    from relu_gating.cli import main

    rng = np.random.default_rng(12)
    inp = tmp_path / "x.npz"
    np.savez(inp, X=rng.normal(size=(26, 2)))
    out = tmp_path / "c.npz"
    assert main(["best-neuron", str(inp), "--K", "3", "--quiet", "--memory", "1G", "--out", str(out)]) == 0
    assert "certified        yes" in capsys.readouterr().out
    assert main(["verify", str(out), str(inp), "--K", "3"]) == 0
    assert main(["best-neuron", str(inp), "--K", "3", "--quiet", "--memory", "lots"]) == 2
    assert "--memory" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize(("n", "d", "features"), [(50, 3, "bias"), (45, 4, None), (300, 2, "bias")])
def test_streamed_matches_in_memory_on_larger_cases(tmp_path, n, d, features):
    from relu_gating.certificate import save_binary

    Phi, U_K = _inst(n + d, n, d)
    ref = best_neuron(Phi, U_K, features=features)
    st = best_neuron(Phi, U_K, features=features, memory="1G")
    _same_answer(ref, st, same_chunks=st.notes[-1].startswith("streamed: 1 part"))
    save_binary(st, tmp_path / "c.npz")
    rep = verify(str(tmp_path / "c.npz"), Phi, U_K, features)
    assert rep.valid and rep.certified and rep.value == pytest.approx(st.value, abs=1e-12)


@pytest.mark.parametrize("n", [4, 8, 9])
def test_few_samples_one_byte_masks(n, tmp_path):
    """n <= 8 packs each mask in one byte: the store keeps it a row (regression: the streamed
    run failed there); same answer as in memory, and the binary certificate verifies."""
    from relu_gating.certificate import save_binary

    Phi, U_K = _inst(11, n, K=2)
    ref = best_neuron(Phi, U_K)
    st = best_neuron(Phi, U_K, memory="1G")
    _same_answer(ref, st)
    save_binary(st, str(tmp_path / "c.npz"))
    assert verify(str(tmp_path / "c.npz"), Phi, U_K).valid


def test_candidates_hold_back_patterns_at_or_below_the_pilot_value():
    """Rows above the threshold but at most ``defer`` are not held; the largest of them is
    remembered, and only an empty candidate set with it above the threshold asks for a rescan."""
    c = Candidates(capacity=10, defer=0.5)
    up = np.array([0.2, 0.45, 0.5, 0.7, 0.9])
    c.add(np.arange(5), up, threshold=0.3)
    assert c.idx.tolist() == [4, 3] and c.deferred == 0.5 and c.floor == -np.inf  # largest bound first
    assert not c.needs_rescan(need=64, threshold=0.3)  # candidates left: solve them first
    c.drop(np.array([3, 4]))
    assert c.needs_rescan(need=64, threshold=0.3) and not c.needs_rescan(need=64, threshold=0.5)


def test_candidates_rescan_holds_the_largest_open_bounds_in_order(monkeypatch):
    """A re-scan of the store (in blocks, cut to the capacity now and then) holds the ``capacity``
    largest bounds of the open patterns above ``defer``, largest first and ties by index; the
    largest bound left out is the floor; with none above ``defer`` it lifts the deferral."""
    import relu_gating.search._enum.exact as exact
    from relu_gating.search._enum.store import MemoryStore
    from relu_gating.search.state import BOUND, UNSETTLED

    monkeypatch.setattr(exact, "SCAN", 7)
    rng = np.random.default_rng(0)
    N = 500
    upper = rng.integers(0, 40, N) / 40.0  # many ties
    status = np.where(rng.random(N) < 0.2, BOUND, UNSETTLED).astype(np.int8)
    store = MemoryStore(8, np.zeros((N, 1), np.uint8), np.zeros((N, 2)), upper, np.full(N, np.nan), status)
    for cap, defer, thr in [(10, -np.inf, 0.3), (25, 0.6, 0.3), (1000, 0.6, 0.3), (10, 2.0, 0.3)]:
        c = Candidates(cap, defer=defer)
        c.rescan(store, thr)
        open_ = np.flatnonzero((status == UNSETTLED) & (upper > thr))
        if not np.any(upper[open_] > defer):
            defer = -np.inf
        pool = open_[upper[open_] > defer]
        order = pool[np.lexsort((pool, -upper[pool]))]
        assert c.idx.tolist() == order[:cap].tolist() and c.defer == defer
        assert c.floor == (upper[order[cap]] if order.size > cap else -np.inf)


@pytest.mark.slow  # the default tier keeps its siblings (under 90 s: README)
def test_pilot_value_defers_the_cut_patterns_and_the_answer_is_unchanged(monkeypatch):
    """Streamed with the pilot's value as the deferral level, most patterns never become
    candidates (their bound is the cut, below it); with a deferral level above every bound (and
    no cut), the exact phase rescans the store and still gives the in-memory answer."""
    Phi, U_K = _inst(5, 40)
    ref = best_neuron(Phi, U_K, batch_size=8)
    _force(monkeypatch, parts=3, capacity=100_000, chunk_size=64)
    held = []
    real_add = Candidates.add

    def add(self, idx, upper, threshold):
        real_add(self, idx, upper, threshold)
        held.append(len(self))

    monkeypatch.setattr(Candidates, "add", add)
    st = best_neuron(Phi, U_K, batch_size=8, memory="1G")
    _same_answer(ref, st, same_chunks=False)
    assert max(held) < 0.05 * ref.n_patterns
    real_parts = stream_run.stream_parts
    monkeypatch.setattr(stream_run, "pilot_value", lambda obj: 2.0)  # above every bound: all held back
    monkeypatch.setattr(stream_run, "stream_parts", lambda *a, **k: real_parts(*a, **{**k, "incumbent": -np.inf}))
    held.clear()
    st2 = best_neuron(Phi, U_K, batch_size=8, memory="1G")
    assert "0 re-scan" not in st2.notes[-1] and held == [0, 0, 0]
    _same_answer(ref, st2, same_chunks=False)
    assert verify(st2, Phi, U_K, "bias").valid
