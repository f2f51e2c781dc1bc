"""Driver of the streamed search: absorb parts into a disk store, then the exact phase and the ending
both enumerated searches share (private).

See :mod:`relu_gating.search._stream.parts` for the design.  The parts' open patterns become the
candidates of :func:`~relu_gating.search._enum.exact.exact_phase` as they arrive; the search then
ends in :func:`~relu_gating.search._enum.finish.finish`, as the in-memory one: bounds only
tighten, values only improve, ties keep the earliest pattern.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from relu_gating._runtime.interrupt import check_stop
from relu_gating._runtime.progress import Progress
from relu_gating.errors import InputError
from relu_gating.search._exact.pilot import pilot_value
from relu_gating.search._enum.store import DiskStore, PatternStore
from relu_gating.search._config import CHECKPOINT_EVERY
from relu_gating._runtime.executors import workers_of
from relu_gating.search._stream.parts import Plan, n_parts, plan, stream_parts
from relu_gating.search._stream.checkpoint import StreamCheckpoint, cached_parts
from relu_gating.search.objectives import Objective, with_rank
from relu_gating.search.result import NeuronResult
from relu_gating.search.state import PatternOutcome, fingerprint
from relu_gating.search._enum.exact import Candidates, exact_phase, open_rows, threshold
from relu_gating.search._enum.finish import finish

__all__ = ["stream_best_neuron", "stream_search"]


class _Incumbent:
    """Best neuron so far (strictly better values only: ties keep the first seen)."""

    def __init__(self) -> None:
        self.value, self.index = -np.inf, -1
        self.theta: np.ndarray | None = None

    def offer(self, value: float, theta: Any, index: int) -> None:
        if theta is not None and value > self.value:
            self.value, self.theta, self.index = float(value), np.array(theta, dtype=float), int(index)


def _absorb_parts(obj: Objective, pl: Plan, store: DiskStore, cands: Candidates, best: _Incumbent,
                  alpha: float, tol: float, executor: Any, progress: Any, patterns: Any,
                  ckpt: StreamCheckpoint | None) -> dict:
    """Stream every part into the store (from the checkpoint where it holds it); returns the notes,
    exact witnesses, uncertified and timings."""
    info: dict = {"notes": [], "exact": {}, "uncertified": [], "enumerate": 0.0, "bounds": 0.0}
    inc = cands.defer  # the pilot's value
    parts = cached_parts(ckpt, lambda miss: stream_parts(obj, pl, tol, executor, patterns, only=miss, incumbent=inc),
                         n_parts(pl, patterns))
    from relu_gating._runtime import threads as _threads

    with Progress(pl.bound, "patterns (bounded)", enabled=progress) as bar, \
            _threads.blas_threads(_threads.BOUND_PASS_THREADS):  # skinny GEMMs: see relu_gating._runtime.threads
        for part in parts:
            off = store.N
            store.append(packed=part.packed, witnesses=part.witnesses, upper=part.upper, lower=part.lower,
                         status=part.status)
            best.offer(part.best_value, part.best_theta, off + part.best_local)
            thr = threshold(best.value, alpha, tol)
            rows = open_rows(part.upper, part.status, thr)
            cands.add(rows + off, part.upper[rows], thr)
            info["notes"].extend(part.notes)
            info["exact"].update({off + k: v for k, v in part.exact_witnesses.items()})
            info["uncertified"].append(part.uncertified + off)
            for key in ("enumerate", "bounds"):
                info[key] += part.seconds.get(key, 0.0)
            bar.update(len(part))
            if ckpt is not None:
                ckpt.maybe_save()
            check_stop()  # Ctrl-C from the command line (relu_gating._runtime.interrupt)
    return info


def _absorb_exact(out: Any, store: PatternStore, best: _Incumbent, state: dict) -> None:
    """Merge one exact-solve outcome into the store (bounds tighten, values improve, settlements rise)."""
    idx = out.index
    store.patch("upper", idx, np.minimum(store.take("upper", idx), out.upper))
    old = store.take("lower", idx)
    better = (np.isnan(old) | (out.lower > old)) & ~np.isnan(out.lower)
    store.patch("lower", idx, np.where(better, out.lower, old))
    store.patch("status", idx, np.maximum(store.take("status", idx), out.status))
    for i, mth in zip(idx.tolist(), out.method):
        if mth:
            state["methods"][i] = mth
    state["notes"].extend(out.notes)
    state["evidence"].update(out.evidence)
    vals = np.where(np.isnan(out.lower), -np.inf, out.lower)
    if vals.size:
        j = int(np.argmax(vals))
        best.offer(float(vals[j]), out.thetas[j], int(idx[j]))


def _replay(ckpt: StreamCheckpoint | None, outs: list, store: PatternStore, cands: Candidates, best: _Incumbent,
            state: dict) -> None:
    """The exact phase recorded by the checkpoint, merged as if it had just run."""
    for out in outs:
        _absorb_exact(out, store, best, state)
        cands.drop(out.index)
        assert ckpt is not None  # outcomes come from a checkpoint
        ckpt.record(out)
    if outs:
        state["notes"].append(f"resumed: {len(outs)} exact-solve batch(es) reused from the checkpoint")


def stream_best_neuron(obj: Objective, *, alpha: float, method: str, chunk_size: int, batch_size: int, tol: float,
                       executor: Any, progress: Any, memory: int, patterns: Any = None,
                       directory: str | None = None, checkpoint: str | None = None,
                       deadline: Any = None) -> NeuronResult:
    """The certified search of :func:`~relu_gating.search.front.best_neuron` in bounded memory.

    ``deadline`` (:class:`~relu_gating.search._enum.memory.Deadline`) ends the exact phase early
    (not certified; the open patterns keep their bounds); the streaming of the parts, which lists
    and bounds the chambers, is not interrupted (no certificate exists before it completes)."""
    t0 = time.perf_counter()
    pl = plan(obj.Phi, memory, chunk_size, workers_of(executor))
    obj = with_rank(obj, patterns.rank if patterns is not None else pl.rank)
    ckpt, outs = _open_checkpoint(checkpoint, obj, pl, tol, patterns)
    store = DiskStore(obj.n, obj.Phi.shape[1], directory)
    # the pilot's attained value: the bound pass's cut, and the candidates above it go first
    cands, best = Candidates(pl.capacity, defer=pilot_value(obj)), _Incumbent()
    state: dict = {"methods": {}, "notes": [], "evidence": {}, "rescans": 0}
    try:
        info = _absorb_parts(obj, pl, store, cands, best, alpha, tol, executor, progress, patterns, ckpt)
        t1 = time.perf_counter()
        state["notes"] = list(info["notes"])
        _replay(ckpt, outs, store, cands, best, state)

        def absorb(out: PatternOutcome) -> None:
            _absorb_exact(out, store, best, state)
            if ckpt is not None:
                ckpt.record(out)
                ckpt.maybe_save()

        stop = None if deadline is None else (lambda: deadline.passed(store.N))
        state["rescans"], early = exact_phase(obj, store, cands, lambda: best.value, absorb, alpha=alpha, tol=tol,
                                              method=method, batch_size=batch_size, executor=executor,
                                              progress=progress, stop=stop)
    except KeyboardInterrupt:
        if ckpt is not None:
            ckpt.save()
        raise
    if ckpt is not None:
        ckpt.save()
    t2 = time.perf_counter()
    key = fingerprint(obj.Phi, obj.U_K, obj.Q_H, extra=f"{obj.kind}|{store.N}")
    seconds = {"enumerate": info["enumerate"], "bounds": info["bounds"], "stream": t1 - t0, "solve": t2 - t1}
    unc = np.concatenate(info["uncertified"]) if info["uncertified"] else np.zeros(0, dtype=np.int64)
    tail = [f"streamed: {pl.parts} part(s), chunks of {pl.chunk_size}, {state['rescans']} re-scan(s)"]
    tail += [f"{unc.size} pattern(s) have no certified witness (first: {int(unc[0])})"] if unc.size else []
    tail += ["enumeration stopped by max_seconds in the exact phase: not certified; the bound is over the "
             "chambers still open"] if early else []
    res = finish(obj, store, best.theta, best.index, notes=state["notes"], methods=state["methods"],
                 evidence=state["evidence"], exact_witnesses=dict(sorted(info["exact"].items())), alpha=alpha,
                 tol=tol, key=key, seconds=seconds, tail=tail, stop="time" if early else "settled")
    res.seconds["total"] = time.perf_counter() - t0
    return res



def stream_search(obj: Objective, *, alpha: float, method: str, max_patterns: Any, chunk_size: int, batch_size: int,
                  tol: float, executor: Any, checkpoint: Any, progress: Any, patterns: Any,
                  memory: Any, deadline: Any = None) -> NeuronResult:
    """``best_neuron(..., memory=...)``: the options checked, then :func:`stream_best_neuron`."""
    from relu_gating.search._stream.parts import parse_memory

    budget = parse_memory(memory)
    if patterns is not None:
        if not hasattr(patterns, "check_belongs_to"):
            raise InputError(f"patterns must be the PatternSet of this Phi, got {type(patterns).__name__}")
        patterns.check_belongs_to(obj.Phi)
    elif max_patterns is not None:  # memory is bounded here: "auto" is the pattern (time) ceiling alone
        from relu_gating.search.plan import PATTERN_LIMIT, check_max_patterns, check_plan, plan_query

        limit = PATTERN_LIMIT if max_patterns == "auto" else check_max_patterns(max_patterns, *obj.Phi.shape)
        check_plan(plan_query(obj.Phi), limit)
    return stream_best_neuron(obj, alpha=alpha, method=method, chunk_size=chunk_size, batch_size=batch_size,
                              tol=tol, executor=executor, progress=progress, memory=budget, patterns=patterns,
                              checkpoint=checkpoint, deadline=deadline)


def _open_checkpoint(path: str | None, obj: Objective, pl: Plan, tol: float,
                     patterns: Any) -> tuple[StreamCheckpoint | None, list]:
    """The checkpoint of this streamed query and the exact phase it recorded (or None, [])."""
    if path is None:
        return None, []

    size = pl.bound if patterns is None else len(patterns)
    key = fingerprint(obj.Phi, obj.U_K, obj.Q_H, extra=f"{obj.kind}|stream|{size}|{tol!r}")
    ckpt = StreamCheckpoint(path, key, n_parts(pl, patterns), pl.chunk_size, obj.Phi.shape[1], CHECKPOINT_EVERY)
    return ckpt, ckpt.load()
