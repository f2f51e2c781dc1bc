"""Clusters (Example 5.12): neurons needed to reach a gap vs the predicted 16 K^3 max omega^2 / (alpha s^2).

Runs the experiment "clusters" of :mod:`relu_gating.experiments`, prints its checks and tables, and
saves the figure (needs the ``plot`` extra).  Run from the repository root::

    python examples/exp_clusters.py [--quick] [--seed S] [--out examples/figures/clusters.png]

Same as ``relu-gating experiment clusters --out DIR`` (which also writes JSON and CSV).
"""

import sys

from relu_gating.experiments._script import example_main

if __name__ == "__main__":
    sys.exit(example_main("clusters", description=__doc__.split("\n")[0]))
