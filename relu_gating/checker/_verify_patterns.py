"""The checker's verdict on a JSON pattern certificate (loaded for JSON pattern certificates only): the
value, the completeness of the pattern list (:mod:`._complete`) and every pattern's bound.  The binary
form is :mod:`._binary`'s, tree certificates :mod:`._verify`'s; the verdict is :mod:`._verdict`'s."""

from __future__ import annotations

from typing import Any

import numpy as np

from relu_gating.checker._bounds import prove
from relu_gating.checker._complete import bad_witnesses, completeness
from relu_gating.checker._constants import BOUND_SLACK
from relu_gating.checker._limits import limits
from relu_gating.checker._problem import StatedProblem
from relu_gating.checker._read import parse_claim
from relu_gating.checker._read_patterns import parse_patterns
from relu_gating.checker._verdict import PRUNED, VerifyReport, check_value, conclude, problem_mismatch, refused

__all__ = ["verify_patterns", "duplicates"]


def duplicates(packed: np.ndarray) -> bool:
    """Two equal canonical masks."""
    if packed.shape[0] < 2:
        return False
    rows = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).ravel()
    return np.unique(rows).size != rows.size


def verify_patterns(d: dict, P: StatedProblem, exact: bool) -> VerifyReport:
    """The report on the JSON pattern certificate ``d`` for the stated problem ``P``."""
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
    info, why = completeness(P, len(p.bounds), bad, duplicates(p.packed), p.exact_witnesses)
    checks["completeness"] = info
    reasons += why
    masks = np.unpackbits(p.packed, axis=1, count=c.n).astype(bool)
    proven = prove(P, masks, p.bounds, p.evidence, p.settlement == PRUNED, exact)
    bad_b = np.flatnonzero(proven > p.bounds + BOUND_SLACK)
    checks["dual_evidence"] = len(p.evidence)
    return conclude(c, value, float(proven.max(initial=-np.inf)), int(bad_b.size),
                    [f"pattern {i}" for i in bad_b[:5].tolist()], reasons, checks)
