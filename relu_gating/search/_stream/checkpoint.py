"""Checkpoints of a streamed query (private; ``best_neuron(memory=..., checkpoint=PATH)``).

Layout: ``PATH`` is a small manifest (npz) and ``PATH + ".parts"`` a directory
with one npz per absorbed part (its packed masks, witnesses, bounds,
settlements, best neuron, notes, exact witnesses and uncertified rows).  A part
file is written once, when its part is absorbed; the manifest is rewritten at
most every :data:`~relu_gating.search._config.CHECKPOINT_EVERY` seconds, after
each part, on Ctrl-C and at the end, and holds the exact phase so far (the
outcomes of every exact-solve batch, in order).

Trust rule, as for the in-memory checkpoint (:meth:`SearchState.load
<relu_gating.search.state.SearchState.load>`): every file is signed with this
user's key (HMAC-SHA256 over its arrays, the format, the package version and
the query's fingerprint).  A part file that is not authentic, or belongs to
another query or part, is recomputed; a manifest that is not authentic is
ignored (the exact phase is redone).  A file can therefore never lower a bound
or raise a value.  A manifest written for another query, or with the work split
into another number of parts (another ``memory=``), is refused with
:class:`~relu_gating.errors.CheckpointError` and left untouched.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable

import numpy as np

from relu_gating._runtime.files import atomic_write, check_writable
from relu_gating.errors import CheckpointError
from relu_gating.search._signing import authentic, signed
from relu_gating.search.state import (STREAM_FORMAT, PatternOutcome, evidence_arrays, evidence_from_arrays,
                                      check_manifest)

__all__ = ["StreamCheckpoint", "STREAM_FORMAT", "PART_FORMAT"]

#: Part file layout version (part of the signed data).
PART_FORMAT = "relu-gating stream part 1"
_PART_ARRAYS = ("packed", "witnesses", "upper", "lower", "status", "uncertified")


def _save_npz(path: str, arrays: dict) -> None:
    atomic_write(path, lambda fh: np.savez(fh, **arrays), binary=True)  # type: ignore[arg-type]


def _outcome_arrays(outs: list[PatternOutcome], m: int) -> dict[str, np.ndarray]:
    """The exact phase's outcomes as flat arrays (``x_batch`` holds each batch's size)."""
    cat = (lambda key, dt, shape=(0,): np.concatenate([getattr(o, key) for o in outs]).astype(dt) if outs
           else np.zeros(shape, dtype=dt))
    notes = [(k, s) for k, o in enumerate(outs) for s in o.notes]
    return {
        "x_batch": np.array([o.index.size for o in outs], dtype=np.int64),
        "x_index": cat("index", np.int64), "x_upper": cat("upper", float), "x_lower": cat("lower", float),
        "x_status": cat("status", np.int8), "x_thetas": cat("thetas", float, (0, m)),
        "x_method": np.array([s for o in outs for s in (o.method or ("",) * o.index.size)], dtype=str),
        "x_note_batch": np.array([k for k, _ in notes], dtype=np.int64),
        "x_note": np.array([s for _, s in notes], dtype=str),
        **{f"x_{k}": v for k, v in evidence_arrays({i: e for o in outs for i, e in o.evidence.items()}).items()},
    }


def _outcomes_from(z: dict) -> list[PatternOutcome]:
    """Inverse of :func:`_outcome_arrays`."""
    ev = evidence_from_arrays({k[2:]: v for k, v in z.items() if k.startswith("x_evidence")})
    outs, s = [], 0
    for k, size in enumerate(z["x_batch"].tolist()):
        sl = slice(s, s + size)
        idx = z["x_index"][sl].astype(np.int64)
        outs.append(PatternOutcome(
            index=idx, upper=z["x_upper"][sl].astype(float), lower=z["x_lower"][sl].astype(float),
            thetas=z["x_thetas"][sl].astype(float), status=z["x_status"][sl].astype(np.int8),
            method=tuple(z["x_method"][sl].tolist()),
            notes=tuple(z["x_note"][z["x_note_batch"] == k].tolist()),
            evidence={i: ev[i] for i in idx.tolist() if i in ev}))
        s += size
    return outs


class StreamCheckpoint:
    """The checkpoint files of one streamed query (see the module docstring)."""

    def __init__(self, path: str | os.PathLike, key: str, parts: int, chunk_size: int, m: int,
                 every: float = 10.0) -> None:
        self.path = check_writable(path, "checkpoint")
        self.dir = self.path + ".parts"
        self.key, self.parts, self.chunk_size, self.m, self.every = key, int(parts), int(chunk_size), int(m), every
        self.outcomes: list[PatternOutcome] = []
        self.parts_done = 0
        self.last = time.perf_counter()

    # -- the manifest --------------------------------------------------------
    def load(self) -> list[PatternOutcome]:
        """The exact phase recorded by an authentic manifest of this query (refusals as documented)."""
        if not os.path.exists(self.path):
            return []
        check_manifest(self.path)
        with np.load(self.path, allow_pickle=False) as f:
            z = {k: f[k] for k in f.files}
        if str(z["key"]) != self.key:
            raise CheckpointError(f"checkpoint {self.path} belongs to another query (another Phi, U_K or K, "
                                  "features or objective); it was left untouched: delete it or pass another path")
        if int(z["parts"]) != self.parts or int(z["chunk_size"]) != self.chunk_size:
            raise CheckpointError(f"checkpoint {self.path} split the work into {int(z['parts'])} part(s) of chunks "
                                  f"of {int(z['chunk_size'])}, this run into {self.parts} of {self.chunk_size}: "
                                  "rerun with the memory budget it was written with; it was left untouched")
        return _outcomes_from(z) if authentic(z) else []

    def save(self) -> None:
        arrays = {"format": np.array(STREAM_FORMAT), "key": np.array(self.key), "parts": np.array(self.parts),
                  "chunk_size": np.array(self.chunk_size), "parts_done": np.array(self.parts_done),
                  **_outcome_arrays(self.outcomes, self.m)}
        _save_npz(self.path, signed(arrays))
        self.last = time.perf_counter()

    def maybe_save(self) -> None:
        if time.perf_counter() - self.last >= self.every:
            self.save()

    def record(self, out: PatternOutcome) -> None:
        self.outcomes.append(out)

    # -- the parts -----------------------------------------------------------
    def part_path(self, i: int) -> str:
        return os.path.join(self.dir, f"part-{i:06d}.npz")

    def save_part(self, part: Any, i: int) -> None:
        os.makedirs(self.dir, exist_ok=True)
        arrays = {"format": np.array(PART_FORMAT), "key": np.array(self.key), "part": np.array([i, self.parts]),
                  **{k: np.asarray(getattr(part, k)) for k in _PART_ARRAYS},
                  "best": np.array([part.best_value, part.best_local], dtype=float),
                  "best_theta": np.zeros(0) if part.best_theta is None else np.asarray(part.best_theta, float),
                  "notes": np.array(list(part.notes), dtype=str),
                  "exact_index": np.array(sorted(part.exact_witnesses), dtype=np.int64),
                  "exact_values": np.array([[str(v) for v in part.exact_witnesses[k]]
                                            for k in sorted(part.exact_witnesses)], dtype=str).reshape(-1, self.m)}
        _save_npz(self.part_path(i), signed(arrays))
        self.parts_done = max(self.parts_done, i + 1)

    def load_part(self, i: int) -> Any:
        """Part ``i`` as saved, or None (missing, unreadable, not authentic, or another query's)."""
        from relu_gating.search._stream.parts import PartResult

        try:
            with np.load(self.part_path(i), allow_pickle=False) as f:
                z = {k: f[k] for k in f.files}
        except Exception:  # noqa: BLE001 - a missing or broken part is recomputed
            return None
        if (str(z.get("format")) != PART_FORMAT or str(z.get("key")) != self.key
                or z["part"].tolist() != [i, self.parts] or not authentic(z)):
            return None
        best_value, best_local = float(z["best"][0]), int(z["best"][1])
        exact = {int(k): tuple(int(x) for x in row) for k, row in zip(z["exact_index"].tolist(), z["exact_values"])}
        return PartResult((i, self.parts), z["packed"], z["witnesses"], z["upper"], z["lower"], z["status"],
                          best_value=best_value, best_theta=z["best_theta"] if z["best_theta"].size else None,
                          best_local=best_local, notes=z["notes"].tolist(), exact_witnesses=exact,
                          uncertified=z["uncertified"].astype(np.int64), seconds={})


def cached_parts(ckpt: StreamCheckpoint | None, compute: Callable[[list[int]], Any], parts: int) -> Any:
    """Every part in order: from the checkpoint where it holds an authentic one, else from ``compute``
    (an iterator over the missing parts, in order), saving each computed part."""
    have = {} if ckpt is None else {i: p for i in range(parts) if (p := ckpt.load_part(i)) is not None}
    missing = [i for i in range(parts) if i not in have]
    fresh = compute(missing)
    for i in range(parts):
        if i in have:
            if ckpt is not None:
                ckpt.parts_done = max(ckpt.parts_done, i + 1)
            yield have[i]
            continue
        part = next(fresh)
        if ckpt is not None:
            ckpt.save_part(part, i)
        yield part
