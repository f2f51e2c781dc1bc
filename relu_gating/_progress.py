"""A dependency-free progress bar on stderr (private).

Shown only when stderr is a terminal and the caller did not ask for quiet;
piped output and ``--quiet`` stay clean.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


def _si(x: float) -> str:
    """``950``, ``12.3k``, ``1.2M``."""
    for unit, size in (("M", 1e6), ("k", 1e3)):
        if x >= size:
            return f"{x / size:.3g}{unit}"
    return f"{x:.3g}"


def _clock(s: float) -> str:
    """``7 s``, ``3 min 05 s``, ``2 h 04 min``; ``?`` when unknown."""
    if not s == s or s == float("inf"):
        return "?"
    s = int(round(s))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class Progress:
    """Minimal progress reporter: ``with Progress(total, "patterns") as p: p.update(k)``.

    Parameters
    ----------
    total : int or None
        Expected number of units (None for an open-ended count).
    label : str
        The phase (``"enumerate"``, ``"bounds"``, ``"exact solves"``).
    unit : str
        What is counted (``"patterns"``); shown with the rate and, with a total, the ETA.
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
        unit: str = "patterns",
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
        self.unit = unit
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
        self.stream.write("\r" + self.line(note)[:119].ljust(119))
        self.stream.flush()

    def line(self, note: str = "") -> str:
        """``bounds [#####-----] 1,234,567/2,626,398 patterns  210k/s  ETA 7 s  note``."""
        elapsed = time.perf_counter() - self._t0
        rate = self.done / elapsed if elapsed > 0 else 0.0
        speed = f"{_si(rate)}/s"
        if self.total:
            frac = min(1.0, self.done / self.total)
            bar = "#" * int(20 * frac) + "-" * (20 - int(20 * frac))
            left = (self.total - self.done) / rate if rate > 0 else float("nan")
            eta = f"ETA {_clock(left)}" if self.done < self.total else f"done in {_clock(elapsed)}"
            msg = f"{self.label} [{bar}] {self.done:,}/{self.total:,} {self.unit}  {speed}  {eta}"
        else:
            msg = f"{self.label} {self.done:,} {self.unit}  {speed}  {_clock(elapsed)}"
        return f"{msg}  {note}".rstrip()

    def close(self) -> None:
        if self.enabled:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()
            self.enabled = False
