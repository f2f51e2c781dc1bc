"""``relu-gating best-neuron``: the certified best-neuron query (the back end other tools call)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from typing import Any

import numpy as np

from relu_gating.cli._json import dumps
from relu_gating._runtime.interrupt import Interrupted, run_interruptible
from relu_gating._runtime.progress import say
from relu_gating._runtime.threads import fit_blas
from relu_gating._runtime.files import atomic_write, check_writable, file_sha256
from relu_gating.search.state import check_checkpoint_path
from relu_gating.errors import InputError
from relu_gating.cli._common import (PROBLEM_OPTIONS, add_input_arguments, features_from_spec, problem_and_features)

__all__ = ["add_parser", "run", "features_from_spec", "summary_dict", "input_record", "PROBLEM_OPTIONS",
           "EXIT_OK", "EXIT_UNCERTIFIED", "EXIT_INTERRUPTED", "exit_code"]

#: Exit codes of ``best-neuron`` (docs/cli.md): certified at the requested alpha; a valid answer that
#: is not certified at it (a --max-seconds stop, an uncertified search: as ``verify``'s 3); interrupted.
#: Unusable input exits 2 (:data:`relu_gating.cli.EXIT_USAGE`).
EXIT_OK, EXIT_UNCERTIFIED, EXIT_INTERRUPTED = 0, 3, 130

SUMMARY_KEYS = ("objective", "value", "upper_bound", "alpha", "certified", "theta", "pattern", "n_patterns",
                "settled", "seconds", "notes")
#: ``--json`` also names the strategy that ran: ``"strategy"`` (``"enumerate"`` or ``"branch-and-bound"``).


def add_parser(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    p = sub.add_parser(
        name,
        help="certified best single ReLU neuron for a data file",
        description="Find the neuron theta maximizing N_K(relu(Phi theta)) (no features) or the marginal "
                    "gain G_H over features H (Prop 4.5), with a certificate that 'relu-gating verify' re-checks.",
    )
    add_input_arguments(p)
    p.add_argument("--features", default=None, metavar="bias|none|FILE",
                   help="features already in the layer: 'bias' (ones column), 'none' (objective N_K), or a "
                        ".npy/.csv/.npz(H) file; default: H from INPUT if present, else bias (N_K with 'none' is "
                        "maximized by a constant neuron on a connected graph)")
    p.add_argument("--alpha", type=float, default=1.0, help="certify value >= alpha * bound (default 1: exact)")
    p.add_argument("--method", default="auto", choices=("auto", "faces", "dnn", "spectral"),
                   help="per-pattern exact method of solvers/ (default auto)")
    p.add_argument("--max-patterns", type=_max_patterns, default="auto", metavar="N|auto|none",
                   help="in-memory enumeration: refuse, before any work, inputs with more patterns than this "
                        "(Cover's bound; default auto: what the plan says fits in half this machine's memory, at "
                        "most 30 million); --strategy auto then streams or branches instead")
    p.add_argument("--checkpoint", default=None, metavar="FILE.npz",
                   help="save progress here; rerunning the same command resumes from it")
    p.add_argument("--memory", default=None, metavar="SIZE",
                   help="stream the search within this memory budget (e.g. 2G, 512M): patterns are enumerated, "
                        "bounded and written part by part; pair with --out CERT.npz for large problems")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the chunks on a Dask cluster (needs the 'dask' extra)")
    p.add_argument("--scheduler-timeout", type=float, default=5.0, metavar="SECONDS",
                   help="give up on an unreachable --scheduler after this long (default 5)")
    p.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                   help="local processes: the branch and bound's subtrees (default every core this process may "
                        "use, started once 2 s of serial search have not settled the query; 1: serial) or the "
                        "enumeration's chunks (default in-process)")
    p.add_argument("--json", action="store_true", help="print a JSON summary to stdout")
    p.add_argument("--out", default=None, metavar="CERT.json|CERT.npz",
                   help="write the full certificate here (.npz: the binary form, written as a stream)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument("--strategy", default="auto", choices=("auto", "enumerate", "branch-and-bound"),
                   help="auto (default): what the plan predicts fastest within --max-seconds and half this "
                        "machine's memory (in-memory or streamed enumeration, or branch and bound, which answers "
                        "beyond any estimate with the alpha reached; the line printed first says which and why; "
                        "--out's format plays no part); enumerate every chamber; or branch and bound over the "
                        "arrangement (a tree certificate, .json or .npz)")
    p.add_argument("--max-seconds", type=float, default=None, metavar="SECONDS",
                   help="wall time of the whole command, writing --out included (default: 600 with auto, no "
                        "limit with a strategy named); a run stopped there reports the answer and the alpha "
                        "reached (exit 3)")
    p.set_defaults(run=run)
    return p


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _max_patterns(text: str):
    if text in ("auto", "none"):
        return None if text == "none" else "auto"
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, 'auto' or 'none', got {text!r}") from None


def input_record(problem, path: str, features_spec: str) -> dict:
    """How the problem was stated on the command line: the options, the file's name and hash."""
    rec = {k: problem.description.get(k) for k in PROBLEM_OPTIONS if k in problem.description}
    rec.update(input_name=os.path.basename(path), input_sha256=file_sha256(path), features=features_spec,
               n_components=problem.description.get("n_components"), tie_at_K=problem.description.get("tie_at_K"))
    return rec


def summary_dict(cert: dict) -> dict:
    """The certificate without its per-pattern arrays (what ``--json`` prints)."""
    out = {k: cert[k] for k in SUMMARY_KEYS if k in cert}
    out["objective"] = cert.get("problem", {}).get("objective")
    out["problem"] = cert.get("problem", {})
    out["input"] = cert.get("input", {})
    return out


def _executor(address: str | None, timeout: float = 5.0):
    if address is None:
        return None
    try:
        from dask.distributed import Client
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise InputError('--scheduler needs dask.distributed: pip install ".[dask]" from the repository root') from exc
    try:
        return Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise InputError(f"--scheduler {address}: cannot connect within {timeout:g} s ({exc})") from exc


def _ignore_sigint() -> None:
    """Worker processes leave Ctrl-C to the main process, which ends the run with its certificate."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _local_pool(workers: int | None):
    """``--workers N``: a pool of N local processes (None without the option)."""
    if workers is None:
        return None
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(workers, initializer=_ignore_sigint)


def _close(executor: Any) -> None:
    if executor is None:
        return
    if hasattr(executor, "close"):  # dask.distributed.Client
        executor.close()
    else:
        executor.shutdown(wait=False, cancel_futures=True)


def run(args: argparse.Namespace) -> int:
    t_start = time.perf_counter()  # --max-seconds is the wall time of the whole command, writing included
    from relu_gating.search import strategy as strategies

    if args.out:  # before any computation: a run must not end unable to write its result
        check_writable(args.out, "--out")
    if args.checkpoint:
        check_checkpoint_path(args.checkpoint, "--checkpoint", streamed=args.memory is not None)
    if args.memory is not None:
        from relu_gating.search.plan import parse_memory

        parse_memory(args.memory, "--memory")
    problem, features, spec = problem_and_features(args)
    fit_blas()  # the input is valid: BLAS threads <= the usable cores and the user's OMP/OPENBLAS/MKL setting
    choice = _choice(args, problem.Phi, problem.U_K.shape[1])
    writes = None if not args.out else ("npz" if args.out.lower().endswith(".npz") else "json")
    query = strategies.Query(problem.Phi, problem.U_K, features=features, alpha=args.alpha, method=args.method,
                             progress=None if not args.quiet else False, writes=writes,
                             deadline=strategies.deadline_of(t_start, choice.max_seconds))
    if choice.strategy == "branch-and-bound":  # main thread: Ctrl-C ends the search with a valid tree certificate
        client = _executor(args.scheduler, args.scheduler_timeout)  # else the search's own pool (--workers)
        try:
            res = strategies.run(choice, dataclasses.replace(query, executor=client))
        finally:
            _close(client)
        return _report(args, res, problem, spec)  # exit 130 after the report if Ctrl-C stopped it
    client = _executor(args.scheduler, args.scheduler_timeout) or _local_pool(args.workers)
    try:
        res = run_interruptible(lambda: strategies.run(choice, dataclasses.replace(query, executor=client)))
    except Interrupted as exc:
        return interrupted(exc, args.checkpoint)
    finally:
        _close(client)
    return _report(args, res, problem, spec)


def _choice(args: argparse.Namespace, Phi: np.ndarray, K: int) -> Any:
    """The plan's :class:`~relu_gating.search.plan.Choice` for these arguments, its line on stderr
    (a terminal's: the strategy and why).  The output format plays no part in it."""
    from relu_gating.search.options import BranchAndBoundOptions, EnumerateOptions, Resolved, check_max_seconds
    from relu_gating.search.plan import choose, plan_query

    check_max_seconds(args.max_seconds, "--max-seconds")
    if args.workers is not None and args.scheduler:
        raise InputError("--workers (local processes) and --scheduler (a Dask cluster) exclude each other")
    enum = EnumerateOptions(max_patterns=args.max_patterns, checkpoint=args.checkpoint, memory=args.memory)
    if args.strategy == "branch-and-bound" and enum.pins_enumeration():
        raise InputError("--checkpoint and --memory apply to --strategy enumerate only")
    opts = Resolved(args.strategy, enum, BranchAndBoundOptions(workers=args.workers), not enum.pins_enumeration())
    plan = plan_query(Phi, K)
    choice = choose(plan, opts, max_seconds=args.max_seconds, certificate=bool(args.out))
    say(f"relu-gating best-neuron: {plan.describe(estimate=False)}; {choice.describe()}", args.quiet)
    return choice


def _report(args: argparse.Namespace, res: Any, problem: Any, spec: str) -> int:
    """Write the certificate (--out) and print the summary (--json) or the text report."""
    from relu_gating.certificate import binary_meta, save_binary

    record = input_record(problem, args.input, spec)
    if args.out and args.out.lower().endswith(".npz") and res.tree is None:  # binary: streamed, the summary
        save_binary(res, args.out, {"input": record})  # from its meta
        cert = binary_meta(res, {"input": record})
    elif args.out and args.out.lower().endswith(".npz"):  # a tree: its JSON form in the binary container
        save_binary(res, args.out, {"input": record})
        cert = res.to_dict()
        cert["input"] = record
    elif not args.out and getattr(res, "tree", None) is None:  # nothing written: the summary keys alone
        cert = binary_meta(res, {"input": record})  # (the full dict of 2.6M patterns took 4.9 s and 1 GB)
    else:
        cert = res.to_dict()
        cert["input"] = record
        if args.out:
            atomic_write(args.out, lambda fh: json.dump(cert, fh, allow_nan=False))
    if args.json:
        summary = summary_dict(cert)
        summary["strategy"] = res.strategy  # the strategy that ran
        if args.out:
            summary["certificate"] = args.out
        print(dumps(summary, "best-neuron"))
    else:
        print(format_result(res, cert))
    code = exit_code(res)
    if code != EXIT_OK:
        print(f"relu-gating best-neuron: {_exit_reason(res, code)}", file=sys.stderr)
    return code


def _stop(res: Any) -> str:
    """Why the search ended (``res.stats.stop``): ``"settled"``, ``"time"`` (--max-seconds) or ``"interrupted"``
    (Ctrl-C); :data:`relu_gating.search.result.STOP_REASONS`."""
    return res.stats.stop


def exit_code(res: Any) -> int:
    """0 certified at the requested alpha, 130 interrupted (the valid answer reached is still reported),
    3 a valid answer not certified at the requested alpha (a --max-seconds stop included)."""
    if _stop(res) == "interrupted":
        return EXIT_INTERRUPTED
    return EXIT_OK if res.certified else EXIT_UNCERTIFIED


def _exit_reason(res: Any, code: int) -> str:
    """One line for stderr: why the exit code is not 0."""
    reached = res.value / res.upper_bound if res.upper_bound > 0 else 1.0
    if code == EXIT_INTERRUPTED:
        return f"interrupted: the answer above is valid, certified to the alpha reached {reached:.6f}; exit {code}"
    why = "stopped by --max-seconds" if _stop(res) == "time" else "not certified"
    return (f"{why}: the answer is valid, but alpha reached {reached:.6f} < the requested alpha = {res.alpha:g}; "
            f"exit {code}")


def interrupted(exc: Interrupted, checkpoint: str | None) -> int:
    """Report an interrupt: whether the checkpoint holds the work; exit now if the worker is still busy."""
    if checkpoint and exc.finished:
        msg = f"interrupted; checkpoint saved to {checkpoint}: rerun the same command to resume"
    elif checkpoint and os.path.exists(checkpoint):
        age = time.time() - os.path.getmtime(checkpoint)
        msg = f"interrupted; {checkpoint} holds the work saved {age:.0f} s ago: rerun the same command to resume"
    elif checkpoint:
        msg = "interrupted before the first checkpoint was written (none saved)"
    else:
        msg = "interrupted (nothing saved; --checkpoint FILE keeps the work of a long run)"
    print(f"relu-gating best-neuron: {msg}", file=sys.stderr)
    sys.stderr.flush()
    if not exc.finished:  # the worker is inside a long numpy call: do not wait for it
        sys.stdout.flush()
        os._exit(130)
    return 130


def format_result(res, cert: dict) -> str:
    """Human-readable summary of a best-neuron result."""
    obj = "N_K(h)" if res.objective == "captured" else "marginal gain G_H(h)"
    lines = [
        f"problem          {_problem_line(cert.get('input', {}), res)}",
        f"objective        {obj}",
        f"best value       {res.value:.12g}",
        f"upper bound      {res.upper_bound:.12g}   (over all neurons; gap {res.gap:.3g})",
        f"certified        {'yes' if res.certified else 'NO'} (alpha = {res.alpha:g}, tol = {res.tol:g})",
        f"theta            [{', '.join(f'{t:.6g}' for t in res.theta)}]",
        f"active samples   {int(res.pattern.sum())} of {res.pattern.size}",
        _settled_line(res),
        "seconds          " + ", ".join(f"{k} {v:.3f}" for k, v in res.seconds.items()),
    ]
    lines += [f"note             {n}" for n in res.notes[:10]]
    if res.pattern.all() and res.objective == "captured":
        lines.append("warning          the answer is a constant-like neuron (every sample active): N_K is "
                     "maximized by the constant neuron when u_1 is constant; the marginal gain over the "
                     "bias (--features bias) is the informative query")
    return "\n".join(lines)


def _settled_line(res) -> str:
    """How the answer was settled, in the search's own units: patterns (enumeration) or tree nodes."""
    if getattr(res, "strategy", "enumerate") != "branch-and-bound":
        return (f"patterns         {res.n_patterns:,} realized: {res.n_exact:,} solved exactly, {res.n_bound:,} "
                f"settled by bound, {res.n_pruned:,} pruned")
    reached = res.value / res.upper_bound if res.upper_bound > 0 else 1.0
    stop = {"time": "stopped by --max-seconds", "interrupted": "interrupted"}.get(_stop(res), "settled")
    return (f"branch and bound {res.n_nodes:,} nodes, {res.n_exact + res.n_pruned:,} chambers visited ("
            f"{res.n_exact:,} solved exactly, {res.n_pruned:,} empty), {res.n_bound:,} leaves settled by bound; "
            f"gap {res.gap:.3g}, alpha reached {reached:.6f} ({stop})")


def _problem_line(rec: dict, res) -> str:
    """The stated problem in one line: data, graph, K, features."""
    parts = [f"{rec.get('input_name', '?')}: n = {res.pattern.size}, K = {res.K}"]
    if rec.get("source") == "graph":
        graph = f"{rec.get('graph')} graph"
        if rec.get("graph") == "knn":
            graph += f" (neighbours {rec.get('n_neighbors') or 'default'})"
        parts.append(f"{graph}, {rec.get('laplacian')} Laplacian, {rec.get('n_components', '?')} component(s)")
    else:
        parts.append("U_K from the input file")
    parts.append(f"features {rec.get('features', res.features)}")
    return "; ".join(parts)

