"""Verification of a binary certificate: the checker's streamed checks (:mod:`relu_gating.checker._binary`)."""

from __future__ import annotations

from typing import Any

__all__ = ["verify_binary"]


def verify_binary(path: Any, Phi: Any, U_K: Any, features: Any = "bias", exact: bool = False) -> Any:
    """:func:`relu_gating.verify` for a binary certificate, streamed by the checker."""
    from relu_gating.checker import verify

    return verify(path, Phi, U_K, features, exact=exact)
