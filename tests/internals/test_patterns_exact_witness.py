"""Exact integer witnesses for chambers too thin for float64 (relu_gating.patterns).

Oracles, independent of the package: every exact witness is checked with
``fractions.Fraction`` on the float entries of ``Phi`` (:func:`fraction_realizes`);
chamber counts of rank-3 arrangements come from the intersection lattice
(:func:`rank3_chamber_count`: ``2 + 2 sum_L (m_L - 1)`` over the lines ``L`` where
``m_L`` planes meet, Zaslavsky), computed with exact integers here; rank-4 counts
come from the package's deletion-restriction count, a different algorithm from the
sweep.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from _patterns_reference import brute_force_patterns, cover, fraction_rank
from relu_gating.errors import InputError
from relu_gating.patterns import check_completeness, count_patterns, enumerate_patterns


# ----------------------------------------------------------------------------- oracles
def fraction_realizes(Phi, mask, theta) -> bool:
    """``(2 s_i - 1) phi_i . theta > 0`` on nonzero rows, inactive zero rows, in Fractions."""
    th = [Fraction(int(x)) for x in theta]
    for row, s in zip(np.asarray(Phi, dtype=float), np.asarray(mask, dtype=bool)):
        v = sum((Fraction(float(a)) * b for a, b in zip(row, th)), Fraction(0))
        if not np.any(row != 0):
            if s:
                return False
        elif v == 0 or (v > 0) != bool(s):
            return False
    return True


def _int_row(row) -> tuple:
    """Primitive integer vector with first nonzero entry > 0 (floats taken exactly)."""
    fr = [Fraction(x) if isinstance(x, int) else Fraction(float(x)) for x in row]
    den = math.lcm(*(f.denominator for f in fr))
    ints = [int(f * den) for f in fr]
    g = math.gcd(*ints)
    ints = [x // g for x in ints]
    first = next(x for x in ints if x)
    return tuple(x if first > 0 else -x for x in ints)


def rank3_chamber_count(Phi) -> int:
    """Chambers of a rank-3 central arrangement in R^3 from its lines (exact integers)."""
    planes = sorted({_int_row(r) for r in np.asarray(Phi, dtype=float) if np.any(r != 0)})
    assert np.asarray(Phi).shape[1] == 3 and fraction_rank(np.asarray(Phi)) == 3
    lines: dict = {}
    for i, j in combinations(range(len(planes)), 2):
        a, b = planes[i], planes[j]
        x = (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])
        lines.setdefault(_int_row(x), set()).update((i, j))
    return 2 + 2 * sum(len(s) - 1 for s in lines.values())


# ----------------------------------------------------------------------------- instances
def two_lines(seed: int, n: int, a: float = 2.0, b: float = 1.0) -> np.ndarray:
    """Points on y = a t + b and on y = -t, computed in floating point, with a bias column."""
    rng = np.random.default_rng(seed)
    t = rng.normal(size=n)
    X = np.where((np.arange(n) % 2)[:, None] == 0, np.c_[t, a * t + b], np.c_[t, -t])
    return np.c_[X, np.ones(n)]


def relu_layer_case() -> np.ndarray:
    """[H, 1] of a ReLU layer of width 5 fed by 3 inputs, with two repeated samples."""
    rng = np.random.default_rng(183)
    n, m = int(rng.integers(3, 16)), int(rng.integers(2, 7))
    H = np.maximum(rng.normal(size=(n, 3)) @ rng.normal(size=(3, m - 1)), 0)
    return np.c_[np.r_[H, H[:2]], np.ones(n + 2)]


def perturbed_grid() -> np.ndarray:
    g = np.array([(i, j) for i in range(10) for j in range(10)], float)
    g += 1e-12 * np.random.default_rng(0).normal(size=g.shape)
    return np.c_[g, np.ones(100)]


def enumerate_quietly(Phi):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a thin chamber must not warn any more
        return enumerate_patterns(Phi)


def assert_exactly_complete(Phi, ps, expected: int) -> None:
    M = ps.masks
    assert len(ps) == expected == len({r.tobytes() for r in ps.packed})
    assert ps.uncertified.size == 0
    for k, theta in ps.exact_witnesses.items():
        assert isinstance(k, int) and all(type(x) is int for x in theta) and len(theta) == Phi.shape[1]
        assert fraction_realizes(Phi, M[k], theta), k
    rep = check_completeness(Phi, M, ps.witnesses, exact_witnesses=ps.exact_witnesses)
    assert rep.ok, rep.reason
    assert rep.expected == expected and rep.n_exact_witnesses == len(ps.exact_witnesses)


# ----------------------------------------------------------------------------- the three reported cases
@pytest.fixture(scope="module")
def line_set():
    Phi = two_lines(6, 12)
    return Phi, enumerate_quietly(Phi)


def test_points_on_float_lines_are_complete(line_set):
    Phi, ps = line_set
    assert_exactly_complete(Phi, ps, rank3_chamber_count(Phi))
    assert len(ps) == 102 and len(ps.exact_witnesses) == 8
    # the float witnesses of those chambers are wrong even in exact arithmetic: the exact
    # witnesses are needed, and without them the proof fails
    M = ps.masks
    for k in ps.exact_witnesses:
        w = [Fraction(float(x)) for x in ps.witnesses[k]]
        vals = [sum(Fraction(float(a)) * b for a, b in zip(row, w)) for row in Phi]
        assert any(v == 0 or (v > 0) != s for v, s in zip(vals, M[k]))
    rep = check_completeness(Phi, M, ps.witnesses)
    assert not rep.ok and "witness" in rep.reason


def test_relu_layer_wider_than_input_is_complete():
    Phi = relu_layer_case()
    ps = enumerate_quietly(Phi)
    cnt = count_patterns(Phi, method="exact")
    assert cnt.method == "deletion-restriction" and ps.rank == fraction_rank(Phi)
    assert_exactly_complete(Phi, ps, cnt.count)
    assert len(ps.exact_witnesses) >= 1


@pytest.mark.slow  # n = 100; the exact completeness check runs in the default tier on the float families below
def test_perturbed_grid_is_complete():
    Phi = perturbed_grid()
    ps = enumerate_quietly(Phi)
    assert rank3_chamber_count(Phi) == cover(100, 3)  # general position, exactly
    assert_exactly_complete(Phi, ps, cover(100, 3))
    assert len(ps.exact_witnesses) >= 1


def test_oracle_count_matches_brute_force():
    g = np.array([(i, j) for i in range(4) for j in range(3)], float)
    for Phi in (np.c_[g, np.ones(12)], two_lines(3, 9, 1.0, 0.0)):  # exactly collinear on the second
        assert rank3_chamber_count(Phi) == len(brute_force_patterns(Phi)) == count_patterns(Phi).count


# ----------------------------------------------------------------------------- properties
@settings(derandomize=True, deadline=None, max_examples=12)
@given(seed=st.integers(0, 10_000), n=st.integers(5, 14),
       a=st.sampled_from([2.0, 0.1, 3.0, -0.7]), b=st.sampled_from([1.0, 0.3, -2.5]))
def test_float_lines_always_complete(seed, n, a, b):
    Phi = two_lines(seed, n, a, b)
    ps = enumerate_quietly(Phi)
    assert_exactly_complete(Phi, ps, rank3_chamber_count(Phi))


@settings(derandomize=True, deadline=None, max_examples=3)
@given(seed=st.integers(0, 10_000), n=st.integers(5, 11))
def test_float_plane_in_r3_always_complete(seed, n):
    _float_plane_complete(seed, n)


@pytest.mark.slow
@settings(derandomize=True, deadline=None, max_examples=8)
@given(seed=st.integers(0, 10_000), n=st.integers(5, 11))
def test_float_plane_in_r3_always_complete_slow(seed, n):
    _float_plane_complete(seed, n)


def _float_plane_complete(seed, n):
    # points on z = 0.3 x - 1.7 y + 0.1 computed in floating point: rank 4 after rounding
    rng = np.random.default_rng(seed)
    xy = rng.normal(size=(n, 2))
    Phi = np.c_[xy, 0.3 * xy[:, 0] - 1.7 * xy[:, 1] + 0.1, np.ones(n)]
    ps = enumerate_quietly(Phi)
    assert_exactly_complete(Phi, ps, count_patterns(Phi, method="exact").count)


def test_thin_chambers_occur_in_the_property_families():
    # guards the properties above against testing nothing: thin chambers do occur
    total = sum(len(enumerate_quietly(two_lines(s, 12)).exact_witnesses) for s in range(6))
    assert total > 0


def test_ordinary_data_has_no_exact_witnesses():
    rng = np.random.default_rng(4)
    Phi = np.c_[rng.normal(size=(30, 3)), np.ones(30)]
    ps = enumerate_patterns(Phi)
    assert ps.exact_witnesses == {} and ps.uncertified.size == 0
    assert check_completeness(Phi, ps.masks, ps.witnesses, exact_witnesses={}).ok


# ----------------------------------------------------------------------------- tampering
def test_tampered_exact_witness_is_rejected(line_set):
    Phi, ps = line_set
    M, W, ex = ps.masks, ps.witnesses, ps.exact_witnesses
    k, k2 = sorted(ex)[:2]
    for bad in ({**ex, k: tuple(-x for x in ex[k])},     # the opposite chamber
                {**ex, k: ex[k2], k2: ex[k]},            # swapped
                {**ex, k: (0,) * Phi.shape[1]},          # on every wall
                {i: w for i, w in ex.items() if i != k}):  # missing
        rep = check_completeness(Phi, M, W, exact_witnesses=bad)
        assert not rep.ok and "witness" in rep.reason
    # a wrong exact witness fails the check even where the float witness is good
    good = next(i for i in range(len(ps)) if i not in ex)
    rep = check_completeness(Phi, M, W, exact_witnesses={**ex, good: ex[k]})
    assert not rep.ok and "exact witness" in rep.reason and f"#{good}" in rep.reason
    # and a correct exact witness for an ordinary pattern is fine
    theta = tuple(int(x) for x in np.round(W[good] * 2.0 ** 60))
    assert fraction_realizes(Phi, M[good], theta)
    assert check_completeness(Phi, M, W, exact_witnesses={**ex, good: theta}).ok


def test_exact_witnesses_as_decimal_strings_in_another_process(line_set, tmp_path):
    Phi, ps = line_set
    doc = {"Phi": Phi.tolist(), "masks": ps.masks.astype(int).tolist(), "witnesses": ps.witnesses.tolist(),
           "exact": {str(k): [str(x) for x in v] for k, v in ps.exact_witnesses.items()}}
    path = tmp_path / "cert.json"
    path.write_text(json.dumps(doc))
    code = ("import json, sys, numpy as np\n"
            "from relu_gating.patterns import check_completeness\n"
            "d = json.load(open(sys.argv[1]))\n"
            "r = check_completeness(np.array(d['Phi']), np.array(d['masks'], bool), np.array(d['witnesses']),"
            " exact_witnesses=d['exact'])\n"
            "print(r.ok, r.n_exact_witnesses)\n")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[1]))
    assert out.stdout.split() == ["True", str(len(ps.exact_witnesses))]
    # same, in process, with int keys and string values and a tampered digit
    ex = {int(k): v for k, v in doc["exact"].items()}
    k = min(ex)
    assert check_completeness(Phi, ps.masks, ps.witnesses, exact_witnesses=ex).ok
    ex[k] = ["-" + x if not x.startswith("-") else x[1:] for x in ex[k]]
    assert not check_completeness(Phi, ps.masks, ps.witnesses, exact_witnesses=ex).ok


# ----------------------------------------------------------------------------- chunks and parts
def test_iter_chunks_rebase_exact_witnesses(line_set):
    Phi, ps = line_set
    seen = {}
    start = 0
    for chunk in ps.iter_chunks(13):
        for k, theta in chunk.exact_witnesses.items():
            assert 0 <= k < len(chunk)
            assert fraction_realizes(Phi, chunk.masks[k], theta)
            seen[start + k] = theta
        assert chunk.uncertified.size == 0
        start += len(chunk)
    assert seen == ps.exact_witnesses


def test_parts_carry_exact_witnesses(line_set):
    Phi, ps = line_set
    masks, W, ex, off = [], [], {}, 0
    for i in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            p = enumerate_patterns(Phi, part=(i, 3))
        assert p.uncertified.size == 0
        masks.append(p.masks)
        W.append(p.witnesses)
        ex.update({off + k: v for k, v in p.exact_witnesses.items()})
        off += len(p)
    M = np.concatenate(masks)
    assert {r.tobytes() for r in np.packbits(M, axis=1)} == {r.tobytes() for r in ps.packed}
    assert len(ex) == len(ps.exact_witnesses)
    assert check_completeness(Phi, M, np.concatenate(W), exact_witnesses=ex).ok


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("bad", [
    [(0, 1, 2)],                       # not a mapping
    {0: (1, 2)},                       # wrong length
    {0: (1.0, 2.0, 3.0)},              # floats are not exact integers here
    {0: (True, 1, 1)},                 # bools neither
    {0: ("1", "2", "x3")},             # not a decimal string
    {0: "123"},                        # a string is not a sequence of entries
    {10 ** 6: (1, 2, 3)},              # index out of range
    {"a": (1, 2, 3)},                  # key not an index
])
def test_bad_exact_witnesses(line_set, bad):
    Phi, ps = line_set
    with pytest.raises(InputError, match="exact_witnesses"):
        check_completeness(Phi, ps.masks, ps.witnesses, exact_witnesses=bad)


# ----------------------------------------------------------------------------- safety net
@pytest.mark.parametrize("mode", ["wrong", "raises"])
def test_a_failed_exact_witness_is_reported_not_trusted(monkeypatch, mode):
    # if the exact construction were wrong, its output is caught by the exact check:
    # the pattern stays uncertified, a warning is issued and the completeness proof fails
    import relu_gating.patterns._sweep as sweep

    def broken(rows, c, Ss, scs, P):
        def prov(idx):
            if mode == "raises":
                raise ArithmeticError("broken")
            return [tuple(0 for _ in rows[0]) for _ in idx]
        return prov

    monkeypatch.setattr(sweep, "_simple_prov", broken)
    Phi = two_lines(6, 12)
    with pytest.warns(RuntimeWarning, match="no certified witness"):
        ps = enumerate_patterns(Phi)
    assert ps.uncertified.size > 0 and not set(ps.uncertified.tolist()) & set(ps.exact_witnesses)
    rep = check_completeness(Phi, ps.masks, ps.witnesses, exact_witnesses=ps.exact_witnesses)
    assert not rep.ok and "witness" in rep.reason


# ----------------------------------------------------------------------------- every construction path
def _all_exact_witnesses(Phi, stride: int = 1):
    """Ask the sweep's providers for exact witnesses of (every stride-th) chamber of every block."""
    from relu_gating.patterns._enumerate import _top_level
    from relu_gating.patterns._rowspace import reduce_rows
    from relu_gating.patterns._sink import Sink

    red = reduce_rows(Phi)
    out = []

    class Ask:
        notes: list = []

        def __call__(self, pk, W, prov, sure=None):
            idx = sorted(set(range(0, pk.shape[0], stride)) | {pk.shape[0] - 1})
            M = np.unpackbits(pk[idx], axis=1, count=red.n).astype(bool)
            for mk, y in zip(M, prov(idx)):
                theta = [0] * red.m
                for k, col in enumerate(red.cols):
                    theta[col] = y[k]
                out.append((mk, theta))
            return W

    _top_level(red, (0, 1), False, Ask(), Sink(1, np.packbits(red.cls >= 0), red.m))
    return out


def _path_cases():
    from test_patterns import FAMILIES

    cases = {k: (FAMILIES[k], 1) for k in ("grid 3x2x2", "grid 4x3", "antiparallel, parallel, zero rows",
                                             "rank deficient (col3 = x1 + 2 x2)", "[H, 1] ReLU layer, repeated rows",
                                             "small integers 10x4", "rank 1", "single row")}
    rng = np.random.default_rng(12)
    for r, n, stride in [(2, 80, 1), (5, 10, 1), (6, 8, 1), (4, 70, 499)]:  # (4, 70): child with q > 64
        cases[f"random r={r} n={n}"] = (np.c_[rng.normal(size=(n, r - 1)), np.ones(n)], stride)
    return cases


PATH_CASES = _path_cases()


@pytest.mark.parametrize("name", list(PATH_CASES))
def test_exact_construction_on_every_path(name):
    # simple rays, non-simple rays (local recursion), the A|K child recursion, plane
    # sectors and d = 1: the exact witness of every chamber, not only the thin ones
    Phi, stride = PATH_CASES[name]
    got = _all_exact_witnesses(Phi, stride)
    assert got and all(fraction_realizes(Phi, mk, th) for mk, th in got)
