"""The cyclic garbage collector paused while large acyclic structures are built (private).

Building a tree certificate's millions of small lists (writing it out, reading it back and
walking it) triggers full collections that rescan every live object; none of these structures
form cycles, and reference counting frees them.  Measured: ``verify`` of a 625k-node tree read from
its JSON file, 8.5 s with the collector on, 6.1 s paused (medians of 3).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector inside the block (re-enabled after if it was on)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
