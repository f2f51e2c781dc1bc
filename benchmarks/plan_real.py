"""The plan's branch-and-bound estimate on the real-data cases, beside what was measured (docs/plan.md).

Instant (no search runs): ``plan_query(Phi, K).estimate("branch-and-bound")`` and what
``strategy="auto"`` runs at 120 s and 600 s, for every case of ``benchmarks/real.py``'s table;
the measured column is docs/real-data.md's (600-s budget), given here as text.

    python benchmarks/plan_real.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from real import case_problem  # noqa: E402

from relu_gating.search.plan import choose, plan_query  # noqa: E402

#: docs/real-data.md's table (600-s budget).
MEASURED = {"iris": "certified 6.4 s", "wine-pca5": "certified 144.2 s", "bc-pca3": "certified 21.4 s",
            "bc-pca5": "alpha 0.9855 at 600 s", "bc-pca5-n200": "certified 319.6 s",
            "clustered-1000x3": "certified 528.0 s", "clustered-100x5": "certified 152.6 s",
            "gauss-60x8": "certified 180.2 s"}


def main() -> None:
    print("| case | n x d | chambers | predicted (range) | measured | auto at 120 s | auto at 600 s |")
    print("| --- | --- | ---: | --- | --- | --- | --- |")
    for name, measured in MEASURED.items():
        Phi, U, K, _ = case_problem(name)
        plan = plan_query(Phi, K)
        est = plan.estimate("branch-and-bound")
        runs = []
        for limit in (120.0, 600.0):
            c = choose(plan, max_seconds=limit)
            runs.append(c.strategy + (" (beyond)" if "beyond" in c.reason else ""))
        print(f"| {name} | {plan.n} x {plan.m - 1} | {plan.patterns:.2g} | {est.describe()} | {measured} | "
              f"{runs[0]} | {runs[1]} |")


if __name__ == "__main__":
    main()
