r"""Benchmark: one tree certificate verified as format 2 (``"d"`` leaves' multipliers as ``[k, l, v]`` lists) by
another commit's checker and as format 3 (packed, ``FORMAT.md``) by this checkout's, alternating, in fresh
processes (issue 39: "verify takes at most a tenth of the search").

The same tree on both sides, so only the reading and the checks differ: ``CERT`` is a format-2 certificate (as
``--against`` writes it, e.g. ``benchmarks/verify_speed.py``'s or ``real.py``'s), ``DATA`` an ``.npz`` with its
``Phi`` and ``U``.  This checkout packs its ``"d"`` leaves (:func:`relu_gating.certificate.packed_multipliers`,
bit for bit) into a copy; each side's ``verify_against.py --child`` times ``verify`` with its defaults (wall,
every core) and with ``workers=1`` (serial CPU), ``--repeats`` times, the order alternating; this checkout on the
format-2 file too (it reads both).  Printed: file sizes, medians, and whether every report agreed.

Run::

    python benchmarks/verify_packed.py --against main --cert CERT.json --data CERT.json.npz --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def pack(src: str, dst: str) -> None:
    """``src`` (format 2 or 3) with every ``"d"`` leaf's sparse multipliers packed, as format 3, to ``dst``."""
    from relu_gating.certificate import FORMAT, packed_multipliers

    with open(src) as fh:
        d = json.load(fh)
    for nd in d["tree"]["nodes"]:
        if nd[0] == "d" and isinstance(nd[3], dict) and "entries" in nd[3]:
            nd[3] = packed_multipliers(nd[3])
    d["format"] = FORMAT
    with open(dst, "w") as fh:
        json.dump(d, fh, allow_nan=False)


def main(argv=None) -> None:
    from real import checkout, in_child_script

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", required=True, help="the other commit (its checker reads CERT)")
    ap.add_argument("--cert", required=True, help="a format-2 tree certificate (JSON)")
    ap.add_argument("--data", required=True, help="an .npz with its Phi and U")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"load {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp, checkout(args.against) as other:
        packed = str(Path(tmp) / "packed.json")
        pack(args.cert, packed)
        sides = {"against, format 2": (other, args.cert), "now, format 3": (None, packed),
                 "now, format 2": (None, args.cert)}
        runs: dict = {k: [] for k in sides}
        for r in range(args.repeats):
            for name in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
                root, cert = sides[name]
                runs[name].append(in_child_script(root or HERE.parent, "verify_against.py",
                                                  ["--child", cert, args.data], 3600))
        print("| checker, file | MB | verify s (defaults) | verify serial CPU s | valid | alpha | agree |\n"
              "| --- | ---: | ---: | ---: | --- | ---: | --- |")
        for name, (_, cert) in sides.items():
            got = runs[name]
            if any("error" in g for g in got):
                print(f"| {name} | failed: {[g.get('error') for g in got]} |")
                continue
            print(f"| {name} | {os.path.getsize(cert) / 1e6:.1f} | {statistics.median(g['wall'] for g in got):.2f} | "
                  f"{statistics.median(g['cpu_serial'] for g in got):.2f} | {all(g['valid'] for g in got)} | "
                  f"{got[0]['alpha']:.6f} | {all(g['same'] for g in got)} |", flush=True)
    print(f"load {os.getloadavg()}")


if __name__ == "__main__":
    main()
