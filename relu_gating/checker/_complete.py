"""Completeness of a pattern list (the checker's own; no code shared with the enumerator).

A list of masks is the complete list of realized gating patterns when (1) each witness strictly
realizes its mask, (2) the masks are distinct, (3) their number equals the number of chambers of
the arrangement of the hyperplanes ``phi_i theta = 0``.  (1) is accepted in floats only with a
rigorous rounding bound, else decided in exact rationals; (2) is decided on canonical packed
masks (padding bits checked zero by the readers) by each form's verdict (:mod:`._verify_patterns`,
:mod:`._binary`); (3) is an exact count: the distinct hyperplanes
are found in integers (rows of the independent columns of ``Phi``, made primitive), and the count
is Cover's ``2 sum_{k<r} C(q-1, k)`` when the list reaches it (an upper bound for every
arrangement of ``q`` hyperplanes of rank ``r``, so reaching it proves it), else Zaslavsky's
deletion-restriction recursion ``r(A) = r(A - H) + r(A^H)`` in integer coordinates.
"""

from __future__ import annotations

from math import gcd

import numpy as np

from relu_gating.checker._constants import EPS
from relu_gating.checker._floats import gamma
from relu_gating.checker._limits import cover
from relu_gating.checker._problem import StatedProblem
from relu_gating.checker._rational import row_to_ints, to_ints

__all__ = ["completeness", "bad_witnesses", "witnesses_ok", "exact_witness_ok", "hyperplanes", "chamber_count"]


def witnesses_ok(P: StatedProblem, packed: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Bool per witness: it strictly realizes its mask (zero rows of ``Phi`` inactive), accepted in
    floats with a rigorous bound, else decided exactly.  ``fl(phi_j . w)`` is within
    ``gamma_{m+1} max|w| ||phi_j||_1 + (m + 1) 2^-1074`` of the exact value (Higham; the second
    term is underflow, at most one subnormal unit per product and sum); the test divides by
    ``||phi_j||_1`` (three more roundings, covered by the factor ``1 + 8 eps``).  Non-finite
    products are never accepted in floats."""
    n, m = P.Phi.shape
    nz = np.any(P.Phi != 0, axis=1)
    zero_bits = np.packbits(~nz)
    r = np.abs(P.Phi[nz]).sum(axis=1) * (1 + gamma(m))
    inv_r = np.divide(1.0, r, out=np.zeros_like(r), where=r >= 2.0**-1000)  # 1/r would overflow: exact (under inf)
    under = np.where(inv_r > 0, (m + 1) * 2.0**-1074 * inv_r * (1 + 8 * EPS), np.inf)
    PhiT = np.ascontiguousarray(P.Phi[nz].T)
    ok = np.zeros(len(W), dtype=bool)
    for s in range(0, len(W), 4096):
        Wc, pk = W[s:s + 4096], packed[s:s + 4096]
        c = (gamma(m + 1) * np.abs(Wc).max(axis=1) + 2.0**-1000) * (1 + 8 * EPS)
        V = Wc @ PhiT
        if nz.all():
            good = np.all(np.packbits(V > 0, axis=1) == pk, axis=1)
        else:
            good = np.all(np.unpackbits(pk, axis=1, count=n)[:, nz].astype(bool) == (V > 0), axis=1)
            good &= ~np.any(pk & zero_bits, axis=1)
        good &= np.all(np.isfinite(V), axis=1) & np.all(np.isfinite(Wc), axis=1)
        np.abs(V, out=V)
        V *= inv_r
        V -= under
        ok[s:s + 4096] = good & (V.min(axis=1, initial=np.inf) > c)
    for k in np.flatnonzero(~ok):
        ok[k] = _exact_w(P, packed[k], W[k]) if np.all(np.isfinite(W[k])) else False
    return ok


def _sign(P: StatedProblem, i: int, t: list[int]) -> int:
    """Exact sign of ``phi_i . t`` for integers ``t`` (the row scaled to integers by a power of two)."""
    v = sum(a * b for a, b in zip(row_to_ints(P.Phi[i]), t))
    return (v > 0) - (v < 0)


def exact_witness_ok(P: StatedProblem, mask: np.ndarray, t: tuple) -> bool:
    """An integer witness ``t`` strictly realizes ``mask`` (exactly; zero rows inactive)."""
    for i in range(P.n):
        s = _sign(P, i, list(t))
        if (s == 0 and (mask[i] or np.any(P.Phi[i] != 0))) or (s != 0 and (s > 0) != bool(mask[i])):
            return False
    return True


def _primitive(v: list[int]) -> tuple | None:
    g = 0
    for x in v:
        g = gcd(g, x)
    if g == 0:
        return None
    lead = next(x for x in v if x)
    g = g if lead > 0 else -g
    return tuple(x // g for x in v)


def hyperplanes(P: StatedProblem) -> tuple[list[tuple], int]:
    """The distinct hyperplanes (primitive integer normals in the coordinates of ``Phi_r``) and the rank."""
    keys = {_primitive(row_to_ints(row)) for row in P.Phi_r}
    keys.discard(None)
    return sorted(keys), P.Phi_r.shape[1]


def _restrict(normals: list[tuple], a: tuple) -> list[tuple]:
    """The distinct traces of ``normals`` on the hyperplane ``a . x = 0`` (coordinates
    ``x . (a_p e_j - a_j e_p)``, ``j != p``)."""
    p = next(j for j, x in enumerate(a) if x)
    out = set()
    for b in normals:
        c = _primitive([a[p] * b[j] - a[j] * b[p] for j in range(len(a)) if j != p])
        if c is not None:
            out.add(c)
    return sorted(out)


def chamber_count(normals: list[tuple], d: int) -> int:
    """Exact number of chambers of a central arrangement of distinct hyperplanes in ``R^d``
    (deletion-restriction, adding hyperplanes one at a time: each adds the chambers of the
    arrangement its predecessors cut on it)."""
    if not normals:
        return 1
    if d == 1:
        return 2
    if d == 2:
        return 2 * len(normals)
    return 1 + sum(chamber_count(_restrict(normals[:k], a), d - 1) for k, a in enumerate(normals))


def bad_witnesses(P: StatedProblem, s: int, packed: np.ndarray, W: np.ndarray, exact_w: dict, exact: bool) -> list:
    """Indices (offset ``s``) of the patterns whose witness does not strictly realize the mask."""
    n = P.n
    ok = witnesses_ok(P, packed, W) if not exact else np.zeros(len(W), dtype=bool)
    bad = []
    for j in range(len(W)):
        if s + j in exact_w:
            ok[j] = exact_witness_ok(P, np.unpackbits(packed[j], count=n).astype(bool), exact_w[s + j])
        elif exact and not ok[j]:
            ok[j] = _exact_w(P, packed[j], W[j])
        if not ok[j]:
            bad.append(s + j)
    return bad


def _exact_w(P: StatedProblem, packed: np.ndarray, w: np.ndarray) -> bool:
    return exact_witness_ok(P, np.unpackbits(packed, count=P.n).astype(bool), tuple(to_ints(w)[0]))


def completeness(P: StatedProblem, N: int, bad: list, dup: bool, exact_w: dict) -> tuple[dict, list[str]]:
    """The completeness check of a list of ``N`` patterns (``bad`` the indices whose witness fails, ``dup``
    whether two masks are equal, ``exact_w`` the exact witnesses): its figures and its reason to fail, if any."""
    normals, r = hyperplanes(P)
    count = cover(len(normals), r)
    expected, method = (count, "cover") if N == count else (chamber_count(normals, r), "deletion-restriction")
    bad_x = [i for i in bad if i in exact_w]
    why = (f"{len(bad_x)} exact witness(es) do not realize their pattern (first: #{bad_x[0]})" if bad_x else
           f"{len(bad)} witness(es) do not realize their pattern (first: #{bad[0]})" if bad else
           "duplicate patterns" if dup else
           f"found {N} distinct realized patterns, the arrangement has {expected}" if N != expected else "")
    info = {"ok": not why, "method": method, "expected": expected, "found": N}
    return info, ([f"pattern set is not a complete list of realized patterns: {why}"] if why else [])
