"""Dual evidence for a pattern whose pencil has an exact kernel (private).

Where ``Y = (I - Pi_H) S Phi`` has an exact kernel ``K`` (fewer independent active samples than
columns of ``Phi``: thin chambers, small supports, near-duplicates), moving ``theta`` along ``K``
leaves the objective unchanged.  A certificate ``u B - A - G_T^T N G_T >= 0`` then needs
``G_T^T N G_T`` to vanish on ``K`` exactly; a solver's float ``N`` never does, so the exact check
refutes it, and before this module such a pattern fell back to a weaker bound (not settled).

Here the multipliers are put on **combinations of rows that annihilate** ``K`` (Fourier-Motzkin):
``c = sum_i lam_i G_i`` with ``lam > 0`` and ``sum_i lam_i G_i K = 0``, so ``c theta >= 0`` on the
cone and ``c K = 0``.  A solver finds multipliers ``N_c`` on the combinations in the quotient by
``K`` (floats); they are mapped back to the rows **exactly**, ``N = Lam^T N_c Lam`` in rationals
(entrywise nonnegative, and ``G_T^T N G_T = C^T N_c C`` vanishes on ``K``), and the claim is decided
by the exact check like any other.  The certificate carries ``N``'s entries as exact rationals
(``FORMAT.md``); the checker needs nothing else.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import numpy as np

from relu_gating._inputs.scaling import pow2_norms

__all__ = ["kernel_evidence", "exact_nullspace", "COMBO_ROWS", "MAX_COMBOS", "MAX_SUBSETS"]

#: Rows considered for the combinations (the solver's evidence rows first, then the tightest).
COMBO_ROWS = 16
#: At most this many combinations enter the solver.
MAX_COMBOS = 400
#: At most this many row subsets are tried for combinations (a kernel of dimension k needs subsets of
#: up to k + 1 rows: at k >= 3 the candidates are many, and the exact null spaces cost ~0.1 ms each).
MAX_SUBSETS = 3000


def exact_nullspace(M: list[list[Fraction]], cols: int) -> list[list[Fraction]]:
    """A basis of ``{x : M x = 0}`` in rationals (:func:`solvers.exact_nullspace`)."""
    import solvers

    return solvers.exact_nullspace(M, cols)


def _combinations(g: list[list[Fraction]], k: int) -> list[tuple[tuple[int, ...], list[Fraction]]]:
    """Minimal nonnegative combinations ``lam`` of the rows (indices into ``g``) with
    ``sum lam_i g_i = 0``: subsets of at most ``k + 1`` rows whose ``g`` have a one-dimensional
    null space of one sign."""
    out: list[tuple[tuple[int, ...], list[Fraction]]] = []
    tried = 0
    for t in range(1, k + 2):
        for T in itertools.combinations(range(len(g)), t):
            tried += 1
            if tried > MAX_SUBSETS:
                return out
            null = exact_nullspace([[g[i][a] for i in T] for a in range(k)], t)
            if len(null) != 1 or any(v == 0 for v in null[0]):
                continue
            lam = null[0] if null[0][0] > 0 else [-v for v in null[0]]
            if all(v > 0 for v in lam):
                top = max(lam)
                out.append((T, [v / top for v in lam]))
            if len(out) >= MAX_COMBOS:
                return out
    return out


def _candidates(obj: Any, mask: np.ndarray, rows0: np.ndarray, points: list[np.ndarray]) -> np.ndarray:
    """The rows for the combinations: the solver's evidence rows, then for each point (weights) the
    rows tightest there and the rows it violates most (only a choice: any rows give valid combinations)."""
    rows = [int(i) for i in np.asarray(rows0, dtype=np.int64).reshape(-1)]
    Phi = obj.Phi
    sgn = np.where(mask, 1.0, -1.0)
    norms = np.maximum(pow2_norms(Phi, axis=1), 1e-300)
    for theta in points:
        with np.errstate(all="ignore"):  # a choice of rows: products past the float range order last (nan)
            w = sgn * (Phi @ theta) / norms / max(float(pow2_norms(theta)), 1e-300)
        rows += [int(i) for i in np.argsort(np.abs(w), kind="stable")[:COMBO_ROWS // 2]]
        rows += [int(i) for i in np.argsort(w, kind="stable")[:COMBO_ROWS // 4]]
    live = np.any(Phi != 0, axis=1)
    out: list[int] = []
    for i in rows:
        if live[i] and i not in out:
            out.append(i)
        if len(out) >= COMBO_ROWS:
            break
    return np.array(out, dtype=np.int64)


def _top(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The top generalized eigenvector of ``(A, B)``, ``B`` positive definite (floats: a direction to look)."""
    w, V = np.linalg.eigh(0.5 * (B + B.T))
    with np.errstate(all="ignore"):  # a direction only: where it leaves the float range, none (zeros)
        Wh = V / np.sqrt(np.maximum(w, 1e-300))
        top = Wh @ np.linalg.eigh(Wh.T @ A @ Wh)[1][:, -1] if np.all(np.isfinite(Wh.T @ A @ Wh)) else None
    return top if top is not None and np.all(np.isfinite(top)) else np.zeros(A.shape[0])


def _on_rows(combos: list, Nc: list[list[Fraction]], p: int) -> np.ndarray:
    """``Lam^T N_c Lam`` exactly (p x p object array): each combination touches at most ``k + 1`` rows."""
    N = [[Fraction(0)] * p for _ in range(p)]
    for (Ta, la), row in zip(combos, Nc):
        for (Tb, lb), w in zip(combos, row):
            if w:
                for i, li in zip(Ta, la):
                    for j, lj in zip(Tb, lb):
                        N[i][j] += li * w * lj
    out = np.empty((p, p), dtype=object)
    out[:, :] = N
    return out


def kernel_evidence(obj: Any, basis: Any, mask: np.ndarray, claims: list[float], rows0: np.ndarray,
                    budget: Any = None) -> tuple[float, tuple] | None:
    """``(u, (rows, N))`` with ``N`` exact (an object array of Fractions) proving the least ``u`` of
    ``claims`` (or of the solver's bound on the combinations) in exact rationals, for a pattern whose
    pencil has an exact kernel; None when the kernel is trivial or nothing is proven.  ``basis``: the
    exact orthogonal basis of ``col(H)`` (:func:`relu_gating.certificate.exact_feature_basis`).
    Rationals beyond the float range on the way (inputs spanning the ends of the float range) give
    None too: the claim then falls back."""
    try:
        return _kernel_evidence(obj, basis, mask, claims, rows0, budget)
    except (OverflowError, ZeroDivisionError, FloatingPointError):
        return None


def _kernel_evidence(obj: Any, basis: Any, mask: np.ndarray, claims: list[float], rows0: np.ndarray,
                     budget: Any = None) -> tuple[float, tuple] | None:
    import solvers

    from relu_gating.search._exact.dual_polish import polish
    from relu_gating.search.proofs import exact_below, exact_gram, exact_parts, exact_pencil

    A, B = exact_pencil(obj.Phi, obj.U_K, basis, mask)
    m = len(B)
    K = exact_nullspace(B, m)
    if not K or len(K) == m:
        return None
    Kf = np.array([[float(v) for v in kv] for kv in K]).T
    Tc = np.linalg.svd(Kf.T)[2][len(K):].T  # an orthonormal basis of the complement of K (floats: only a choice)
    Af, Bf = (np.array([[float(v) for v in row] for row in X]) for X in (A, B))
    top = Tc @ _top(Tc.T @ Af @ Tc, Tc.T @ Bf @ Tc)
    rows = _candidates(obj, mask, rows0, [top, -top])
    sgn = np.where(mask[rows], 1, -1)
    Grows = [[Fraction(float(v)) * int(s) for v in obj.Phi[i]] for i, s in zip(rows.tolist(), sgn.tolist())]
    g = [[sum((a * b for a, b in zip(Gr, kv)), Fraction(0)) for kv in K] for Gr in Grows]
    combos = _combinations(g, len(K))
    if not combos:
        return None
    C = np.array([[float(sum((v * Grows[i][j] for i, v in zip(T, lam)), Fraction(0))) for j in range(m)]
                  for T, lam in combos])
    try:
        dual = solvers.cone_dual(Tc.T @ Af @ Tc, Tc.T @ Bf @ Tc, C @ Tc)
    except (solvers.ConeEigError, np.linalg.LinAlgError):
        return None
    Nc = np.maximum(0.5 * (dual.N + dual.N.T), 0.0)
    if not np.all(np.isfinite(Nc)):
        return None
    ZZ = None if basis is None else exact_gram(obj.Phi, mask)
    slack = {float(dual.upper) * (1 + r) + r for r in (1e-12, 1e-10, 1e-9)} if np.isfinite(dual.upper) else set()
    tries = [(u, 0) for u in {float(c) for c in claims if np.isfinite(c)} | slack]
    cands = [Nc]
    pol = polish(Tc.T @ Af @ Tc, Tc.T @ Bf @ Tc, C @ Tc, Nc, float(dual.upper)) if np.isfinite(dual.upper) else None
    if pol is not None:  # a supremum on a face: the solver's multipliers polished there (dual_polish.py)
        cands.append(pol[1])
        tries += [(u, 1) for u in polish_ladder(pol[0]) if u < max(claims)]
    parts: dict = {}
    for u, k in sorted(tries):
        if k not in parts:
            N = _on_rows(combos, [[Fraction(float(v)) for v in row] for row in cands[k]], rows.size)
            keep = [a for a in range(rows.size) if any(N[a, b] for b in range(rows.size))]
            N, kept = N[np.ix_(keep, keep)], rows[keep]
            parts[k] = (kept, N, *exact_parts(obj.Phi, obj.U_K, basis, mask, kept, N))
        kept, N, AD, Bx = parts[k]
        if budget is not None:
            if budget.left <= 0:
                return None
            budget.left -= 1
        if exact_below(Fraction(u), AD, Bx, ZZ):
            return u, (kept, N)
    return None


def polish_ladder(lam: float) -> list[float]:
    """Where a polished face supremum ``lam`` (a float, to rounding) is tried: just above it, then
    one step of the checker's ladder (``2^-40``) and 1e-11 (relative) above."""
    s = max(1.0, abs(lam))
    f0 = lam + 16 * np.finfo(float).eps * s
    return [f0, f0 + 2.0**-40 * s, f0 + 1e-11 * s]
