r"""Benchmark (issue 39): do a greedy step's candidates make a better first incumbent for the next step?

On iris, for steps ``--steps`` (features from seeded local search as in ``greedy_steps.py``): run the
step's branch and bound for ``--budget`` s (one worker), then under the next step's features (the
step's neuron appended) compare the first incumbent the search builds anyway (the best of 10,000
random neurons and of local search, 20 starts) with the best of the step's candidates
(``certificate.candidates``, the chosen neuron left out), each rescored and ascended as
``BranchAndBoundOptions(starts=)`` does; CPU seconds of each.

Run::

    python benchmarks/greedy_starts.py --steps 2,3,4,5 --budget 60
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from greedy_steps import step_features  # noqa: E402
from real import case_problem  # noqa: E402


def compare(step: int, budget: float) -> str:
    from relu_gating import best_neuron
    from relu_gating.search._exact.pilot import ascend
    from relu_gating.search.baselines import local_search, random_search
    from relu_gating.search.objectives import make_objective, neuron_values
    from relu_gating.search.options import BranchAndBoundOptions

    Phi, U, _, _ = case_problem("iris")
    H = step_features(Phi, U, step)
    r = best_neuron(Phi, U, features=H, strategy="branch-and-bound", max_seconds=budget,
                    options=BranchAndBoundOptions(workers=1))
    Hn = np.c_[H, np.maximum(Phi @ r.theta, 0)]
    t = time.process_time()
    seeds = max(random_search(Phi, U, features=Hn, n_samples=10_000, seed=0).value,
                local_search(Phi, U, features=Hn, n_starts=20, max_iter=30, seed=0).value)
    t_seeds, t = time.process_time() - t, time.process_time()
    obj = make_objective(Phi, U, Hn)
    keep = np.array([c for c in r.certificate.candidates if not np.array_equal(c, r.theta)])
    vals = neuron_values(obj, keep)
    starts = max((ascend(obj, th, float(v))[1] for th, v in zip(keep, vals) if np.isfinite(v)), default=-np.inf)
    t_starts = time.process_time() - t
    return (f"| {step} -> {step + 1} | {r.value:.5f} | {r.value / r.upper_bound:.4f} | {seeds:.5f} | {t_seeds:.2f} | "
            f"{starts:.5f} | {t_starts:.2f} | {len(keep)} |")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", default="2,3,4,5")
    ap.add_argument("--budget", type=float, default=60.0)
    args = ap.parse_args(argv)
    print("| step | its value | its alpha | next: random + local search | CPU s | next: best start | CPU s | starts |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for s in (int(x) for x in args.steps.split(",")):
        print(compare(s, args.budget), flush=True)


if __name__ == "__main__":
    main()
