"""Run the command line with stderr on a pseudo-terminal, as a person at a terminal would (tests' helper).

The plan line and the progress bar are printed only when stderr is a terminal (a pipe silences them),
so tests that must know the work has begun (to press Ctrl-C during it) read them from a pty.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time


def _default_sigint() -> None:
    """Ctrl-C as at a terminal, even when these tests run in a background job (which ignores SIGINT)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class TerminalRun:
    """``python -m relu_gating ARGS`` with stdout piped and stderr on a pty that a thread drains."""

    def __init__(self, args: list[str], cwd: str | None = None) -> None:
        master, slave = os.openpty()
        self.proc = subprocess.Popen([sys.executable, "-m", "relu_gating", *args], stdout=subprocess.PIPE,
                                     stderr=slave, stdin=subprocess.DEVNULL, cwd=cwd, preexec_fn=_default_sigint)
        os.close(slave)
        self._master, self._chunks, self._lock = master, [], threading.Lock()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self._master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            with self._lock:
                self._chunks.append(data)

    @property
    def err(self) -> str:
        """What the child wrote on its terminal so far (bars end in carriage returns)."""
        with self._lock:
            return b"".join(self._chunks).decode(errors="replace")

    def wait_for(self, text: str, timeout: float = 120.0) -> None:
        """Wait until ``text`` appears on the terminal (the work has begun); fail if the child exits first."""
        t_end = time.monotonic() + timeout
        while text not in self.err:
            if self.proc.poll() is not None:
                raise AssertionError(f"exited {self.proc.returncode} before {text!r}: {self.err!r}")
            if time.monotonic() > t_end:
                raise AssertionError(f"no {text!r} within {timeout} s: {self.err!r}")
            time.sleep(0.05)

    def finish(self, timeout: float = 60.0) -> tuple[int, str, str]:
        """``(exit code, stdout, terminal text)`` once the child ends."""
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        finally:
            self.proc.kill()
        self._reader.join(5)
        os.close(self._master)
        return self.proc.returncode, out.decode(errors="replace"), self.err
