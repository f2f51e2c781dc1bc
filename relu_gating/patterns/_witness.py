"""Certification of witnesses: does ``theta`` strictly realize its pattern? (private)

A witness ``w`` certifies mask ``s`` when ``(2 s_i - 1) phi_i . w > 0`` for every
nonzero row and ``s_i`` is False on zero rows.  ``phi_i . w`` is evaluated in
float64 with the rigorous bound ``|fl(x.y) - x.y| <= 1.1 (m + 2) u ||x|| ||y||``;
rows the bound cannot settle are decided exactly with rationals.  Witnesses
float64 cannot certify are replaced, when possible, by the max-margin point of
the chamber (an LP, HiGHS), so that they certify in float64.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from relu_gating._inputs.scaling import pow2_norms

from relu_gating.patterns._exact import U, skinny_matmul

__all__ = ["float_certified", "exact_realizes", "improve_witness", "refine_witness", "check_witnesses"]

_CHUNK = 8192


def float_certified(Phi: np.ndarray, packed: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Bool (N,): the witness certifies its packed mask in float64 arithmetic alone.

    With ``Pn`` the rows of ``Phi`` normalised in float64 (relative error <= 2u per
    entry), ``fl(Pn_j . w)`` differs from the exact ``phi_j . w / ||phi_j||`` by at
    most ``1.1 (m + 3) u ||w||`` (Higham's dot-product bound plus the
    normalisation error), so a signed value above that bound certifies the exact sign.
    Zero rows must be inactive.
    """
    n, m = Phi.shape
    N = W.shape[0]
    out = np.zeros(N, dtype=bool)
    nzr = np.any(Phi != 0, axis=1)
    nz = np.flatnonzero(nzr)
    PnT = np.ascontiguousarray((Phi[nz] / pow2_norms(Phi[nz], axis=1)[:, None]).T)
    zero_bits = np.packbits(~nzr)
    fac = 1.2 * (m + 4) * U
    for s in range(0, N, _CHUNK):
        Wc = W[s:s + _CHUNK]
        pk = packed[s:s + _CHUNK]
        wn = pow2_norms(Wc, axis=1)
        ok = np.isfinite(wn) & ~np.any(pk & zero_bits, axis=1)
        if nz.size == n:  # fast path: sign bits must match, every |value| above the bound
            V = skinny_matmul(Wc, PnT)
            ok &= np.all(np.packbits(V > 0, axis=1) == pk, axis=1)
            ok &= np.abs(V, out=V).min(axis=1) > fac * wn
        elif nz.size:
            V = skinny_matmul(Wc, PnT)
            inactive = ~np.unpackbits(pk, axis=1, count=n)[:, nz].astype(bool)
            np.negative(V, out=V, where=inactive)
            ok &= V.min(axis=1) > fac * wn
        out[s:s + _CHUNK] = ok
    return out


def exact_realizes(Phi: np.ndarray, mask: np.ndarray, w: np.ndarray) -> bool:
    """Exact (rational) check that ``w`` strictly realizes ``mask`` (zero rows inactive)."""
    if not np.all(np.isfinite(w)):
        return False
    wf = [Fraction(float(x)) for x in w]
    for i in range(Phi.shape[0]):
        row = Phi[i]
        if not np.any(row != 0):
            if mask[i]:
                return False
            continue
        v = sum((Fraction(float(a)) * b for a, b in zip(row, wf) if a != 0), Fraction(0))
        if (v > 0) != bool(mask[i]) or v == 0:
            return False
    return True


def improve_witness(Phi: np.ndarray, mask: np.ndarray) -> np.ndarray | None:
    """Max-margin point of the chamber of ``mask`` (LP), or None if infeasible."""
    from scipy.optimize import linprog

    nz = np.any(Phi != 0, axis=1)
    A = Phi[nz] / pow2_norms(Phi[nz], axis=1)[:, None]
    sg = np.where(mask[nz], 1.0, -1.0)
    m = Phi.shape[1]
    # maximise t  s.t.  sg_i a_i . w >= t,  -1 <= w <= 1,  t <= 1
    A_ub = np.concatenate([-(sg[:, None] * A), np.ones((A.shape[0], 1))], axis=1)
    res = linprog(np.r_[np.zeros(m), -1.0], A_ub=A_ub, b_ub=np.zeros(A.shape[0]),
                  bounds=[(-1, 1)] * m + [(None, 1)], method="highs")
    if res.status != 0 or -res.fun <= 0:
        return None
    return res.x[:m]


def refine_witness(Phi: np.ndarray, mask: np.ndarray, w0: np.ndarray, rounds: int = 4) -> np.ndarray:
    """Re-centre a nearly valid witness of a thin chamber (iterative refinement of an LP).

    Around ``w``, only the rows with small residuals ``r_i = s_i a_i . w`` matter;
    with ``delta`` their scale, the LP ``max t : s_i a_i . z + r_i / delta >= t,
    |z| <= 1`` has O(1) data, so HiGHS solves it accurately, and ``w + delta z``
    moves towards the centre of the chamber at scale ``delta``.
    """
    from scipy.optimize import linprog

    nz = np.any(Phi != 0, axis=1)
    A = Phi[nz] / pow2_norms(Phi[nz], axis=1)[:, None]
    sg = np.where(mask[nz], 1.0, -1.0)
    m = Phi.shape[1]
    w = w0 / float(pow2_norms(w0))
    for _ in range(rounds):
        r = sg * (A @ w)
        delta = 8 * float(np.sort(np.abs(r))[min(len(r) - 1, m)]) + 1e-300
        keep = r < 1e3 * delta
        Ak = sg[keep, None] * A[keep]
        A_ub = np.concatenate([-Ak, np.ones((Ak.shape[0], 1))], axis=1)
        res = linprog(np.r_[np.zeros(m), -1.0], A_ub=A_ub, b_ub=r[keep] / delta,
                      bounds=[(-1, 1)] * m + [(None, 1)], method="highs")
        if res.status != 0 or -res.fun <= 0:
            break
        w = w + delta * res.x[:m]
        w /= float(pow2_norms(w))
    return w


def check_witnesses(Phi: np.ndarray, packed: np.ndarray, W: np.ndarray, *, repair: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """Certify every witness; returns ``(W, ok, n_exact_only)``.

    ``ok[k]`` is True when witness k realizes its mask (in float64 with margin, or
    exactly).  With ``repair`` a witness that fails in float64 is first replaced by
    the LP max-margin point when that one certifies.  ``n_exact_only`` counts the
    valid witnesses that only an exact evaluation certifies.
    """
    n = Phi.shape[0]
    ok = float_certified(Phi, packed, W)
    bad = np.flatnonzero(~ok)
    n_exact = 0
    if bad.size:
        W = W.copy()
        masks = np.unpackbits(packed[bad], axis=1, count=n).astype(bool)
        for k, b in enumerate(bad):
            cands = [W[b]]
            if repair:
                w2 = improve_witness(Phi, masks[k])
                if w2 is not None:
                    cands.insert(0, w2)
                cands.insert(0, refine_witness(Phi, masks[k], w2 if w2 is not None else W[b]))
                good = [c for c in cands if float_certified(Phi, packed[b:b + 1], c[None, :])[0]]
                if good:
                    W[b] = good[0]
                    ok[b] = True
                    continue
            for c in cands:
                if exact_realizes(Phi, masks[k], c):
                    W[b] = c
                    ok[b] = True
                    n_exact += 1
                    break
    return W, ok, n_exact
