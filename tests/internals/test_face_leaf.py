"""Face multipliers on lifted ``"d"`` leaves (``search/bnb/_face_leaf.py``, issue 37), against exact
rationals and enumeration.

The reference shares no code with the library: ``P = U_K U_K^T`` from the floats of ``U_K`` in
``fractions.Fraction``, and ``claim I - P_TT - N`` positive semidefinite with ``N >= 0`` (an exact
LDL^T, ``tests/_exact_reference.py``) proves ``N_K(h) <= claim`` for every ``h >= 0`` supported on
``T`` (the active and undecided samples of the node): the leaf's bound, in the coordinates of ``h``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import relu_gating as rg
from relu_gating.search.bnb._face_leaf import face_leaf
from relu_gating.search.objectives import make_objective
from _exact_reference import exact_psd
from test_boundary_suprema import _instance, _one_sample_optimum


def _node(Phi: np.ndarray, i: int, k: int) -> tuple[np.ndarray, list[int], list[int]]:
    """Signs of a node: ``i`` and the next two samples (``Phi`` of full rank on them: the lifted
    coordinates are then those of ``h``) active, the ``k`` after them undecided, the rest inactive."""
    n = Phi.shape[0]
    others = [j for j in range(n) if j != i]
    plus = [i] + others[:2]
    und = others[2:2 + k]
    signs = -np.ones(n, dtype=np.int8)
    signs[plus] = 1
    signs[und] = 0
    assert np.linalg.matrix_rank(Phi[plus]) == Phi.shape[1]
    return signs, plus, und


def _exact_slack(U: np.ndarray, T: np.ndarray, claim: Fraction, N: dict) -> list[list[Fraction]]:
    F = [[Fraction(float(x)) for x in U[k]] for k in T]
    t = len(T)
    S = [[(claim if a == b else 0) - sum((x * y for x, y in zip(F[a], F[b])), Fraction(0)) for b in range(t)]
         for a in range(t)]
    for k, l, v in np.asarray(N["entries"]).tolist():
        assert v >= 0 and k != l and max(k, l) < t  # nonnegative, off-diagonal, on the rows of T
        S[int(k)][int(l)] -= Fraction(v)
        S[int(l)][int(k)] -= Fraction(v)
    return S


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.filter_too_much])
@given(seed=st.integers(0, 2**20), n=st.integers(6, 12), K=st.sampled_from([1, 2]), k=st.integers(1, 5))
def test_face_leaf_proves_its_claim_in_exact_rationals(seed, n, K, k):
    """A node with the optimal sample active and ``k`` undecided: the leaf's claim is within 1e-9 of
    the exact optimum ``l_i``, ``claim I - P_TT - N`` is PSD exactly (the bound holds), and the same
    multipliers do not prove a claim 1e-9 below ``l_i`` (which ``e_i`` attains on the node)."""
    Phi, U, i = _instance(seed, n, K)
    li = _one_sample_optimum(U, i)
    assume(li is not None)
    signs, plus, und = _node(Phi, i, k)
    obj = make_objective(Phi, U, None)
    got = face_leaf(obj, signs, np.zeros(n, dtype=bool), float(li), float(li) + 1e-9)
    assume(got is not None)
    claim, (dec, N, mu) = got
    assert dec.tolist() == sorted(plus) and not np.any(mu) and N["p"] == 3 + 2 * len(und)
    assert Fraction(claim) >= li and claim - float(li) <= 1e-9
    T = np.array(sorted(plus) + und)
    assert exact_psd(_exact_slack(U, T, Fraction(claim), N))
    assert not exact_psd(_exact_slack(U, T, li - Fraction(1, 10**9), N))


def test_face_leaf_lists_nothing_away_from_the_incumbent():
    """No one-sample neuron of the node at the incumbent's value: nothing is tried (the cheap filter),
    and a target below the face's value proves nothing."""
    for seed in range(40):
        Phi, U, i = _instance(seed, 8, 1)
        li = _one_sample_optimum(U, i)
        if li is not None:
            break
    obj = make_objective(Phi, U, None)
    n = Phi.shape[0]
    signs, _, _ = _node(Phi, i, 3)
    zero = np.zeros(n, dtype=bool)
    assert face_leaf(obj, signs, zero, float(li), float(li) + 1e-9) is not None
    assert face_leaf(obj, signs, zero, float(li) - 1e-3, float(li) - 1e-3 + 1e-9) is None
    assert face_leaf(obj, signs, zero, float(li), float(li) - 1e-12) is None
    off = signs.copy()
    off[i] = -1  # the optimal sample inactive: its face is not the node's
    assert face_leaf(obj, off, zero, float(li), float(li) + 1e-9) is None


@pytest.mark.parametrize("seed", [3, 5])
def test_branch_and_bound_settles_face_leaves_as_enumeration_certifies(seed):
    """Queries whose chambers' solver bounds were 6e-9 and 1.4e-7 above the optimum: branch and bound
    settles nodes by face leaves, certifies the exact optimum like enumeration, and float and exact
    verify accept its tree; a face leaf's multipliers halved are refused."""
    Phi, U, i = _instance(seed, 10, 1)
    li = _one_sample_optimum(U, i)
    assert li is not None
    bb = rg.best_neuron(Phi, U, features=None, strategy="branch-and-bound")
    en = rg.best_neuron(Phi, U, features=None, strategy="enumerate")
    assert bb.certified and en.certified
    assert bb.certificate.tree["stats"].get("face_leaves", 0) >= 1
    for res in (bb, en):
        assert abs(Fraction(res.value) - li) <= Fraction(1, 10**12)
        assert Fraction(res.upper_bound) >= li and res.upper_bound - float(li) <= 1e-9
    for exact in (False, True):
        rep = rg.verify(bb, Phi, U, None, exact=exact)
        assert rep.valid and rep.certified, (exact, rep.reasons)
    from relu_gating.certificate import result_to_dict

    d = result_to_dict(bb)
    nodes = d["tree"]["nodes"] if "tree" in d else d["nodes"]
    from relu_gating.certificate import packed_multipliers
    from relu_gating.checker._tree import _packed

    k = next(j for j, nd in enumerate(nodes) if nd[0] == "d" and nd[3]["v"])  # written packed (format 3)
    E = _packed(nodes[k][3], nodes[k][3]["p"])["entries"]
    nodes[k][3] = packed_multipliers({"p": nodes[k][3]["p"], "entries": E * [1, 1, 0.5]})
    for exact in (False, True):
        rep = rg.verify(d, Phi, U, None, exact=exact)
        assert not (rep.valid and rep.certified) or rep.upper_bound > float(li) + 1e-9, (exact, rep)
