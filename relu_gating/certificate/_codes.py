"""The codes of the certificate format: its version string, the settlement of a pattern, masks as text (private).

The certificate format owns these; the search writes them and the verifier reads them (the
settlement codes were once written out in three modules).  The version string is defined once,
by the reader that accepts it (:data:`relu_gating.checker.FORMAT`), and the writer writes that.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from relu_gating.checker import FORMAT  # the one definition: the reader's

__all__ = ["FORMAT", "Settlement", "SETTLEMENT_LETTERS", "mask_str"]


class Settlement(IntEnum):
    """How a pattern's claimed bound was settled (stored as int8; the certificate writes letters U, B, E, P)."""

    UNSETTLED = 0  #: ``U``: unsettled (its claimed bound is all the certificate says)
    BOUND = 1  #: ``B``: settled by its bound
    EXACT = 2  #: ``E``: solved exactly
    PRUNED = 3  #: ``P``: no admissible neuron

    @property
    def letter(self) -> str:
        """The certificate's letter for this settlement."""
        return SETTLEMENT_LETTERS[self]


#: The letters of the settlements, indexed by code.
SETTLEMENT_LETTERS = "UBEP"


def mask_str(mask: np.ndarray) -> str:
    """A gating pattern as the certificate writes it: ``"0110..."``."""
    return "".join("1" if b else "0" for b in mask)
