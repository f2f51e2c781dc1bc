"""Greedy rate (Thm 5.10): certified greedy deficit and gap against the theorem's bound.

Runs the experiment "greedy-rate" of :mod:`relu_gating.experiments`, prints its checks and tables, and
saves the figure (needs the ``plot`` extra).  Run from the repository root::

    python examples/exp_greedy_rate.py [--quick] [--seed S] [--out examples/figures/greedy-rate.png]

Same as ``relu-gating experiment greedy-rate --out DIR`` (which also writes JSON and CSV).
"""

from __future__ import annotations

import argparse
import sys

from relu_gating import experiments


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small version (seconds)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="examples/figures/greedy-rate.png", help="figure path (PNG)")
    args = p.parse_args(argv)
    res = experiments.run("greedy-rate", seed=args.seed, quick=args.quick)
    print(f"{res.title}  ({res.seconds:.1f} s)")
    for c in res.checks:
        print(f"  [{'ok' if c.holds else 'FAILED'}] {c.name}: {c.detail}")
    for name, rows in res.tables.items():
        print(f"table {name} ({len(rows)} rows); first rows:")
        for row in rows[:6]:
            print("   ", {k: round(v, 6) if isinstance(v, float) else v for k, v in row.items()})
    experiments.get("greedy-rate").plot(res, args.out)
    print(f"figure saved to {args.out}")
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
