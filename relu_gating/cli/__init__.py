"""Command line interface: ``relu-gating <command> ...``.

Each sub-command lives in its own module exposing ``add_parser(subparsers)``
and ``run(args) -> int``; this module only dispatches.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from typing import Sequence

from relu_gating.errors import ReluGatingError

__all__ = ["main", "build_parser", "EXIT_USAGE"]

#: Exit status for unusable input (a bad file, flag or argument), with a one-line message.
EXIT_USAGE = 2

# command name -> module (relative to this package)
_COMMANDS = {
    "demo": "demo",
    "best-neuron": "best_neuron",
    "verify": "verify",
    "patterns": "patterns",
    "report": "report",
    "experiment": "experiment",
}


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (no usage dump), exit status 2."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of the command ``only`` (the others' modules not imported)."""
    parser = _Parser(
        prog="relu-gating",
        description="Exact, certified best-ReLU-neuron search on a sample graph.",
    )
    from relu_gating._version import __version__

    parser.add_argument("--version", action="version", version=f"relu-gating {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks instead of one-line errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module in _COMMANDS.items():
        if only is not None and name != only:
            continue
        mod = importlib.import_module(f"relu_gating.cli.{module}")
        mod.add_parser(sub, name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``relu-gating`` console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    from relu_gating._runtime.blas_env import preset_blas_env
    from relu_gating._runtime.blas_limit import VERIFY_THREADS

    command = next((a for a in argv if not a.startswith("-")), None)
    # before numpy loads: BLAS pools sized to the usable cores, one thread for verify (relu_gating._runtime.blas_env)
    preset_blas_env(limit=VERIFY_THREADS if command == "verify" else None)
    parser = build_parser(command if command in _COMMANDS else None)  # e.g. verify loads no search
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a one-line usage error
        return int(exc.code or 0)
    shown = warnings.showwarning
    if not args.debug:  # warnings as one line naming the command (none with --quiet), not a source line
        warnings.showwarning = _one_line_warning(args.command, getattr(args, "quiet", False))
    try:
        if any(getattr(args, k, None) for k in ("out", "checkpoint", "plot")):  # _runtime.files.OUTPUT_FLAGS
            from relu_gating._runtime.files import check_outputs

            check_outputs(args)  # outputs never replace inputs (verify writes none: it loads no _runtime.files)
        return int(args.run(args) or 0)
    except ReluGatingError as exc:
        if args.debug:
            raise
        print(f"relu-gating {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"relu-gating {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (| head): not an error of ours
        _quiet_stdout()
        return 0
    finally:
        warnings.showwarning = shown


def _one_line_warning(command: str, quiet: bool):
    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ARG001 - signature of showwarning
        if not quiet:
            print(f"relu-gating {command}: warning: {message}", file=sys.stderr)
    return show


def _quiet_stdout() -> None:
    """Point stdout at devnull so that the interpreter's final flush does not fail again."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
