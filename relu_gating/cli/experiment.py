"""``relu-gating experiment NAME``: run one exact experiment on the paper's theory (issue 12).

Writes ``NAME.json`` (schema, version, params, checks, tables), one CSV per table and, with
matplotlib, ``NAME.png`` into ``--out``; ``--json`` prints the JSON (strict) to stdout.
Exit status 1 when a recorded check fails, 2 on bad input.  ``--list`` names the experiments.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

__all__ = ["add_parser", "run", "listing"]


def add_parser(subparsers: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        name,
        help="run an exact experiment on the paper's theory (--list names them)",
        description=(
            "Run one experiment: its numbers go to NAME.json and NAME_TABLE.csv (and the figure to NAME.png "
            "when matplotlib is installed) in --out; every run records its inputs, seed and version. "
            "Exit status 1 when a claim it checks fails."
        ),
    )
    parser.add_argument("name", nargs="?", metavar="NAME", help="experiment name (see --list)")
    parser.add_argument("--list", action="store_true", help="name the experiments, one line each, and exit")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="directory for NAME.json, the CSVs and NAME.png (created if missing; default: "
                             "no files unless --json is absent, then ./experiments)")
    parser.add_argument("--json", action="store_true", help="print the result JSON to stdout")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data and every random choice (default 0)")
    parser.add_argument("--quick", action="store_true", help="small version (seconds instead of minutes)")
    parser.add_argument("--no-plot", action="store_true", help="do not draw the figure")
    parser.set_defaults(run=run)
    return parser


def listing() -> list[str]:
    """One line per registered experiment; a module that cannot be imported is marked unavailable."""
    from relu_gating.experiments import NAMES, get

    width = max(len(n) for n in NAMES)
    lines = []
    for name in NAMES:
        try:
            summary = get(name).summary
        except ImportError as exc:
            summary = f"(unavailable: {exc})"
        lines.append(f"{name:<{width}}  {summary}")
    return lines


def _out_dir(args: argparse.Namespace) -> str | None:
    """The checked output directory (created), or None when only --json output is wanted."""
    from relu_gating._runtime.files import check_writable

    if args.out is None and args.json:
        return None
    out = args.out if args.out is not None else "experiments"
    if os.path.exists(out) and not os.path.isdir(out):
        from relu_gating.errors import InputError

        raise InputError(f"--out {out}: exists and is not a directory")
    if not os.path.isdir(out):
        check_writable(out, "--out")  # its parent exists and is writable
        os.makedirs(out, exist_ok=True)
    check_writable(os.path.join(out, f"{args.name}.json"), "--out")
    return out


def run(args: argparse.Namespace) -> int:
    from relu_gating.errors import InputError
    from relu_gating.experiments import get

    if args.list:
        print("\n".join(listing()))
        return 0
    if not args.name:
        raise InputError("NAME is required (or --list)")
    exp = get(args.name)  # unknown name: InputError listing the names
    want_plot = exp.plot is not None and not args.no_plot
    if want_plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            want_plot = False
            print('relu-gating experiment: note: no figure (pip install ".[plot]")', file=sys.stderr)
    out = _out_dir(args)  # checked before the (long) run
    print(f"relu-gating experiment: running {args.name} (seed {args.seed}{', quick' if args.quick else ''})...",
          file=sys.stderr)
    from relu_gating.experiments import run_recorded

    res = run_recorded(exp, seed=args.seed, quick=args.quick)
    paths = []
    if out is not None:
        paths = res.save(out)
        if want_plot:
            png = os.path.join(out, f"{res.name}.png")
            exp.plot(res, png)
            paths.append(png)
    if args.json:
        print(json.dumps(res.to_dict(), indent=1, allow_nan=False))
    failed = [c for c in res.checks if not c.holds]
    for c in failed:
        print(f"relu-gating experiment: check FAILED: {c.name} ({c.detail})", file=sys.stderr)
    n_inf = sum(1 for c in res.checks if c.informative and c.kind == "finding")
    n_code = sum(1 for c in res.checks if c.kind == "code test")
    print(f"relu-gating experiment: {res.name}: {len(res.checks) - len(failed)}/{len(res.checks)} checks hold "
          f"({n_inf} informative findings, {n_code} code tests), "
          f"{res.seconds:.1f} s" + (f"; wrote {', '.join(paths)}" if paths else ""), file=sys.stderr)
    return 1 if failed else 0
