"""Each chamber's facet rows read off the pattern set (relu_gating.layers._chamber_facets).

Oracles: the patterns one flip away found by a plain set of the masks, and an LP per (chamber, row):
row ``j`` is a facet when some ``theta`` has ``phi_j . theta = 0`` and every other row strictly on the
chamber's side.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from relu_gating.layers._chamber_facets import facet_rows
from relu_gating.layers._packed_masks import PackedMasks
from relu_gating.patterns import enumerate_patterns


def _phi(n: int, d: int, seed: int, dup: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((n, d)) * 2.0**10) / 2.0**10
    if dup:
        X[1] = X[0]  # coincident rows: no single flip crosses their hyperplane
    return np.c_[X, np.ones(n)]


def _listed(fr, i: int) -> list[int]:
    return fr.indices[fr.indptr[i]:fr.indptr[i + 1]].tolist()


@pytest.mark.parametrize("d,seed", [(2, 0), (2, 1), (3, 2)])
def test_facet_rows_are_the_one_flip_neighbours_and_the_lp_facets(d, seed):
    Phi = _phi(16 if d == 3 else 22, d, seed)
    masks = np.asarray(enumerate_patterns(Phi).masks, dtype=bool)
    fr = facet_rows(masks)
    packed = facet_rows(PackedMasks(np.packbits(masks, axis=1), masks.shape[1]))
    assert np.array_equal(fr.indptr, packed.indptr) and np.array_equal(fr.indices, packed.indices)
    seen = {m.tobytes() for m in masks}
    n = Phi.shape[0]
    for i, m in enumerate(masks):
        flips = [j for j in range(n) if np.concatenate([m[:j], [not m[j]], m[j + 1:]]).tobytes() in seen]
        assert _listed(fr, i) == flips
    assert fr.counts.min() >= Phi.shape[1]  # a pointed cone in R^m has at least m facets
    for i in np.random.default_rng(seed).choice(masks.shape[0], 12, replace=False).tolist():
        sg = np.where(masks[i], 1.0, -1.0)
        for j in range(n):
            rest = [t for t in range(n) if t != j]
            lp = linprog(np.zeros(Phi.shape[1]), A_ub=-(sg[rest, None] * Phi[rest]), b_ub=-np.ones(n - 1),
                         A_eq=Phi[j:j + 1], b_eq=[0.0], bounds=[(None, None)] * Phi.shape[1], method="highs")
            assert (lp.status == 0) == (j in _listed(fr, i)), (i, j)


def test_coincident_rows_are_no_facet_of_a_single_flip():
    """Two equal rows: no chamber has a neighbour across one of them alone, so neither is listed; the
    chambers they bound list fewer facets than their cones have (the pricing then solves on all rows)."""
    Phi = _phi(14, 2, 3, dup=True)
    masks = np.asarray(enumerate_patterns(Phi).masks, dtype=bool)
    fr = facet_rows(masks)
    assert not np.isin(fr.indices, [0, 1]).any()
    assert np.array_equal(masks[:, 0], masks[:, 1])


def test_padded_rows_match_the_lists():
    masks = np.asarray(enumerate_patterns(_phi(12, 2, 4)).masks, dtype=bool)
    fr = facet_rows(masks)
    pick = np.array([3, 0, 7, 7])
    pad = fr.padded(pick)
    assert pad.shape == (4, int(fr.counts[pick].max()))
    for r, i in zip(pad, pick.tolist()):
        assert r[r >= 0].tolist() == _listed(fr, i) and np.all(r[len(_listed(fr, i)):] == -1)
