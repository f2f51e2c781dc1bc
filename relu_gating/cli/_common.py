"""Input options shared by the sub-commands that read a data file (private)."""

from __future__ import annotations

import argparse
import os
import zipfile

import numpy as np

from relu_gating.data.io import DEFAULT_K, Problem, load_input, resolve_problem
from relu_gating.errors import InputError

__all__ = ["add_input_arguments", "problem_from_args", "features_from_spec", "PROBLEM_OPTIONS"]


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``INPUT`` and the graph options ``--K --graph --laplacian --neighbors --sigma --epsilon``."""
    parser.add_argument(
        "input",
        metavar="INPUT",
        help=".npz with X or Phi (optional f, U_K, H, eigenvalues), or .npy/.csv holding X (samples as rows)",
    )
    g = parser.add_argument_group("graph (used when INPUT has no U_K)")
    g.add_argument("--K", type=int, default=None,
                   help=f"number of low-frequency eigenvectors (default min({DEFAULT_K}, n - 1); "
                        "with U_K in INPUT: keep its first K columns)")
    g.add_argument("--graph", choices=("knn", "gaussian", "epsilon"), default="knn",
                   help="sample graph on the rows of X (default knn)")
    g.add_argument("--laplacian", choices=("combinatorial", "sym"), default="combinatorial",
                   help="L = D - W or L_sym = D^-1/2 L D^-1/2 (default combinatorial)")
    g.add_argument("--neighbors", type=int, default=None, metavar="k",
                   help="neighbours of the knn graph (default min(10, n - 1))")
    g.add_argument("--sigma", type=float, default=None,
                   help="Gaussian bandwidth (gaussian graph; optional weights for knn/epsilon)")
    g.add_argument("--epsilon", type=float, default=None,
                   help="radius of the epsilon graph (default: smallest radius that connects it)")


def problem_from_args(args: argparse.Namespace) -> Problem:
    """Load ``args.input`` and resolve it with the graph options into a :class:`Problem`."""
    from relu_gating._inputs.validate import warn_suspicious_shape

    data = load_input(args.input)
    if data.X is not None:  # before the graph: a transposed input is told at once (one line on stderr)
        warn_suspicious_shape(data.X.shape[0], data.X.shape[1], args.input)
    elif data.Phi is not None:
        warn_suspicious_shape(data.Phi.shape[0], data.Phi.shape[1] - 1, args.input, m=data.Phi.shape[1])
    return resolve_problem(
        data,
        K=args.K,
        graph=args.graph,
        laplacian=args.laplacian,
        n_neighbors=args.neighbors,
        sigma=args.sigma,
        epsilon=args.epsilon,
    )


def features_from_spec(spec: str | None, data_H: np.ndarray | None, n: int) -> tuple[object, str]:
    """Resolve ``--features`` into an argument of ``best_neuron`` and a spec string to record."""
    if spec is None:
        return (data_H, "input:H") if data_H is not None else ("bias", "bias")
    if spec in ("none", "bias"):
        return (None if spec == "none" else "bias"), spec
    if not os.path.isfile(spec):
        raise InputError(f"--features must be 'bias', 'none' or an existing file, got {spec!r}")
    from relu_gating.cli._features_file import read_features  # a features file only: loaded then

    try:
        return read_features(spec), os.path.basename(spec)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise InputError(f"--features {spec}: cannot read ({type(exc).__name__}: {exc})") from exc


def problem_and_features(args: argparse.Namespace) -> tuple[Problem, object, str]:
    """The stated problem and ``--features`` resolved, a features FILE read first: a bad file is told
    before the input is read and its graph built (the heavy part for a large ``X``)."""
    early = None
    if args.features is not None and args.features not in ("none", "bias"):
        early = features_from_spec(args.features, None, 0)
    problem = problem_from_args(args)
    features, spec = early if early is not None else features_from_spec(args.features, problem.H, problem.n)
    return problem, features, spec


#: Options of the stated problem that a certificate records and ``verify`` compares.
PROBLEM_OPTIONS = ("source", "graph", "laplacian", "K", "n_neighbors", "sigma", "epsilon")
