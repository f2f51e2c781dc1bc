"""The command line of the example scripts ``examples/exp_NAME.py`` (private)."""

from __future__ import annotations

import argparse

__all__ = ["example_main"]


def example_main(name: str, argv: list[str] | None = None, description: str = "") -> int:
    """Run experiment ``name``, print its checks and the first rows of its tables, save its figure.

    Options: ``--quick``, ``--seed S``, ``--out PATH`` (default ``examples/figures/NAME.png``).
    Returns 0 when every check holds, else 1.
    """
    from relu_gating import experiments

    p = argparse.ArgumentParser(description=description or f"experiment {name}")
    p.add_argument("--quick", action="store_true", help="small version (seconds)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=f"examples/figures/{name}.png", help="figure path (PNG)")
    args = p.parse_args(argv)
    exp = experiments.get(name)
    if exp.plot is not None:  # the figure needs matplotlib: say so before the work
        from relu_gating.experiments._plotting import pyplot

        pyplot()
    from relu_gating.experiments._base import run_recorded

    res = run_recorded(exp, seed=args.seed, quick=args.quick)
    print(f"{res.title}  ({res.seconds:.1f} s)")
    for c in res.checks:
        tag = ("ok" if c.holds else "FAILED") + (", code test" if c.kind == "code test" else
                                                 "" if c.informative else ", not informative")
        print(f"  [{tag}] {c.name}: {c.detail}")
    for tname, rows in res.tables.items():
        print(f"table {tname} ({len(rows)} rows); first rows:")
        for row in rows[:6]:
            print("   ", {k: round(v, 6) if isinstance(v, float) else v for k, v in row.items()})
    if exp.plot is not None:
        exp.plot(res, args.out)
        print(f"figure saved to {args.out}")
    return 0 if res.ok else 1
