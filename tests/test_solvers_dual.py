"""The dual DNN certificate :func:`solvers.cone_dual`: validity against the exact
face enumeration and random feasible points, tightness, and the certificate
itself (``upper B - A - G^T N G`` PSD, ``N`` symmetric and nonnegative)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from _cone_reference import marginal_instance, realistic_instance

import solvers
from solvers import ConeDual, cone_dual
from solvers.dual import certified_upper

#: Tightness criterion of the brief: ``upper <= opt * (1 + TIGHT_RTOL) + TIGHT_ATOL``.
TIGHT_RTOL, TIGHT_ATOL = 1e-7, 1e-9
#: Required fraction of tight instances (the DNN relaxation is tight on nearly all small ones).
TIGHT_RATE = 0.95
#: PSD check of the certificate: smallest eigenvalue ``>= -PSD_RTOL * scale``.
PSD_RTOL = 1e-10
#: ``upper >= value - tol`` for every feasible value; ``tol``: :func:`rounding_tol` with these constants.
VALID_RTOL = 1e-12
ROUND_EPS = 4 * float(np.finfo(float).eps)

RANDOM = [(seed, m, p, singular) for m in range(2, 6) for p in range(3, 11) for singular in (False, True)
          for seed in range(3)]


def random_instance(seed: int, m: int, p: int, singular: bool):
    """``A = C^T C`` (``C`` random ``K x m``), ``B`` PD or PSD-singular (small integers) with
    ``null(B)`` in ``null(A)`` exactly, ``G`` random ``p x m`` with a strictly interior point ``x0``."""
    rng = np.random.default_rng([seed, m, p, int(singular)])
    x0 = rng.standard_normal(m)
    G = rng.standard_normal((p, m))
    G *= np.sign(G @ x0)[:, None]
    K = int(rng.integers(1, m + 1))
    if singular:  # small integers: B singular exactly, null(B) in null(A) exactly
        R = rng.integers(-3, 4, size=(m, int(rng.integers(1, m)))).astype(float)
        R[0, 0] = R[0, 0] or 1.0
        B = R @ R.T
        C = rng.integers(-3, 4, size=(K, R.shape[1])).astype(float) @ R.T  # rows in range(B)
    else:
        B = rng.standard_normal((m, m))
        B = B @ B.T + 0.1 * np.eye(m)
        C = rng.standard_normal((K, m))
    return C.T @ C, B, G, x0


def rounding_tol(A, B, X) -> np.ndarray:
    """Per point ``x`` (rows of ``X``), how far rounding of the data and of ``x^T A x / x^T B x``
    can move the quotient: ``ROUND_EPS (|x|^T |A| |x| + |q| |x|^T |B| |x|) / x^T B x`` plus
    ``VALID_RTOL |q|``.  Large when ``x`` lies mostly in ``ker B`` (the float ``B`` is singular
    only to within rounding there)."""
    X = np.atleast_2d(X)
    Xa = np.abs(X)
    den = np.einsum("ij,jk,ik->i", X, B, X)
    q = np.einsum("ij,jk,ik->i", X, A, X) / den
    spread = np.einsum("ij,jk,ik->i", Xa, np.abs(A), Xa) + np.abs(q) * np.einsum("ij,jk,ik->i", Xa, np.abs(B), Xa)
    return ROUND_EPS * A.shape[0] * spread / den + VALID_RTOL * np.abs(q)


def feasible_values(A, B, G, x0, rng, count: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """Quotients at random points of the cone (perturbations of ``x0`` at several radii) and
    their rounding tolerances."""
    m = A.shape[0]
    X = x0 + rng.standard_normal((count, m)) * np.repeat([0.1, 1.0, 10.0, 100.0], count // 4)[:, None]
    X = X[(X @ G.T >= 0).all(axis=1)]
    den = np.einsum("ij,jk,ik->i", X, B, X)
    X = X[den > 1e-9 * np.einsum("ij,ij->i", X, X) * np.abs(B).max()]
    num = np.einsum("ij,jk,ik->i", X, A, X)
    den = np.einsum("ij,jk,ik->i", X, B, X)
    return num / den, rounding_tol(A, B, X)


@functools.cache
def _solved(seed: int, m: int, p: int, singular: bool):
    A, B, G, x0 = random_instance(seed, m, p, singular)
    ref = solvers.solve(solvers.ConeEigProblem(A, B, G), method="faces")
    return (A, B, G, x0), ref, cone_dual(A, B, G)


def _psd_margin(d: ConeDual, A, B, G) -> float:
    """Smallest eigenvalue of ``upper B - A - G^T N G`` over its scale (the full matrix, which
    is what the bound rests on; on range(B) alone is weaker)."""
    GNG = G.T @ d.N @ G
    S = d.upper * B - A - GNG
    scale = max(abs(d.upper) * np.abs(B).max(), np.abs(A).max(), np.abs(GNG).max(), 1e-300)
    return float(np.linalg.eigvalsh(0.5 * (S + S.T))[0]) / scale


def _check_certificate(d: ConeDual, A, B, G) -> None:
    assert isinstance(d, ConeDual) and d.seconds >= 0
    assert d.N.shape == (G.shape[0], G.shape[0])
    assert np.array_equal(d.N, d.N.T)
    assert (d.N >= 0).all()
    assert np.isfinite(d.upper)
    assert _psd_margin(d, A, B, G) >= -PSD_RTOL


@pytest.mark.parametrize("seed,m,p,singular", RANDOM)
def test_upper_is_valid(seed, m, p, singular):
    (A, B, G, x0), ref, d = _solved(seed, m, p, singular)
    assert ref.status is solvers.Status.EXACT, ref.message
    assert d.status in ("solved", "inaccurate", "cone-free"), d.status
    assert d.upper >= ref.lower - rounding_tol(A, B, ref.x)[0]  # ref.lower: the quotient at a feasible witness
    vals, tols = feasible_values(A, B, G, x0, np.random.default_rng(seed))
    assert vals.size and (d.upper >= vals - tols).all()
    _check_certificate(d, A, B, G)


def _tight(upper: float, opt: float, rtol: float = TIGHT_RTOL) -> bool:
    return upper <= opt * (1 + rtol) + TIGHT_ATOL


def test_tightness_rate(record_property):
    by_m: dict[int, list[bool]] = {}
    for key in RANDOM:
        _, ref, d = _solved(*key)
        by_m.setdefault(key[1], []).append(_tight(d.upper, ref.upper))
    rates = {m: float(np.mean(v)) for m, v in by_m.items()}
    overall = float(np.mean([t for v in by_m.values() for t in v]))
    record_property("tight_rate_by_m", rates)
    print(f"cone_dual tightness (<= opt (1 + {TIGHT_RTOL}) + {TIGHT_ATOL}): by m {rates}, overall {overall:.3f}")
    assert overall >= TIGHT_RATE, rates


@pytest.mark.parametrize("kind,seed,m", [(k, s, m) for k in ("realistic", "marginal") for m in (3, 4, 5, 6)
                                          for s in range(6)])
def test_gating_instances_valid_and_tight(kind, seed, m):
    """The gating family (singular ``B`` with few active rows, marginal gain over the bias)."""
    if kind == "realistic":
        A, B, G = realistic_instance(1000 + seed, 6 + seed, m, K=2 + seed % 2)
    else:
        A, B, G = marginal_instance(2000 + seed, 6 + seed, m, 2, seed % 3 == 0)
    ref = solvers.solve(solvers.ConeEigProblem(A, B, G), method="faces")
    d = cone_dual(A, B, G, rows=solvers.facet_rows(G))
    if ref.status is solvers.Status.INFEASIBLE:  # B = 0 on the cone's span: nothing to bound
        assert ref.message.endswith("(exact)") and d.upper == -np.inf and not d.N.any()
        return
    _check_certificate(d, A, B, G)
    assert ref.status in (solvers.Status.EXACT, solvers.Status.BOUNDED) and ref.x is not None
    assert d.upper >= ref.lower - rounding_tol(A, B, ref.x)[0]  # valid whatever the reference's gap
    if ref.status is solvers.Status.EXACT:  # tight where the optimum is known
        # rounding in the ker B Schur complement costs up to ~3e-7 on boundary certificates
        assert _tight(d.upper, ref.upper, rtol=1e-6), (d.upper, ref.upper, d.status)


def test_any_nonnegative_N_gives_a_valid_bound():
    rng = np.random.default_rng(5)
    for key in RANDOM[::7]:
        (A, B, G, _), ref, _ = _solved(*key)
        M = rng.random((G.shape[0], G.shape[0]))
        ub = certified_upper(A, B, G, M * rng.choice([0.0, 1.0, 10.0]))
        assert ub >= ref.lower - rounding_tol(A, B, ref.x)[0]


def test_rows_subset_and_zero_outside():
    A, B, G, _ = random_instance(0, 4, 8, False)
    rows = solvers.facet_rows(G)
    d = cone_dual(A, B, G, rows=rows)
    out = np.setdiff1d(np.arange(G.shape[0]), rows)
    assert not d.N[out].any() and not d.N[:, out].any()
    full = cone_dual(A, B, G)
    assert abs(d.upper - full.upper) <= 1e-7 * abs(full.upper)  # redundant rows add nothing here
    with pytest.raises(ValueError, match="rows must index"):
        cone_dual(A, B, G, rows=[G.shape[0]])


def test_target_skips_the_sdp_when_the_cone_free_bound_meets_it():
    A, B = np.diag([2.0, 1.0]), np.eye(2)
    d = cone_dual(A, B, np.eye(2), target=2.0)
    assert d.status == "cone-free" and not d.N.any() and 2.0 <= d.upper <= 2.0 + 1e-10
    G = np.array([[-1.0, 1.0], [1.0, 1.0]])  # |x_0| <= x_1: optimum 1.5
    d = cone_dual(A, B, G, target=1.5)
    assert d.status == "solved" and 1.5 <= d.upper <= 1.5 + 1e-8
    _check_certificate(d, A, B, G)


def test_degenerate_inputs():
    A = np.diag([1.0, 0.0])
    d = cone_dual(A, np.eye(2), np.zeros((0, 2)))
    assert d.status == "cone-free" and d.N.shape == (0, 0) and abs(d.upper - 1.0) <= 1e-10
    d = cone_dual(np.eye(2), np.diag([1.0, 0.0]), np.eye(2))  # A sees ker B: no bound
    assert d.status == "kernel" and d.upper == np.inf and not d.N.any()
    d = cone_dual(np.zeros((2, 2)), np.eye(2), np.eye(2))
    assert d.status == "cone-free" and d.upper == 0.0
    d = cone_dual([[2.0]], [[1.0]], [[1.0], [3.0]])
    assert abs(d.upper - 2.0) <= 1e-10


def test_kernel_directions_in_the_cone():
    """``B`` singular, the cone holds a ray of ``ker B`` (``x_2``): rows positive on it cannot be
    used, and the bound still uses the others (the optimum 0.5 needs the kernel direction)."""
    A, B = np.diag([1.0, 0.0, 0.0]), np.diag([1.0, 1.0, 0.0])
    G = np.array([[1.0, 0, 1], [-1, 0, 1], [0, 1, -1], [1, 1, 0]])
    ref = solvers.solve(solvers.ConeEigProblem(A, B, G), method="faces")
    d = cone_dual(A, B, G)
    assert d.upper >= ref.lower - rounding_tol(A, B, ref.x)[0] and _tight(d.upper, ref.upper)
    _check_certificate(d, A, B, G)


def test_many_cone_rows_build_a_sparse_problem():
    """400 cone rows make 80,200 multiplier pairs: the SDP's data is built sparse (dense, it was a
    48 GB allocation and a MemoryError), and the bound stays valid: at least every sampled feasible
    ratio, at most the cone-free bound."""
    import tracemalloc

    rng = np.random.default_rng(7)
    m, p = 3, 400
    X = rng.standard_normal((p, m))
    A, B = X.T @ np.diag(rng.random(p)) @ X, X.T @ X
    G = rng.standard_normal((p, m))
    G[:, 0] = np.abs(G[:, 0]) + 3.0  # a cone around e_0
    tracemalloc.start()
    d = cone_dual(A, B, G)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 200e6, peak
    free = cone_dual(A, B, np.zeros((0, m)))
    x = rng.standard_normal((20000, m))
    x = x[np.all(x @ G.T >= 0, axis=1)]
    assert x.shape[0] > 100
    ratios = np.einsum("ij,jk,ik->i", x, A, x) / np.einsum("ij,jk,ik->i", x, B, x)
    assert d.upper >= ratios.max() * (1 - 1e-12) and d.upper <= free.upper * (1 + 1e-12)
