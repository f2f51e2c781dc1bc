"""Power-of-two column scaling is exact or refused, the same rule in the search and the checker's
own copy; the features' rank is decided exactly (issue 37)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relu_gating._inputs.scaling import pow2_column_scales
from relu_gating.checker._problem import pow2_scales
from relu_gating.errors import InputError
from relu_gating._inputs.feature_basis import feature_basis

# at the ends of the float range nothing overflows or turns nan unnoticed (issue 37)
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _entry(draw) -> float:
    m = draw(st.integers(1, 2**53 - 1)) * (2 * draw(st.integers(0, 1)) - 1)
    return math.ldexp(float(m), draw(st.integers(-1126, 970)))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_scales_are_exact_or_refused_by_both_copies(data):
    n, m = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 3))
    A = np.array([[_entry(data.draw) if data.draw(st.booleans()) else 0.0 for _ in range(m)] for _ in range(n)])
    outcomes = []
    for f in (pow2_column_scales, pow2_scales):
        try:
            s = f(A)
        except InputError as e:
            assert "\n" not in str(e) and "column" in str(e)
            outcomes.append("refused")
            continue
        for j in range(m):  # every entry scaled is the same rational times s_j, exactly
            sj = Fraction(float(s[j]))
            assert all(Fraction(float(x * s[j])) == Fraction(float(x)) * sj for x in A[:, j])
        outcomes.append("scaled")
    assert outcomes[0] == outcomes[1]


def test_issue_column_takes_the_smallest_exact_scale():
    col = np.array([-2.0**511, 2.0**-520 * (1 + 2**-52), -2.0**-520, 0.0])
    s = pow2_column_scales(col[:, None])[0]
    assert s == 2.0**-502 and np.all(col * s / s == col)
    assert pow2_scales(col[:, None])[0] == s
    assert 2.0**-512 * col[1] / 2.0**-512 != col[1]  # the old scale lost the last bit


def test_subnormal_columns_are_refused():
    A = np.array([[2.0**-1070, 1.0], [0.0, 1.0]])
    with pytest.raises(InputError, match="Phi column 0 has only subnormal"):
        pow2_column_scales(A)
    with pytest.raises(InputError, match="subnormal"):
        pow2_scales(A)


def test_feature_rank_is_exact():
    n = 6
    col = np.zeros(n)
    col[0], col[1] = 2.0**511, 2.0**-564
    H = np.c_[np.ones(n), col]
    b = feature_basis(H)
    piv, Q = list(b.pivots), b.Q
    assert piv == [0, 1] and Q.shape == (n, 2)
    H2 = np.c_[np.ones(n), 1 + 2.0**-52 * np.arange(n)]  # condition about 2^52: rank 2, exactly
    b2 = feature_basis(H2)
    piv2, Q2, eta2 = list(b2.pivots), b2.Q, b2.eta
    assert piv2 == [0, 1] and Q2.shape == (n, 2) and eta2 < 1e-12  # the orthogonal basis built in rationals
    H3 = np.c_[np.ones(n), 3 * np.ones(n), np.arange(n)]  # dependent columns: rank 2, exactly
    b3 = feature_basis(H3)
    piv3, Q3, eta3 = list(b3.pivots), b3.Q, b3.eta
    assert piv3 == [0, 2] and Q3.shape == (n, 2) and eta3 < 1e-12
