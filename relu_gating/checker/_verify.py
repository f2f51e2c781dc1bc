"""The checker's entry point: :func:`verify`, and the check of a tree certificate.

A pattern certificate is checked by :mod:`._verify_patterns` (JSON) or :mod:`._binary` (binary), loaded
then; the one verdict of all is :mod:`._verdict`'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from relu_gating.checker._constants import BOUND_SLACK
from relu_gating.checker._problem import StatedProblem, state_problem
from relu_gating.checker._read import FORMATS, is_binary, load_json, parse_claim
from relu_gating.checker._verdict import VerifyReport, check_value, conclude, problem_mismatch, refused, verdict_word
from relu_gating.errors import CertificateError

__all__ = ["VerifyReport", "verify", "verdict_word", "holds_tree"]


def _verify_tree(d: dict, P: StatedProblem, exact: bool, workers: int | None) -> VerifyReport:
    from relu_gating.checker._tree import walk

    c = parse_claim(d)
    mismatch = problem_mismatch(d.get("problem"), P)
    if mismatch:
        return refused(c, mismatch)
    tree = d.get("tree")
    leaves, why, counts = walk(tree.get("nodes") if isinstance(tree, dict) else None, P, exact, workers=workers)
    live = any(np.isfinite(p) or p > 0 for _, _, p in leaves) or not leaves
    value, reasons = check_value(c, P, live, exact)
    checks: dict[str, Any] = {"problem": {"ok": True}, "value": {"ok": not reasons, "recomputed": value},
                              "tree": dict(counts, ok=not why)}
    reasons += why
    unproven = [f"node {i}" for i, cl, p in leaves if p > cl + BOUND_SLACK]
    return conclude(c, value, max((p for _, _, p in leaves), default=-np.inf), len(unproven), unproven[:5],
                    reasons, checks)


def holds_tree(path: Any) -> bool:
    """Whether a binary certificate holds a tree (the member ``tree.npy``; ``_tree_npz`` reads it)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            return "tree.npy" in zf.namelist()
    except (OSError, zipfile.BadZipFile, ValueError, EOFError):
        return False  # the binary reader reports it


def verify(certificate: Any, Phi: Any, U_K: Any, features: Any = "bias", exact: bool = False,
           blas_threads: int | None = 1, workers: int | None = None) -> VerifyReport:
    """Re-check a best-neuron certificate against the problem stated by the caller.

    Parameters
    ----------
    certificate : NeuronResult, dict, JSON string, path to a JSON file or to a binary ``.npz`` one
    Phi : array_like, shape (n, m)
    U_K : array_like, shape (n, K)
    features : "bias" (default), None, "none" or array_like, shape (n, q)
        The features of the query, stated by the caller.  A certificate computed for other
        features, another ``K`` or other sizes is rejected, saying how.
    exact : bool, default False
        Decide every claim in exact rational arithmetic (the value, the witnesses, every bound,
        exclusion and implied sign): slow, for small ``n``; the oracle of the float path.
    blas_threads : int or None, default 1
        BLAS threads while it checks (a verify's products are small: more threads gain little and lose
        3-7x on a busy machine); the limit is process-wide while it runs, restored after.  ``None``
        leaves BLAS as it is.
    workers : int or None, default None
        Processes that walk a tree certificate of at least :data:`relu_gating.checker._tree.PARALLEL_NODES` nodes in parts
        (forked: where ``fork`` exists; one BLAS thread each); None: every core this process may use;
        1: serial.  The report is the serial walk's, whatever the count.  (Checked, and used, for tree
        certificates: another value than None or a positive integer raises InputError.)

    Returns
    -------
    VerifyReport
        Malformed certificates raise :class:`~relu_gating.errors.CertificateError`; unusable
        inputs :class:`~relu_gating.errors.InputError`.
    """
    from relu_gating._runtime.alloc import warm_allocator
    from relu_gating._runtime.blas_limit import limited_blas
    from relu_gating._runtime.collector import paused_gc

    warm_allocator()  # performance only (a large certificate is millions of small lists): see the modules
    with paused_gc(), limited_blas(blas_threads):
        return _verify(certificate, Phi, U_K, features, exact, workers)


def _verify(certificate: Any, Phi: Any, U_K: Any, features: Any, exact: bool, workers: int | None) -> VerifyReport:
    P = state_problem(Phi, U_K, features)
    if is_binary(certificate):
        if not holds_tree(certificate):
            from relu_gating.checker._binary import verify_binary  # binary pattern certificates only

            return verify_binary(certificate, P, exact)
        from relu_gating.checker._tree_npz import limits, tree_certificate

        certificate = tree_certificate(certificate, limits(P).tree_bytes)  # a tree in the binary form: checked as its JSON form
    d = load_json(certificate)
    if d.get("format") not in FORMATS:
        raise CertificateError(f"certificate format must be one of {', '.join(FORMATS)}, got {d.get('format')!r}")
    if d.get("kind") == "tree":
        return _verify_tree(d, P, exact, workers)
    from relu_gating.checker._verify_patterns import verify_patterns  # JSON pattern certificates only

    return verify_patterns(d, P, exact)
