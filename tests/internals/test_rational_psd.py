"""The checker's fraction-free PSD test (``checker._rational.is_psd``: a congruence to integers, then
symmetric Bareiss elimination) against Fraction elimination on matrices with mixed, large
denominators (the entries exact multipliers bring), PSD, singular and indefinite."""

from __future__ import annotations

import random
from fractions import Fraction

from relu_gating.checker._rational import is_psd
from _exact_reference import exact_psd as _psd_fraction



def _entry(rng: random.Random, big: bool) -> Fraction:
    q = rng.randint(1, 10**40 if big else 9)
    return Fraction(rng.randint(-5 * q, 5 * q), q)


def test_fraction_free_psd_agrees_with_fraction_elimination():
    rng = random.Random(37)
    seen = {True: 0, False: 0}
    for t in range(300):
        n, k = rng.randint(1, 6), rng.randint(0, 6)
        V = [[_entry(rng, t % 3 == 0) for _ in range(n)] for _ in range(k)]
        C = [[sum((V[a][i] * V[a][j] for a in range(k)), Fraction(0)) for j in range(n)] for i in range(n)]
        if t % 3 == 1:  # a small negative shift: indefinite, or PSD only just
            i = rng.randrange(n)
            C[i][i] -= Fraction(rng.randint(0, 3), rng.randint(1, 10**30))
        if t % 5 == 2:  # a symmetric perturbation off the diagonal
            i, j = rng.randrange(n), rng.randrange(n)
            e = _entry(rng, True) / 10**6
            C[i][j] += e
            if i != j:
                C[j][i] += e
        got = is_psd(C)
        assert got == _psd_fraction(C), C
        seen[got] += 1
    assert min(seen.values()) > 30  # both outcomes exercised


def test_zero_and_empty_matrices():
    assert is_psd([]) and is_psd([[0]]) and is_psd([[0, 0], [0, 0]])
    assert not is_psd([[0, 1], [1, 0]]) and not is_psd([[-1]])
    assert is_psd([[Fraction(1, 3), Fraction(1, 6)], [Fraction(1, 6), Fraction(1, 12)]])  # singular, PSD
