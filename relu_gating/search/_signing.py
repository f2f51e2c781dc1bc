"""The checkpoint signing key of this user, and the signature of a checkpoint's arrays (private).

A checkpoint is trusted only when it carries the HMAC-SHA256 tag of this user's key over the package
version and every array; the in-memory (:mod:`relu_gating.search.state`) and the streamed
(:mod:`relu_gating.search._stream.checkpoint`) checkpoints share this module.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets

import numpy as np

from relu_gating._version import __version__

__all__ = ["KEY_ENV", "checkpoint_key_path", "secret_key", "sign_arrays", "signed", "authentic"]

#: Environment variable naming the key file (default: the user's cache directory).
KEY_ENV = "RELU_GATING_CHECKPOINT_KEY"

def checkpoint_key_path() -> str:
    """Path of this user's checkpoint signing key (``$RELU_GATING_CHECKPOINT_KEY`` if set)."""
    env = os.environ.get(KEY_ENV)
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "relu-gating", "checkpoint.key")


def secret_key(create: bool) -> bytes | None:
    """The signing key, created (mode 0600) if asked; None if unavailable (then nothing is trusted)."""
    path = checkpoint_key_path()
    try:
        with open(path, "rb") as fh:
            k = fh.read()
        return k if len(k) >= 32 else None
    except FileNotFoundError:
        if not create:
            return None
    except OSError:
        return None
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
    except FileExistsError:
        pass  # another process created it meanwhile
    except OSError:
        return None
    return secret_key(create=False)


def sign_arrays(secret: bytes, arrays: dict) -> str:
    """HMAC-SHA256 of the package version and every array (name, dtype, shape, bytes)."""
    mac = hmac.new(secret, f"{__version__}|".encode(), hashlib.sha256)
    for name in sorted(arrays):
        if name == "tag":
            continue
        a = np.ascontiguousarray(arrays[name])
        mac.update(f"|{name}|{a.dtype.str}|{a.shape}|".encode())
        mac.update(a.tobytes())
    return mac.hexdigest()


def signed(arrays: dict) -> dict:
    """``arrays`` with a ``tag`` signature added (the key created if needed; unsigned if unavailable)."""
    secret = secret_key(create=True)
    if secret is not None:
        arrays["tag"] = np.array(sign_arrays(secret, arrays))
    return arrays


def authentic(z: dict) -> bool:
    """Whether the arrays ``z`` carry a valid ``tag`` of this user's key."""
    secret = secret_key(create=False)
    return secret is not None and "tag" in z and hmac.compare_digest(str(z["tag"]), sign_arrays(secret, z))
