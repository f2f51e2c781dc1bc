"""Greedy rate (Thm 5.10): certified greedy deficit and gap against the theorem's bound.

Runs the experiment "greedy-rate" of :mod:`relu_gating.experiments`, prints its checks and tables, and
saves the figure (needs the ``plot`` extra).  Run from the repository root::

    python examples/exp_greedy_rate.py [--quick] [--seed S] [--out examples/figures/greedy-rate.png]

Same as ``relu-gating experiment greedy-rate --out DIR`` (which also writes JSON and CSV).
"""

import sys

from relu_gating.experiments._script import example_main

if __name__ == "__main__":
    sys.exit(example_main("greedy-rate", description=__doc__.split("\n")[0]))
