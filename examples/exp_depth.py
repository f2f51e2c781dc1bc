"""Depth: coverage across layers, plain vs concatenated skip (Rem 5.7, Cor 5.2, Thm 5.3).

Runs the experiment "depth" of :mod:`relu_gating.experiments`, prints its checks and tables, and
saves the figure (needs the ``plot`` extra).  Run from the repository root::

    python examples/exp_depth.py [--quick] [--seed S] [--out examples/figures/depth.png]

Same as ``relu-gating experiment depth --out DIR`` (which also writes JSON and CSV).
"""

import sys

from relu_gating.experiments._script import example_main

if __name__ == "__main__":
    sys.exit(example_main("depth", description=__doc__.split("\n")[0]))
