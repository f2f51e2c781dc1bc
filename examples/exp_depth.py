"""Depth: coverage across layers, plain vs concatenated skip (Rem 5.7, Cor 5.2, Thm 5.3).

Runs the experiment "depth" of :mod:`relu_gating.experiments`, prints its checks and tables, and
saves the figure (needs the ``plot`` extra).  Run from the repository root::

    python examples/exp_depth.py [--quick] [--seed S] [--out examples/figures/depth.png]

Same as ``relu-gating experiment depth --out DIR`` (which also writes JSON and CSV).
"""

from __future__ import annotations

import argparse
import sys

from relu_gating import experiments


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small version (seconds)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="examples/figures/depth.png", help="figure path (PNG)")
    args = p.parse_args(argv)
    res = experiments.run("depth", seed=args.seed, quick=args.quick)
    print(f"{res.title}  ({res.seconds:.1f} s)")
    for c in res.checks:
        print(f"  [{'ok' if c.holds else 'FAILED'}] {c.name}: {c.detail}")
    for name, rows in res.tables.items():
        print(f"table {name} ({len(rows)} rows); first rows:")
        for row in rows[:6]:
            print("   ", {k: round(v, 6) if isinstance(v, float) else v for k, v in row.items()})
    experiments.get("depth").plot(res, args.out)
    print(f"figure saved to {args.out}")
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
