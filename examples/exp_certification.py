"""What certification buys: certified greedy neurons vs random, sampled, local-search and gradient-ascent neurons.

Runs the experiment "certification" of :mod:`relu_gating.experiments`, prints its checks and tables, and
saves the figure (needs the ``plot`` extra).  Run from the repository root::

    python examples/exp_certification.py [--quick] [--seed S] [--out examples/figures/certification.png]

Same as ``relu-gating experiment certification --out DIR`` (which also writes JSON and CSV).
"""

import sys

from relu_gating.experiments._script import example_main

if __name__ == "__main__":
    sys.exit(example_main("certification", description=__doc__.split("\n")[0]))
