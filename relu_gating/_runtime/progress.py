"""A dependency-free progress bar on stderr (private).

On a terminal, a bar redrawn in place; when stderr is a pipe or a file (a batch job's log),
long work prints a plain line every :data:`PLAIN_EVERY` seconds instead (nothing for work
shorter than that); ``--quiet`` (``enabled=False``) prints nothing.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress", "on_terminal", "say", "PLAIN_EVERY"]

#: Seconds between the plain progress lines written to a pipe or a file.
PLAIN_EVERY = 30.0


def on_terminal(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (default stderr) is a terminal: plan lines and bars are for a person watching."""
    stream = stream if stream is not None else sys.stderr
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


def say(line: str, quiet: bool = False, stream: TextIO | None = None) -> None:
    """Print an informational line (a plan, a size) on stderr, only on a terminal and without ``quiet``."""
    stream = stream if stream is not None else sys.stderr
    if not quiet and on_terminal(stream):
        print(line, file=stream)


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
        Force the bar on/off; None means a bar on a terminal, else a plain line every
        ``plain_every`` seconds.
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
        plain_every: float | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.plain = False  # periodic plain lines (a pipe or a file) instead of the bar
        if enabled is None:
            enabled = on_terminal(self.stream)
            self.plain = not enabled
        self.enabled = enabled
        self.plain_every = PLAIN_EVERY if plain_every is None else plain_every
        self._plain_lines = self._plain_done = 0
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
        if self.plain:
            self._plain(note)
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last < self.min_interval and (self.total is None or self.done < self.total):
            return
        self._last = now
        self._draw(note)

    def _plain(self, note: str = "", final: bool = False) -> None:
        """A whole line (no carriage return) at most every ``plain_every`` seconds; a last one at the end
        of work that printed any."""
        now = time.perf_counter()
        if final and (not self._plain_lines or self._plain_done == self.done):
            return
        if not final and now - self._t0 < self.plain_every * (self._plain_lines + 1):
            return
        self._plain_lines, self._plain_done = self._plain_lines + 1, self.done
        try:
            self.stream.write(f"relu-gating: {self.line(note, bar=False)}\n")
            self.stream.flush()
        except (OSError, ValueError):  # the log went away: progress is not worth failing the work
            self.plain = False

    def _draw(self, note: str = "") -> None:
        self.stream.write("\r" + self.line(note)[:119].ljust(119))
        self.stream.flush()

    def line(self, note: str = "", bar: bool = True) -> str:
        """``bounds [#####-----] 1,234,567/2,626,398 patterns  210k/s  ETA 7 s  note`` (``bar=False``: the
        percentage instead of the bar)."""
        elapsed = time.perf_counter() - self._t0
        rate = self.done / elapsed if elapsed > 0 else 0.0
        speed = f"{_si(rate)}/s"
        if self.total:
            frac = min(1.0, self.done / self.total)
            shown = "[" + "#" * int(20 * frac) + "-" * (20 - int(20 * frac)) + "]" if bar else f"{100 * frac:.0f}%"
            left = (self.total - self.done) / rate if rate > 0 else float("nan")
            eta = f"ETA {_clock(left)}" if self.done < self.total else f"done in {_clock(elapsed)}"
            msg = f"{self.label} {shown} {self.done:,}/{self.total:,} {self.unit}  {speed}  {eta}"
        else:
            msg = f"{self.label} {self.done:,} {self.unit}  {speed}  {_clock(elapsed)}"
        return f"{msg}  {note}".rstrip()

    def close(self) -> None:
        if self.plain:
            self._plain(final=True)
            self.plain = False
        if self.enabled:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()
            self.enabled = False
