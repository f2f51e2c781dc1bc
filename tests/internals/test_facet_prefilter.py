"""The facet prefilter of :mod:`solvers._reduction` (qhull on a subset of the rows) returns
the facets of all rows: against qhull on every row, and against one LP per row.

Cones with many rows (``q > PREFILTER_MIN_ROWS``), dimension 3 to 6, an interior point
``z0``; exact duplicates and positive multiples of facet rows, and rows within 1e-9 of
them, which the prefilter must keep so that the first of each group is the facet.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from solvers import _reduction as red


def _cone(seed: int, k: int, q: int, twins: str) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``h`` with ``h . z0 > 0`` (``z0`` a random unit vector), a few facet rows repeated."""
    rng = np.random.default_rng(seed)
    z0 = rng.normal(size=k)
    z0 /= np.linalg.norm(z0)
    g = rng.normal(size=(q, k))
    g -= np.outer(g @ z0, z0)
    H = g + np.outer(np.abs(rng.normal(size=q)) + 0.05, z0)
    if twins != "none":
        fac = red._hull_facets(H, z0)[0]
        pick = rng.choice(fac, size=min(4, fac.size), replace=False)
        if twins == "exact":
            extra = H[pick] * rng.choice([1.0, 2.0, 0.5], size=(pick.size, 1))
        else:
            extra = H[pick] + 1e-9 * rng.normal(size=(pick.size, k))
        H = np.vstack([H, extra])
        H = H[rng.permutation(H.shape[0])]
    return H, z0


def _same_rays(a: np.ndarray, b: np.ndarray) -> bool:
    ua = a / np.linalg.norm(a, axis=1)[:, None]
    ub = b / np.linalg.norm(b, axis=1)[:, None]
    if ua.shape != ub.shape:
        return False
    return bool(np.all(np.abs(ua @ ub.T).max(axis=1) > 1 - 1e-9) and np.all((ua @ ub.T).max(axis=0) > 1 - 1e-9))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(3, red.PREFILTER_MAX_DIM), q=st.integers(red.PREFILTER_MIN_ROWS + 1, 160),
       twins=st.sampled_from(["none", "exact", "near"]))
def test_prefilter_gives_the_facets_of_all_rows(seed, k, q, twins):
    H, z0 = _cone(seed, k, q, twins)
    fac, rays = red._facets_qhull(H, z0)
    ref_fac, ref_rays = red._hull_facets(H, z0)[:2]
    assert np.array_equal(np.sort(fac), np.sort(ref_fac))
    assert _same_rays(rays, ref_rays)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(3, 5))
def test_prefilter_facets_agree_with_one_lp_per_row(seed, k):
    """Independent oracle: row i is a facet iff it is not implied by the others (an LP each)."""
    H, z0 = _cone(seed, k, 70, "none")
    fac = red._facets_qhull(H, z0)[0]
    lp_fac = red._facets_lp(H)[0]
    assert np.array_equal(np.sort(fac), np.sort(lp_fac))


@pytest.mark.parametrize("k", [3, 4, 6])
def test_the_prefilter_runs_and_is_smaller(k, monkeypatch):
    """Not vacuous: on a cone with many redundant rows the prefilter answers on a strict subset."""
    sizes = []
    orig = red._hull_facets

    def spy(Hp, z):
        sizes.append(Hp.shape[0])
        return orig(Hp, z)

    monkeypatch.setattr(red, "_hull_facets", spy)
    H, z0 = _cone(7, k, 400, "exact")
    fac, _ = red._facets_qhull(H, z0)
    assert sizes and max(sizes) < H.shape[0]
    monkeypatch.setattr(red, "_hull_facets", orig)
    assert np.array_equal(np.sort(fac), np.sort(orig(H, z0)[0]))
