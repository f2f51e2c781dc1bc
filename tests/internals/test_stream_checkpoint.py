"""Checkpoints of the streamed search (``best_neuron(memory=..., checkpoint=...)``).

Oracle: the same query run without interruption (and the in-memory path).  A
run is interrupted after some parts, or inside the exact phase, by making the
worker function raise KeyboardInterrupt (what Ctrl-C does through
``relu_gating._runtime.interrupt.check_stop``); the rerun must reuse what was saved
(counted by wrapping the worker) and end with the same certified answer.
Tampered files must never be trusted, only recomputed.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

import relu_gating as rg
import relu_gating.search._stream.parts as stream
import relu_gating.search._enum.exact as enum_exact
import relu_gating.search._stream.run as stream_run
from relu_gating import best_neuron, verify
from relu_gating.errors import CheckpointError
from relu_gating.search._enum.store import PREFIX, sweep_stale


@pytest.fixture(autouse=True)
def _own_key(tmp_path, monkeypatch):
    monkeypatch.setenv("RELU_GATING_CHECKPOINT_KEY", str(tmp_path / "key"))


def _inst(seed=3, n=40, d=2, K=4):
    X = np.random.default_rng(seed).normal(size=(n, d))
    return rg.layer_input(X), rg.low_frequency_basis(rg.laplacian(rg.sample_graph(X, kind="knn")), K).U_K


def _parts(monkeypatch, parts=4):
    real = stream.plan
    monkeypatch.setattr(stream_run, "plan", lambda *a, **k: dataclasses.replace(real(*a, **k), parts=parts))


def _count_parts(monkeypatch, fail_at=None):
    """Wrap the part worker: count calls, raise KeyboardInterrupt at call ``fail_at``."""
    real, calls = stream.part_bounds, []

    def wrapped(*a):
        calls.append(a[1])
        if fail_at is not None and len(calls) == fail_at:
            raise KeyboardInterrupt
        return real(*a)
    monkeypatch.setattr(stream, "part_bounds", wrapped)
    return calls


def _same(a, b):
    assert b.certified and a.certified
    assert b.value == pytest.approx(a.value, abs=1e-13)
    assert b.upper_bound == pytest.approx(a.upper_bound, abs=1e-12)
    assert b.n_patterns == a.n_patterns


def test_interrupted_parts_are_reused(tmp_path, monkeypatch):
    Phi, U_K = _inst()
    _parts(monkeypatch)
    ref = best_neuron(Phi, U_K, memory="1G")
    ck = str(tmp_path / "run.npz")
    calls = _count_parts(monkeypatch, fail_at=3)
    with pytest.raises(KeyboardInterrupt):
        best_neuron(Phi, U_K, memory="1G", checkpoint=ck)
    assert os.path.exists(ck) and len(os.listdir(ck + ".parts")) == 2
    calls = _count_parts(monkeypatch)
    res = best_neuron(Phi, U_K, memory="1G", checkpoint=ck)
    assert [p[0] for p in calls] == [2, 3]  # parts 0 and 1 came from the checkpoint
    _same(ref, res)
    assert verify(res, Phi, U_K, "bias").valid
    calls = _count_parts(monkeypatch)
    again = best_neuron(Phi, U_K, memory="1G", checkpoint=ck)  # finished: nothing is recomputed
    assert calls == [] and again.value == res.value


def test_interrupted_exact_phase_is_reused(tmp_path, monkeypatch):
    Phi, U_K = _inst(6, 30)
    _parts(monkeypatch, 2)
    ref = best_neuron(Phi, U_K, memory="1G", batch_size=2)
    assert ref.n_exact >= 3  # the exact phase has several batches here
    real, calls = enum_exact.solve_chunk, []

    def flaky(*a):
        calls.append(a[1])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a)
    monkeypatch.setattr(enum_exact, "solve_chunk", flaky)
    ck = str(tmp_path / "run.npz")
    with pytest.raises(KeyboardInterrupt):
        best_neuron(Phi, U_K, memory="1G", batch_size=2, checkpoint=ck)
    first = set(calls[0].tolist())
    calls.clear()
    monkeypatch.setattr(enum_exact, "solve_chunk", lambda *a: calls.append(a[1]) or real(*a))
    res = best_neuron(Phi, U_K, memory="1G", batch_size=2, checkpoint=ck)
    assert not first & set(np.concatenate(calls or [np.zeros(0, int)]).tolist())  # batch 1 not solved again
    assert any("resumed" in s for s in res.notes)
    _same(ref, res)


def test_tampered_files_are_recomputed_not_trusted(tmp_path, monkeypatch):
    Phi, U_K = _inst(5)
    _parts(monkeypatch, 3)
    ck = str(tmp_path / "run.npz")
    ref = best_neuron(Phi, U_K, memory="1G", checkpoint=ck)
    part = os.path.join(ck + ".parts", "part-000001.npz")
    with np.load(part) as f:
        z = {k: f[k] for k in f.files}
    z["upper"] = np.zeros_like(z["upper"])  # a forged part: every bound 0
    np.savez(part, **z)
    with np.load(ck) as f:
        m = {k: f[k] for k in f.files}
    assert m["x_upper"].size  # the exact phase was recorded
    m["x_upper"] = np.zeros_like(m["x_upper"])  # a forged exact phase
    np.savez(ck, **m)
    calls = _count_parts(monkeypatch)
    res = best_neuron(Phi, U_K, memory="1G", checkpoint=ck)
    assert [p[0] for p in calls] == [1]  # only the forged part, recomputed
    assert not any("resumed" in s for s in res.notes)  # the forged manifest was ignored
    _same(ref, res)


def test_foreign_checkpoints_refused_and_left_untouched(tmp_path, monkeypatch):
    Phi, U_K = _inst(7)
    _parts(monkeypatch, 2)
    ck = tmp_path / "run.npz"
    best_neuron(Phi, U_K, memory="1G", checkpoint=str(ck))
    before = ck.read_bytes()
    with pytest.raises(CheckpointError, match="another query"):
        best_neuron(Phi, U_K[:, :3], memory="1G", checkpoint=str(ck))
    _parts(monkeypatch, 3)
    with pytest.raises(CheckpointError, match="memory budget"):
        best_neuron(Phi, U_K, memory="1G", checkpoint=str(ck))
    with pytest.raises(CheckpointError, match="streamed run"):
        best_neuron(Phi, U_K, checkpoint=str(ck))  # the in-memory path
    mem = tmp_path / "mem.npz"
    best_neuron(Phi, U_K, checkpoint=str(mem))
    with pytest.raises(CheckpointError, match="not written by a streamed run"):
        best_neuron(Phi, U_K, memory="1G", checkpoint=str(mem))
    assert ck.read_bytes() == before


def test_cli_streamed_checkpoint(tmp_path, capsys):
    from relu_gating.cli import main

    inp = tmp_path / "x.npz"
    np.savez(inp, X=np.random.default_rng(12).normal(size=(26, 2)))
    ck, mem = tmp_path / "c.npz", tmp_path / "m.npz"
    args = ["best-neuron", str(inp), "--K", "3", "--quiet", "--memory", "1G", "--checkpoint"]
    assert main(args + [str(ck)]) == 0 and ck.exists()
    assert main(args + [str(ck)]) == 0  # resumes the finished run
    assert main(["best-neuron", str(inp), "--K", "3", "--quiet", "--checkpoint", str(mem)]) == 0
    capsys.readouterr()
    assert main(args + [str(mem)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--checkpoint" in err[0] and "streamed" in err[0]


def test_stale_store_directories_are_swept(tmp_path):
    dead = tmp_path / f"{PREFIX}999999999-abc"  # no such process
    mine = tmp_path / f"{PREFIX}{os.getpid()}-xyz"
    other = tmp_path / "unrelated"
    for d in (dead, mine, other):
        d.mkdir()
    assert sweep_stale(str(tmp_path)) == [str(dead)]
    assert not dead.exists() and mine.exists() and other.exists()
