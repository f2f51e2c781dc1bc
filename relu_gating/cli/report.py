"""``relu-gating report INPUT``: coverage of the features H (of Phi when no H)."""

from __future__ import annotations

import argparse
import warnings

from relu_gating.cli._common import add_input_arguments, problem_from_args
from relu_gating.cli._json import dumps

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        name,
        help="coverage of the features (s_K, N_K, deficit, bounds, ceiling)",
        description=(
            "Coverage of the features H in INPUT (of Phi = [X, 1] when there is no H) against the "
            "low-frequency eigenvectors U_K (read from INPUT or built from X): coverage gap s_K, "
            "captured features N_K, deficit K - N_K, leverage scores (Prop 4.1), Thm 5.13 etas and "
            "Ky Fan benchmark, Cor 5.2 ceiling, and with a target f the Cor 3.1 / Rem 6.1 bounds."
        ),
    )
    add_input_arguments(parser)
    parser.add_argument("--json", action="store_true", help="write JSON to stdout")
    parser.add_argument("--quiet", action="store_true", help="no diagnostics on stderr")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from relu_gating.coverage.report import coverage_report
    from relu_gating.spectral.spectra import SpectralTieWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SpectralTieWarning)
        problem = problem_from_args(args)
    if not args.quiet:
        import sys

        for w in caught:
            print(f"relu-gating report: warning: {w.message}", file=sys.stderr)
    rep = coverage_report(problem)
    if args.json:
        print(dumps(rep.to_dict(), "report"))
    else:
        print(rep.format())
    return 0
