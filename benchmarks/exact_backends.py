"""Benchmark: the checker's exact hot paths on fractions.Fraction against gmpy2 (``mpq``) and
python-flint (``fmpq``, ``fmpz_mat``, ``fmpq_mat``), side by side in one run (issue 37).

Measured (median of ``--repeats`` runs each, milliseconds):

* ``psd``: the exact PSD decision of exact mode's per-leaf and per-pattern proofs, on the
  ``r x r`` pencils ``u B_S - A_S`` of a real problem (``u`` just above the pattern's supremum, so
  the elimination runs to the end): the Fraction elimination the checker used before issue 37,
  the checker's fraction-free Bareiss (:func:`relu_gating.checker._rational.is_psd`), the same
  elimination on ``mpq`` and on ``fmpq`` scalars, the Bareiss on ``gmpy2.mpz``, and FLINT's characteristic polynomial
  (``fmpq_mat.charpoly``: a symmetric matrix is PSD iff its coefficients alternate in sign);
* ``psd-long``: the same with 2,700-digit multipliers folded in (the problem's digit limit);
* ``forms``: ``ExactProblem.forms`` (the ``Z^T Z``-type products over ``n`` rows that start every
  exact leaf proof): Python ints against ``fmpz_mat`` products;
* ``solve``: a 12 x 12 dyadic system, :func:`relu_gating.checker._rational.solve` (Fraction
  Gauss-Jordan) against ``mpq`` and ``fmpq_mat.solve``.

Every backend's answer is compared with the checker's; a disagreement is printed and fails the run.
The libraries are optional here: a missing one is reported, not installed.  Run::

    python benchmarks/exact_backends.py [--repeats 7] [--n 60]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from fractions import Fraction

import numpy as np

from relu_gating.checker import state_problem
from relu_gating.checker._rational import is_psd, solve

try:
    import gmpy2
except ImportError:  # pragma: no cover - optional
    gmpy2 = None
try:
    import flint
except ImportError:  # pragma: no cover - optional
    flint = None


def psd_fraction(C: list) -> bool:
    """The checker's PSD elimination before issue 37 (Fraction pivots, a gcd per operation)."""
    return _psd_field([[Fraction(x) for x in row] for row in C])


def _psd_field(C: list) -> bool:
    live = list(range(len(C)))
    while live:
        if any(C[i][i] < 0 for i in live):
            return False
        k = next((i for i in live if C[i][i] > 0), None)
        if k is None:
            return all(C[i][j] == 0 for i in live for j in live)
        live.remove(k)
        for i in live:
            if C[i][k]:
                f = C[i][k] / C[k][k]
                for j in live:
                    C[i][j] -= f * C[k][j]
    return True


def psd_mpq(C: list) -> bool:
    return _psd_field([[gmpy2.mpq(x.numerator, x.denominator) for x in row] for row in C])


def psd_fmpq(C: list) -> bool:
    return _psd_field([[flint.fmpq(x.numerator, x.denominator) for x in row] for row in C])


def psd_bareiss_mpz(C: list) -> bool:
    """The checker's fraction-free Bareiss on ``gmpy2.mpz`` integers (GMP's subquadratic division)."""
    import math

    d = [math.lcm(*(x.denominator for x in row)) for row in C]
    A = [[gmpy2.mpz(x.numerator * (di // x.denominator) * dj) for x, dj in zip(row, d)] for row, di in zip(C, d)]
    live, prev = list(range(len(A))), gmpy2.mpz(1)
    while live:
        if any(A[i][i] < 0 for i in live):
            return False
        k = next((i for i in live if A[i][i] > 0), None)
        if k is None:
            return all(A[i][j] == 0 for i in live for j in live)
        live.remove(k)
        p, Ak = A[k][k], A[k]
        for i in live:
            Ai, a = A[i], A[i][k]
            for j in live:
                Ai[j] = gmpy2.divexact(Ai[j] * p - a * Ak[j], prev)
        prev = p
    return True


def psd_charpoly(C: list) -> bool:
    """PSD iff ``det(x I - C)``'s coefficients alternate weakly in sign (all eigenvalues >= 0)."""
    M = flint.fmpq_mat([[flint.fmpq(x.numerator, x.denominator) for x in row] for row in C])
    c = M.charpoly().coeffs()  # ascending: c_0 + c_1 x + ... + x^r
    r = len(c) - 1
    return all(v == 0 or (v > 0) == ((r - k) % 2 == 0) for k, v in enumerate(c))


def _median_ms(f, *args, repeats: int) -> tuple[float, object]:
    out, ts = None, []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = f(*args)
        ts.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(ts), out


def _problem(n: int):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    Phi = np.c_[X, np.ones(n)]
    U = np.linalg.qr(rng.normal(size=(n, 4)))[0]
    return state_problem(Phi, U, "bias"), Phi


def _pencils(P, Phi, count: int, long: bool) -> list:
    """``u B_S - A_S (- D)`` for ``count`` patterns (signs of random weights), ``u`` 1e-9 above the float supremum."""
    E = P.exact
    r = P.Phi_r.shape[1]
    rng = np.random.default_rng(1)
    out = []
    while len(out) < count:
        mask = Phi @ rng.normal(size=Phi.shape[1]) > 0
        A, B, _ = E.forms(E.pattern(mask), r)
        Af, Bf = (np.array([[float(v) for v in row] for row in X]) for X in (A, B))
        w, V = np.linalg.eigh(Bf)
        keep = w > 1e-12 * max(w[-1], 1e-300)
        if not keep.any():
            continue
        R = V[:, keep] / np.sqrt(w[keep])
        u = Fraction(float(np.linalg.eigvalsh(R.T @ Af @ R)[-1]) + 1e-9)
        C = [[u * B[i][j] - A[i][j] for j in range(r)] for i in range(r)]
        if long:  # a tiny PSD rank-one term with 2,700-digit entries (as a multiplier of the digit limit adds)
            g = [Fraction(int("7" * 2700), int("3" * 2700 + "1")) * (k + 1) for k in range(r)]
            C = [[C[i][j] - Fraction(1, 10**12) * g[i] * g[j] for j in range(r)] for i in range(r)]
        out.append(C)
    return out


def _forms_flint(E, zrows: list, p: int):
    Z = flint.fmpz_mat([z for _, z in zrows])
    Ui = flint.fmpz_mat([E.Ui[i] for i, _ in zrows])
    return Z.transpose() * Z, Ui.transpose() * Z


def _forms_python(E, zrows: list, p: int):
    ZZ = [[sum(z[a] * z[b] for _, z in zrows) for b in range(p)] for a in range(p)]
    UZ = [[sum(E.Ui[i][k] * z[b] for i, z in zrows) for b in range(p)] for k in range(E.K)]
    return ZZ, UZ


def run(repeats: int, n: int) -> bool:
    P, Phi = _problem(n)
    print(f"problem: n = {n}, m = {Phi.shape[1]}, rank {P.Phi_r.shape[1]}, K = {P.U.shape[1]}, features bias; "
          f"gmpy2 {'missing' if gmpy2 is None else gmpy2.version()}, "
          f"python-flint {'missing' if flint is None else flint.__version__}; median of {repeats} runs, ms")
    ok = True
    psd_ways = [("Fraction (before)", psd_fraction), ("Bareiss ints (checker)", is_psd)]
    psd_ways += [("gmpy2 mpq", psd_mpq), ("Bareiss mpz", psd_bareiss_mpz)] if gmpy2 else []
    psd_ways += [("flint fmpq", psd_fmpq), ("flint charpoly", psd_charpoly)] if flint else []
    for label, long in (("psd", False), ("psd-long", True)):
        Cs = _pencils(P, Phi, 20, long)
        ref = [is_psd(C) for C in Cs]
        row = []
        for name, f in psd_ways:
            ms, got = _median_ms(lambda f=f, Cs=Cs: [f(C) for C in Cs], repeats=repeats)
            ok &= got == ref
            row.append(f"{name} {ms / len(Cs):8.3f}" + ("" if got == ref else " DISAGREES"))
        print(f"{label:9s} per matrix ({sum(ref)} of {len(Cs)} PSD): " + " | ".join(row))
    E = P.exact
    mask = Phi @ np.array([1.0, -0.5, 0.25, 0.1]) > 0
    zrows = E.pattern(mask)
    r = P.Phi_r.shape[1]
    ms_py, (ZZ, UZ) = _median_ms(_forms_python, E, zrows, r, repeats=repeats)
    row = [f"python ints {ms_py:8.3f}"]
    if flint:
        ms_fl, (ZZf, UZf) = _median_ms(_forms_flint, E, zrows, r, repeats=repeats)
        same = [[int(ZZf[a, b]) for b in range(r)] for a in range(r)] == ZZ
        ok &= same
        row.append(f"fmpz_mat {ms_fl:8.3f}" + ("" if same else " DISAGREES"))
    print(f"{'forms':9s} Z^T Z and U^T Z over {len(zrows)} rows: " + " | ".join(row))
    rng = np.random.default_rng(2)
    A = [[Fraction(float(v)) for v in row] for row in rng.normal(size=(12, 12))]
    b = [Fraction(float(v)) for v in rng.normal(size=12)]
    ms, ref = _median_ms(solve, A, b, repeats=repeats)
    row = [f"Fraction {ms:8.3f}"]
    if gmpy2:
        Am = [[gmpy2.mpq(x.numerator, x.denominator) for x in r_] for r_ in A]
        bm = [gmpy2.mpq(x.numerator, x.denominator) for x in b]
        ms, got = _median_ms(_solve_field, Am, bm, repeats=repeats)
        same = [Fraction(int(v.numerator), int(v.denominator)) for v in got] == ref
        ok &= same
        row.append(f"gmpy2 mpq {ms:8.3f}" + ("" if same else " DISAGREES"))
    if flint:
        Af = flint.fmpq_mat([[flint.fmpq(x.numerator, x.denominator) for x in r_] for r_ in A])
        bf = flint.fmpq_mat([[flint.fmpq(x.numerator, x.denominator)] for x in b])
        ms, got = _median_ms(Af.solve, bf, repeats=repeats)
        same = [Fraction(int(got[i, 0].p), int(got[i, 0].q)) for i in range(12)] == ref
        ok &= same
        row.append(f"flint fmpq_mat.solve {ms:8.3f}" + ("" if same else " DISAGREES"))
    print(f"{'solve':9s} 12 x 12 dyadic system: " + " | ".join(row))
    print(f"every backend agrees with the checker: {'yes' if ok else 'NO'}")
    return ok


def _solve_field(A: list, b: list) -> list:
    """Gauss-Jordan with partial pivoting on a field's scalars (a nonsingular square system)."""
    k = len(A)
    T = [list(A[r]) + [b[r]] for r in range(k)]
    for c in range(k):
        p = next(t for t in range(c, k) if T[t][c] != 0)
        T[c], T[p] = T[p], T[c]
        piv = T[c][c]
        T[c] = [x / piv for x in T[c]]
        for t in range(k):
            if t != c and T[t][c] != 0:
                f = T[t][c]
                T[t] = [a - f * x for a, x in zip(T[t], T[c])]
    return [T[t][k] for t in range(k)]


def main(argv: list[str] | None = None) -> bool:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--n", type=int, default=60)
    a = ap.parse_args(argv)
    return run(a.repeats, a.n)


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
