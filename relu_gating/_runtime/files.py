"""Output files (private): checked before a long computation, written atomically.

A result file is written to a temporary file in the target's directory and
renamed over the target (:func:`os.replace`, atomic on POSIX and Windows), so a
reader, a concurrent run or a Ctrl-C during the write never sees a partial file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable
from typing import IO

from relu_gating.errors import InputError

__all__ = ["check_writable", "atomic_write", "file_sha256", "check_outputs", "OUTPUT_FLAGS", "INPUT_ARGS"]

#: Flags naming files a command writes, and the arguments naming files it reads.
OUTPUT_FLAGS = ("out", "checkpoint", "plot")
INPUT_ARGS = ("input", "certificate", "features")


def check_writable(path: str | os.PathLike, what: str) -> str:
    """Raise :class:`InputError` (naming ``what``, e.g. ``"--out"``) unless ``path`` can be written.

    Checks that the directory exists, is a directory and is writable, and that
    ``path`` is not itself a directory, nor an existing FIFO, device or socket
    (a symlink is followed: the file is written through it).  Returns ``os.fspath(path)``.
    """
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    _check_regular(path, what)
    if os.path.isdir(path):
        raise InputError(f"{what} {path}: is a directory, not a file")
    if not os.path.exists(d):
        raise InputError(f"{what} {path}: directory {d} does not exist")
    if not os.path.isdir(d):
        raise InputError(f"{what} {path}: {d} is not a directory")
    if not os.access(d, os.W_OK | os.X_OK):
        raise InputError(f"{what} {path}: directory {d} is not writable")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise InputError(f"{what} {path}: file is not writable")
    return path


def _same(a: str, b: str) -> bool:
    """The two paths name one file (links resolved; ``samefile`` when both exist: hard links too)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_outputs(args: object) -> None:
    """Refuse (:class:`InputError`, one line naming the flag) an output flag (``--out``,
    ``--checkpoint``, ``--plot``) naming an input file of the command, or another output flag's file:
    outputs never replace inputs.  ``patterns --out X`` writes ``X.npz``: both names are checked."""
    ins = [(k, os.fspath(v)) for k in INPUT_ARGS if isinstance(v := getattr(args, k, None), (str, os.PathLike))
           and os.path.isfile(v)]
    outs: list = []
    for k in OUTPUT_FLAGS:
        v = getattr(args, k, None)
        if not isinstance(v, (str, os.PathLike)) or not os.fspath(v):
            continue
        flag = f"--{k}"
        for path in {os.fspath(v), os.fspath(v) + ".npz"} if getattr(args, "command", "") == "patterns" else {os.fspath(v)}:
            for name, other in ins + outs:
                if (os.path.exists(path) or os.path.islink(path)) and _same(path, other) or \
                        os.path.realpath(path) == os.path.realpath(other):
                    what = f"the input {other}" if name in INPUT_ARGS else f"{other}, also named by --{name}"
                    raise InputError(f"{flag} {os.fspath(v)}: names {what}; outputs never replace inputs: "
                                     "give another file")
        outs.append((k, os.fspath(v)))


def _check_regular(path: str, what: str) -> None:
    """Refuse an existing ``path`` (followed through symlinks) that is not a regular file or a
    directory: a FIFO, a device or a socket would be replaced by the atomic rename."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # does not exist (or a dangling link: written through, creating its target)
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if (stat.S_ISCHR(mode) or stat.S_ISBLK(mode)) else "not a regular file")
    raise InputError(f"{what} {path}: is {kind}, not a regular file; give a file path")


def _new_file_mode(path: str) -> int:
    """Mode for the written file: the target's if it exists, else 0o666 minus the umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def atomic_write(path: str | os.PathLike, write: Callable[[IO], None], *, binary: bool = False) -> None:
    """Call ``write(fh)`` on a temporary file next to ``path``, then rename it to ``path``.

    On any exception (including KeyboardInterrupt) the temporary file is
    removed and ``path`` is left as it was.  A symlink is written through (the
    link stays; its target is replaced); an existing FIFO, device or socket is
    refused (:class:`InputError`), never replaced.
    """
    path = os.fspath(path)
    if os.path.islink(path):  # write through the link (the link stays, its target is replaced)
        path = os.path.realpath(path)
    _check_regular(path, "output")
    if os.path.isdir(path):
        raise InputError(f"output {path}: is a directory, not a file")
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _new_file_mode(path))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 (hex) of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
