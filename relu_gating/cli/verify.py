"""``relu-gating verify CERT.json INPUT``: re-check a certificate in a fresh process.

Exit status 0 when the certificate is valid, 1 when it is not (with the
reasons on stdout), 2 for unusable input.
"""

from __future__ import annotations

import argparse
import json

from ..certificate import load_certificate, verify
from ..io import load_input, resolve_problem
from .search import features_from_spec

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help="re-check a best-neuron certificate from the inputs alone",
                       description="Re-check a certificate written by 'relu-gating best-neuron --out': the "
                                   "witness and its value, every pattern's bound, the completeness of the "
                                   "pattern set and alpha. Exit 0 valid, 1 invalid.")
    p.add_argument("certificate", metavar="CERT.json")
    p.add_argument("input", metavar="INPUT", help="the same data file the certificate was made from")
    p.add_argument("--features", default=None, metavar="bias|none|FILE",
                   help="override the features recorded in the certificate")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    cert = load_certificate(args.certificate)
    prob = cert.get("problem", {}) if isinstance(cert.get("problem"), dict) else {}
    data = load_input(args.input)
    opts = {k: prob.get(k) for k in ("n_neighbors", "sigma", "epsilon")}
    problem = resolve_problem(data, K=prob.get("K"), graph=prob.get("graph", "knn"),
                              laplacian=prob.get("laplacian", "combinatorial"), **opts)
    spec = args.features if args.features is not None else cert.get("features")
    if spec == "input:H":
        spec = None
    features, _ = features_from_spec(spec, problem.H, problem.n)
    report = verify(cert, problem.Phi, problem.U_K, features)
    if args.json:
        print(json.dumps({"valid": report.valid, "reasons": list(report.reasons), "checks": report.checks},
                         indent=2, default=str))
    else:
        print("VALID" if report.valid else "INVALID")
        for r in report.reasons:
            print(f"  - {r}")
    return 0 if report.valid else 1
