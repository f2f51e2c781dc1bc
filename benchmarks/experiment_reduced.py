r"""A reduced full run of an experiment: its full configuration with some entries replaced, recorded.

For a full run that cannot finish in the time at hand (issue 40: depth and clusters on 2 shared cores):
the experiment's ``run(seed=, overrides=)`` with ``--set KEY=VALUE`` (``VALUE`` is JSON), saved like
``relu-gating experiment NAME --out DIR`` (``NAME.json`` with the provenance, one CSV per table, the
figure); the JSON's ``params["reduced"]`` names the replaced entries, so a reduced run is never read as
the full one.

Usage::

    python benchmarks/experiment_reduced.py depth --set norm_iter=10 --set cert_depth=2 --out DIR
    python benchmarks/experiment_reduced.py clusters --set 'configs=[[0.4, 0.3]]' --out DIR
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's relu_gating

#: The experiments whose ``run`` takes ``overrides``.
REDUCIBLE = ("clusters", "depth")


def parse_sets(items: list[str]) -> dict:
    """``["k=v", ...]`` with JSON values -> dict (a clear error naming the bad item)."""
    out = {}
    for it in items:
        key, sep, val = it.partition("=")
        if not sep or not key:
            raise SystemExit(f"experiment_reduced.py: error: --set {it!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(val)
        except json.JSONDecodeError:
            raise SystemExit(f"experiment_reduced.py: error: --set {it!r}: VALUE is not JSON") from None
    return out


def main(argv: list[str] | None = None) -> int:
    from relu_gating.experiments import get
    from relu_gating.experiments._base import Experiment, run_recorded

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", choices=REDUCIBLE)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--no-plot", action="store_true")
    a = ap.parse_args(argv)
    over = parse_sets(a.set)
    exp = get(a.name)
    red = Experiment(exp.name, exp.summary, functools.partial(exp.run, overrides=over), exp.plot)
    res = run_recorded(red, seed=a.seed, argv=sys.argv if argv is None else ["benchmarks/experiment_reduced.py", *argv])
    paths = res.save(a.out)
    if not a.no_plot and exp.plot is not None:
        exp.plot(res, str(Path(a.out) / f"{res.name}.png"))
    bad = [c.name for c in res.checks if not c.holds]
    print(f"{res.name} (reduced: {sorted(over)}): {len(res.checks) - len(bad)}/{len(res.checks)} checks hold, "
          f"{res.seconds:.1f} s; wrote {', '.join(paths)}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
