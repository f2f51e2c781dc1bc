"""``relu-gating patterns INPUT``: enumerate the realized gating patterns of a layer input.

INPUT is a ``.npz`` with ``Phi`` (n, m) (or ``X``, then ``Phi = [X, 1]``), or a
``.npy``/``.csv`` holding ``X``.  Prints a summary (or JSON with ``--json``):
``count``, ``expected`` and ``count_method`` (independent exact count),
``complete``, ``rank``, ``n``, ``m``, ``n_hyperplanes``, ``seconds`` (the whole command:
enumeration, completeness check and ``--out``; each phase also as ``enumerate_seconds``,
``check_seconds``, ``write_seconds``).

Before any work the plan (:func:`relu_gating.search.plan.estimate`, ``"patterns"``) is
printed on stderr, and a query whose estimated peak exceeds half this machine's memory,
or whose patterns exceed ``--max-patterns``, is refused (exit 2, one line naming the
options with their estimates).

``--out FILE.npz`` saves ``masks_packed`` (uint8, shape (N, ceil(n/8)),
``np.packbits(masks, axis=1)``: bit i of row k, big-endian within each byte, is
sample i of pattern k; recover with ``np.unpackbits(masks_packed, axis=1,
count=n).astype(bool)``), ``witnesses`` (float64, (N, m)), ``n`` and ``Phi``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from relu_gating._runtime.files import atomic_write, check_writable
from relu_gating.data.io import load_input
from relu_gating.patterns import check_completeness, count_patterns, enumerate_patterns
from relu_gating.cli._json import dumps

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help="enumerate every realized gating pattern 1[Phi theta > 0] with a witness",
                       description="Exact enumeration of the chambers of {theta : phi_i . theta = 0}: every "
                                   "realized gating pattern with a certified witness theta, checked against "
                                   "an independent exact count.")
    p.add_argument("input", metavar="INPUT",
                   help=".npz with Phi (or X, then Phi = [X, 1]), or .npy/.csv holding X (samples as rows)")
    p.add_argument("--json", action="store_true", help="print a JSON summary on stdout")
    p.add_argument("--out", metavar="FILE.npz", default=None,
                   help="save masks_packed (np.packbits of the (N, n) masks, axis=1), witnesses, n, Phi")
    p.add_argument("--max-patterns", type=_max_patterns, default="auto", metavar="N|auto|none",
                   help="refuse (exit 2), before any work, inputs with more patterns than this (Cover's bound; "
                        "default auto: what the plan says fits in half this machine's memory)")
    p.add_argument("--no-check", action="store_true",
                   help="skip the independent completeness check (it can cost as much as the enumeration)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(run=run)
    return p


def _max_patterns(text: str) -> int | str | None:
    from relu_gating.cli.best_neuron import _max_patterns as parse

    return parse(text)


def check_size(Phi: np.ndarray, max_patterns: int | str | None, quiet: bool) -> int | None:
    """The plan line on stderr; refuse (ProblemTooLargeError, exit 2) what exceeds the limits, before any work.

    Returns the pattern limit to pass to the enumerator (None: none).
    """
    from relu_gating.errors import ProblemTooLargeError
    from relu_gating.search.plan import (DEFAULT_MAX_SECONDS, check_max_patterns, format_bytes, format_seconds,
                                         memory_budget, plan_query)

    plan = plan_query(Phi)
    est = plan.estimate("patterns")
    head = f"{plan.describe(estimate=False)}; estimated {est.describe()}"
    if max_patterns == "auto":
        limit = None if est.memory_bytes <= memory_budget() else \
            max(1000, int(plan.patterns * memory_budget() / est.memory_bytes))
        what = f"max_patterns = {limit or 0:,} (what fits in {format_bytes(memory_budget())}, half this machine's memory)"
    else:
        limit = check_max_patterns(max_patterns, *Phi.shape)
        what = f"max_patterns = {limit:,}" if limit is not None else ""
    if limit is not None and plan.patterns > limit:
        bnb = plan.estimate("branch-and-bound")
        raise ProblemTooLargeError(
            f"{head}: more than {what}; options: --max-patterns none if this machine has "
            f"{format_bytes(est.memory_bytes)} to spare ({format_seconds(est.seconds)}); the best neuron needs no "
            f"pattern list: relu-gating best-neuron INPUT (branch and bound: {bnb.describe()}, rough; or --memory "
            f"2G, streamed); or fewer samples or input dimensions")
    if not quiet:
        slow = f" (more than {format_seconds(DEFAULT_MAX_SECONDS)})" if est.seconds > DEFAULT_MAX_SECONDS else ""
        print(f"relu-gating patterns: {head}{slow}", file=sys.stderr)
    return limit


def run(args: argparse.Namespace) -> int:
    t_start = time.perf_counter()
    if args.out:  # numpy's convention: ".npz" is appended when missing
        args.out = check_writable(args.out if args.out.endswith(".npz") else args.out + ".npz", "--out")
    data = load_input(args.input)
    if data.Phi is not None:
        Phi = data.Phi
    else:
        Phi = np.c_[data.X, np.ones(data.X.shape[0])]
    limit = check_size(Phi, args.max_patterns, args.quiet)
    t0 = time.perf_counter()
    ps = enumerate_patterns(Phi, max_patterns=limit, progress=not args.quiet)
    seconds = time.perf_counter() - t0
    out = {
        "count": len(ps),
        "rank": ps.rank,
        "n": ps.n,
        "m": ps.m,
        "n_hyperplanes": ps.n_hyperplanes,
        "enumerate_seconds": round(seconds, 6),
        "witnesses_exact_only": ps.n_exact_only,
        "witnesses_uncertified": int(ps.uncertified.size),
    }
    if args.no_check:
        cnt = count_patterns(Phi, method="bound")
        out.update(expected=cnt.count, count_method=cnt.method, complete=None)
    else:
        t1 = time.perf_counter()
        rep = check_completeness(Phi, ps.masks, ps.witnesses)
        out.update(expected=rep.expected, count_method=rep.method, complete=rep.ok,
                   check_seconds=round(time.perf_counter() - t1, 6))
        if not rep.ok:
            out["reason"] = rep.reason
    if args.out:
        t2 = time.perf_counter()
        atomic_write(args.out, lambda fh: np.savez_compressed(fh, masks_packed=ps.packed, witnesses=ps.witnesses,
                                                               n=np.int64(ps.n), Phi=Phi), binary=True)
        out.update(out=args.out, write_seconds=round(time.perf_counter() - t2, 6))
    out["seconds"] = round(time.perf_counter() - t_start, 6)  # the whole command, every phase
    if args.json:
        print(dumps(out, "patterns"))
    else:
        phases = ", ".join(f"{k.removesuffix('_seconds')} {out[k]:.3f}" for k in
                           ("enumerate_seconds", "check_seconds", "write_seconds") if k in out)
        print(f"{out['count']} patterns (expected {out['expected']}, {out['count_method']}), rank {ps.rank}, "
              f"n = {ps.n}, m = {ps.m}, {out['seconds']:.3f} s ({phases})")
        if out.get("complete") is False:
            print(f"INCOMPLETE: {out.get('reason')}", file=sys.stderr)
    return 0 if out.get("complete") is not False else 1
