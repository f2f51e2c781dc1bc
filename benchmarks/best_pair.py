r"""The best pair of neurons (t = 2) bracketed on a small instance, against the certified greedy layer and
alpha < 1 greedy layers (issue 40, "greedy against the best layer").

From the bias ``H_0 = [1]`` the value of a layer of two neurons is
``N_K([1, relu(Phi theta_1), relu(Phi theta_2)])``.  Inside the closed chamber of a gating pattern ``S``,
``relu(Phi theta) = D_S Phi theta``, so a neuron's residual against ``1`` lies in the subspace
``V_S = (I - 11^T/n) col(D_S Phi)`` (dimension at most ``m``).  The realizable patterns are finite and
are listed exactly by :func:`relu_gating.patterns.enumerate_patterns` (every chamber of the arrangement;
a neuron on a chamber's boundary is the limit of neurons inside it, so the closed chambers cover every
neuron).  For a pair of patterns ``(S_1, S_2)``:

* **upper bound** (the cone constraints of both neurons dropped): the two residuals span a subspace of
  ``W = V_(S_1) + V_(S_2)``, so the pair's value is at most ``N_K(H_0) + lambda_1 + lambda_2`` with
  ``lambda_1 >= lambda_2`` the two largest eigenvalues of ``U_K^T P_W U_K`` (Ky Fan).  Also (the
  sequential bound) the value is ``N_K(H_0) + g(r_1) + g(r_2')`` with ``r_2'`` the part of ``r_2``
  orthogonal to ``r_1``, which lies in ``W``: so at most ``N_K(H_0) + min(b_1, b_2) + lambda_1`` with
  ``b_i`` the smaller of ``V_(S_i)``'s largest eigenvalue and the certified search's bound on the best
  single neuron (the greedy layer's first step).  The pair's bound is the smaller of the two; the best
  pair over all neurons is at most the largest pair bound;
* **lower bounds**: actual layers (their value is recomputed from ``relu`` of the weights): the greedy
  layers, every pair of a pool of neurons scored exactly (``best_layer.py``'s two-neuron formula), and
  for every pattern pair whose upper bound is above the best value found, a local solve started from
  the two chambers' witnesses (Nelder-Mead on the four free weights' directions, keeping the best
  actual layer value).

Pairs whose upper bound is at most the best value found are pruned; the result is the bracket
``[best found, max upper bound over the pairs not pruned]``: an optimum only when that bracket closes.

Floats: each upper bound is an eigenvalue problem of size at most ``2m`` in float64; the subspace
``W`` is taken from an SVD that keeps every direction above ``1e-11`` of the largest singular value
(keeping a spurious direction only raises the bound; the smallest kept and the largest dropped
singular values over all pairs are recorded, so that the rank decision has a visible gap), and an
allowance ``--allowance`` (default ``1e-9``, far above float64's rounding on these sizes) is added
before a pair is pruned.  A sample of the bounds is recomputed in 50-digit arithmetic (mpmath) and
the largest difference recorded.

Usage::

    python benchmarks/best_pair.py --n 16 --K 4 --out benchmarks/results/experiments_best_layer/best_pair_moons16.json
    python benchmarks/best_pair.py --quick   # the same instance, 10 s of local solves
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's relu_gating
sys.path.insert(0, str(HERE))

#: Directions of W with a singular value below this fraction of the largest are dropped.
RANK_TOL = 1e-11


def instance(n: int, K: int, seed: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """Two moons (kNN 8, noise 0.1) on a dyadic grid: ``Phi = [X, 1]``, ``U_K`` and a description."""
    from relu_gating.experiments.certification import moons_problem
    from relu_gating.experiments._theory import dyadic
    from relu_gating.layers.networks import layer_input

    p = moons_problem(n, K, seed=seed)
    return layer_input(dyadic(p["X"])), p["U_K"], {"data": "two moons (noise 0.1, kNN 8), X on a dyadic grid",
                                                   "n": n, "K": K, "seed": seed}


def pattern_bases(Phi: np.ndarray, masks: np.ndarray) -> tuple[list[np.ndarray], list[float], list[float]]:
    """Per pattern an orthonormal basis of ``V_S`` (residual of ``col(D_S Phi)`` against ``1``), with the
    smallest kept and largest dropped singular values (relative)."""
    n = Phi.shape[0]
    out, kept, dropped = [], [], []
    for m in masks:
        A = Phi * m[:, None]
        A = A - A.mean(axis=0, keepdims=True)
        Q, s, _ = np.linalg.svd(A, full_matrices=False)
        top = s.max(initial=0.0)
        keep = s > RANK_TOL * top if top > 0 else np.zeros_like(s, bool)
        out.append(Q[:, keep])
        kept.append(float(s[keep].min() / top) if keep.any() else np.inf)
        dropped.append(float(s[~keep].max() / top) if (~keep).any() and top > 0 else 0.0)
    assert all(b.shape[0] == n for b in out)
    return out, kept, dropped


def pair_bounds(bases: list[np.ndarray], Uc: np.ndarray, *, block: int = 4096) -> tuple[np.ndarray, float, float]:
    """The two largest eigenvalues ``(lambda_1, lambda_2)`` of ``U^T P_W U`` for every pattern pair
    ``(i <= j)`` (flattened upper triangle; ``W = V_i + V_j``), with the smallest kept / largest dropped
    relative singular value of ``[B_i, B_j]``."""
    N, n = len(bases), Uc.shape[0]
    m = max(b.shape[1] for b in bases)
    Bst = np.zeros((N, n, m))
    for k, b in enumerate(bases):
        Bst[k, :, : b.shape[1]] = b
    I, J = np.triu_indices(N)
    out = np.empty((I.size, 2))
    kept_min, drop_max = np.inf, 0.0
    for s0 in range(0, I.size, block):
        i, j = I[s0:s0 + block], J[s0:s0 + block]
        C = np.concatenate([Bst[i], Bst[j]], axis=2)  # (b, n, 2m); zero columns are harmless
        Q, s, _ = np.linalg.svd(C, full_matrices=False)
        top = np.maximum(s[:, :1], 1e-300)
        keep = s > RANK_TOL * top
        rel = s / top
        kept_min = min(kept_min, float(np.min(np.where(keep, rel, np.inf))))
        drop_max = max(drop_max, float(np.max(np.where(keep, 0.0, rel), initial=0.0)))
        P = np.einsum("bnk,nK->bkK", Q, Uc) * keep[:, :, None]  # Q^T U on the kept directions
        ev = np.linalg.eigvalsh(np.einsum("bkK,bkL->bKL", P, P))  # ascending, K x K
        out[s0:s0 + block, 0] = ev[:, -1]
        out[s0:s0 + block, 1] = ev[:, -2] if ev.shape[1] > 1 else 0.0
    return out, kept_min, drop_max


def pair_bound_mp(Bi: np.ndarray, Bj: np.ndarray, Uc: np.ndarray, dps: int = 50) -> float:
    """The same bound in ``dps``-digit arithmetic (mpmath): for the float check."""
    import mpmath

    mpmath.mp.dps = dps
    C = mpmath.matrix(np.c_[Bi, Bj].tolist())
    # orthonormal basis of col(C) by Gram-Schmidt with the same rank rule
    cols = []
    for k in range(C.cols):
        v = C[:, k]
        for q in cols:
            v = v - (q.T * v)[0] * q
        nv = mpmath.norm(v)
        if nv > RANK_TOL * 10:  # the columns are unit or zero: relative to 1
            cols.append(v / nv)
    if not cols:
        return 0.0
    Q = mpmath.matrix(len(cols[0]), len(cols))
    for k, q in enumerate(cols):
        Q[:, k] = q
    P = Q.T * mpmath.matrix(Uc.tolist())
    ev = sorted(mpmath.eigsy(P.T * P)[0], reverse=True)
    return float(ev[0] + (ev[1] if len(ev) > 1 else 0))


def combine(N0: float, lam: np.ndarray, I: np.ndarray, J: np.ndarray, g1_upper: float) -> tuple[np.ndarray, np.ndarray]:
    """The two pair bounds from ``pair_bounds``' eigenvalues: Ky Fan ``N0 + lambda_1 + lambda_2`` and the
    sequential ``N0 + min(b_i, b_j) + lambda_1`` (``b_i``: pattern ``i``'s own largest eigenvalue, at most
    the certified single-neuron bound ``g1_upper``)."""
    single = np.minimum(lam[I == J, 0], g1_upper)  # the diagonal pairs (i, i): W = V_i
    return N0 + lam[:, 0] + lam[:, 1], N0 + np.minimum(single[I], single[J]) + lam[:, 0]


def proven_bounds(Phi: np.ndarray, U: np.ndarray, masks: np.ndarray, lam: np.ndarray, I: np.ndarray,
                  J: np.ndarray) -> tuple[list[Fraction], Fraction, dict]:
    """Every pattern pair's bound proven in exact integers (:mod:`pair_bound_exact`): ``N_K(H_0)`` plus the
    smaller of Ky Fan ``a + b`` and the sequential ``min(a_i, a_j) + a``, where ``a >= lambda_1`` and
    ``b >= lambda_2`` of ``U^T P_W U`` are decided exactly (the floats ``lam`` only propose them) and
    ``a_i`` is pattern ``i``'s own proven ``lambda_1``.  Returns the bounds (``Fraction``, in ``I, J``'s
    order), the exact ``N_K(H_0)`` and statistics (proposals rejected, the largest excess over the float)."""
    from pair_bound_exact import ExactPairs

    ex = ExactPairs(Phi, U, masks)
    ab, worst_excess, rejected = [], 0.0, 0
    for k in range(I.size):
        a, b, tries = ex.certify(int(I[k]), int(J[k]), float(lam[k, 0]), float(lam[k, 1]))
        ab.append((a, b))
        rejected += tries - 1
        worst_excess = max(worst_excess, float(a + b) - float(lam[k, 0] + lam[k, 1]))
    single = {int(i): ab[k][0] for k, (i, j) in enumerate(zip(I, J)) if i == j}
    ub = [ex.N0 + min(a + b, min(single[int(i)], single[int(j)]) + a) for (a, b), i, j in zip(ab, I, J)]
    return ub, ex.N0, {"proposals_rejected": rejected, "max_excess_over_float": worst_excess,
                       "pairs_where_sequential_is_smaller": sum(
                           min(single[int(i)], single[int(j)]) < b for (a, b), i, j in zip(ab, I, J))}


def round_up(q: Fraction) -> float:
    """The smallest double at or above ``q``."""
    x = float(q)
    return x if Fraction(x) >= q else float(np.nextafter(x, np.inf))


def layer_value(Phi: np.ndarray, U: np.ndarray, thetas: np.ndarray) -> float:
    """``N_K([1, relu(Phi theta_1), ...])`` in float64: the neurons' residuals against ``1``, each scaled to
    unit norm (a dead neuron, or one whose residual is below ``1e-12`` of its norm, adds nothing), then an
    SVD basis (directions below ``1e-9`` dropped).  (``best_layer.captured``'s QR is wrong with a dead
    neuron: its zero column drops a direction the later columns need.)"""
    C = np.maximum(Phi @ np.asarray(thetas, float).reshape(-1, Phi.shape[1]).T, 0.0)
    R = C - C.mean(axis=0, keepdims=True)
    nr, nc = np.linalg.norm(R, axis=0), np.linalg.norm(C, axis=0)
    ok = nr > 1e-12 * np.maximum(nc, 1e-300)
    N0 = float(np.sum(U.mean(axis=0) ** 2) * U.shape[0])
    if not ok.any():
        return N0
    Q, s, _ = np.linalg.svd(R[:, ok] / nr[ok], full_matrices=False)
    Q = Q[:, s > 1e-9 * s.max()]
    return N0 + float(np.sum((Q.T @ U) ** 2))


def exact_value(Phi: np.ndarray, U: np.ndarray, thetas: np.ndarray) -> float:
    """:func:`exact_value_q` rounded once to a float."""
    return float(exact_value_q(Phi, U, thetas))


def exact_value_q(Phi: np.ndarray, U: np.ndarray, thetas: np.ndarray) -> Fraction:
    """The layer's value in exact rationals (``Phi``, ``U`` and the weights taken as the doubles they are):
    Gram-Schmidt of ``[1, relu(Phi theta_1), ...]`` without normalization, ``sum_j <q_j, U>^2 / <q_j, q_j>``."""
    n = Phi.shape[0]
    F = [[Fraction(float(x)) for x in row] for row in Phi]
    cols = [[Fraction(1)] * n]
    for t in np.asarray(thetas, float).reshape(-1, Phi.shape[1]):
        tf = [Fraction(float(x)) for x in t]
        cols.append([max(sum(a * b for a, b in zip(F[i], tf)), Fraction(0)) for i in range(n)])
    Uq = [[Fraction(float(x)) for x in U[:, c]] for c in range(U.shape[1])]
    basis, total = [], Fraction(0)
    for v in cols:
        for q, qq in basis:
            c = sum(a * b for a, b in zip(v, q)) / qq
            v = [a - c * b for a, b in zip(v, q)]
        vv = sum(a * a for a in v)
        if vv:
            basis.append((v, vv))
            total += sum(sum(a * b for a, b in zip(v, u)) ** 2 for u in Uq) / vv
    return total


def local_pair(Phi: np.ndarray, U: np.ndarray, w1: np.ndarray, w2: np.ndarray, iters: int) -> tuple[float, np.ndarray]:
    """Nelder-Mead on both neurons' weights from the two witnesses; the best actual layer seen."""
    from scipy.optimize import minimize

    start = np.r_[w1 / np.linalg.norm(w1), w2 / np.linalg.norm(w2)]
    best = [layer_value(Phi, U, start), start]

    def f(v: np.ndarray) -> float:
        val = layer_value(Phi, U, v)
        if val > best[0]:
            best[0], best[1] = val, v.copy()
        return -val

    minimize(f, start, method="Nelder-Mead", options={"maxiter": iters, "xatol": 1e-10, "fatol": 1e-13})
    return float(best[0]), np.asarray(best[1]).reshape(2, -1)


def greedy_pairs(Phi: np.ndarray, U: np.ndarray) -> dict:
    """Certified greedy layers of two neurons at alpha = 1, 0.9, 0.5 (each step certified at its alpha)."""
    from relu_gating.layers.greedy import greedy_layer

    out = {}
    for alpha in (1.0, 0.9, 0.5):
        g = greedy_layer(Phi, U, 2, alpha=alpha)
        out[str(alpha)] = {"N_K": [float(v) for v in g.captured], "certified": bool(g.certified),
                           "thetas": g.thetas.tolist(), "gain_over_bound": [float(v) for v in g.gains / g.upper_bounds],
                           "upper_bounds": [float(v) for v in g.upper_bounds],
                           "value_recomputed": layer_value(Phi, U, g.thetas) if g.thetas.shape[0] == 2 else None,
                           "value_exact": exact_value(Phi, U, g.thetas) if g.thetas.shape[0] == 2 else None}
    return out


def pool_best(Phi: np.ndarray, U: np.ndarray, extra: np.ndarray, size: int) -> tuple[float, np.ndarray]:
    """Every pair of a pool (``size`` Gaussian neurons, seed 0, plus ``extra``) scored exactly; the best
    one's actual value."""
    from best_layer import best_pairs, pool_scores

    H0 = np.ones((Phi.shape[0], 1))
    pool = np.vstack([np.random.default_rng(0).standard_normal((size, Phi.shape[1])), extra])
    R, B, g, kept = pool_scores(Phi, U, H0, pool)
    _, i, j = best_pairs(R, B, g, 1)[0]
    th = kept[[i, j]]
    return layer_value(Phi, U, th), th


def upper_end(Phi: np.ndarray, U: np.ndarray) -> dict:
    """The patterns (their completeness proven), the float pair bounds and the proven ones."""
    from relu_gating.patterns import check_completeness, enumerate_patterns

    c0 = time.process_time()
    pats = enumerate_patterns(Phi)
    report = check_completeness(Phi, pats.masks, pats.witnesses, pats.exact_witnesses)
    if not report.ok:
        raise RuntimeError(f"the pattern list is not proven complete: {report.reason}")
    bases, kept1, drop1 = pattern_bases(Phi, pats.masks.astype(float))
    lam, kept2, drop2 = pair_bounds(bases, U)
    I, J = np.triu_indices(len(bases))
    c1 = time.process_time()
    ub_q, N0_q, stats = proven_bounds(Phi, U, pats.masks, lam, I, J)
    return {"pats": pats, "bases": bases, "lam": lam, "I": I, "J": J, "ub_q": ub_q, "N0_q": N0_q,
            "ub": np.array([float(x) for x in ub_q]), "stats": stats, "cpu_float": c1 - c0,
            "cpu_exact": time.process_time() - c1,
            "rank_gap": {"pattern_kept_min": float(min(kept1)), "pattern_dropped_max": float(max(drop1)),
                         "pair_kept_min": kept2, "pair_dropped_max": drop2}}


def lower_end(Phi: np.ndarray, U: np.ndarray, up: dict, greedy: dict, a: argparse.Namespace) -> dict:
    """Actual pairs: the greedy pairs, the pool's best pair, local solves in the pattern pairs whose proven
    bound is above the best found (largest first, for ``a.seconds`` of CPU); the best one's value exact."""
    W = np.asarray(up["pats"].witnesses, float)
    ub, I, J = up["ub"], up["I"], up["J"]
    lb, arg = max(((v["value_recomputed"], np.asarray(v["thetas"])) for v in greedy.values()
                   if v["value_recomputed"] is not None), key=lambda z: z[0])
    lb_greedy = lb
    pv, pth = pool_best(Phi, U, np.vstack([W] + [np.asarray(v["thetas"]) for v in greedy.values()]), a.pool)
    if pv > lb:
        lb, arg = pv, pth
    order = np.argsort(-ub)
    solved, c1 = 0, time.process_time()
    for k in order:
        if ub[k] <= lb + a.allowance or time.process_time() - c1 > a.seconds:
            break
        v, th = local_pair(Phi, U, W[I[k]], W[J[k]], a.iters)
        solved += 1
        if v > lb:
            lb, arg = v, th
    return {"lb_q": exact_value_q(Phi, U, arg), "lb_float": lb, "arg": arg, "lb_greedy": lb_greedy,
            "lb_pool": pv, "solved": solved, "order": order}


def summary(Phi: np.ndarray, U: np.ndarray, up: dict, greedy: dict, low: dict, a: argparse.Namespace) -> dict:
    """The result record: the bracket (upper end proven, lower end an actual pair's exact value), the float
    bounds beside the proven ones, and the 50-digit spot check of the float eigenvalues."""
    I, J, lam, ub_q, lb_q = up["I"], up["J"], up["lam"], up["ub_q"], low["lb_q"]
    N0 = float(np.sum(U.mean(axis=0) ** 2) * a.n)
    g1_upper = greedy["1.0"]["upper_bounds"][0]  # the search's certified bound on the best single neuron
    ub_kyfan, ub_seq = combine(N0, lam, I, J, g1_upper)
    ub_float = np.minimum(ub_kyfan, ub_seq)
    top_q = max(ub_q)
    if top_q < lb_q:
        raise ArithmeticError("an actual pair above every proven pair bound: a bound is wrong")
    open_ = np.array([u > lb_q for u in ub_q])
    top = int(np.argmax(up["ub"]))
    rng = np.random.default_rng(1)
    order = low["order"]
    sample = list(order[:a.mp_sample // 2]) + list(rng.choice(I.size, a.mp_sample - a.mp_sample // 2, replace=False))
    mp_err = max(abs(pair_bound_mp(up["bases"][I[k]], up["bases"][J[k]], U) - lam[k, 0] - lam[k, 1]) for k in sample)
    Uc = U - U.mean(0)
    return {"n_patterns": len(up["bases"]), "n_pairs": int(I.size), "N_K_H0": float(up["N0_q"]),
            "kyfan_upper_t2": N0 + float(np.sum(np.sort(np.linalg.eigvalsh(Uc.T @ Uc))[-2:])),
            "best_found": float(lb_q), "best_found_exact": f"{lb_q.numerator}/{lb_q.denominator}",
            "best_found_float": float(low["lb_float"]), "best_thetas": np.asarray(low["arg"]).tolist(),
            "best_found_greedy": low["lb_greedy"], "best_found_pool": low["lb_pool"],
            "certified_upper": round_up(top_q), "certified_upper_exact": f"{top_q.numerator}/{top_q.denominator}",
            "upper_proven": True, "gap": round_up(top_q - lb_q), "optimum": bool(top_q == lb_q),
            "pairs_open": int(open_.sum()), "pairs_pruned": int((~open_).sum()),
            "pairs_solved_locally": low["solved"], "largest_pair_bound": round_up(top_q),
            "largest_pair_patterns": [int(I[top]), int(J[top])], "single_gain_upper": float(g1_upper),
            "float_upper": float(ub_float.max()), "largest_pair_kyfan": float(ub_kyfan.max()),
            "proven": up["stats"], "pairs_where_sequential_bound_is_smaller": up["stats"]["pairs_where_sequential_is_smaller"],
            "pair_bound_quantiles": {q: float(np.quantile(up["ub"], q)) for q in (0.5, 0.9, 0.99, 1.0)},
            "rank_gap": up["rank_gap"], "mp_check": {"pairs": len(sample), "max_abs_diff": float(mp_err)},
            "allowance": a.allowance, "cpu_seconds_bounds": up["cpu_float"], "cpu_seconds_proof": up["cpu_exact"]}


def main(argv: list[str] | None = None) -> int:
    from relu_gating.experiments._base import provenance

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--K", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pool", type=int, default=2000)
    ap.add_argument("--iters", type=int, default=400, help="Nelder-Mead iterations per local solve")
    ap.add_argument("--seconds", type=float, default=600.0, help="budget of the local solves (CPU)")
    ap.add_argument("--allowance", type=float, default=1e-9)
    ap.add_argument("--mp-sample", type=int, default=20, help="pair bounds recomputed at 50 digits")
    ap.add_argument("--quick", action="store_true", help="pool 300, 10 s of local solves, 5 bounds at 50 digits")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    if a.quick:
        a.pool, a.seconds, a.mp_sample = 300, 10.0, 5
    prov = provenance(sys.argv if argv is None else ["benchmarks/best_pair.py", *argv])
    c0 = time.process_time()
    Phi, U, desc = instance(a.n, a.K, a.seed)
    up = upper_end(Phi, U)
    greedy = greedy_pairs(Phi, U)
    low = lower_end(Phi, U, up, greedy, a)
    res = {**summary(Phi, U, up, greedy, low, a), "cpu_seconds": time.process_time() - c0}
    upper, lb = res["certified_upper"], res["best_found"]
    rows = [{"layer": "best pair (certified bracket)", "N_K": float(lb), "upper": upper}]
    for k, v in greedy.items():
        rows.append({"layer": f"greedy alpha = {k}", "N_K": v["N_K"][-1], "certified": v["certified"]})
    rows.append({"layer": "best pair of the pool", "N_K": res["best_found_pool"]})
    print(json.dumps({k: v for k, v in res.items() if k not in ("best_thetas",)}, indent=1))
    print(json.dumps(rows, indent=1))
    if a.out is not None:
        out = {"provenance": {**prov, "load_start": prov["load_end"], "load_end": provenance()["load_end"]},
               "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()}, **desc,
               "result": res, "rows": rows, "greedy": greedy}
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
