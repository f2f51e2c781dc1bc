"""``relu-gating best-neuron``: the certified best-neuron query (the back end other tools call)."""

from __future__ import annotations

import argparse
import json
import os
import zipfile

import numpy as np

from relu_gating._files import atomic_write, check_writable, file_sha256
from relu_gating.search.state import check_checkpoint_path
from relu_gating.errors import InputError
from relu_gating.cli._common import add_input_arguments, problem_from_args

__all__ = ["add_parser", "run", "features_from_spec", "summary_dict", "input_record", "PROBLEM_OPTIONS"]

SUMMARY_KEYS = ("objective", "value", "upper_bound", "alpha", "certified", "theta", "pattern", "n_patterns",
                "settled", "seconds", "notes")


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
    p.add_argument("--max-patterns", type=int, default=None, help="refuse jobs with more patterns than this")
    p.add_argument("--checkpoint", default=None, metavar="FILE.npz",
                   help="save progress here; rerunning the same command resumes from it")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the chunks on a Dask cluster (needs the 'dask' extra)")
    p.add_argument("--scheduler-timeout", type=float, default=5.0, metavar="SECONDS",
                   help="give up on an unreachable --scheduler after this long (default 5)")
    p.add_argument("--json", action="store_true", help="print a JSON summary to stdout")
    p.add_argument("--out", default=None, metavar="CERT.json", help="write the full certificate here")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(run=run)
    return p


def features_from_spec(spec: str | None, data_H: np.ndarray | None, n: int) -> tuple[object, str]:
    """Resolve ``--features`` into an argument of ``best_neuron`` and a spec string to record."""
    if spec is None:
        return (data_H, "input:H") if data_H is not None else ("bias", "bias")
    if spec in ("none", "bias"):
        return (None if spec == "none" else "bias"), spec
    if not os.path.isfile(spec):
        raise InputError(f"--features must be 'bias', 'none' or an existing file, got {spec!r}")
    try:
        return _read_features(spec), os.path.basename(spec)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise InputError(f"--features {spec}: cannot read ({type(exc).__name__}: {exc})") from exc


def _read_features(spec: str) -> np.ndarray:
    ext = os.path.splitext(spec)[1].lower()
    if ext == ".npz":
        with np.load(spec, allow_pickle=False) as z:
            if "H" not in z.files:
                raise InputError(f"--features file {spec!r} has no key 'H'")
            H = z["H"]
    elif ext == ".npy":
        H = np.load(spec, allow_pickle=False)
    elif ext == ".csv":
        H = np.loadtxt(spec, delimiter=",", ndmin=2)
    else:
        raise InputError(f"--features file {spec!r}: unsupported extension {ext!r} (use .npy, .csv or .npz)")
    return H


#: Options of the stated problem that a certificate records and ``verify`` compares.
PROBLEM_OPTIONS = ("source", "graph", "laplacian", "K", "n_neighbors", "sigma", "epsilon")


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
        raise InputError("--scheduler needs dask.distributed: pip install 'relu-gating[dask]'") from exc
    try:
        return Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise InputError(f"--scheduler {address}: cannot connect within {timeout:g} s ({exc})") from exc


def run(args: argparse.Namespace) -> int:
    from relu_gating.search.front import best_neuron

    if args.out:  # before any computation: a run must not end unable to write its result
        check_writable(args.out, "--out")
    if args.checkpoint:
        check_checkpoint_path(args.checkpoint, "--checkpoint")
    problem = problem_from_args(args)
    features, spec = features_from_spec(args.features, problem.H, problem.n)
    progress = None if not args.quiet else False
    client = _executor(args.scheduler, args.scheduler_timeout)
    try:
        res = best_neuron(problem.Phi, problem.U_K, features=features, alpha=args.alpha, method=args.method,
                          max_patterns=args.max_patterns, checkpoint=args.checkpoint, executor=client,
                          progress=progress)
    finally:
        if client is not None:
            client.close()
    cert = res.to_dict()
    cert["input"] = input_record(problem, args.input, spec)
    if args.out:
        atomic_write(args.out, lambda fh: json.dump(cert, fh))
    if args.json:
        summary = summary_dict(cert)
        if args.out:
            summary["certificate"] = os.path.abspath(args.out)
        print(json.dumps(summary, indent=2))
    else:
        print(format_result(res, cert))
    return 0


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
        f"patterns         {res.n_patterns} realized: {res.n_exact} solved exactly, {res.n_bound} settled by "
        f"bound, {res.n_pruned} pruned",
        "seconds          " + ", ".join(f"{k} {v:.3f}" for k, v in res.seconds.items()),
    ]
    lines += [f"note             {n}" for n in res.notes[:10]]
    if res.pattern.all() and res.objective == "captured":
        lines.append("warning          the answer is a constant-like neuron (every sample active): N_K is "
                     "maximized by the constant neuron when u_1 is constant; the marginal gain over the "
                     "bias (--features bias) is the informative query")
    return "\n".join(lines)


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

