"""Reading problem data from files, and turning it into a ready-to-use problem.

File formats
------------
``.npz``
    Keys ``X`` (n, d) and/or ``Phi`` (n, m) (at least one), optional ``f`` (n,),
    ``U_K`` (n, K), ``H`` (n, N), ``eigenvalues`` (K,).  Other keys are rejected.
``.npy``
    A 2-D array ``X`` (n, d).
``.csv``
    ``X`` (n, d), comma separated, with an optional header row of column names.

Samples are rows throughout (the paper's ``X`` is ``d x n``).
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from relu_gating._inputs.validate import as_matrix, as_vector, check_basis, check_K, with_ones
from relu_gating.errors import InputError

__all__ = ["InputData", "load_input", "Problem", "resolve_problem", "DEFAULT_K", "NPZ_KEYS", "MAX_SAMPLES",
           "check_headers"]

#: Default number of low-frequency eigenvectors when ``U_K`` is built (clipped to n - 1).
DEFAULT_K = 8

#: Most samples (rows) of an input file, checked on the declared shapes before anything is read: the
#: graph of the samples, its eigenvectors and the query grow at least as ``n log n`` (the dense graphs,
#: the exact rank and the pattern count faster), and no command finishes on more in reasonable time (the
#: largest n certified in 60 s is 2,200, d = 2: docs/plan.md).  A deflated ``X`` of millions of rows is a
#: few hundred KB on disk: refused here in milliseconds, not after minutes of graph building.
MAX_SAMPLES = 1_000_000
#: Keys accepted in ``.npz`` input files.
NPZ_KEYS = ("X", "Phi", "f", "U_K", "H", "eigenvalues")


@dataclass(frozen=True, eq=False)
class InputData:
    """Raw arrays read from an input file (each may be None).

    Attributes
    ----------
    path : str
    X : ndarray, shape (n, d) or None
    Phi : ndarray, shape (n, m) or None
    U_K : ndarray, shape (n, K) or None
    H : ndarray, shape (n, N) or None
    f : ndarray, shape (n,) or None
    eigenvalues : ndarray, shape (K,) or None
    """

    path: str
    X: np.ndarray | None = None
    Phi: np.ndarray | None = None
    U_K: np.ndarray | None = None
    H: np.ndarray | None = None
    f: np.ndarray | None = None
    eigenvalues: np.ndarray | None = None

    @property
    def n(self) -> int:
        return int((self.X if self.X is not None else self.Phi).shape[0])


def _npy_declared(fh: Any, size: int, where: str) -> tuple:
    """Read a ``.npy`` header from ``fh`` (``size`` bytes in all) and refuse, before anything is
    allocated, a member whose declared shape and dtype do not match the bytes it holds, or with more
    than ``MAX_SAMPLES`` rows; returns the declared shape."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fh)
        reader = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, _, dtype = reader(fh, max_header_size=10_000)
    except (ValueError, OSError, EOFError, SyntaxError) as exc:
        raise InputError(f"{where}: not a valid .npy array ({exc})") from exc
    if dtype.hasobject:
        raise InputError(f"{where}: holds Python objects; only numeric arrays are read")
    count = 1
    for s in shape:
        count *= int(s)
    data = size - fh.tell()
    if count * dtype.itemsize != data:
        raise InputError(f"{where}: declares shape {tuple(int(s) for s in shape)} of {dtype} "
                         f"({count * dtype.itemsize} bytes) but holds {data} bytes")
    if shape and int(shape[0]) > MAX_SAMPLES and not where.endswith("'eigenvalues'"):
        raise InputError(f"{where}: declares {int(shape[0]):,} rows (samples), more than the {MAX_SAMPLES:,} this "
                         "library handles (the graph, its eigenvectors and the query of more do not finish)")
    return tuple(int(s) for s in shape)


def check_headers(p: str, ext: str) -> None:
    """The declared shapes of an input's arrays (``ext`` ``".npy"`` or ``".npz"``), checked against their sizes
    and ``MAX_SAMPLES`` before anything is decompressed or allocated (:class:`InputError` naming ``p``)."""
    if ext == ".npy":
        with open(p, "rb") as fh:
            _npy_declared(fh, os.path.getsize(p), p)
        return
    with zipfile.ZipFile(p) as z:
        total = sum(info.file_size for info in z.infolist())
        if total > _memory() / 2:  # the decompressed sizes, from the ZIP directory, before anything is read
            raise InputError(f"{p}: its members decompress to {total:,} bytes, more than half this machine's memory")
        for info in z.infolist():
            if info.filename.endswith(".npy"):
                with z.open(info) as fh:
                    _npy_declared(fh, info.file_size, f"{p}: member {info.filename[:-4]!r}")


def _memory() -> float:
    """This machine's physical memory in bytes (8 GB where it cannot be read)."""
    try:
        return float(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 8e9


def load_input(path: str | os.PathLike[str]) -> InputData:
    """Read ``X``/``Phi`` and optional ``f``, ``U_K``, ``H``, ``eigenvalues`` from a file.

    Parameters
    ----------
    path : str or path-like
        ``.npz``, ``.npy`` or ``.csv`` (see the module docstring).

    Returns
    -------
    InputData

    Raises
    ------
    InputError
        Missing or unreadable file, unknown extension or key, bad shapes,
        NaN/inf; the message names the file and the key.
    """
    p = os.fspath(path)
    if not os.path.isfile(p):
        raise InputError(f"input file {p!r} does not exist or is not a regular file")
    ext = os.path.splitext(p)[1].lower()
    arrays: dict[str, Any] = {}
    try:
        if ext in (".npz", ".npy"):
            check_headers(p, ext)
        if ext == ".npz":
            with np.load(p, allow_pickle=False) as z:
                unknown = sorted(set(z.files) - set(NPZ_KEYS))
                if unknown:
                    raise InputError(f"{p}: unknown key(s) {unknown}; allowed keys are {list(NPZ_KEYS)}")
                arrays = {k: z[k] for k in z.files}
        elif ext == ".npy":
            arrays = {"X": np.load(p, allow_pickle=False)}
        elif ext == ".csv":
            from relu_gating.data._csv import read_csv  # loaded for CSV input only

            arrays = {"X": read_csv(p)}
        else:
            raise InputError(f"{p}: unsupported extension {ext!r}; use .npz, .npy or .csv")
    except InputError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise InputError(f"{p}: cannot read ({type(exc).__name__}: {exc})") from exc
    if "X" not in arrays and "Phi" not in arrays:
        raise InputError(f"{p}: needs key 'X' or 'Phi'")
    out: dict[str, np.ndarray | None] = {}
    n = None
    for key in ("X", "Phi", "U_K", "H"):
        if key in arrays:
            try:
                out[key] = as_matrix(arrays[key], f"{p}[{key!r}]", rows=n, allow_1d=(key != "X"))
            except InputError as exc:
                raise InputError(f"{exc} (all arrays need one row per sample)" if n is not None else str(exc)) from None
            n = out[key].shape[0]
    if "f" in arrays:
        out["f"] = as_vector(arrays["f"], f"{p}['f']", size=n)
    if "eigenvalues" in arrays:
        k = out["U_K"].shape[1] if out.get("U_K") is not None else None
        if k is None:
            raise InputError(f"{p}: key 'eigenvalues' given without 'U_K'")
        out["eigenvalues"] = as_vector(arrays["eigenvalues"], f"{p}['eigenvalues']", size=k)
    if out.get("U_K") is not None:
        check_basis(out["U_K"], f"{p}['U_K']")
    return InputData(path=p, **out)


@dataclass(frozen=True, eq=False)
class Problem:
    """Everything a coverage or best-neuron query needs, resolved from an input.

    Attributes
    ----------
    Phi : ndarray, shape (n, m)
        Layer input (``[X, 1]`` when the file has no ``Phi``).
    U_K : ndarray, shape (n, K)
        Orthonormal low-frequency eigenvectors (given or built from ``X``).
    eigenvalues : ndarray, shape (K,) or None
    K, n : int
    H : ndarray, shape (n, N) or None
        Features already chosen.
    f : ndarray, shape (n,) or None
        Target.
    description : dict
        JSON-safe provenance: ``source`` ("file" or "graph"), and for built bases
        ``graph``, ``laplacian``, ``n_neighbors``/``sigma``/``epsilon``, ``tie_at_K``,
        ``n_components``.
    L : scipy.sparse matrix, shape (n, n), or None
        The Laplacian when ``U_K`` was built here.
    next_eigenvalue : float or None
        :math:`\\lambda_{K+1}` when ``U_K`` was built here.
    """

    Phi: np.ndarray
    U_K: np.ndarray
    eigenvalues: np.ndarray | None
    K: int
    n: int
    H: np.ndarray | None
    f: np.ndarray | None
    description: dict = field(default_factory=dict)
    L: Any = None
    next_eigenvalue: float | None = None
    X: np.ndarray | None = None


def _effective_neighbors(graph: str, n_neighbors: int | None, n: int) -> int | None:
    """The number of neighbours the knn graph used (its default made explicit); None for other graphs."""
    from relu_gating.spectral.graphs import DEFAULT_NEIGHBORS

    if graph != "knn":
        return n_neighbors
    return int(n_neighbors) if n_neighbors is not None else min(DEFAULT_NEIGHBORS, n - 1)


def resolve_problem(
    data: InputData,
    *,
    K: int | None = None,
    graph: str = "knn",
    laplacian: str = "combinatorial",
    n_neighbors: int | None = None,
    sigma: float | None = None,
    epsilon: float | None = None,
) -> Problem:
    """Complete an :class:`InputData` into a :class:`Problem`.

    ``Phi`` defaults to ``layer_input(X)``.  ``U_K`` is taken from the data when
    present (its first ``K`` columns if ``K`` is given and smaller); otherwise it
    is built from ``X``: ``sample_graph(X, kind=graph, ...)`` ->
    ``laplacian(W, kind=laplacian)`` ->
    ``low_frequency_basis(L, K)`` with ``K`` defaulting to ``min(DEFAULT_K, n - 1)``.

    Parameters
    ----------
    data : InputData
    K : int, optional
    graph : {"knn", "gaussian", "epsilon"}
    laplacian : {"combinatorial", "sym"}
    n_neighbors, sigma, epsilon : optional
        Passed to :func:`relu_gating.sample_graph`.
    """
    if laplacian not in ("combinatorial", "sym"):
        raise InputError(f"laplacian must be 'combinatorial' or 'sym', got {laplacian!r}")
    X, n = data.X, data.n
    Phi = data.Phi if data.Phi is not None else with_ones(X, "X")
    desc: dict[str, Any] = {"input": data.path}
    L = nxt = None
    if data.U_K is not None:
        U, ev = data.U_K, data.eigenvalues
        if K is not None:
            K = check_K(K, U.shape[1])
            U = U[:, :K]
            ev = ev[:K] if ev is not None else None
        desc.update(source="file", K=int(U.shape[1]))
    else:
        if X is None:
            raise InputError(f"{data.path}: without 'U_K' the graph is built from 'X', which is missing")
        from relu_gating.spectral.graphs import graph_laplacian, sample_graph
        from relu_gating.spectral.spectra import laplacian_basis

        if n < 2:
            raise InputError(f"{data.path}: need at least 2 samples to build a graph, got {n}")
        K = min(DEFAULT_K, n - 1) if K is None else check_K(K, n)
        W = sample_graph(X, kind=graph, n_neighbors=n_neighbors, sigma=sigma, epsilon=epsilon)
        L = graph_laplacian(W, laplacian)  # W and L valid by construction: not checked again
        basis = laplacian_basis(L, K)
        U, ev, nxt = basis.U_K, basis.eigenvalues, basis.next_eigenvalue
        desc.update(
            source="graph",
            graph=graph,
            laplacian=laplacian,
            K=int(K),
            n_neighbors=_effective_neighbors(graph, n_neighbors, n),
            sigma=sigma,
            epsilon=epsilon,
            edges=int(W.nnz // 2),
            n_components=basis.n_components,
            tie_at_K=basis.tie_at_K,
        )
    return Problem(
        Phi=Phi,
        U_K=U,
        eigenvalues=ev,
        K=int(U.shape[1]),
        n=int(n),
        H=data.H,
        f=data.f,
        description=desc,
        L=L,
        next_eigenvalue=nxt,
        X=X,
    )
