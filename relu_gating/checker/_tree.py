"""The walk of a tree certificate (``"kind": "tree"``; layout in ``FORMAT.md``).

A node is the closed cone of weights on which some rows of ``Phi`` have a fixed sign; the root
fixes none (rows of ``Phi`` that are exactly zero are always inactive).  The walk checks that the
leaves partition the weight space (splits on undecided rows, implied signs proven by a Farkas
combination: accepted in floats with a rigorous margin, else decided in exact rationals) and
proves every leaf's bound:

* ``b``: the node bound ``lambda_max(M^T M - M^T P_Z M)`` of :func:`node_bound` (``Z`` built from
  ``Phi``'s and ``H``'s own columns, complements with proven projector gaps), or the cap;
* ``c``: as a pattern bound (:func:`relu_gating.checker._bounds.prove`, dual evidence included);
* ``x``: an exclusion, decided exactly (:func:`relu_gating.checker._exact_claims.excluded`), or a chamber
  whose signed rows have an exact positive dependency covering every active row (:func:`_zero_leaf`):
  ``relu(Phi theta) = 0`` on its closed cone (a cone too thin for floats);
* ``d``: lifted evidence (:func:`lifted_bound`), accepted in floats with an allowance (tried first: where it
  proves the claim, at or below the cap, the leaf's node bound is not computed).

In exact mode every leaf bound and implied sign is decided in rationals instead.
"""

from __future__ import annotations

from base64 import b64decode
from itertools import chain
from typing import Any

import numpy as np

from relu_gating.checker._bounds import cap_bound, prove
from relu_gating.checker._constants import FARKAS_BATCH, MAX_NODES, ROUNDING_STEP
from relu_gating.checker._exact_claims import excluded, ladder
from relu_gating.checker._floats import allow, fro, gamma
from relu_gating.checker._limits import limits
from relu_gating.checker._problem import StatedProblem, pow2_scales
from relu_gating.checker._rational import solve
from relu_gating.checker._read import as_int, multipliers, rational
from relu_gating.checker._whiten import WHITEN_ABOVE, basis, basis_whitened
from relu_gating.errors import CertificateError, InputError

__all__ = ["walk", "node_bound", "PART", "PARALLEL_NODES"]


class _Node:
    """Per-problem data of the node bound."""

    def __init__(self, P: StatedProblem) -> None:
        self.P = P
        self.zero = ~np.any(P.Phi != 0, axis=1)
        self.Hs = None if P.H is None else P.H * pow2_scales(P.H)
        bias = bool(np.any(np.all(P.Phi == P.Phi[:1], axis=0) & (P.Phi[0] != 0)))  # 1 in col(Phi), exactly
        # the + block's h is Phi theta: it keeps only the columns of H not exactly in col(Phi) (the others make
        # [Phi_S, H_S] rank-deficient; in col(Phi): a constant column with the bias, or a column of Phi) and
        # not exactly 0 on the block's rows
        inphi = [bias and np.all(h == h[0]) or (P.Phi == h[:, None]).all(0).any() for h in getattr(P.H, "T", ())]
        self.Hp = None if all(inphi) else self.Hs[:, ~np.array(inphi, dtype=bool)]
        self.MtM = P.M.T @ P.M
        self.trM = float(np.trace(self.MtM))
        n, K = P.M.shape
        self.form = (allow(n, K + P.Phi_r.shape[1] + (0 if P.QH is None else P.QH.shape[1])) * (3 * self.trM + 1)
                     + 6 * P.d_M * (fro(P.U) + P.d_M))
        # exact mode's caps: the largest claim refuted and the least proven as the cap
        self.cap, self.lim, self.caps = cap_bound(P), limits(P), [-np.inf, np.inf]
        # every row of H the same (the bias): H's rows on a block are that row repeated, their basis a function of the
        # block's size, kept (the - block's basis was the node bound's largest cost); the same floats as anew
        self.same_rows, self.bases, self.kept = self.Hs is not None and bool(np.all(self.Hs == self.Hs[:1])), {}, 0
        self.scale = not all(((a := np.abs(X[X != 0])) > 2.0**-400).all() and (a < 2.0**400).all() for X in (P.Phi_r, self.Hs)
                             if X is not None)  # else no column of a block's rows is scaled

    def basis(self, X: np.ndarray, kept: bool = False) -> tuple[np.ndarray, float]:
        """An orthonormal basis ``O`` of ``col(X)`` and the proven ``eta >= ||P_X - O O^T||`` (the SVD's, or the
        whitened one's where that proves less); ``kept``: by ``X``'s shape (rows of ``H`` when :attr:`same_rows`),
        while the kept bases hold at most ``2^22`` floats (32 MB: bounded by the problem)."""
        O, eta = self.bases[X.shape] if kept and X.shape in self.bases else basis(X, self.scale)
        if eta >= 0.5 * WHITEN_ABOVE:  # an ill-conditioned X: the same column space from a better basis (kept: no better)
            O2, eta2 = basis_whitened(X)
            O, eta = (O2, eta2) if eta2 < eta else (O, eta)
        if kept and X.shape not in self.bases and self.kept + X.size <= 1 << 22:
            self.bases[X.shape], self.kept = (O, eta), self.kept + X.size
        return O, eta


def _complement(Mb: np.ndarray, X: np.ndarray | None, N: _Node, kept: bool = False) -> tuple[np.ndarray, float]:
    """``M_b^T (I - O O^T) M_b`` in a block of coordinates (``O`` from the SVD of ``X``, :meth:`_Node.basis`) and the
    proven ``eta >= ||P_X - O O^T||``; ``(0, 0)`` when empty or no ``eta < 1`` is proven (valid)."""
    K = Mb.shape[1]
    if Mb.shape[0] and (X is None or X.shape[1] == 0):
        return Mb.T @ Mb, 0.0
    if Mb.shape[0] == 0 or X.shape[0] <= X.shape[1] or not (got := N.basis(X, kept))[1] < 1.0:  # (fewer rows than columns)
        return np.zeros((K, K)), 0.0
    O, eta = got
    C = Mb.T @ O
    return Mb.T @ Mb - C @ C.T, eta


def node_bound(N: _Node, signs: np.ndarray) -> float:
    """Proven bound of the objective over the node with these signs (see the module docstring):
    the least over keeping or dropping each block (dropping one is valid and sheds its ``eta``)."""
    P = N.P
    plus, minus = (signs > 0) & ~N.zero, (signs < 0) | N.zero
    Cm, em = _complement(P.M[minus], None if N.Hs is None else N.Hs[minus], N, N.same_rows)
    Xp = P.Phi_r[plus] if N.Hp is None else np.hstack([P.Phi_r[plus], (Hb := N.Hp[plus])[:, np.any(Hb != 0, 0)]])
    Cp, ep = _complement(P.M[plus], Xp, N)
    T = N.MtM - np.stack([Cm + Cp, Cm, Cp, 0.0 * Cm])  # the four choices' eigenvalues in one call
    top = np.linalg.eigvalsh(0.5 * (T + T.transpose(0, 2, 1)))[:, -1].tolist()
    return min(lam + eta * N.trM + N.form for lam, eta in zip(top, (max(em, ep), em, ep, 0.0)))


def _multipliers(N: Any, p: int) -> np.ndarray:
    """``N`` as a ``p x p`` matrix: a dense list of rows, or ``{"p": p, "entries": [[k, l, v], ...]}`` (or the packed
    form, :func:`_packed`, decoded to that)
    (``N_kl = N_lk = v``; a pair named twice, an index off the range, not a JSON integer, or a missing
    key: ValueError; sizes checked before anything is allocated)."""
    if not isinstance(N, dict):
        return np.asarray(N, dtype=float).reshape(p, p)
    ent = N.get("entries")  # JSON: lists of [int, int, number]; the search's own: an array, indices integral
    if sorted(N) != ["entries", "p"] or type(N["p"]) is not int or N["p"] != p or len(ent) > p * (p + 1) // 2 or not (
            isinstance(ent, np.ndarray) or isinstance(ent, list) and set(map(type, ent)) <= {list} and set(map(len, ent)) <= {3}
            and set(map(type, (flat := list(chain.from_iterable(ent)))[0::3] + flat[1::3])) <= {int}):  # (C loops: 3x faster)
        raise ValueError("malformed sparse multipliers")
    e = np.asarray(ent if isinstance(ent, np.ndarray) else flat, dtype=float).reshape(-1, 3)
    i, j = np.sort(e[:, :2], axis=1).T  # a pair named twice, an index off the range or not an integer: refused
    if not (np.all(np.isfinite(e)) and np.all(e[:, :2] % 1 == 0) and np.all((i >= 0) & (j < p))
            and np.unique(i * p + j).size == i.size):
        raise ValueError("malformed sparse multipliers")
    out, (i, j) = np.zeros((p, p)), (i.astype(np.int64), j.astype(np.int64))
    out[i, j] = out[j, i] = e[:, 2]
    return out


def _packed(N: dict, p: int) -> dict:
    """The packed form ``{"p": p, "kl": base64, "v": base64}`` of a ``"d"`` leaf's ``N`` (``FORMAT.md``) as its
    entries ``{"p": p, "entries": [[k, l, v], ...]}`` (an array, checked as any entries by :func:`_multipliers`):
    ``kl`` the pairs' indices, little-endian uint32 ``k0 l0 k1 l1 ...``, ``v`` their values, little-endian float64,
    so both strings have one length, at most that of ``p (p + 1) / 2`` pairs (checked before decoding).  Strings
    that are not that, not base64 or not whole entries: a one-line CertificateError (a corrupt file)."""
    most = 4 * -(-8 * (p * (p + 1) // 2) // 3)  # base64 characters of p (p + 1) / 2 numbers of 8 bytes
    if not (type(N["p"]) is int and N["p"] == p and type(N["kl"]) is type(N["v"]) is str and len(N["kl"]) == len(N["v"]) <= most):
        raise CertificateError(f"malformed certificate: packed multipliers of a \"d\" leaf: not 2 strings of 1 length <= {most}")
    try:
        ij, v = (np.frombuffer(b64decode(N[x], validate=True), dtype=t) for x, t in (("kl", "<u4"), ("v", "<f8")))
        return {"p": p, "entries": np.column_stack([ij.reshape(v.size, 2), v])}  # (not whole entries: ValueError)
    except ValueError as exc:  # (binascii.Error is one)
        raise CertificateError(f"malformed certificate: a \"d\" leaf's packed multipliers: {str(exc)[:100]}") from None


def _lifted_evidence(n: int, signs: np.ndarray, zero: np.ndarray, claim: float, dec: Any, N: Any,
                     mu: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """``(dec, N, mu, undecided rows)`` of a ``"d"`` leaf read and checked for shape and range (``N`` a
    ``p x p`` float matrix), or None when malformed."""
    und = np.flatnonzero((signs == 0) & ~zero)
    if not (isinstance(dec, list) and all(type(i) is int for i in dec) and len(set(dec)) == len(dec) <= n
            and isinstance(mu, list) and len(mu) == und.size):  # distinct rows: sizes bounded by n before allocation
        return None
    N = _packed(N, len(dec) + 2 * und.size) if isinstance(N, dict) and sorted(N) == ["kl", "p", "v"] else N
    try:
        dec, mu = np.asarray(dec, dtype=np.int64).reshape(-1), np.asarray(mu, dtype=float).reshape(-1)
        N = _multipliers(N, dec.size + 2 * und.size)
    except (TypeError, ValueError, OverflowError):
        return None
    big = float(np.abs(np.concatenate([N.ravel(), mu, [0.0]])).max())  # nan or inf: not < 2^500
    bad = (dec.size and (dec.min() < 0 or dec.max() >= n)) or np.any(signs[dec] == 0) or np.any(zero[dec])
    return None if bad or mu.size != und.size or not (np.isfinite(claim) and big < 2.0**500) else (dec, N, mu, und)


def lifted_bound(P: StatedProblem, signs: np.ndarray, zero: np.ndarray, claim: float, dec: Any, N: Any,
                 mu: Any) -> float:
    """``claim`` if the lifted evidence ``(dec, N, mu)`` proves it on the node, else ``inf``
    (``u B - A - G^T N G - sum mu_i C_i`` PSD in floats with its allowance; ``FORMAT.md``)."""
    Q, M, QH = P.Q, P.M, P.QH
    n, r = Q.shape
    if (got := _lifted_evidence(n, signs, zero, claim, dec, N, mu)) is None:
        return np.inf
    dec, N, mu, und = got
    k, m, plus = und.size, dec.size, np.flatnonzero((signs > 0) & ~zero)
    Qp, Qu, Gd = Q[plus], Q[und], signs[dec, None] * Q[dec]
    # E = [Q on the active rows | a unit column per undecided row] (disjoint rows), G = [[Gd, 0], [0, I], [-Qu, I]]
    # (y_i >= 0, then y_i - q_i^T v >= 0): products by their blocks, the same sums less their zero terms
    ME = np.hstack([M[plus].T @ Qp, M[und].T])
    A, B = ME.T @ ME, np.zeros((r + k, r + k))
    B[:r, :r], B[r:, r:] = Qp.T @ Qp, np.eye(k)
    e = np.zeros(n)  # |E| 1: the entries' magnitudes summed as sum(|X^T X|) = || |X| 1 ||^2
    e[plus], e[und] = np.abs(Qp).sum(axis=1), 1.0
    magA, magB = float(np.square(np.abs(M).T @ e).sum()), float(e @ e)
    if QH is not None:
        HE = np.hstack([QH[plus].T @ Qp, QH[und].T])
        B = B - HE.T @ HE
        magB += float(np.square(np.abs(QH).T @ e).sum())
    Nc = np.maximum(0.5 * N + 0.5 * N.T, 0.0)
    NG = np.hstack([Nc[:, :m] @ Gd - Nc[:, m + k:] @ Qu, Nc[:, m:m + k] + Nc[:, m + k:]])  # Nc G
    C = np.vstack([Gd.T @ NG[:m] - Qu.T @ NG[m + k:], NG[m:m + k] + NG[m + k:]])  # G^T Nc G, then less sum mu_i C_i
    idx = r + np.arange(k)
    C[idx, idx] += mu
    C[idx, :r] -= 0.5 * mu[:, None] * Qu
    C[:r, idx] -= 0.5 * mu[None, :] * Qu.T
    slack = claim * B - A - C
    g = np.concatenate([np.abs(Gd).sum(axis=1), np.ones(k), np.abs(Qu).sum(axis=1) + 1.0])  # |G| 1
    mag = (abs(claim) * magB + magA + float(g @ Nc @ g)
           + float(np.abs(mu).sum() + (np.abs(mu)[:, None] * np.abs(Qu)).sum()))
    allowance = 4.0 * allow(n + m + 2 * k, r + k) * mag + P.basis_allowance(claim, float(Nc.sum() + np.abs(mu).sum()))
    return float(claim) if float(np.linalg.eigvalsh(0.5 * (slack + slack.T))[0]) > allowance else np.inf


def _implied_float(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Signs of the solutions of a stack of square systems ``A y = b`` (c, r, r), (c, r): 1 all
    positive, -1 one negative, 0 undecided; from ``X ~ A^{-1}`` with ``delta >= ||I - X A||_inf <
    1/2`` (products bounded by ``gamma``), every ``|y_j - y~_j| <= ||X||_inf / (1 - delta) rho``."""
    c, r = b.shape
    out = np.zeros(c, dtype=np.int8)
    with np.errstate(all="ignore"):
        fine = (np.abs(A).max(axis=(1, 2)) < 1e150) & (np.abs(b).max(axis=1) < 1e150)  # (nan, inf: False)
        # only chooses which systems floats try (an exactly singular one would stop the batch's inverse; delta
        # below decides the rest): a determinant, 8x cheaper than the singular values it replaced
        fine &= np.linalg.det(np.where(fine[:, None, None], A, np.eye(r))) != 0
        idx = np.flatnonzero(fine)
        if idx.size == 0:
            return out
        A, b = A[idx], b[idx]
        try:
            X = np.linalg.inv(A)
        except np.linalg.LinAlgError:  # a pivot the determinant's factorisation did not meet: those go exact
            return out
        aX, aA, XA = np.abs(X), np.abs(A), X @ A  # (row sums and products by vectors as einsum: 3-4x faster)
        XA.reshape(idx.size, -1)[:, ::r + 1] -= 1.0  # X A - I (a broadcast identity costs 5x the product)
        delta = 2.0 * (np.einsum("kij->ki", np.abs(XA)).max(axis=1)
                       + gamma(r + 1) * np.einsum("kij,kj->ki", aX, np.einsum("kij->ki", aA)).max(axis=1))
        y = np.einsum("kij,kj->ki", X, b)
        res = np.abs(b - np.einsum("kij,kj->ki", A, y)).max(axis=1)
        rho = 2.0 * (res + gamma(r + 2) * (np.abs(b) + np.einsum("kij,kj->ki", aA, np.abs(y))).max(axis=1)) + 1e-300
        margin = 2.0 * np.einsum("kij->ki", aX).max(axis=1) / (1.0 - delta) * rho
        good = (delta < 0.5) & np.all(np.isfinite(y), axis=1) & np.isfinite(margin) & (aX.max(axis=(1, 2)) < 1e150)
    pos = good & np.all(y > margin[:, None], axis=1)
    neg = good & np.any(y < -margin[:, None], axis=1)
    out[idx[pos]] = 1
    out[idx[neg & ~pos]] = -1
    return out


def _implied_exact(P: StatedProblem, i: int, s: int, rows: list[int], rsigns: list[int]) -> bool:
    """The basic solution of ``s phi_i = sum_j y_j s_j phi_j`` in exact rationals, all ``y_j >= 0``."""
    Y = P.exact.Y
    Ai = [[rsigns[c] * Y[rows[c]][t] for c in range(len(rows))] for t in range(len(Y[i]))]
    y = solve(Ai, [s * v for v in Y[i]])
    return y is not None and all(v >= 0 for v in y)


def implied(P: StatedProblem, claims: list, exact: bool) -> int | None:
    """Check implied signs ``(node, i, s, rows, row signs)``: ``s phi_i`` a nonnegative combination of
    the signed decided rows.  Floats accept or refuse square systems in one vectorised pass with a
    rigorous margin; the rest are decided exactly.  Returns the first failing node, or None."""
    r = P.Phi_r.shape[1]
    dec = np.zeros(len(claims), dtype=np.int8)
    sq = [k for k, cl in enumerate(claims) if len(cl[3]) == r]
    if sq and not exact:
        cl = claims if len(sq) == len(claims) else [claims[k] for k in sq]
        _, i, s, rows, rs = zip(*cl)
        A = np.transpose(np.fromiter(chain.from_iterable(rs), float).reshape(-1, r, 1) * P.Phi_r[np.fromiter(  # (flat from
            chain.from_iterable(rows), np.int64)].reshape(-1, r, r), (0, 2, 1))  # iterators: 3x faster than from lists of lists)
        dec[sq] = _implied_float(A, np.array(s, dtype=float)[:, None] * P.Phi_r[list(i)])
    for k in np.flatnonzero(dec <= 0).tolist():  # in order: the first failing node is the one named
        node, i, s, rows, rs = claims[k]
        if dec[k] < 0 or not _implied_exact(P, i, s, rows, rs):
            return node
    return None


def _leaf(node: list, signs: np.ndarray, N: _Node, exact: bool) -> tuple[float, float, str]:
    """(claim, proven bound, reason if malformed) of a leaf."""
    P, kind = N.P, node[0]
    decided = bool(np.all((signs != 0) | N.zero))
    mask = (signs > 0) & ~N.zero
    if kind == "x":
        if not (decided and (_zero_leaf(node, signs, N) if len(node) > 1 else excluded(P, mask))):
            return -np.inf, np.inf, "an excluded leaf is not a chamber all of whose neurons are excluded"
        return -np.inf, -np.inf, ""
    try:
        claim = float(node[1]) if len(node) > 1 and type(node[1]) in (int, float) else np.nan
    except OverflowError:  # an integer past float64
        claim = np.inf
    if not np.isfinite(claim):  # 1e999 (JSON's infinity) too: malformed in both modes
        raise CertificateError(f"malformed certificate: a tree leaf bound must be a finite number, got "
                               f"{str(node[1:2])[:40]}")
    # floats: a "d" leaf's lifted evidence first; where it proves the claim (under the cap) no node bound is needed
    lift = not exact and kind == "d" and len(node) == 5 and lifted_bound(P, signs, N.zero, claim, *node[2:5]) <= N.cap
    proven = N.cap if exact else claim if lift else min(node_bound(N, signs), N.cap)  # exact: tried at the claim and the cap
    steps = sorted(set(ladder(claim) + (ladder(proven) if np.isfinite(proven) else [])))
    if exact:  # the float cap only chooses where the exact proofs are tried
        from relu_gating.checker._tree_exact import exact_cap_of, exact_node  # exact mode only: loaded then

        # a claim the cap proves (to two rounding steps, as first_proven skips) costs no node proof; else tried below
        # the cap only (a cap taken anywhere within BOUND_SLACK above: 1.4e-9 above an honest claim left it uncertified)
        near = claim + 2 * ROUNDING_STEP * max(1.0, abs(claim))
        proven = cap if (cap := exact_cap_of(N, steps)) <= near else min(exact_node(P, signs, N.zero, steps, N.meter, cap), cap)
    if kind == "c" and decided and len(node) >= 4 and (proven > claim or exact):
        try:
            rows = np.array([as_int(j, "a chamber leaf's row", 0, P.n - 1) for j in node[2]], dtype=np.int64)
        except (TypeError, ValueError, OverflowError) as exc:
            raise CertificateError(f"malformed chamber leaf: {type(exc).__name__}: {str(exc)[:80]}") from None
        if np.unique(rows).size != rows.size:
            raise CertificateError("malformed chamber leaf: its rows repeat a row")
        ev = {0: (rows, multipliers(node[3], rows.size, "a chamber leaf", N.lim.digits))}  # malformed: refused
        proven = min(proven, float(prove(P, mask[None], np.array([claim]), ev, np.zeros(1, bool), exact)[0]))
    if kind == "d" and exact and proven > claim and len(node) == 5:
        from relu_gating.checker._tree_exact import exact_lifted

        got = _lifted_evidence(P.n, signs, N.zero, claim, node[2], node[3], node[4])
        proven = min(proven, exact_lifted(P, signs, N.zero, steps, got, N.meter))
    if kind == "d" and exact and proven > claim:
        from relu_gating.checker._exact_mode import int_claim

        proven = min(proven, int_claim(P, mask, steps, meter=N.meter) if decided else np.inf)
    return claim, proven, ""


def _zero_leaf(node: list, signs: np.ndarray, N: _Node) -> bool:
    """``["x", rows, y]``: ``y > 0`` (integers or ``"p/q"``) on distinct decided ``rows``, every active
    row among them, and ``sum_k y_k s_k phi_k = 0`` exactly.  On the closed cone each ``y_k s_k phi_k
    theta >= 0`` and they sum to 0, so every listed row is 0 there: ``relu(Phi theta) = 0``."""
    if len(node) != 3 or not isinstance(node[1], list) or not isinstance(node[2], list) or len(node[1]) != len(node[2]):
        return False
    rows = [as_int(k, "a zero leaf's row", 0, N.P.n - 1) for k in node[1]]
    y = [rational(v, "a zero leaf's multiplier", N.lim.digits) for v in node[2]]
    active = np.flatnonzero((signs > 0) & ~N.zero)
    if len(set(rows)) < len(rows) or any(v <= 0 for v in y) or np.any(signs[rows] == 0) or not set(active) <= set(rows):
        return False
    Y = N.P.exact.Y
    return all(sum(v * int(signs[k]) * Y[k][t] for k, v in zip(rows, y)) == 0 for t in range(len(Y[0])))


def _failed(P: StatedProblem, pending: list, exact: bool) -> list[str]:
    """Check the collected implied signs (emptying ``pending``): the first failure as a reason."""
    bad = implied(P, pending, exact) if pending else None
    out = [] if bad is None else [f"node {bad}: the implied sign of row {next(c[1] for c in pending if c[0] == bad)} "
                                  f"is not proven by its Farkas rows"]
    pending.clear()
    return out


def _rows(v: list, idx: int, n: int) -> list[int]:
    """Row indices of tree node ``idx``: ints in ``[0, n)`` as they are (the common case, checked in one
    pass), else each read by :func:`as_int` (refused: a float, a boolean, anything but a JSON integer)."""
    if set(map(type, v)) <= {int} and (not v or (min(v) >= 0 and max(v) < n)):  # (bool is not int here)
        return v
    return [as_int(j, f"tree node {idx} row", 0, n - 1) for j in v]


#: Trees of fewer nodes are walked in one process: about where a fork pool starts to pay (a 1,812-node tree,
#: 5 alternating runs, one BLAS thread, load ~20: 1.10 s on 2 workers against 1.20 s in one process).
PARALLEL_NODES = 2000
#: Stands in the top of a tree walked in parts for a subtree walked elsewhere (by identity: no JSON is it).
PART = ["part"]


def walk(nodes: Any, P: StatedProblem, exact: bool = False, start: Any = None, workers: Any = 1) -> tuple[list, list[str], dict]:
    """Check the tree (from the signs ``start``) and every leaf: (leaves as (index, claim, proven), reasons, counts).
    ``workers`` (None: every usable core): a float walk of at least :data:`PARALLEL_NODES` nodes in parts
    (:func:`relu_gating.checker._parallel.walk_in_parts`, loaded then; exact mode walks in one process)."""
    if workers is not None and (type(workers) is not int or workers < 1):
        raise InputError(f"workers must be a positive integer or None, got {workers!r}")
    if not isinstance(nodes, list) or len(nodes) > MAX_NODES:
        raise CertificateError("tree certificate: nodes must be a list of bounded length")
    N = _Node(P)
    if len(nodes) > N.lim.nodes:  # before any work: the problem's limits (FORMAT.md)
        raise CertificateError(f"tree certificate: {len(nodes)} nodes exceed {N.lim.nodes}, 2 (n + 1) x Cover's count")
    if exact:  # before any work: exact mode's leaves and eliminations bounded by the problem
        from relu_gating.checker._tree_exact import exact_work
        N.meter = exact_work(nodes, P, N.zero)
    elif workers != 1 and len(nodes) >= PARALLEL_NODES:
        from relu_gating.checker._parallel import walk_in_parts

        return walk_in_parts(nodes, P, exact, workers, walk, PART)
    signs = np.where(N.zero, -1, 0 if start is None else np.asarray(start)).astype(np.int8)
    sg, n = signs.tolist(), P.n  # the signs as a list too: the walk reads single entries (numpy's cost 10x)
    stack: list = [("visit",)]
    pos, leaves, reasons, pending = 0, [], [], []
    counts = {"split": 0, "implied": 0, "leaves": 0}
    while stack and not reasons:
        task = stack.pop()
        if task[0] == "set":
            signs[task[1]] = sg[task[1]] = task[2]
            continue
        if pos >= len(nodes):
            reasons.append("tree is truncated: a split or implied node lacks a child")
            break
        node, idx = nodes[pos], pos
        pos += 1
        if node is PART:
            continue
        kind = node[0] if isinstance(node, list) and node else None
        if kind in ("s", "i"):
            i = node[1] if len(node) > 1 else None
            if type(i) is not int or not 0 <= i < n:  # (the common case checked inline: a walk's hottest line)
                i = _rows([i], idx, n)[0]
            if sg[i] != 0:
                reasons.append(f"node {idx}: row {i} is not an undecided row of its node")
            elif kind == "s":  # the + child next (its sign set now), then the - child, then undecided again
                counts["split"] += 1
                stack += [("set", i, 0), ("visit",), ("set", i, -1), ("visit",)]
                signs[i] = sg[i] = 1
            else:
                s = node[2] if len(node) == 4 else None
                rows = _rows(node[3], idx, n) if len(node) == 4 and isinstance(node[3], list) else []
                rs = [sg[j] for j in rows]
                if type(s) is not int or s not in (1, -1) or not rows or 0 in rs or i in rows or len(set(rows)) < len(rows):
                    reasons.append(f"node {idx}: the implied sign of row {i} is not proven by its Farkas rows")
                    break
                pending.append((idx, i, int(s), rows, rs))
                if len(pending) >= FARKAS_BATCH:
                    reasons += _failed(P, pending, exact)
                counts["implied"] += 1
                stack += [("set", i, 0), ("visit",)]
                signs[i] = sg[i] = s
        elif kind in ("b", "c", "d", "x"):
            counts["leaves"] += 1
            claim, proven, why = _leaf(node, signs, N, exact)
            if why:
                reasons.append(f"node {idx}: {why}")
            leaves.append((idx, claim, proven))
        else:
            reasons.append(f"node {idx}: unknown node {node!r:.40}")
    if not reasons:
        reasons += _failed(P, pending, exact)
    if not reasons and pos != len(nodes):
        reasons.append(f"tree has {len(nodes) - pos} node(s) beyond its last leaf")
    return leaves, reasons, counts
