"""The one ending of an enumerated search, in memory or streamed (private).

:func:`finish` takes the :class:`~relu_gating.search._enum.store.PatternStore` the search
filled and its incumbent and returns the :class:`NeuronResult`: the unsettled patterns settled
by their bounds, the excluded ones' bounds zeroed, every claim raised to what is proven
(:func:`raise_claims`), the incumbent polished and re-evaluated, near-ties reported.  It works
block by block over the store, so a streamed search never holds a whole column.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from relu_gating.search._config import NEAR_TIE_TOL
from relu_gating.search._enum.store import SCAN, PatternStore
from relu_gating.search._exact.polish import polish_theta
from relu_gating.search._exact.signs import exact_signs, scaled_products
from relu_gating.search._value import confirmed, reported_value
from relu_gating.search.objectives import Objective, containment_remark, normalized_theta
from relu_gating.search.result import NeuronResult, PatternCertificate, ProblemId, SearchStats
from relu_gating.search.state import BOUND, EXACT, PRUNED, UNSETTLED

__all__ = ["finish", "raise_claims"]


def _unpack(packed: np.ndarray, n: int) -> np.ndarray:
    return np.unpackbits(packed, axis=1, count=n).view(bool)


def raise_claims(obj: Objective, store: PatternStore, pruned: np.ndarray, evidence: dict,
                 near: float | None = None, found: dict | None = None) -> list[str]:
    """Claims made what is proven (in place on ``store`` and ``evidence``;
    :mod:`relu_gating.search._claims`): the patterns ``pruned`` (settled as having no admissible
    neuron, bounds zeroed) must be so exactly; a solver's claim that no check proves is replaced by
    the least proven bound, its evidence dropped and its pattern ``BOUND``; a claim just above ``near``
    (the incumbent's value) may be proven at a supremum on its chamber's boundary.  ``found`` (if given)
    receives the neurons the claims' rescue found, ``{pattern index: (theta, value)}``.  Returns notes."""
    from relu_gating.search._claims import checked_exclusions, settle_claims

    notes: list[str] = []
    if pruned.size:
        up, st = store.take("upper", pruned), store.take("status", pruned)
        notes += checked_exclusions(obj, _unpack(store.take("packed", pruned), obj.n), up, st, index=pruned)
        moved = np.flatnonzero(st != PRUNED)
        if moved.size:
            store.patch("upper", pruned[moved], up[moved])
            store.patch("status", pruned[moved], st[moved])
    if not evidence:
        return notes
    idx = np.array(sorted(evidence), dtype=np.int64)
    idx = idx[store.take("status", idx) != PRUNED]  # no admissible neuron (decided exactly above): nothing to claim
    if idx.size == 0:
        return notes
    got = settle_claims(obj, _unpack(store.take("packed", idx), obj.n), store.take("upper", idx),
                        [evidence[int(i)] for i in idx], near=near)
    store.patch("upper", idx, got.bounds)
    for k, ev in got.replaced.items():
        evidence[int(idx[k])] = ev
    if found is not None:
        found.update({int(idx[k]): tv for k, tv in got.neurons.items()})
    for i in idx[~got.keep_evidence].tolist():
        evidence.pop(int(i))
    fell = idx[got.fallback]
    if fell.size:
        st = store.take("status", fell)
        exact = fell[st == EXACT]
        store.patch("status", exact, np.full(exact.size, BOUND, dtype=st.dtype))
        notes.append(f"{fell.size} pattern(s) whose solved bound is not proven claim a weaker valid bound "
                     f"instead (not settled; first: {int(fell[0])})")
        hint = containment_remark(obj)
        notes += [hint] if hint else []
    return notes


#: The incumbent's own weights are reported where normalizing and polishing them lowers the value by more
#: than this (a chamber of relative width 2^-52: rounding ``theta / ||h||`` leaves it; issue 37).
LOST_TO_ROUNDING = 1e-12


def reported_neuron(obj: Objective, best: np.ndarray) -> tuple[np.ndarray, float, bool, list[str]]:
    """``(theta, value, evaluated, notes)`` of the incumbent ``best``: scaled so that
    ``||(I - Pi_H) h|| = 1`` and polished off rounding walls, its value to 1e-10 or exact
    (:func:`relu_gating.search._value.reported_value`; ``evaluated`` False where neither is possible).
    Where the polished neuron is excluded on exact recomputation (inputs at the ends of the float
    range) or has a lower value (a thin chamber), ``best`` itself; where that is excluded too, value 0
    and a note (not certified)."""
    with np.errstate(all="ignore"):
        theta = polish_theta(obj, normalized_theta(obj, best))
    value, evaluated = reported_value(obj, theta) if np.all(np.isfinite(theta)) else (np.nan, True)
    own = np.asarray(best, dtype=float)
    own_value, own_evaluated = reported_value(obj, own) if np.all(np.isfinite(own)) else (np.nan, True)
    if np.isnan(value) or own_value > value + LOST_TO_ROUNDING:  # a thin chamber: rescaling rounds out of it
        theta, value, evaluated = own, own_value, own_evaluated
    if np.isnan(value):
        theta = theta if np.all(np.isfinite(theta)) else np.zeros(obj.Phi.shape[1])
        return theta, 0.0, False, ["the incumbent neuron is excluded on exact recomputation (inputs at the ends "
                                   "of the float range): value 0, not certified"]
    if not evaluated:
        return theta, value, False, ["the value of theta cannot be evaluated to 1e-10 (features nearly dependent, "
                                     "too large for exact rationals): not certified"]
    return theta, value, True, []


def _better_found(obj: Objective, store: PatternStore, found: dict, value: float) -> tuple | None:
    """The best neuron ``found`` by the claims' rescue (``{pattern index: (theta, value)}``, each strictly
    inside its chamber, decided exactly) where it beats the incumbent's ``value``: ``(theta, value,
    evaluated, pattern, notes)`` as reported (:func:`reported_neuron`), its pattern the chamber it was
    found in where the exact signs agree (else the signs); that pattern's recorded value raised to it.
    None otherwise."""
    if not found:
        return None
    i = max(found, key=lambda j: found[j][1])
    if not found[i][1] > value:
        return None
    theta, got, evaluated, why = reported_neuron(obj, found[i][0])
    if not (evaluated and got > value):
        return None
    if not store.take("lower", [i])[0] >= got:
        store.patch("lower", np.array([i]), np.array([got]))
    sg, pattern = exact_signs(obj.Phi, theta), _unpack(store.take("packed", [i]), obj.n)[0].copy()
    if not np.all(np.where(sg > 0, pattern, True) & np.where(sg < 0, ~pattern, True)):  # as for the incumbent
        pattern = sg > 0
    return theta, got, evaluated, pattern, why


def _settle(store: PatternStore) -> np.ndarray:
    """The unsettled patterns settled by their bounds (``BOUND``), the excluded ones' bounds zeroed;
    returns the indices of the excluded (``PRUNED``)."""
    pruned = []
    for s in range(0, store.N, SCAN):
        st = store.read("status", s, s + SCAN)
        st = np.where(st == UNSETTLED, BOUND, st).astype(np.int8)
        out = st == PRUNED
        store.write("status", s, st)
        store.write("upper", s, np.where(out, 0.0, store.read("upper", s, s + SCAN)))
        pruned.append(np.flatnonzero(out) + s)
    return np.concatenate(pruned) if pruned else np.zeros(0, dtype=np.int64)


def _final_scan(store: PatternStore, z: np.ndarray | None, value: float) -> dict:
    """Counts per settlement, the largest bound, and the near-ties of the neuron with ``Phi theta`` a
    positive multiple of ``z`` (None: no incumbent, no near-ties): patterns reaching ``value`` within 1e-9 whose closed cone
    does not hold it (chambers sharing the wall on which the optimum lies hold the same neuron)."""
    out = {"max": -np.inf, "exact": 0, "bound": 0, "pruned": 0, "close": 0, "others": 0, "first": -1}
    eps = NEAR_TIE_TOL * (np.abs(z).max() + 1e-300) if z is not None else 0.0
    for s in range(0, store.N, SCAN):
        st, up = store.read("status", s, s + SCAN), store.read("upper", s, s + SCAN)
        out["max"] = max(out["max"], float(up.max(initial=-np.inf)))
        out["exact"] += int(np.count_nonzero(st == EXACT))
        out["bound"] += int(np.count_nonzero(st == BOUND))
        out["pruned"] += int(np.count_nonzero(st == PRUNED))
        if z is None:
            continue
        close = np.flatnonzero(np.nan_to_num(store.read("lower", s, s + SCAN), nan=-np.inf) >= value - NEAR_TIE_TOL)
        if close.size:
            mk = _unpack(store.take("packed", close + s), store.n)
            holds = np.all(np.where(z > eps, mk, True) & np.where(z < -eps, ~mk, True), axis=1)
            out["close"] += int(close.size)
            out["others"] += int(np.count_nonzero(~holds))
            if out["first"] < 0 and not holds.all():
                out["first"] = int(s + close[np.flatnonzero(~holds)[0]])
    return out


def finish(obj: Objective, store: PatternStore, best_theta: np.ndarray | None, best_index: int, *, notes: Iterable[str],
           methods: dict, evidence: dict, exact_witnesses: dict, alpha: float, tol: float, key: str, seconds: dict,
           resumed: bool = False, tail: Iterable[str] = (), stop: str = "settled") -> NeuronResult:
    """The :class:`NeuronResult` of a search whose patterns are in ``store`` (lent to the result,
    not copied) and whose incumbent is ``best_theta`` in pattern ``best_index``.

    ``notes`` are the search's (repeats dropped), ``resumed`` adds that it resumed from a
    checkpoint, ``tail`` ends the notes, ``stop`` is why the search ended (``"time"``: stopped by
    ``max_seconds``; :data:`relu_gating.search.result.STOP_REASONS`); ``evidence`` is changed in place.
    """
    notes = list(dict.fromkeys(notes))
    evaluated = True
    if best_theta is None:  # every pattern was excluded: nothing to choose
        theta, value, z = np.zeros(obj.Phi.shape[1]), 0.0, None
        pattern = np.zeros(obj.n, dtype=bool)
        notes.append("no admissible neuron: every relu(Phi theta) is 0 or lies in col(features); value 0")
    else:
        theta, value, evaluated, why = reported_neuron(obj, best_theta)  # recomputed from relu(Phi theta)
        notes += why
        z, sg = scaled_products(obj.Phi, theta), exact_signs(obj.Phi, theta)  # z: a multiple (no overflow)
        pattern = _unpack(store.take("packed", [best_index]), obj.n)[0].copy()
        # the optimum may lie on a wall: report the chamber it was found in, which
        # agrees with the (exact) signs of Phi theta wherever they are nonzero
        if not np.all(np.where(sg > 0, pattern, True) & np.where(sg < 0, ~pattern, True)):
            pattern = sg > 0
        if resumed:
            notes.append("resumed from checkpoint")
    found: dict = {}
    claims = raise_claims(obj, store, _settle(store), evidence, near=value if best_theta is not None else None,
                          found=found)
    better = _better_found(obj, store, found, value if best_theta is not None else -np.inf)
    if better is not None:  # the claims' rescue found a better neuron than the search (its chamber's own coordinates)
        theta, value, evaluated, pattern, why = better
        notes += why
        z = scaled_products(obj.Phi, theta)
    sc = _final_scan(store, z, value)
    if sc["close"] >= 2 and sc["others"]:
        notes.append(f"near-tie: {sc['others']} other pattern(s) reach {value:.12f} within 1e-9 with a different "
                     f"neuron (e.g. pattern {sc['first']}): the optimum may not be unique")
    notes += claims
    notes += tail
    upper = float(max(sc["max"], value))
    cols, keep = store.lend()
    return confirmed(obj, NeuronResult(
        theta=theta, value=float(value), upper_bound=upper, alpha=float(alpha),
        certified=bool(value >= alpha * upper - tol) and evaluated, pattern=pattern, seconds=seconds, tol=float(tol),
        certificate=PatternCertificate(packed=cols["packed"], witnesses=cols["witnesses"], bounds=cols["upper"],
                                       lowers=cols["lower"], settlement=cols["status"], methods=dict(methods),
                                       evidence=dict(evidence), exact_witnesses=dict(exact_witnesses), store=keep),
        notes=tuple(notes),
        problem=ProblemId(obj.kind, K=int(obj.U_K.shape[1]), rank=int(obj.rank), features=obj.features,
                          features_sha256=obj.features_sha256, fingerprint=key),
        stats=SearchStats("enumerate", n_patterns=int(store.N), n_exact=sc["exact"], n_bound=sc["bound"],
                          n_pruned=sc["pruned"], stop=stop),
    ))
