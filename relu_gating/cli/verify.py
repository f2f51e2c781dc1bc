"""``relu-gating verify CERT.json INPUT [problem options]``: re-check a certificate in a fresh process.

The problem is stated on the command line with the same options and defaults
as ``best-neuron`` (``--K``, ``--graph``, ``--laplacian``, ``--neighbors``,
``--sigma``, ``--epsilon``, ``--features``); a certificate recorded for
another problem is rejected, saying how.  Exit status: 0 certified as
required, 1 invalid, 2 unusable input, 3 valid but weaker than required
(``--require-alpha``, default 1).  One verdict word, the same in the headline, the
text and the JSON: ``CERTIFIED`` (exit 0), ``VALID-NOT-CERTIFIED`` (exit 3), ``INVALID`` (exit 1).

This command loads the checker (:mod:`relu_gating.checker`) and the input reader only: nothing of
the search, the enumerator, ``solvers/`` or cvxpy.
"""

from __future__ import annotations

import argparse

from relu_gating.cli._common import (PROBLEM_OPTIONS, add_input_arguments, problem_and_features)

__all__ = ["add_parser", "run", "EXIT_OK", "EXIT_INVALID", "EXIT_WEAKER"]

EXIT_OK, EXIT_INVALID, EXIT_WEAKER = 0, 1, 3


def add_parser(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help="re-check a best-neuron certificate against the stated problem",
                       description="Re-check a certificate written by 'relu-gating best-neuron --out' against "
                                   "the problem stated here (same options and defaults as best-neuron): the "
                                   "value of theta, every pattern's bound and its evidence, the completeness of "
                                   "the pattern set and the certification. Exit 0 certified as required, "
                                   "1 invalid, 2 unusable input, 3 valid but weaker than --require-alpha.")
    p.add_argument("certificate", metavar="CERT.json|CERT.npz")
    add_input_arguments(p)
    p.add_argument("--features", default=None, metavar="bias|none|FILE",
                   help="features of the query, as for best-neuron (default: H from INPUT if present, else bias)")
    p.add_argument("--require-alpha", type=float, default=1.0, metavar="A",
                   help="exit 3 unless the certificate proves value >= A * upper bound - 1e-9 (default 1: exact)")
    p.add_argument("--exact", action="store_true",
                   help="decide every claim in exact rational arithmetic (slow; for small n)")
    p.add_argument("--workers", type=int, default=None, metavar="N", help="processes that walk a large tree "
                   "certificate in parts (default every core this process may use; 1: serial; the same report)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress or warnings on stderr")
    p.set_defaults(run=run)
    return p


def _option_mismatch(cert: dict, problem, spec: str) -> list[str]:
    got = cert.get("input")
    rec: dict = got if isinstance(got, dict) else {}
    stated = {k: problem.description.get(k) for k in PROBLEM_OPTIONS if k in problem.description}
    stated["features"] = spec
    return [f"{k} = {rec.get(k)!r} in the certificate, {v!r} stated here" for k, v in stated.items()
            if k in rec and rec.get(k) != v]


def _size(path: str) -> str:
    import os

    try:
        return f"{os.path.getsize(path) / 1e6:,.1f} MB"
    except OSError:
        return "size unknown"


def _stage_printer(quiet: bool):
    """Stage lines with elapsed seconds on stderr, on a terminal only (progress of a long verification)."""
    import sys
    import time

    t0 = time.perf_counter()
    on = not quiet and sys.stderr.isatty()

    def say(msg: str) -> None:
        if on:
            print(f"relu-gating verify: [{time.perf_counter() - t0:6.1f} s] {msg} ...", file=sys.stderr, flush=True)
    return say


def _meta(args: argparse.Namespace, binary: bool) -> tuple:
    """The certificate's JSON, whether it is all of it (a binary pattern certificate: its ``meta`` only, the
    checker streams the rest; a binary tree certificate: its JSON form, read once) and, for a binary one, the
    problem: stated first, its limits bound those reads (FORMAT.md, "Limits")."""
    if not binary:
        from relu_gating.checker import load_json

        return load_json(args.certificate), True, None
    from relu_gating.checker import binary_tree, holds_tree, state_problem

    got = problem_and_features(args)
    P = state_problem(got[0].Phi, got[0].U_K, got[1])
    tree = binary_tree(args.certificate, P) if holds_tree(args.certificate) else None
    if tree is not None:
        return tree, True, got
    from relu_gating.checker import BinaryReader  # the .npz pattern reader: loaded for binary pattern certificates only

    with BinaryReader(args.certificate, P) as rd:
        return rd.meta, False, got


def _print_text(word: str, report, reasons: list, require: float) -> None:
    head = {"CERTIFIED": f"CERTIFIED: a valid certificate proving alpha >= {require:g}",
            "VALID-NOT-CERTIFIED": f"VALID-NOT-CERTIFIED: a valid certificate, but weaker than required "
                                   f"(alpha {require:g})",
            "INVALID": "INVALID"}[word]
    print(head)
    if word != "INVALID":
        print(f"  value {report.value:.12g}   upper bound {report.upper_bound:.12g}   proven alpha "
              f"{report.alpha_proven:.12g}   required alpha {require:g}   (the certificate claims alpha "
              f"{report.alpha:g})")
    for r in reasons:
        print(f"  - {r}")


def run(args: argparse.Namespace) -> int:
    from relu_gating._runtime.blas_env import user_thread_setting
    from relu_gating._runtime.blas_limit import VERIFY_THREADS
    from relu_gating.checker import VALUE_TOL, is_binary, verdict_word, verify
    from relu_gating.errors import InputError

    if not 0 < args.require_alpha <= 1:
        raise InputError(f"--require-alpha must be in (0, 1], got {args.require_alpha!r}")
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be a positive integer, got {args.workers}")
    binary = is_binary(args.certificate)
    say = _stage_printer(args.quiet)
    say(f"reading {args.certificate} ({_size(args.certificate)})")
    cert, whole, got = _meta(args, binary)
    say(f"checking {cert.get('n_patterns', '?'):,} patterns against the stated problem" if isinstance(
        cert.get("n_patterns"), int) else "checking the certificate against the stated problem")
    problem, features, spec = got or problem_and_features(args)
    differ = _option_mismatch(cert, problem, spec)
    report = verify(cert if whole else args.certificate, problem.Phi, problem.U_K, features, exact=args.exact,
                    blas_threads=user_thread_setting() or VERIFY_THREADS, workers=args.workers)  # the user's own setting wins
    reasons = (["certificate was made for other problem options: " + "; ".join(differ)] if differ else [])
    reasons += list(report.reasons)
    valid = report.valid and not differ
    word = verdict_word(valid, valid and report.value >= args.require_alpha * report.upper_bound - VALUE_TOL)
    code = {"CERTIFIED": EXIT_OK, "VALID-NOT-CERTIFIED": EXIT_WEAKER, "INVALID": EXIT_INVALID}[word]
    if args.json:
        from relu_gating.cli._json import dumps  # the JSON printer: loaded for --json only

        print(dumps({"verdict": word, "valid": valid, "certified": word == "CERTIFIED", "value": report.value,
                     "upper_bound": report.upper_bound, "alpha": report.alpha,
                     "alpha_proven": report.alpha_proven, "require_alpha": args.require_alpha, "exact": args.exact,
                     "exit_code": code, "reasons": reasons, "checks": report.checks}, "verify", default=str)
              if valid else dumps({"verdict": word, "valid": False, "certified": False, "exit_code": code,
                                   "reasons": reasons}, "verify"))
    else:
        _print_text(word, report, reasons, args.require_alpha)
    return code
