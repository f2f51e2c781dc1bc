r"""Run a benchmark script with every ``relu_gating`` module imported first (long background runs).

A long run started from a worktree that is still being edited would import modules lazily, some of
them after later edits, so the commit its files record would not be the code that ran.  This imports
every module of the package from ``ROOT`` up front, then runs the script as ``__main__`` with its own
arguments (``sys.argv`` as if it were run directly, so the recorded command is the script's).

Usage::

    python benchmarks/run_pinned.py ROOT benchmarks/kappa_n.py --n 100 --d 3 ...
"""

import importlib
import pkgutil
import runpy
import sys


def main() -> None:
    root = sys.argv[1]
    sys.path.insert(0, root)
    import relu_gating

    for m in pkgutil.walk_packages(relu_gating.__path__, "relu_gating."):
        if m.name.endswith("__main__"):
            continue  # the CLI entry point: importing it runs the CLI
        try:
            importlib.import_module(m.name)
        except Exception as e:  # noqa: BLE001 - an optional module that cannot load is reported, not fatal
            print("preload skipped", m.name, e, flush=True)
    sys.argv = sys.argv[2:]
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
