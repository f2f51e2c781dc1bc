"""The checker's verdict on a pattern certificate, JSON or binary (loaded for pattern certificates only):
the value, the completeness of the pattern list (an exact count of the arrangement's chambers) and
every pattern's bound.  Tree certificates are :mod:`._verify`'s own; the verdict is :mod:`._verdict`'s."""

from __future__ import annotations

from typing import Any

import numpy as np

from relu_gating.checker._bounds import prove
from relu_gating.checker._constants import BOUND_SLACK
from relu_gating.checker._limits import limits
from relu_gating.checker._problem import StatedProblem
from relu_gating.checker._read import parse_claim
from relu_gating.checker._verdict import PRUNED, VerifyReport, check_value, conclude, problem_mismatch, refused
from relu_gating.errors import CertificateError

__all__ = ["verify_patterns", "verify_binary"]


def _count(P: StatedProblem, N: int) -> tuple[int, str]:
    from relu_gating.checker._complete import chamber_count, cover_count, hyperplanes  # pattern certificates only

    normals, r = hyperplanes(P)
    cover = cover_count(len(normals), r)
    return (cover, "cover") if N == cover else (chamber_count(normals, r), "deletion-restriction")


def _completeness(P: StatedProblem, N: int, bad: list, dup: bool, exact_w: dict) -> tuple[dict, list[str]]:
    expected, method = _count(P, N)
    bad_x = [i for i in bad if i in exact_w]
    why = (f"{len(bad_x)} exact witness(es) do not realize their pattern (first: #{bad_x[0]})" if bad_x else
           f"{len(bad)} witness(es) do not realize their pattern (first: #{bad[0]})" if bad else
           "duplicate patterns" if dup else
           f"found {N} distinct realized patterns, the arrangement has {expected}" if N != expected else "")
    info = {"ok": not why, "method": method, "expected": expected, "found": N}
    return info, ([f"pattern set is not a complete list of realized patterns: {why}"] if why else [])


def verify_patterns(d: dict, P: StatedProblem, exact: bool) -> VerifyReport:
    from relu_gating.checker._complete import bad_witnesses, duplicates  # not loaded for a tree certificate
    from relu_gating.checker._read_patterns import parse_patterns

    c = parse_claim(d)
    mismatch = problem_mismatch(d.get("problem"), P)
    if mismatch:
        return refused(c, mismatch)
    lim = limits(P)
    p = parse_patterns(d, c.n, c.m, lim.digits, lim.patterns)
    checks: dict[str, Any] = {"problem": {"ok": True}}
    value, reasons = check_value(c, P, bool(np.any(p.packed[p.settlement != PRUNED])), exact)
    checks["value"] = {"ok": not reasons, "recomputed": value}
    bad = bad_witnesses(P, 0, p.packed, p.witnesses, p.exact_witnesses, exact)
    info, why = _completeness(P, len(p.bounds), bad, duplicates(p.packed), p.exact_witnesses)
    checks["completeness"] = info
    reasons += why
    masks = np.unpackbits(p.packed, axis=1, count=c.n).astype(bool)
    proven = prove(P, masks, p.bounds, p.evidence, p.settlement == PRUNED, exact)
    bad_b = np.flatnonzero(proven > p.bounds + BOUND_SLACK)
    checks["dual_evidence"] = len(p.evidence)
    return conclude(c, value, float(proven.max(initial=-np.inf)), int(bad_b.size),
                    [f"pattern {i}" for i in bad_b[:5].tolist()], reasons, checks)


def verify_binary(path: Any, P: StatedProblem, exact: bool) -> VerifyReport:
    from relu_gating.checker._binary import stream
    from relu_gating.checker._read_npz import BinaryReader  # binary certificates only: loaded then

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
    info, why = _completeness(P, rd.N, bad, dup, rd.exact)
    checks["completeness"] = info
    reasons += why
    checks["dual_evidence"] = len(rd.evidence)
    return conclude(c, value, top, unproven, first, reasons, checks)
