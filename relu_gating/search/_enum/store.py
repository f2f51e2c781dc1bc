"""The per-pattern arrays of an enumerated search, behind one interface (private).

:class:`PatternStore` is what the drivers and the ending (:mod:`.finish`) read and write: for
every pattern in enumeration order its packed mask, witness, upper bound, best value found and
settlement.  Two stores implement it:

* :class:`MemoryStore`: the arrays of the in-memory search (the pattern set's packed masks and
  witnesses, the :class:`~relu_gating.search.state.SearchState`'s bounds, values and
  settlements), used in place: reads of a range are views, and the result is lent the arrays
  themselves (no copy: at 10^8 patterns they are most of the memory);
* :class:`DiskStore`: the streamed search's columns, one raw file each in a private temporary
  directory.  Rows are appended part by part, read back in chunks with plain file reads (no
  memory map is touched while the search runs, so the files live in the page cache, not in the
  process), and patched in place for the few patterns the exact phase settles; the result gets
  read-only memory maps.  The directory is removed when the store is garbage collected (or
  :meth:`DiskStore.close`); directories left by a killed process are removed by the next store
  created (:func:`sweep_stale`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from typing import Any, Protocol

import numpy as np

__all__ = ["PatternStore", "MemoryStore", "DiskStore", "COLUMNS", "SCAN", "sweep_stale", "PREFIX"]


#: Patterns per block of a scan of a store (its reads of a range).
SCAN = 1 << 16
#: The columns of a store, in this order.
COLUMNS = ("packed", "witnesses", "upper", "lower", "status")
#: Columns whose rows are vectors (2-D even when a row holds one entry: n <= 8 samples, m = 1).
_ROWS = ("packed", "witnesses")
#: Name prefix of a store's directory, followed by the owning process id and a random suffix.
PREFIX = "relu-gating-stream-"


class PatternStore(Protocol):
    """Per-pattern columns (:data:`COLUMNS`) of ``N`` patterns over ``n`` samples.

    ``packed`` (uint8, ``ceil(n / 8)`` per row) and ``witnesses`` (float64, ``m`` per row) are
    2-D; ``upper``, ``lower`` (float64) and ``status`` (int8) are 1-D.
    """

    N: int
    n: int

    def read(self, name: str, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` of a column (clipped to the store)."""

    def take(self, name: str, index: Any) -> np.ndarray:
        """Rows at ``index`` (any order), a fresh array."""

    def write(self, name: str, start: int, values: np.ndarray) -> None:
        """Overwrite the rows from ``start`` on."""

    def patch(self, name: str, index: np.ndarray, values: np.ndarray) -> None:
        """Overwrite the rows at ``index``."""

    def lend(self) -> tuple[dict[str, np.ndarray], Any]:
        """Every column whole, for the result (not to be written after), and the object that must
        stay alive while they are read (or None)."""


class MemoryStore:
    """:class:`PatternStore` over arrays in memory, used in place (never copied)."""

    def __init__(self, n: int, packed: np.ndarray, witnesses: np.ndarray, upper: np.ndarray, lower: np.ndarray,
                 status: np.ndarray) -> None:
        self.n, self.N = int(n), int(upper.shape[0])
        self.columns = {"packed": packed, "witnesses": witnesses, "upper": upper, "lower": lower, "status": status}

    def read(self, name: str, start: int, stop: int) -> np.ndarray:
        return self.columns[name][max(0, int(start)):int(stop)]  # a view

    def take(self, name: str, index: Any) -> np.ndarray:
        return self.columns[name][np.asarray(index, dtype=np.int64)]

    def write(self, name: str, start: int, values: np.ndarray) -> None:
        a = self.columns[name]
        a[int(start):int(start) + len(values)] = values

    def patch(self, name: str, index: np.ndarray, values: np.ndarray) -> None:
        self.columns[name][np.asarray(index, dtype=np.int64)] = values

    def lend(self) -> tuple[dict[str, np.ndarray], Any]:
        return dict(self.columns), None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def sweep_stale(directory: str | None = None) -> list[str]:
    """Remove the store directories left by processes that no longer exist (a run killed with
    SIGKILL or a power cut cannot clean up after itself); returns the paths removed."""
    parent = directory or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = os.listdir(parent)
    except OSError:
        return removed
    for name in names:
        pid = name[len(PREFIX):].split("-", 1)[0]
        if name.startswith(PREFIX) and pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            path = os.path.join(parent, name)
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


class DiskStore:
    """:class:`PatternStore` on disk: append-only columns, readable in chunks, patchable in place."""

    def __init__(self, n: int, m: int, directory: str | None = None) -> None:
        self.n, self.m = int(n), int(m)
        self.nb = (self.n + 7) // 8
        sweep_stale(directory)
        self.dir = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=directory)
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.dir, True)
        self.columns: dict[str, tuple[np.dtype, int]] = {"packed": (np.dtype(np.uint8), self.nb), "witnesses": (np.dtype(np.float64), self.m),
                        "upper": (np.dtype(np.float64), 1), "lower": (np.dtype(np.float64), 1),
                        "status": (np.dtype(np.int8), 1)}
        self.N = 0
        for name in self.columns:
            open(self.path(name), "wb").close()

    def path(self, name: str) -> str:
        return os.path.join(self.dir, f"{name}.bin")

    def _row_bytes(self, name: str) -> int:
        dt, width = self.columns[name]
        return dt.itemsize * width

    def append(self, **arrays: np.ndarray) -> None:
        """Append the same number of rows to every column."""
        sizes = {int(np.asarray(a).shape[0]) for a in arrays.values()}
        if set(arrays) != set(self.columns) or len(sizes) != 1:
            raise ValueError("append needs every column, with the same number of rows")
        for name, a in arrays.items():
            dt, width = self.columns[name]
            a = np.ascontiguousarray(a, dtype=dt)
            if a.size != a.shape[0] * width:
                raise ValueError(f"column {name}: rows of {width} expected, got shape {a.shape}")
            with open(self.path(name), "ab") as fh:
                fh.write(a.tobytes())
        self.N += sizes.pop()

    def read(self, name: str, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` of a column (a fresh array; plain file read)."""
        dt, width = self.columns[name]
        start, stop = max(0, int(start)), min(self.N, int(stop))
        count = max(0, stop - start)
        with open(self.path(name), "rb") as fh:
            fh.seek(start * self._row_bytes(name))
            a = np.fromfile(fh, dtype=dt, count=count * width)
        return a.reshape(count, width) if name in _ROWS else a

    def take(self, name: str, index: Any) -> np.ndarray:
        """Rows at ``index`` (any order): one seek per row, for the few candidates."""
        dt, width = self.columns[name]
        rb = self._row_bytes(name)
        out = np.empty((len(index), width), dtype=dt)
        with open(self.path(name), "rb") as fh:
            for k, i in enumerate(np.asarray(index, dtype=np.int64).tolist()):
                fh.seek(i * rb)
                out[k] = np.frombuffer(fh.read(rb), dtype=dt)
        return out if name in _ROWS else out[:, 0]

    def write(self, name: str, start: int, values: np.ndarray) -> None:
        """Overwrite the rows from ``start`` on (in place)."""
        dt, _ = self.columns[name]
        with open(self.path(name), "r+b") as fh:
            fh.seek(int(start) * self._row_bytes(name))
            fh.write(np.ascontiguousarray(values, dtype=dt).tobytes())

    def patch(self, name: str, index: np.ndarray, values: np.ndarray) -> None:
        """Overwrite single rows (the exact phase's few settled patterns)."""
        dt, _ = self.columns[name]
        rb = self._row_bytes(name)
        values = np.ascontiguousarray(values, dtype=dt)
        with open(self.path(name), "r+b") as fh:
            for k, i in enumerate(np.asarray(index, dtype=np.int64).tolist()):
                fh.seek(i * rb)
                fh.write(values[k].tobytes())

    def memmap(self, name: str) -> np.ndarray:
        """The whole column as a read-only memory map (for the result; pages load on access)."""
        dt, width = self.columns[name]
        if self.N == 0:
            return np.zeros((0, width) if name in _ROWS else (0,), dtype=dt)
        shape = (self.N, width) if name in _ROWS else (self.N,)
        return np.memmap(self.path(name), dtype=dt, mode="r", shape=shape)

    def lend(self) -> tuple[dict[str, np.ndarray], Any]:
        """Read-only memory maps of every column, kept readable by this store (pages load on access)."""
        return {name: self.memmap(name) for name in COLUMNS}, self

    def close(self) -> None:
        """Remove the files now (memory maps already handed out stay readable on POSIX)."""
        self._finalizer()

