"""The checker's float test of one lifted ``"d"`` leaf, for a caller that wants to claim no more than
``verify`` proves (the search's face leaves); ``verify`` itself never loads this module."""

from __future__ import annotations

from relu_gating.checker._problem import StatedProblem

__all__ = ["lifted_leaf"]


def lifted_leaf(P: StatedProblem, signs: object, zero: object, claim: float, dec: object, N: object, mu: object) -> float:
    """``claim`` if the lifted evidence ``(dec, N, mu)`` of a ``"d"`` leaf proves it on the node with
    ``signs`` in floats (the walk's own test), else ``inf``."""
    from relu_gating.checker._tree import lifted_bound

    return lifted_bound(P, signs, zero, claim, dec, N, mu)  # type: ignore[arg-type]
