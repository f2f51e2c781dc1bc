"""alpha in practice: time to certificate and final deficit vs alpha.

Runs the experiment "alpha" of :mod:`relu_gating.experiments`, prints its checks and tables, and
saves the figure (needs the ``plot`` extra).  Run from the repository root::

    python examples/exp_alpha.py [--quick] [--seed S] [--out examples/figures/alpha.png]

Same as ``relu-gating experiment alpha --out DIR`` (which also writes JSON and CSV).
"""

import sys

from relu_gating.experiments._script import example_main

if __name__ == "__main__":
    sys.exit(example_main("alpha", description=__doc__.split("\n")[0]))
