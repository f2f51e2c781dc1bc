"""The end of a streamed search: claims, final settlements, near-ties, the result (private)."""

from __future__ import annotations

from typing import Any

import numpy as np

from relu_gating.errors import SolverFailure
from relu_gating.search._stream.store import PatternStore
from relu_gating.search._exact.polish import polish_theta
from relu_gating.search.objectives import Objective, neuron_values, normalized_theta
from relu_gating.search._config import NEAR_TIE_TOL
from relu_gating.search.result import NeuronResult
from relu_gating.search.state import BOUND, EXACT, PRUNED, UNSETTLED

__all__ = ["finish"]

#: Patterns per block of the final scan.
SCAN = 1 << 16


def _unpack(packed: np.ndarray, n: int) -> np.ndarray:
    return np.unpackbits(packed, axis=1, count=n).view(bool)


def _raise_to_checkable(obj: Objective, store: PatternStore, evidence: dict) -> list[str]:
    """Claims made what is proven (on disk; as :func:`relu_gating.search.front._checkable`, by
    :mod:`relu_gating.search._claims`): exclusions re-decided exactly, solved claims proven or
    replaced by a claim-free bound (their evidence dropped, their pattern ``BOUND``).  Returns notes."""
    from relu_gating.search._claims import checked_exclusions, settle_claims

    notes: list[str] = []
    for s in range(0, store.N, SCAN):
        st = store.read("status", s, s + SCAN)
        idx = np.flatnonzero(st == PRUNED)
        if idx.size:
            up, st_i = np.zeros(idx.size), st[idx].copy()
            notes += checked_exclusions(obj, _unpack(store.take("packed", idx + s), obj.n), up, st_i)
            moved = np.flatnonzero(st_i != PRUNED)
            if moved.size:
                store.patch("upper", idx[moved] + s, up[moved])
                store.patch("status", idx[moved] + s, st_i[moved])
    if not evidence:
        return notes
    idx = np.array(sorted(evidence), dtype=np.int64)
    idx = idx[store.take("status", idx) != PRUNED]  # no admissible neuron (decided exactly above)
    if idx.size == 0:
        return notes
    st = store.take("status", idx)
    bounds = store.take("upper", idx)
    got = settle_claims(obj, _unpack(store.take("packed", idx), obj.n), bounds, [evidence[int(i)] for i in idx])
    store.patch("upper", idx, got.bounds)
    for k, ev in got.replaced.items():
        evidence[int(idx[k])] = ev
    for i in idx[~got.keep_evidence].tolist():
        evidence.pop(int(i))
    fell = np.flatnonzero(got.fallback & (st == EXACT))
    if fell.size:
        store.patch("status", idx[fell], np.full(fell.size, BOUND, dtype=st.dtype))
        notes.append(f"{fell.size} pattern(s) whose solved bound is not proven claim a weaker valid bound "
                     f"instead (not settled; first: {int(idx[fell[0]])})")
    return notes


def _final_scan(store: PatternStore, z: np.ndarray | None, value: float) -> dict:
    """Settle the rest as BOUND, zero the pruned bounds (on disk), count, find near-ties."""

    out = {"max": -np.inf, "exact": 0, "bound": 0, "pruned": 0, "close": 0, "others": 0, "first": -1}
    eps = NEAR_TIE_TOL * (np.abs(z).max() + 1e-300) if z is not None else 0.0
    for s in range(0, store.N, SCAN):
        st = store.read("status", s, s + SCAN)
        up = store.read("upper", s, s + SCAN)
        st = np.where(st == UNSETTLED, BOUND, st).astype(np.int8)
        up = np.where(st == PRUNED, 0.0, up)
        store.write("status", s, st)
        store.write("upper", s, up)
        out["max"] = max(out["max"], float(up.max(initial=-np.inf)))
        out["exact"] += int(np.sum(st == EXACT))
        out["bound"] += int(np.sum(st == BOUND))
        out["pruned"] += int(np.sum(st == PRUNED))
        if z is None:
            continue
        lw = np.nan_to_num(store.read("lower", s, s + SCAN), nan=-np.inf)
        close = np.flatnonzero(lw >= value - NEAR_TIE_TOL)
        if close.size:
            mk = _unpack(store.take("packed", close + s), store.n)
            holds = np.all(np.where(z > eps, mk, True) & np.where(z < -eps, ~mk, True), axis=1)
            out["close"] += int(close.size)
            out["others"] += int(np.sum(~holds))
            if out["first"] < 0 and np.any(~holds):
                out["first"] = int(s + close[np.flatnonzero(~holds)[0]])
    return out


def finish(obj: Objective, store: PatternStore, best: Any, state: dict, info: dict, alpha: float, tol: float,
           key: str, pl: Any, seconds: dict) -> NeuronResult:
    """The :class:`NeuronResult` of a streamed search; its per-pattern arrays are read-only memory maps."""
    notes = list(dict.fromkeys(state["notes"]))
    if best.theta is None:
        theta, value, z = np.zeros(obj.Phi.shape[1]), 0.0, None
        pattern = np.zeros(obj.n, dtype=bool)
        notes.append("no admissible neuron: every relu(Phi theta) is 0 or lies in col(features); value 0")
    else:
        theta = polish_theta(obj, normalized_theta(obj, best.theta))  # the documented scale, as the in-memory path
        value = float(neuron_values(obj, theta[None, :])[0])  # recomputed from relu(Phi theta)
        if np.isnan(value):
            raise SolverFailure("the incumbent neuron is excluded on recomputation; please report this input")
        z = obj.Phi @ theta
        pattern = _unpack(store.take("packed", [best.index]), obj.n)[0].copy()
        if not np.all(np.where(z > 0, pattern, True) & np.where(z < 0, ~pattern, True)):
            pattern = z > 0
    notes += _raise_to_checkable(obj, store, state["evidence"])
    sc = _final_scan(store, z, value)
    if sc["close"] >= 2 and sc["others"]:
        notes.append(f"near-tie: {sc['others']} other pattern(s) reach {value:.12f} within 1e-9 with a different "
                     f"neuron (e.g. pattern {sc['first']}): the optimum may not be unique")
    notes.append(f"streamed: {pl.parts} part(s), chunks of {pl.chunk_size}, {state['rescans']} re-scan(s)")
    upper = float(max(sc["max"], value))
    unc = np.concatenate(info["uncertified"]) if info["uncertified"] else np.zeros(0, dtype=np.int64)
    if unc.size:
        notes.append(f"{unc.size} pattern(s) have no certified witness (first: {int(unc[0])})")
    return NeuronResult(
        theta=theta, value=float(value), upper_bound=upper, alpha=float(alpha),
        certified=bool(value >= alpha * upper - tol), pattern=pattern, objective=obj.kind,
        n_patterns=int(store.N), n_exact=sc["exact"], n_bound=sc["bound"], n_pruned=sc["pruned"],
        seconds=seconds, tol=float(tol), packed=store.memmap("packed"), witnesses=store.memmap("witnesses"),
        bounds=store.memmap("upper"), lowers=store.memmap("lower"), settlement=store.memmap("status"),
        methods=dict(state["methods"]), rank=int(obj.Psi.shape[1]), fingerprint=key, notes=tuple(notes),
        exact_witnesses=dict(sorted(info["exact"].items())), evidence=dict(state["evidence"]),
        K=int(obj.U_K.shape[1]), features=obj.features, features_sha256=obj.features_sha256, store=store,
    )
