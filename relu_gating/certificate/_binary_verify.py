"""Streamed verification of a binary certificate in bounded memory (private; via :func:`verify`).

The same checks as for the JSON form (``FORMAT.md``), with the verifier's own
tolerances and the problem stated by the caller, run chunk by chunk over the
columns of the ``.npz``:

* each witness (or exact witness) strictly realizes its mask (float64 with a
  rigorous rounding bound, else exact rationals or integers);
* the masks are distinct: a 64-bit hash per mask (8 bytes per pattern, the
  only per-pattern memory), sorted; distinct hashes prove distinct masks, and
  equal hashes are settled by comparing the masks themselves in a second pass;
* their number equals the chamber count (Cover's bound reached, or the exact
  count of :mod:`relu_gating.patterns`);
* every claimed bound is proven (pencil, support, cap, dual evidence);
* the value recomputes, and certification holds with the proven bounds.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from relu_gating.certificate._binary import BinaryReader
from relu_gating.certificate._problem import StatedProblem, pow2_scales, state_problem
from relu_gating.certificate._verify import (BOUND_SLACK, VerifyReport, _problem_mismatch,
                                             _prove, check_value, conclude)
from relu_gating.errors import CertificateError

__all__ = ["verify_binary"]

_PRUNED = 3
_MIX = np.uint64(0x9E3779B97F4A7C15)


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


class _Completeness:
    """Per-chunk witness checks and mask hashes; the count is decided at the end."""

    def __init__(self, P: StatedProblem, exact: dict) -> None:
        from relu_gating.patterns._exact_witness import IntPhi

        self.d = pow2_scales(P.Phi)
        self.Phi = P.Phi * self.d
        e = -np.frexp(self.d)[1] + 1  # d = 2^-e
        self.exact = {k: tuple(int(t) << int(ej - e.min()) for t, ej in zip(v, e)) for k, v in exact.items()}
        self.iphi = IntPhi(self.Phi) if self.exact else None
        self.hashes: list[np.ndarray] = []
        self.bad: list[int] = []
        self.bad_exact: list[int] = []

    def chunk(self, s: int, packed: np.ndarray, W: np.ndarray, n: int) -> None:
        from relu_gating.patterns._witness import exact_realizes, float_certified

        W = W / self.d
        W = W * pow2_scales(W, axis=1)
        ok = float_certified(self.Phi, packed, W)
        for k in [k for k in self.exact if s <= k < s + packed.shape[0]]:
            mask = np.unpackbits(packed[k - s], count=n).astype(bool)
            if self.iphi is None or not self.iphi.realizes(mask.tolist(), self.exact[k]):
                self.bad_exact.append(k)
            else:
                ok[k - s] = True
        for j in np.flatnonzero(~ok).tolist():
            if not exact_realizes(self.Phi, np.unpackbits(packed[j], count=n).astype(bool), W[j]):
                self.bad.append(s + j)
        self.hashes.append(_row_hash(packed))

    def verdict(self, reader: BinaryReader) -> tuple[dict, list[str]]:
        from relu_gating.patterns._count import PatternCount, count_reduced, cover_count
        from relu_gating.patterns._rowspace import reduce_rows

        N = reader.N
        red = reduce_rows(self.Phi)
        cover = cover_count(red.q, red.rank)
        cnt = (PatternCount(cover, True, "cover", red.rank, red.q) if N == cover and red.rank > 1
               else count_reduced(red, "exact"))
        info = {"ok": False, "method": cnt.method, "expected": cnt.count, "found": N}
        why = ""
        if self.bad_exact:
            why = f"{len(self.bad_exact)} exact witness(es) do not realize their pattern (first: #{self.bad_exact[0]})"
        elif self.bad:
            why = f"{len(self.bad)} witness(es) do not realize their pattern (first: #{self.bad[0]})"
        elif N and _has_duplicates(np.concatenate(self.hashes), reader):
            why = "duplicate patterns"
        elif N != cnt.count:
            why = f"found {N} distinct realized patterns, the arrangement has {cnt.count}"
        info["ok"] = not why
        return info, ([f"pattern set is not a complete list of realized patterns: {why}"] if why else [])


def _has_duplicates(h: np.ndarray, reader: BinaryReader) -> bool:
    """Exact: distinct hashes prove distinct masks; masks sharing a hash are compared bit for bit."""
    srt = np.sort(h)
    same = srt[1:] == srt[:-1]
    if not same.any():
        return False
    suspects = np.unique(srt[1:][same])
    seen: set = set()
    with BinaryReader(reader.path) as again:
        for _, cols in again.chunks():
            pk = cols["masks"]
            for j in np.flatnonzero(np.isin(_row_hash(pk), suspects)).tolist():
                key = pk[j].tobytes()
                if key in seen:
                    return True
                seen.add(key)
    return False


def _claims(meta: dict, n: int, m: int) -> SimpleNamespace:
    try:
        theta = np.asarray(meta["theta"], dtype=float).reshape(m)
        pattern = np.frombuffer(str(meta["pattern"]).encode(), dtype=np.uint8) == ord("1")
        c = SimpleNamespace(d=meta, theta=theta, pattern=pattern, value=float(meta["value"]),
                            upper_bound=float(meta["upper_bound"]), alpha=float(meta["alpha"]),
                            certified=meta["certified"],
                            exact={int(k): tuple(int(x) for x in v) for k, v in meta.get("exact_witnesses", {}).items()})
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CertificateError(f"malformed certificate: {type(exc).__name__}: {exc}") from None
    if pattern.size != n or not isinstance(c.certified, bool) or not np.all(np.isfinite(
            [c.value, c.upper_bound, c.alpha])) or not np.all(np.isfinite(theta)):
        raise CertificateError("certificate value, upper_bound, alpha and theta must be finite numbers, pattern "
                               "n bits, certified a boolean")
    return c


def _bounds_chunk(P: StatedProblem, s: int, cols: dict, evidence: dict, ev_idx: np.ndarray, n: int) -> np.ndarray:
    """The bounds proven for one chunk (evidence re-keyed to the chunk)."""
    k = cols["bounds"].size
    lo, hi = np.searchsorted(ev_idx, [s, s + k])
    ev = {int(i) - s: evidence[int(i)] for i in ev_idx[lo:hi]}
    masks = np.unpackbits(cols["masks"], axis=1, count=n).astype(bool)
    return _prove(P, masks, cols["bounds"], ev, cols["settlement"] == _PRUNED)


def verify_binary(path: Any, Phi: Any, U_K: Any, features: Any = "bias") -> VerifyReport:
    """:func:`relu_gating.verify` for a binary certificate, streamed (see the module docstring)."""
    with BinaryReader(path) as rd:
        P = state_problem(Phi, U_K, features)
        c = _claims(rd.meta, rd.n, rd.m)
        mismatch = _problem_mismatch(c, P)  # type: ignore[arg-type]  # reads c.d only
        if mismatch:
            reason = "certificate is for another problem: " + "; ".join(mismatch)
            return VerifyReport(False, False, float("nan"), float("nan"), c.alpha, 0.0, (reason,),
                                {"problem": {"ok": False, "differences": mismatch}})
        if any(not 0 <= k < rd.N or len(v) != rd.m for k, v in c.exact.items()):
            raise CertificateError(f"exact witnesses must be keyed by a pattern index in [0, {rd.N}) and hold "
                                   f"m = {rd.m} integers")
        comp = _Completeness(P, c.exact)
        ev_idx = np.array(sorted(rd.evidence), dtype=np.int64)
        top, live, unproven = -np.inf, False, 0
        first: list[int] = []
        for s, cols in rd.chunks():
            comp.chunk(s, cols["masks"], cols["witnesses"], rd.n)
            proven = _bounds_chunk(P, s, cols, rd.evidence, ev_idx, rd.n)
            bad = np.flatnonzero(proven > cols["bounds"] + BOUND_SLACK)
            unproven += int(bad.size)
            first += (bad[:5 - len(first)] + s).tolist() if len(first) < 5 else []
            top = max(top, float(proven.max(initial=-np.inf)))
            live = live or bool(np.any(cols["masks"][cols["settlement"] != _PRUNED]))
        info, why = comp.verdict(rd)
    return _report(c, P, live, info, why, unproven, first, top, len(rd.evidence))


def _report(c: SimpleNamespace, P: StatedProblem, live: bool, info: dict, why: list, unproven: int, first: list,
            top: float, n_evidence: int) -> VerifyReport:
    checks: dict[str, Any] = {"problem": {"ok": True}}
    value, reasons = check_value(c, P, live)
    checks["value"] = {"ok": not reasons, "recomputed": value}
    checks["completeness"] = info
    reasons += why
    return conclude(c, value, top, unproven, first, n_evidence, reasons, checks)
