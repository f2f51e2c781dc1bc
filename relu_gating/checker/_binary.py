"""The checker's verdict on a binary pattern certificate (loaded for those only), streamed in bounded
memory (the checks of the JSON form, :mod:`._verify_patterns`, chunk by chunk): witnesses per chunk, a
64-bit hash per canonical mask (8 bytes per pattern) whose collisions are settled by comparing the
masks themselves in a second pass (distinct hashes prove distinct masks), and the bounds per chunk
with that chunk's evidence."""

from __future__ import annotations

from typing import Any

import numpy as np

from relu_gating.checker._bounds import prove
from relu_gating.checker._complete import bad_witnesses, completeness
from relu_gating.checker._constants import BOUND_SLACK
from relu_gating.checker._limits import limits
from relu_gating.checker._problem import StatedProblem
from relu_gating.checker._read_npz import BinaryReader
from relu_gating.checker._verdict import VerifyReport, check_value, conclude, problem_mismatch, refused
from relu_gating.errors import CertificateError

__all__ = ["stream", "verify_binary"]

_MIX = np.uint64(0x9E3779B97F4A7C15)
_PRUNED = 3


def _row_hash(packed: np.ndarray) -> np.ndarray:
    """A 64-bit hash per row of a packed bit matrix (multiply-xorshift over 8-byte words)."""
    k, nb = packed.shape
    w = (nb + 7) // 8
    buf = np.zeros((k, 8 * w), dtype=np.uint8)
    buf[:, :nb] = packed
    words = buf.view(np.uint64)
    h = np.full(k, np.uint64(nb), dtype=np.uint64)
    for j in range(w):
        h = (h ^ words[:, j]) * _MIX
        h ^= h >> np.uint64(29)
    return h


def _has_duplicates(h: np.ndarray, path: str) -> bool:
    """Exact: masks sharing a hash are compared byte for byte (canonical masks)."""
    srt = np.sort(h)
    same = srt[1:] == srt[:-1]
    if not same.any():
        return False
    suspects = np.unique(srt[1:][same])
    seen: set = set()
    with BinaryReader(path) as again:
        for _, cols in again.chunks():
            pk = cols["masks"]
            for j in np.flatnonzero(np.isin(_row_hash(pk), suspects)).tolist():
                key = pk[j].tobytes()
                if key in seen:
                    return True
                seen.add(key)
    return False


def stream(rd: BinaryReader, P: StatedProblem, exact: bool) -> tuple[list, bool, float, int, list, bool]:
    """``(bad witnesses, duplicates, top proven bound, unproven count, first unproven, live)``."""
    ev_idx = np.array(sorted(rd.evidence), dtype=np.int64)
    bad: list[int] = []
    hashes, first = [], []
    top, unproven, live = -np.inf, 0, False
    for s, cols in rd.chunks():
        pk, k = cols["masks"], cols["bounds"].size
        bad += bad_witnesses(P, s, pk, cols["witnesses"], rd.exact, exact)
        hashes.append(_row_hash(pk))
        lo, hi = np.searchsorted(ev_idx, [s, s + k])
        ev = {int(i) - s: rd.evidence[int(i)] for i in ev_idx[lo:hi]}
        masks = np.unpackbits(pk, axis=1, count=rd.n).astype(bool)
        proven = prove(P, masks, cols["bounds"], ev, cols["settlement"] == _PRUNED, exact)
        fail = np.flatnonzero(proven > cols["bounds"] + BOUND_SLACK)
        unproven += int(fail.size)
        first += [f"pattern {i + s}" for i in fail[:5 - len(first)].tolist()] if len(first) < 5 else []
        top = max(top, float(proven.max(initial=-np.inf)))
        live = live or bool(np.any(masks[cols["settlement"] != _PRUNED]))
    dup = bool(rd.N) and _has_duplicates(np.concatenate(hashes) if hashes else np.zeros(0, np.uint64), rd.path)
    return bad, dup, top, unproven, first, live


def verify_binary(path: Any, P: StatedProblem, exact: bool) -> VerifyReport:
    """The report on the binary pattern certificate at ``path`` for the stated problem ``P``."""
    lim = limits(P)
    with BinaryReader(path, lim.digits) as rd:
        c = rd.claim
        mismatch = problem_mismatch(rd.meta.get("problem"), P)
        if mismatch:
            return refused(c, mismatch)
        if rd.N > lim.patterns:
            raise CertificateError(f"binary certificate {rd.path}: n_patterns = {rd.N} exceeds {lim.patterns}, twice "
                                   "Cover's count of chambers of the stated problem (no arrangement has more than the count)")
        bad, dup, top, unproven, first, live = stream(rd, P, exact)
    checks: dict[str, Any] = {"problem": {"ok": True}}
    value, reasons = check_value(c, P, live, exact)
    checks["value"] = {"ok": not reasons, "recomputed": value}
    info, why = completeness(P, rd.N, bad, dup, rd.exact)
    checks["completeness"] = info
    reasons += why
    checks["dual_evidence"] = len(rd.evidence)
    return conclude(c, value, top, unproven, first, reasons, checks)
