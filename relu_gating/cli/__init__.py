"""Command line interface: ``relu-gating <command> ...``.

Each sub-command lives in its own module exposing ``add_parser(subparsers)``
and ``run(args) -> int``; this module only dispatches.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from relu_gating.errors import ReluGatingError

__all__ = ["main", "build_parser"]

# command name -> module (relative to this package)
_COMMANDS = {
    "demo": "demo",
    "best-neuron": "best_neuron",
    "verify": "verify",
    "patterns": "patterns",
    "report": "report",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="relu-gating",
        description="Exact, certified best-ReLU-neuron search on a sample graph.",
    )
    from relu_gating import __version__

    parser.add_argument("--version", action="version", version=f"relu-gating {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module in _COMMANDS.items():
        mod = importlib.import_module(f"relu_gating.cli.{module}")
        mod.add_parser(sub, name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``relu-gating`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except ReluGatingError as exc:
        print(f"relu-gating {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"relu-gating {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
