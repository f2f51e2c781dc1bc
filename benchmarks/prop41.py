r"""Prop 4.1's active-set limits on the certified greedy neurons of ``benchmarks/best_layer.py`` (issue 40).

For each saved certified neuron ``h = relu(Phi theta)`` (alpha = 1 greedy, moons and line instances),
with active set ``A`` and complement ``B``: ``N_K(h) <= ||U_K[A, :]||_2^2 <= min(1, sum_(i in A) l_i)``
(leverage scores ``l_i``), ``R(h) = h^T L h / ||h||^2 >= lambda_min(L_AA)`` and
``lambda_min(L_AA) <= lambda_(|B|+1)``.  Recorded: each side, and how tight the first limit is
(``N_K(h) / ||U_K[A, :]||_2^2``).  A theorem: a code test of the quantities, not evidence.

Usage::

    python benchmarks/prop41.py --out benchmarks/results/experiments_best_layer/prop41.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def limits(h: np.ndarray, U: np.ndarray, L: np.ndarray) -> dict:
    """Prop 4.1's quantities for one feature vector ``h`` (nonzero)."""
    A = h > 0
    lev = np.sum(U**2, axis=1)
    NK = float(np.sum((U.T @ h) ** 2) / (h @ h))
    spec = float(np.linalg.norm(U[A], 2) ** 2)
    LAA = L[np.ix_(A, A)]
    lam_min = float(np.linalg.eigvalsh(LAA)[0])
    ev = np.linalg.eigvalsh(L)
    return {"active": int(A.sum()), "N_K": NK, "spectral": spec, "leverage": float(min(1.0, lev[A].sum())),
            "R": float(h @ L @ h / (h @ h)), "lambda_min_AA": lam_min,
            "lambda_B1": float(ev[int((~A).sum())]), "tightness": NK / spec if spec > 0 else float("nan")}


def violations(row: dict, tol: float = 1e-9) -> list[str]:
    """The inequalities of Prop 4.1 that ``row`` breaks (empty when all hold)."""
    out = []
    if row["N_K"] > row["spectral"] + tol:
        out.append("N_K(h) > ||U_K[A,:]||^2")
    if row["spectral"] > row["leverage"] + tol:
        out.append("||U_K[A,:]||^2 > min(1, sum l_i)")
    if row["R"] < row["lambda_min_AA"] - tol:
        out.append("R(h) < lambda_min(L_AA)")
    if row["lambda_min_AA"] > row["lambda_B1"] + tol:
        out.append("lambda_min(L_AA) > lambda_(|B|+1)")
    return out


def main(argv: list[str] | None = None) -> int:
    from best_layer import instance

    from relu_gating.experiments._base import provenance
    from relu_gating.spectral import laplacian, sample_graph

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    rows = []
    for inst in ("moons", "line"):
        d = json.loads((HERE / "results" / "experiments_best_layer" / f"{inst}.json").read_text())
        X, Phi, U, _ = instance(inst)
        W = sample_graph(X, kind="knn", n_neighbors=8 if inst == "moons" else None)  # as instance() builds U_K
        L = laplacian(W, kind="combinatorial")
        L = L.toarray() if hasattr(L, "toarray") else np.asarray(L)
        lam = np.sum(U * (L @ U), axis=0)
        if np.linalg.norm(L @ U - U * lam) > 1e-8:  # U_K must be this Laplacian's low eigenvectors
            raise SystemExit(f"prop41: U_K of {inst} is not an eigenbasis of the rebuilt Laplacian")
        for t, theta in enumerate(d["greedy"]["1.0"]["thetas"], start=1):
            h = np.maximum(Phi @ np.asarray(theta), 0.0)
            r = {"instance": inst, "t": t, **limits(h, U, L)}
            r["violations"] = violations(r)
            rows.append(r)
            print(r, flush=True)
    pv = provenance(sys.argv if argv is None else ["benchmarks/prop41.py", *argv])
    a.out.write_text(json.dumps({"provenance": pv, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
