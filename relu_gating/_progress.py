"""A dependency-free progress bar on stderr (private).

Shown only when stderr is a terminal and the caller did not ask for quiet;
piped output and ``--quiet`` stay clean.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """Minimal progress reporter: ``with Progress(total, "patterns") as p: p.update(k)``.

    Parameters
    ----------
    total : int or None
        Expected number of units (None for an open-ended count).
    label : str
        What is being counted.
    enabled : bool or None
        Force on/off; None means "on iff the stream is a terminal".
    stream : file, optional
        Defaults to ``sys.stderr``.
    """

    def __init__(
        self,
        total: int | None,
        label: str = "",
        *,
        enabled: bool | None = None,
        stream: TextIO | None = None,
        min_interval: float = 0.2,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = enabled
        self.total = total
        self.label = label
        self.done = 0
        self.min_interval = min_interval
        self._t0 = time.perf_counter()
        self._last = 0.0

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update(self, k: int = 1, *, note: str = "") -> None:
        self.done += k
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last < self.min_interval and (self.total is None or self.done < self.total):
            return
        self._last = now
        self._draw(note)

    def _draw(self, note: str = "") -> None:
        elapsed = time.perf_counter() - self._t0
        if self.total:
            frac = min(1.0, self.done / self.total)
            bar = "#" * int(30 * frac) + "-" * (30 - int(30 * frac))
            msg = f"\r{self.label} [{bar}] {self.done}/{self.total} {elapsed:6.1f}s {note}"
        else:
            msg = f"\r{self.label} {self.done} {elapsed:6.1f}s {note}"
        self.stream.write(msg[:120])
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()
            self.enabled = False
