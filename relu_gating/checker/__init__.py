"""The certificate checker: small, separate, and sound.

It reads a certificate (JSON or binary ``.npz``), states the problem from the caller's inputs,
and checks every claim with its own primitives (exact rationals where floats cannot decide; a
float may only accept a claim, with a rigorous error bound).  It holds no writer and imports
nothing of the search, the enumerator, ``solvers/`` or cvxpy.  The tolerances are the named
constants of :mod:`relu_gating.checker._constants` (listed in ``relu_gating/certificate/FORMAT.md``).
"""

from relu_gating.checker._bounds import prove
from relu_gating.checker._constants import BOUND_SLACK, CHUNK, EXCLUDE_RTOL, ROUNDING_STEP, VALUE_TOL
from relu_gating.checker._exact_claims import excluded
from relu_gating.checker._problem import StatedProblem, array_sha256, state_problem
from relu_gating.checker._read import BINARY_FORMAT, FORMAT, is_binary, load_json
from relu_gating.checker._verify import VerifyReport, holds_tree, verdict_word, verify

__all__ = ["verify", "VerifyReport", "verdict_word", "VALUE_TOL", "BOUND_SLACK", "EXCLUDE_RTOL", "ROUNDING_STEP", "CHUNK", "FORMAT",
           "BINARY_FORMAT", "is_binary", "load_json", "BinaryReader", "prove", "excluded", "StatedProblem",
           "state_problem", "walk_tree", "array_sha256", "binary_tree", "holds_tree"]


def walk_tree(nodes: list, P: StatedProblem, start: object = None) -> tuple[list, list[str], dict]:
    """The float walk of ``nodes`` (a subtree's from its root's signs ``start``): ``(leaves, reasons, counts)``."""
    from relu_gating.checker._tree import walk

    return walk(nodes, P, start=start)


def binary_tree(path: object, P: object = None) -> dict | None:
    """The tree certificate (its JSON form, parsed strictly) held by the binary certificate ``path``, or
    None when it holds none (a pattern certificate, or a file :class:`BinaryReader` reports); its member's
    size bounded by the stated problem ``P`` when given (``FORMAT.md``, "Limits")."""
    from relu_gating.checker._tree_npz import limits, tree_certificate

    return tree_certificate(path, None if P is None else limits(P).tree_bytes)


def __getattr__(name: str):  # BinaryReader (the .npz reader) is loaded on first use: JSON checks do without it
    if name == "BinaryReader":
        from relu_gating.checker._read_npz import BinaryReader

        return BinaryReader
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
