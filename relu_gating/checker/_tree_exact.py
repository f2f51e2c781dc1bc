"""The exact-mode leaf proofs of the tree checker (private; loaded only by ``verify(..., exact=True)``):
a node's subspace bound, a ``"d"`` leaf's lifted evidence and the cap, in rationals."""

from __future__ import annotations

from typing import Any

import numpy as np

from relu_gating.checker._constants import EXACT_LIMIT
from relu_gating.checker._exact_mode import exact_cap
from relu_gating.checker._problem import StatedProblem
from relu_gating.errors import CertificateError


#: Exact mode's work on a tree's leaves, before any of it (:func:`exact_work`: ``150 + p^2`` units a leaf,
#: ``p`` the dimension of its span, about a microsecond each) and on the exact eliminations that floats
#: leave (:class:`relu_gating.checker._int_pencil.Meter`: ``p^4 b / 64`` units each): past them, refused.
EXACT_LEAF_WORK = 1_000_000
EXACT_ELIMINATION_WORK = 20_000_000


def exact_work(nodes: list, P: StatedProblem, zero: np.ndarray) -> Any:
    """Before any work: refuse a tree whose leaves exact mode cannot decide within ``EXACT_LEAF_WORK``
    (a leaf at depth ``d`` costs ``150 + p^2`` units, ``p = r + n' - d`` the dimension of its span, ``n'``
    the nonzero rows, and a ``"d"`` leaf ``e p^2`` more for the ``e`` entries of its ``N``, each folded into
    a ``p x p`` rational matrix; a unit is about a microsecond); the :class:`Meter` of the exact eliminations."""
    from relu_gating.checker._int_pencil import Meter

    r, nz = P.Phi_r.shape[1], int(np.count_nonzero(~zero))
    todo, work = [0], 0
    for v in nodes:
        if not todo:
            break
        d = todo.pop()
        kind = v[0] if isinstance(v, list) and v else None
        if kind in ("s", "i"):
            todo += [d + 1] * (2 if kind == "s" else 1)
        elif kind in ("b", "c", "d"):
            p = r + max(nz - d, 0)
            work += 150 + p * p + (_entries(v) * p * p if kind == "d" else 0)
    leaves = sum(1 for v in nodes if isinstance(v, list) and v and v[0] in ("b", "c", "d", "x"))
    if leaves > EXACT_LIMIT:
        raise CertificateError(f"tree certificate: {leaves} leaves exceed the {EXACT_LIMIT} exact mode decides")
    if work > EXACT_LEAF_WORK:
        raise CertificateError(f"tree certificate: its leaves need {work:,} units of exact work, more than the "
                               f"{EXACT_LEAF_WORK:,} exact mode allows (FORMAT.md, Limits); verify without --exact")
    return Meter(EXACT_ELIMINATION_WORK)


def _entries(v: list) -> int:
    """The entries of a ``"d"`` leaf's ``N`` as declared (sparse: its list; packed: its ``v``'s base64 characters
    over 32 / 3, rounded up; dense: its rows squared), 0 if malformed."""
    N = v[3] if len(v) == 5 else None
    if isinstance(N, dict) and isinstance(N.get("v"), str):
        return -(-3 * len(N["v"]) // 32)
    got = N.get("entries") if isinstance(N, dict) else N
    if not isinstance(got, list):
        return 0
    return len(got) if isinstance(N, dict) else len(got) ** 2


def exact_node(P: StatedProblem, signs: np.ndarray, zero: np.ndarray, ladder: list, meter: Any,
               below: float = np.inf) -> float:
    """The first ``u < below`` of ``ladder`` proven exactly over the node's span ``col(D+ Phi) + span{e_i: i in U}``
    (the forms in integers, :mod:`._int_pencil`; exact eliminations charged to ``meter``)."""
    from relu_gating.checker._int_pencil import first_proven, node_forms

    plus, und = np.flatnonzero((signs > 0) & ~zero).tolist(), np.flatnonzero((signs == 0) & ~zero).tolist()
    return first_proven([u for u in ladder if u < below], node_forms(P.exact, plus, und), meter)


def exact_lifted(P: StatedProblem, signs: np.ndarray, zero: np.ndarray, claims: list, got: Any, meter: Any) -> float:
    """The first of ``claims`` the lifted evidence ``got`` (``(dec, N, mu, undecided rows)`` as read by
    :func:`relu_gating.checker._tree._lifted_evidence`, None if malformed) proves exactly (``inf`` if none):
    in the coordinates ``x = (w, y)`` of the node's span (``h = Y w`` on ``F+``, ``y`` on ``U``, ``Y`` the rows of
    ``Phi_r``), ``u B - A - G^T N G - sum_i mu_i C_i`` PSD with ``G`` the signed decided rows, ``y_i`` and
    ``y_i - Y_i w`` (the float evidence's constraint values, in another basis of the same span: a
    congruence, which keeps a PSD matrix PSD); in integers (:mod:`._int_pencil`), eliminations charged to ``meter``."""
    from relu_gating.checker._int_pencil import dual_form, node_forms, psd_excluding

    if got is None:
        return np.inf
    dec, Nf, muf, und = got
    Y = np.array(P.exact.Y, dtype=object).reshape(P.n, -1)
    r, k, d = Y.shape[1], und.size, dec.size
    forms = node_forms(P.exact, np.flatnonzero((signs > 0) & ~zero).tolist(), und.tolist(), full=True)
    G = np.zeros((d + 2 * k, r + k), dtype=object)
    G[:d, :r] = np.array(signs[dec].tolist(), dtype=object)[:, None] * Y[dec]
    G[d + np.arange(k), r + np.arange(k)] = G[d + k + np.arange(k), r + np.arange(k)] = 1  # y_t >= 0, y_t - Y_i w >= 0
    G[d + k:, :r] = -Y[und]
    D = dual_form(G, np.maximum(0.5 * Nf + 0.5 * Nf.T, 0.0), {r + t: (float(muf[t]), Y[i]) for t, i in enumerate(und.tolist())})
    for u in sorted({float(c) for c in claims if np.isfinite(c)}):
        if psd_excluding(u, forms, meter, D):
            return u
    return np.inf


def exact_cap_of(N: Any, steps: list) -> float:
    """The first of ``steps`` proven to bound the cap exactly (``inf`` if none), remembering on the walk's
    node data ``N`` (``relu_gating.checker._tree._Node``) the largest refuted and the least proven claim (``u I - M^T M`` PSD is monotone in ``u``: each is decided once)."""
    for u in steps:
        if u > N.caps[0] and (u >= N.caps[1] or exact_cap(N.P, [u]) <= u):
            N.caps[1] = min(N.caps[1], u)
            return u
        N.caps[0] = max(N.caps[0], u)
    return np.inf
