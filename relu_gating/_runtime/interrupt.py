"""Ctrl-C that answers within a second (private).

The command line runs a long query in a worker thread and waits for it in the
main thread, which receives SIGINT promptly even while numpy works.  On Ctrl-C (or
SIGTERM) it sets :data:`STOP`; the query's loops call :func:`check_stop` between chunks
and end by raising KeyboardInterrupt (saving the checkpoint).  If that does not
happen within ``grace`` seconds the command reports what is on disk and exits.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

__all__ = ["STOP", "check_stop", "run_interruptible", "Interrupted"]

#: Set by the command line on Ctrl-C; polled by long loops.
STOP = threading.Event()


class Interrupted(Exception):
    """Ctrl-C was pressed; ``finished`` says whether the work stopped cleanly (checkpoint written)."""

    def __init__(self, finished: bool) -> None:
        super().__init__("interrupted")
        self.finished = finished


def check_stop() -> None:
    """Raise KeyboardInterrupt if Ctrl-C was pressed (in a worker thread, where SIGINT does not arrive)."""
    if STOP.is_set():
        raise KeyboardInterrupt


def run_interruptible(fn: Callable[[], Any], grace: float = 0.8) -> Any:
    """``fn()`` in a worker thread; Ctrl-C raises :class:`Interrupted` within about ``grace`` seconds."""
    STOP.clear()
    box: dict[str, Any] = {}
    done = threading.Event()  # not Thread.is_alive: an interrupted join can leave it wrong

    def work() -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name="relu-gating-query", daemon=True).start()
    old = _on_sigterm(_raise_interrupt)
    try:
        while not done.wait(0.1):
            pass
    except KeyboardInterrupt:
        STOP.set()
        raise Interrupted(finished=done.wait(grace)) from None
    finally:
        _on_sigterm(old)
    if "error" in box:
        raise box["error"]
    return box["result"]


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _on_sigterm(handler: Any) -> Any:
    """Install ``handler`` for SIGTERM (a batch system's kill) in the main thread; returns the previous one.

    SIGTERM then ends a run as Ctrl-C does: the checkpoint is written before the exit.
    """
    import signal

    if handler is None or threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, handler)
