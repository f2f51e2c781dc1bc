"""``relu-gating verify CERT.json INPUT [problem options]``: re-check a certificate in a fresh process.

The problem is stated on the command line with the same options and defaults
as ``best-neuron`` (``--K``, ``--graph``, ``--laplacian``, ``--neighbors``,
``--sigma``, ``--epsilon``, ``--features``); a certificate recorded for
another problem is rejected, saying how.  Exit status: 0 certified as
required, 1 invalid, 2 unusable input, 3 valid but weaker than required
(``--require-alpha``, default 1).
"""

from __future__ import annotations

import argparse
import json

from relu_gating.certificate import VALUE_TOL, load_certificate, verify
from relu_gating.cli._common import add_input_arguments, problem_from_args
from relu_gating.cli.best_neuron import PROBLEM_OPTIONS, features_from_spec

__all__ = ["add_parser", "run", "EXIT_OK", "EXIT_INVALID", "EXIT_WEAKER"]

EXIT_OK, EXIT_INVALID, EXIT_WEAKER = 0, 1, 3


def add_parser(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help="re-check a best-neuron certificate against the stated problem",
                       description="Re-check a certificate written by 'relu-gating best-neuron --out' against "
                                   "the problem stated here (same options and defaults as best-neuron): the "
                                   "value of theta, every pattern's bound and its evidence, the completeness of "
                                   "the pattern set and the certification. Exit 0 certified as required, "
                                   "1 invalid, 2 unusable input, 3 valid but weaker than --require-alpha.")
    p.add_argument("certificate", metavar="CERT.json")
    add_input_arguments(p)
    p.add_argument("--features", default=None, metavar="bias|none|FILE",
                   help="features of the query, as for best-neuron (default: H from INPUT if present, else bias)")
    p.add_argument("--require-alpha", type=float, default=1.0, metavar="A",
                   help="exit 3 unless the certificate proves value >= A * upper bound - 1e-9 (default 1: exact)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=run)
    return p


def _option_mismatch(cert: dict, problem, spec: str) -> list[str]:
    got = cert.get("input")
    rec: dict = got if isinstance(got, dict) else {}
    stated = {k: problem.description.get(k) for k in PROBLEM_OPTIONS if k in problem.description}
    stated["features"] = spec
    return [f"{k} = {rec.get(k)!r} in the certificate, {v!r} stated here" for k, v in stated.items()
            if k in rec and rec.get(k) != v]


def run(args: argparse.Namespace) -> int:
    from relu_gating.errors import InputError

    if not 0 < args.require_alpha <= 1:
        raise InputError(f"--require-alpha must be in (0, 1], got {args.require_alpha!r}")
    cert = load_certificate(args.certificate)
    problem = problem_from_args(args)
    features, spec = features_from_spec(args.features, problem.H, problem.n)
    differ = _option_mismatch(cert, problem, spec)
    report = verify(cert, problem.Phi, problem.U_K, features)
    reasons = (["certificate was made for other problem options: " + "; ".join(differ)] if differ else [])
    reasons += list(report.reasons)
    valid = report.valid and not differ
    strong = valid and report.value >= args.require_alpha * report.upper_bound - VALUE_TOL
    code = EXIT_OK if strong else (EXIT_WEAKER if valid else EXIT_INVALID)
    if args.json:
        print(json.dumps({"valid": valid, "certified": report.certified, "value": report.value,
                          "upper_bound": report.upper_bound, "alpha": report.alpha,
                          "alpha_proven": report.alpha_proven, "require_alpha": args.require_alpha,
                          "exit_code": code, "reasons": reasons, "checks": report.checks},
                         indent=2, default=str, allow_nan=False) if valid else
              json.dumps({"valid": False, "exit_code": code, "reasons": reasons}, indent=2))
    else:
        verdict = {EXIT_OK: "VALID, certified", EXIT_WEAKER: "VALID, but weaker than required",
                   EXIT_INVALID: "INVALID"}[code]
        print(verdict)
        if valid:
            print(f"  value {report.value:.12g}   upper bound {report.upper_bound:.12g}   alpha {report.alpha:g}"
                  f"   proven alpha {report.alpha_proven:.12g}   certified {'yes' if report.certified else 'no'}"
                  f"   (required {args.require_alpha:g})")
        for r in reasons:
            print(f"  - {r}")
    return code
