"""Choosing the graph (Rem 6.1): smoothness term vs the coverage certified neurons reach.

Runs the experiment "graph-choice" of :mod:`relu_gating.experiments`, prints its checks and tables, and
saves the figure (needs the ``plot`` extra).  Run from the repository root::

    python examples/exp_graph_choice.py [--quick] [--seed S] [--out examples/figures/graph-choice.png]

Same as ``relu-gating experiment graph-choice --out DIR`` (which also writes JSON and CSV).
"""

import sys

from relu_gating.experiments._script import example_main

if __name__ == "__main__":
    sys.exit(example_main("graph-choice", description=__doc__.split("\n")[0]))
